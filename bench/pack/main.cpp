// strata-bench-pack: MPI_Pack of the MPI library vs strata::pack_host, host
// buffers, one rank. Usage and columns: docs/bench-pack.md.
#include "bench/pack/bench_pack.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

namespace strata_bench {
namespace {

bool parse_size(const std::string& text, int64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v < 0) return false;
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit == "" || unit == "B")
    mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    mult = 1024.0 * 1024 * 1024;
  else
    return false;
  *out = static_cast<int64_t>(v * mult);
  return true;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

std::string mpi_version() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, static_cast<size_t>(len));
  const size_t cut = s.find_first_of(",\n");
  return cut == std::string::npos ? s : s.substr(0, cut);
}

std::string utc_date() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

struct Options {
  std::vector<std::string> types = {"vector", "hvector", "subarray"};
  std::vector<std::string> blocks = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512"};
  std::vector<std::string> sizes = {"1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M"};
  std::string stride = "512";
  std::string max_source = "9G";
  std::string memcpy_bytes = "256M";
  std::string json;
  bool quick = false, check = false, markdown = false, no_timing = false, osu = false;
  int corpus = 3000;
  int64_t subarray_rows = 64;
  uint64_t seed = 12345;
  TimingOptions timing;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--types", o.types, "layouts: vector, hvector, subarray")->delimiter(',');
  app.add_option("--blocks", o.blocks, "block lengths in bytes")->delimiter(',');
  app.add_option("--sizes", o.sizes, "packed sizes (K, M, G = KiB, MiB, GiB)")->delimiter(',');
  app.add_option("--stride", o.stride, "source stride in bytes; a block >= stride gets stride 2*block")
      ->capture_default_str();
  app.add_option("--subarray-rows", o.subarray_rows, "subarray: rows (blocks) per plane")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-source-bytes", o.max_source, "skip points whose source spans more than this")
      ->capture_default_str();
  app.add_option("--memcpy-bytes", o.memcpy_bytes, "size of the memcpy that sets the bound")->capture_default_str();
  app.add_flag("--quick", o.quick, "a tiny grid with short timing (CI smoke run, < 10 s)");
  app.add_flag("--check", o.check,
               "compare pack_host/unpack_host with MPI_Pack/MPI_Unpack byte for byte; "
               "exit 1 on any mismatch");
  app.add_flag("--no-timing", o.no_timing, "with --check: only check, time nothing");
  app.add_option("--corpus", o.corpus, "random layouts checked by --check")->capture_default_str();
  auto* markdown_flag = app.add_flag("--markdown", o.markdown, "print the table as markdown");
  app.add_flag("--osu", o.osu,
               "host mode: print OSU micro-benchmark columns instead of the table: per shape, # Size (packed "
               "bytes), MPI and Strata Latency (us) and Bandwidth (MB/s), Ratio (MPI / Strata)")
      ->excludes(markdown_flag);
  app.add_option("--json", o.json, "write the measured times to this file");
  app.add_option("--min-time-ms", o.timing.min_total_ms, "per point and side, total timed")->capture_default_str();
  app.add_option("--max-point-ms", o.timing.max_point_ms, "cap on one point's timing")->capture_default_str();
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
}

std::string command_of(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  return command;
}

// Sizes given on the command line, each > 0 and at most `most`; false (said
// on stderr as "bad <what> '<text>'") otherwise.
bool parse_sizes(const std::vector<std::string>& texts, const char* what, int64_t most, std::vector<int64_t>* out) {
  for (const std::string& t : texts) {
    int64_t v = 0;
    if (!parse_size(t, &v) || v <= 0 || v > most) {
      std::fprintf(stderr, "bad %s '%s'\n", what, t.c_str());
      return false;
    }
    out->push_back(v);
  }
  return true;
}

// --types' words as layouts; false (said on stderr) on an unknown one.
bool parse_kinds(const std::vector<std::string>& names, std::vector<Kind>* out) {
  for (const std::string& t : names) {
    Kind kind;
    if (!parse_kind(t, &kind)) {
      std::fprintf(stderr, "unknown type '%s' (vector, hvector, subarray)\n", t.c_str());
      return false;
    }
    out->push_back(kind);
  }
  return true;
}

#ifdef STRATA_BENCH_KOKKOS
// --kokkos: Strata's Kokkos pack against deep_copy and the native kernels.
int run_kokkos_mode(const CLI::App& app, const Options& o, const std::string& command) {
  if (o.osu) {
    std::fprintf(stderr, "--osu: host mode only (not with --kokkos)\n");
    return 2;
  }
  KokkosBenchOptions k;
  k.quick = o.quick;
  k.markdown = o.markdown;
  k.no_timing = o.no_timing;
  if (app.count("--min-time-ms")) k.min_total_ms = o.timing.min_total_ms;
  if (o.quick) {
    k.min_total_ms = 2;
    k.min_samples = 3;
    k.min_sample_us = 50;
  }
  const std::vector<std::string> none;
  if (!parse_sizes(app.count("--blocks") ? o.blocks : none, "block", INT64_MAX, &k.blocks) ||
      !parse_sizes(app.count("--sizes") ? o.sizes : none, "size", INT64_MAX, &k.sizes)) {
    return 2;
  }
  return run_kokkos(k, command);
}
#endif

#ifdef STRATA_BENCH_DEVICE
struct DeviceCli {
  bool device = false, latency = false;
  std::vector<std::string> strides = {"512", "2x"};
  std::string host_path_max = "256M", check_max = "256M", rotate = "256M";
};

void add_device_options(CLI::App& app, DeviceCli& c) {
  app.add_flag("--device", c.device,
               "device mode: Strata's pack/unpack kernels on device memory (docs/bench-pack.md); defaults there: "
               "types vector,subarray, sizes 1K..256M, --memcpy-bytes 1G (the device-to-device copy)");
  app.add_flag("--latency", c.latency, "--device: also time blocking pack/unpack of <= 64 KiB");
  app.add_option("--strides", c.strides, "--device: source strides; 2x = tight (2 * block)")->delimiter(',');
  app.add_option("--host-path-max-bytes", c.host_path_max,
                 "--device: time the path without Strata (D2H, MPI_Pack, H2D) for spans up to this")
      ->capture_default_str();
  app.add_option("--check-max-bytes", c.check_max, "--device: check against MPI_Pack/MPI_Unpack spans up to this")
      ->capture_default_str();
  app.add_option("--rotate-bytes", c.rotate, "--device: sources rotate over at least this much memory")
      ->capture_default_str();
}

// --device's defaults where the command line gave none (and --quick's).
void device_defaults(const CLI::App& app, Options& o, DeviceCli& c, DeviceOptions* d, std::string* copy) {
  if (app.count("--types") == 0) o.types = {"vector", "subarray"};
  if (app.count("--sizes") == 0)
    o.sizes = o.quick ? std::vector<std::string>{"1K", "1M", "16M"}
                      : std::vector<std::string>{"1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M", "256M"};
  if (app.count("--blocks") == 0 && o.quick) o.blocks = {"1", "8", "24", "64", "512"};
  *copy = app.count("--memcpy-bytes") ? o.memcpy_bytes : (o.quick ? "64M" : "1G");
  if (o.quick) {
    if (app.count("--host-path-max-bytes") == 0) c.host_path_max = "16M";
    if (app.count("--check-max-bytes") == 0) c.check_max = "64M";
    if (app.count("--rotate-bytes") == 0) c.rotate = "64M";
    if (app.count("--max-source-bytes") == 0) o.max_source = "1G";
    d->min_total_ms = 2;
    d->max_point_ms = 100;
    d->min_samples = 3;
    d->min_sample_us = 50;
  }
  if (app.count("--min-time-ms")) d->min_total_ms = o.timing.min_total_ms;
  if (app.count("--max-point-ms")) d->max_point_ms = o.timing.max_point_ms;
}

// --device: Strata's pack/unpack kernels on device memory.
int run_device_mode(const CLI::App& app, Options& o, DeviceCli& c, const std::string& command) {
  if (o.osu) {
    std::fprintf(stderr, "--osu: host mode only (not with --device)\n");
    return 2;
  }
  DeviceOptions d;
  d.quick = o.quick;
  d.latency = c.latency;
  d.markdown = o.markdown;
  d.json = o.json;
  d.seed = o.seed;
  std::string copy;
  device_defaults(app, o, c, &d, &copy);
  d.subarray_rows = o.subarray_rows;
  if (!parse_kinds(o.types, &d.kinds)) return 2;
  if (!parse_sizes(o.blocks, "block", INT64_MAX, &d.blocks) || !parse_sizes(o.sizes, "size", INT32_MAX, &d.sizes)) {
    return 2;
  }
  for (const std::string& st : c.strides) {
    int64_t v = 0;
    if (st == "2x" || st == "tight") {
      v = 0;
    } else if (!parse_size(st, &v) || v <= 0) {
      std::fprintf(stderr, "bad stride '%s' (bytes, or 2x)\n", st.c_str());
      return 2;
    }
    d.strides.push_back(v);
  }
  if (!parse_size(o.max_source, &d.max_source) || !parse_size(copy, &d.copy_bytes) ||
      !parse_size(c.host_path_max, &d.host_path_max) || !parse_size(c.check_max, &d.check_max) ||
      !parse_size(c.rotate, &d.rotate_bytes) || d.copy_bytes <= 0) {
    std::fprintf(stderr,
                 "bad --max-source-bytes, --memcpy-bytes, --host-path-max-bytes, --check-max-bytes or "
                 "--rotate-bytes\n");
    return 2;
  }
  return run_device(d, command);
}
#endif

void apply_quick(const CLI::App& app, Options& o) {
  if (!o.quick) return;
  if (app.count("--blocks") == 0) o.blocks = {"1", "3", "8", "16", "64", "512"};
  if (app.count("--sizes") == 0) o.sizes = {"1K", "64K", "1M"};
  if (app.count("--memcpy-bytes") == 0) o.memcpy_bytes = "32M";
  if (app.count("--corpus") == 0) o.corpus = 400;
  o.timing.min_total_ms = std::min(o.timing.min_total_ms, 2.0);
  o.timing.max_point_ms = std::min(o.timing.max_point_ms, 100.0);
  o.timing.min_samples = 3;
  o.timing.max_remeasure = 0;
}

// The host grid: every (type, block, size) whose source fits
// --max-source-bytes (the others are listed in info->skipped).
struct Grid {
  std::vector<Point> points;
  int64_t max_span = 1, max_packed = 1;
};

bool make_grid(const Options& o, int64_t stride, int64_t max_source, Grid* g, RunInfo* info) {
  std::vector<Kind> kinds;
  if (!parse_kinds(o.types, &kinds)) return false;
  for (Kind kind : kinds) {
    for (const std::string& bs : o.blocks) {
      for (const std::string& ss : o.sizes) {
        Point p;
        p.kind = kind;
        p.rows = o.subarray_rows;
        if (!parse_size(bs, &p.block) || !parse_size(ss, &p.packed) || p.block <= 0 || p.packed < p.block ||
            p.packed > INT32_MAX) {
          std::fprintf(stderr, "bad block '%s' or size '%s'\n", bs.c_str(), ss.c_str());
          return false;
        }
        normalize_point(&p);  // whole blocks and planes (odd block lengths)
        p.stride = p.block >= stride ? 2 * p.block : stride;
        const int64_t span = source_span(p);
        if (span > max_source) {
          info->skipped.push_back(std::string(to_string(kind)) + " " + std::to_string(p.block) + " B x " +
                                  format_bytes(p.packed) + ": source spans " + std::to_string(span) +
                                  " bytes > --max-source-bytes " + std::to_string(max_source));
          continue;
        }
        g->max_span = std::max(g->max_span, span);
        g->max_packed = std::max(g->max_packed, p.packed);
        g->points.push_back(p);
      }
    }
  }
  for (const Point& p : g->points) {
    if (p.stride != stride) {
      info->notes.push_back("blocks >= the stride use stride 2*block (e.g. " + std::to_string(p.block) +
                            " B blocks at stride " + std::to_string(p.stride) + ")");
      break;
    }
  }
  return true;
}

// One source for every point, random non-zero bytes, every page touched;
// outputs touched before timing.
struct Buffers {
  char* src = nullptr;
  char* out_library = nullptr;
  char* out_strata = nullptr;
  Buffers() = default;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    std::free(src);
    std::free(out_library);
    std::free(out_strata);
  }
  bool allocate(const Grid& g, uint64_t seed) {
    const size_t src_bytes = (static_cast<size_t>(g.max_span) + 4095) & ~size_t{4095};
    const size_t out_bytes = static_cast<size_t>(g.max_packed) + 4096;
    src = static_cast<char*>(std::aligned_alloc(4096, src_bytes));
    out_library = static_cast<char*>(std::aligned_alloc(4096, out_bytes));
    out_strata = static_cast<char*>(std::aligned_alloc(4096, out_bytes));
    if (!src || !out_library || !out_strata) {
      std::fprintf(stderr, "cannot allocate %zu source bytes (lower --max-source-bytes)\n", src_bytes);
      return false;
    }
    std::fprintf(stderr, "filling %.2f GiB of source with random bytes...\n",
                 static_cast<double>(src_bytes) / (1 << 30));
    fill_random_nonzero(src, src_bytes, seed);
    std::memset(out_library, 0x5a, out_bytes);
    std::memset(out_strata, 0xa5, out_bytes);
    return true;
  }
};

// Checks and times every point (progress on stderr); false on an error.
bool run_points(const Options& o, const Grid& g, Buffers& b, CheckStats* check, std::vector<Result>* results) {
  int done = 0;
  for (const Point& p : g.points) {
    ++done;
    Layout layout;
    std::string error;
    if (!make_layout(p, &layout, &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return false;
    }
    if (o.check) check_point(layout, b.src, b.out_library, b.out_strata, o.seed + static_cast<uint64_t>(done), check);
    if (!o.no_timing) {
      Result r;
      r.point = p;
      if (!measure_point(layout, b.src, b.out_library, b.out_strata, o.timing, &r, &error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        free_layout(&layout);
        return false;
      }
      std::fprintf(stderr, "[%d/%zu] %-8s %4" PRId64 " B x %-7s lib %10.1f us  ours %10.1f us  ratio %5.2f%s\n", done,
                   g.points.size(), to_string(p.kind), p.block, format_bytes(p.packed).c_str(),
                   r.library.median_ns * 1e-3, r.strata.median_ns * 1e-3, r.library.median_ns / r.strata.median_ns,
                   r.noisy ? " (noisy)" : "");
      results->push_back(r);
    }
    free_layout(&layout);
  }
  return true;
}

void print_report(const Options& o, const RunInfo& info, int64_t stride, const std::vector<Result>& results,
                  const CheckStats& check) {
  if (o.osu) {
    if (!o.no_timing) print_osu(info, results);
    if (o.check) {
      std::printf("# check: %" PRId64 " cases, %" PRId64 " mismatches of Strata's pack/unpack\n", check.cases,
                  check.failures);
    }
    return;
  }
  if (o.markdown) {
    std::printf("- command: `%s`\n- CPU: %s\n- MPI: %s\n- date: %s\n", info.command.c_str(), info.cpu.c_str(),
                info.mpi.c_str(), info.date.c_str());
    if (!o.no_timing)
      std::printf("- memcpy: %.2f GB/s of copied data (%s)\n- stride: %" PRId64 " B\n\n", info.memcpy_gbps,
                  format_bytes(info.memcpy_bytes).c_str(), stride);
  } else {
    std::printf("strata-bench-pack  CPU: %s  MPI: %s  %s\n", info.cpu.c_str(), info.mpi.c_str(), info.date.c_str());
    if (!o.no_timing)
      std::printf("memcpy %.2f GB/s (%s); stride %" PRId64 " B\n\n", info.memcpy_gbps,
                  format_bytes(info.memcpy_bytes).c_str(), stride);
  }
  if (!o.no_timing) {
    print_table(info, results, o.markdown);
    print_summary(info, results, o.markdown);
  }
  if (o.check) {
    std::printf("\n%scheck: %" PRId64 " cases, %" PRId64 " mismatches of Strata's pack/unpack; %" PRId64
                " random layouts where the library's MPI_Pack disagrees with the MPI type map (not ours)\n",
                o.markdown ? "- " : "", check.cases, check.failures, check.library_disagreements);
#ifdef STRATA_BENCH_HAVE_DESCRIBE
    std::printf("%sstrata::describe_datatype of every point cross-checked against the block built here\n",
                o.markdown ? "- " : "");
#endif
  }
}

// Host mode: the library's MPI_Pack against strata::pack_host.
int run_host_mode(const CLI::App& app, Options& o, const std::string& command) {
  apply_quick(app, o);
  RunInfo info;
  info.command = command;
  info.cpu = cpu_model();
  info.mpi = mpi_version();
  info.date = utc_date();
  int64_t stride = 0, max_source = 0, memcpy_bytes = 0;
  if (!parse_size(o.stride, &stride) || !parse_size(o.max_source, &max_source) ||
      !parse_size(o.memcpy_bytes, &memcpy_bytes) || stride <= 0) {
    std::fprintf(stderr, "bad --stride, --max-source-bytes or --memcpy-bytes\n");
    return 2;
  }
  Grid grid;
  if (!make_grid(o, stride, max_source, &grid, &info)) return 2;
  if (!o.no_timing) {
    info.memcpy_bytes = memcpy_bytes;
    info.memcpy_gbps = measure_memcpy_gbps(static_cast<size_t>(memcpy_bytes), 9);
  }
  CheckStats check;
  std::vector<Result> results;
  {
    Buffers buffers;
    if (!buffers.allocate(grid, o.seed)) return 2;
    if (o.check) {
      check_random_corpus(o.corpus, o.seed, &check);
      std::fprintf(stderr,
                   "random corpus: %" PRId64 " cases, %" PRId64 " failures, %" PRId64
                   " layouts where MPI_Pack disagrees with the type map\n",
                   check.cases, check.failures, check.library_disagreements);
    }
    if (!run_points(o, grid, buffers, &check, &results)) return 2;
  }
  print_report(o, info, stride, results, check);
  if (!o.json.empty() && !o.no_timing && !write_json(o.json, info, results)) {
    std::fprintf(stderr, "cannot write %s\n", o.json.c_str());
    return 2;
  }
  return check.failures > 0 ? 1 : 0;
}

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"strata-bench-pack: host MPI_Pack of the MPI library vs strata::pack_host"};
  strata::tools::standard_options(app, "strata-bench-pack");
  add_options(app, o);
#ifdef STRATA_BENCH_DEVICE
  DeviceCli device;
  add_device_options(app, device);
#endif
#ifdef STRATA_BENCH_KOKKOS
  bool kokkos = false;
  app.add_flag("--kokkos", kokkos,
               "Kokkos mode: Strata's Kokkos pack of 2D/3D subviews against Kokkos::deep_copy and the native "
               "kernels on the default execution space (docs/kokkos.md); takes --blocks, --sizes, --quick, "
               "--markdown, --no-timing, --min-time-ms");
#endif
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  const std::string command = command_of(argc, argv);
#ifdef STRATA_BENCH_KOKKOS
  if (kokkos) return run_kokkos_mode(app, o, command);
#endif
#ifdef STRATA_BENCH_DEVICE
  if (device.device) return run_device_mode(app, o, device, command);
#endif
  return run_host_mode(app, o, command);
}

}  // namespace
}  // namespace strata_bench

static int run_tool(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One rank measures; others (if started under mpirun) only wait, so that
  // they do not compete for the memory system.
  int rc = rank == 0 ? strata_bench::run(argc, argv) : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-bench-pack", argc, argv, run_tool); }
