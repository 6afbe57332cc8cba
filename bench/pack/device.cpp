// strata-bench-pack --device: Strata's device pack/unpack kernels
// (strata::gpu::pack_async / unpack_async) on device memory, timed with
// device events, next to the device-to-device copy rate, the 32-byte-sector
// bound, and the path a user has without Strata (the source span copied to
// the host, the library's MPI_Pack, the packed bytes copied back). Usage and
// columns: docs/bench-pack.md; PyTorch's column: bench_pack_device.py.
#include "bench/pack/bench_pack.hpp"

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace strata_bench {
namespace {

namespace gpu = strata::gpu;
using strata::Status;

constexpr int64_t kSector = 32;       // DRAM sector: the least a block read costs
constexpr int64_t kSlotAlign = 4096;  // rotation slots keep every alignment
constexpr int kMaxMessages = 20;

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

bool ok(Status s, const char* what) {
  if (s == Status::ok) return true;
  std::fprintf(stderr, "strata-bench-pack --device: %s failed: %s (%s)\n", what, strata::to_string(s),
               gpu::last_error_string());
  return false;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double x = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(x);
  const double f = x - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

Sample sample_of(const std::vector<double>& ns, int reps) {
  Sample s;
  s.median_ns = quantile(ns, 0.5);
  s.p25_ns = quantile(ns, 0.25);
  s.p75_ns = quantile(ns, 0.75);
  s.samples = static_cast<int>(ns.size());
  s.reps = reps;
  return s;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

// Bytes of source a block costs at least: whole 32-byte sectors, or the
// stride where consecutive blocks share sectors.
int64_t read_per_block(int64_t block, int64_t stride) {
  return std::min(kSector * ((block + kSector - 1) / kSector), std::max(block, stride));
}

// The sector bound, GB/s of packed data: copy_gbps * b / read_per_block(b, s).
double sector_bound_gbps(double copy_gbps, int64_t block, int64_t stride) {
  return copy_gbps * static_cast<double>(block) / static_cast<double>(read_per_block(block, stride));
}

double gbps(int64_t bytes, double ns) { return ns > 0 ? static_cast<double>(bytes) / ns : 0; }

struct DeviceResult {
  Point point;
  strata::StridedBlock block;
  int64_t lowest = 0, span = 0;
  int64_t slots = 1, slot_src = 0, slot_out = 0;
  Sample pack, unpack, host;
  Sample same;  // a contiguous device-to-device copy of the packed size, timed like the pack
  bool have_host = false;
  bool checked = false;
};

struct LatencyResult {
  Point point;
  strata::StridedBlock block;
  double pack_median_ns = 0, pack_p90_ns = 0, unpack_median_ns = 0, unpack_p90_ns = 0;
  int samples = 0;
};

// Device memory for the whole run and the timing machinery.
class Bench {
 public:
  explicit Bench(const DeviceOptions& o) : o_(o) {}
  ~Bench() {
    if (src_pool_) gpu::free_device(src_pool_);
    if (out_pool_) gpu::free_device(out_pool_);
    if (host_span_) gpu::free_pinned(host_span_);
    if (host_packed_) gpu::free_pinned(host_packed_);
    if (start_) gpu::event_destroy(start_);
    if (stop_) gpu::event_destroy(stop_);
    if (stream_) gpu::stream_destroy(stream_);
  }

  bool init(int64_t max_span, int64_t max_packed, int64_t max_host_span, int64_t max_host_packed) {
    if (!ok(gpu::stream_create(&stream_), "stream_create") || !ok(gpu::event_create(&start_, true), "event_create") ||
        !ok(gpu::event_create(&stop_, true), "event_create"))
      return false;
    src_bytes_ = std::max(round_up(max_span, kSlotAlign), o_.rotate_bytes);
    out_bytes_ = std::max(round_up(max_packed, kSlotAlign), o_.rotate_bytes);
    if (!ok(gpu::malloc_device(reinterpret_cast<void**>(&src_pool_), static_cast<size_t>(src_bytes_)),
            "malloc_device (source pool; lower --max-source-bytes)") ||
        !ok(gpu::malloc_device(reinterpret_cast<void**>(&out_pool_), static_cast<size_t>(out_bytes_)),
            "malloc_device (packed pool)"))
      return false;
    if (max_host_span > 0) {
      if (!ok(gpu::malloc_pinned(&host_span_, static_cast<size_t>(max_host_span), false), "malloc_pinned") ||
          !ok(gpu::malloc_pinned(&host_packed_, static_cast<size_t>(max_host_packed), false), "malloc_pinned"))
        return false;
    }
    // Random non-zero bytes everywhere: one 64 MiB host chunk, repeated.
    const int64_t chunk = std::min<int64_t>(int64_t{64} << 20, src_bytes_);
    std::vector<char> h(static_cast<size_t>(chunk));
    fill_random_nonzero(h.data(), h.size(), o_.seed);
    for (int64_t at = 0; at < src_bytes_; at += chunk) {
      if (!ok(gpu::memcpy_async(src_pool_ + at, h.data(), static_cast<size_t>(std::min(chunk, src_bytes_ - at)),
                                stream_),
              "memcpy_async (fill)") ||
          !ok(gpu::stream_synchronize(stream_), "stream_synchronize"))
        return false;
    }
    return ok(gpu::memset_async(out_pool_, 0x5a, static_cast<size_t>(out_bytes_), stream_), "memset_async") &&
           ok(gpu::stream_synchronize(stream_), "stream_synchronize");
  }

  // Device-to-device copy rate, GB/s of copied data (median of 9).
  bool copy_rate(int64_t bytes, double* out) {
    char* a = nullptr;
    char* b = nullptr;
    if (!ok(gpu::malloc_device(reinterpret_cast<void**>(&a), static_cast<size_t>(bytes)), "malloc_device (copy)"))
      return false;
    if (!ok(gpu::malloc_device(reinterpret_cast<void**>(&b), static_cast<size_t>(bytes)), "malloc_device (copy)")) {
      gpu::free_device(a);
      return false;
    }
    bool good = true;
    for (int64_t at = 0; good && at < bytes; at += src_bytes_)
      good = ok(gpu::memcpy_async(a + at, src_pool_, static_cast<size_t>(std::min(src_bytes_, bytes - at)), stream_),
                "memcpy_async");
    std::vector<double> ns;
    for (int i = 0; good && i < 11; ++i) {
      good = ok(gpu::event_record(start_, stream_), "event_record") &&
             ok(gpu::memcpy_async(i % 2 ? a : b, i % 2 ? b : a, static_cast<size_t>(bytes), stream_), "memcpy_async") &&
             ok(gpu::event_record(stop_, stream_), "event_record") &&
             ok(gpu::event_synchronize(stop_), "event_synchronize");
      float ms = 0;
      good = good && ok(gpu::event_elapsed_ms(start_, stop_, &ms), "event_elapsed_ms");
      if (i >= 2) ns.push_back(ms * 1e6);  // two warm-up copies
    }
    gpu::free_device(a);
    gpu::free_device(b);
    if (good) *out = gbps(bytes, quantile(ns, 0.5));
    return good;
  }

  // Times fn(slot) (one launch on stream_): warm-up, then samples of `reps`
  // launches between two events, successive launches on successive slots.
  template <class F>
  bool timed(F fn, int64_t slots, Sample* out) {
    int64_t next = 0;
    auto launch = [&] {
      const Status s = fn(next);
      next = (next + 1) % slots;
      return ok(s, "pack/unpack");
    };
    for (int i = 0; i < 3; ++i)
      if (!launch()) return false;
    float ms = 0;
    if (!ok(gpu::event_record(start_, stream_), "event_record") || !launch() ||
        !ok(gpu::event_record(stop_, stream_), "event_record") || !ok(gpu::event_synchronize(stop_), "sync") ||
        !ok(gpu::event_elapsed_ms(start_, stop_, &ms), "event_elapsed_ms"))
      return false;
    const double one_us = std::max(1e-3, static_cast<double>(ms) * 1e3);
    const int reps = static_cast<int>(std::clamp(std::ceil(o_.min_sample_us / one_us), 1.0, 20000.0));
    std::vector<double> ns;
    double total_ms = 0;
    const double t0 = now_ns();
    for (;;) {
      if (!ok(gpu::event_record(start_, stream_), "event_record")) return false;
      for (int r = 0; r < reps; ++r)
        if (!launch()) return false;
      if (!ok(gpu::event_record(stop_, stream_), "event_record") || !ok(gpu::event_synchronize(stop_), "sync") ||
          !ok(gpu::event_elapsed_ms(start_, stop_, &ms), "event_elapsed_ms"))
        return false;
      ns.push_back(static_cast<double>(ms) * 1e6 / reps);
      total_ms += ms;
      const int n = static_cast<int>(ns.size());
      const double elapsed_ms = (now_ns() - t0) * 1e-6;
      if (n >= o_.min_samples && total_ms >= o_.min_total_ms) break;
      if (n >= o_.max_samples || (n >= 3 && elapsed_ms >= o_.max_point_ms)) break;
    }
    *out = sample_of(ns, reps);
    return true;
  }

  // The user's path without Strata: D2H of the span, MPI_Pack, H2D.
  bool host_path(const Layout& l, const DeviceResult& r, Sample* out) {
    const int64_t packed = r.point.packed;
    char* dev_src = src_pool_;  // slot 0: the span starts at the pool
    std::vector<double> ns;
    const double t_start = now_ns();
    for (int i = 0; i < 100; ++i) {
      const double t0 = now_ns();
      int position = 0;
      if (!ok(gpu::memcpy_async(host_span_, dev_src, static_cast<size_t>(r.span), stream_), "memcpy_async D2H") ||
          !ok(gpu::stream_synchronize(stream_), "stream_synchronize"))
        return false;
      const int rc = MPI_Pack(static_cast<char*>(host_span_) - r.lowest, 1, l.type, host_packed_,
                              static_cast<int>(packed), &position, MPI_COMM_SELF);
      if (rc != MPI_SUCCESS || position != packed) {
        std::fprintf(stderr, "%s: MPI_Pack failed\n", l.what.c_str());
        return false;
      }
      if (!ok(gpu::memcpy_async(out_pool_, host_packed_, static_cast<size_t>(packed), stream_), "memcpy_async H2D") ||
          !ok(gpu::stream_synchronize(stream_), "stream_synchronize"))
        return false;
      if (i > 0) ns.push_back(now_ns() - t0);  // the first is a warm-up
      const double spent_ms = (now_ns() - t_start) * 1e-6;
      const int n = static_cast<int>(ns.size());
      if (n >= 3 && (spent_ms >= o_.max_point_ms || (n >= o_.min_samples && spent_ms >= o_.min_total_ms))) break;
    }
    *out = sample_of(ns, 1);
    return true;
  }

  // Device pack and unpack of slot 0 against the library's MPI_Pack and
  // MPI_Unpack of a host copy, byte for byte. Returns false on a mismatch.
  bool check(const Layout& l, const DeviceResult& r, int* messages) {
    const strata::StridedBlock& b = r.block;
    const int64_t packed = r.point.packed;
    std::vector<char> span(static_cast<size_t>(r.span)), want(static_cast<size_t>(packed)),
        got(static_cast<size_t>(packed));
    char* base = src_pool_ - r.lowest;
    bool good = ok(gpu::memset_async(out_pool_, 0x5a, static_cast<size_t>(packed), stream_), "memset_async") &&
                ok(gpu::pack_async(b, base, out_pool_, stream_), "pack_async") &&
                ok(gpu::memcpy_async(span.data(), src_pool_, span.size(), stream_), "memcpy_async") &&
                ok(gpu::memcpy_async(got.data(), out_pool_, got.size(), stream_), "memcpy_async") &&
                ok(gpu::stream_synchronize(stream_), "stream_synchronize");
    if (!good) return false;
    int position = 0;
    MPI_Pack(span.data() - r.lowest, 1, l.type, want.data(), static_cast<int>(packed), &position, MPI_COMM_SELF);
    if (position != packed || want != got) {
      if ((*messages)++ < kMaxMessages)
        std::fprintf(stderr, "CHECK FAILED: %s: device pack differs from MPI_Pack\n", l.what.c_str());
      return false;
    }
    // Unpack of fresh packed bytes into slot 0 (its source bytes change).
    fill_random_nonzero(want.data(), want.size(), static_cast<uint64_t>(packed) * 31 + 7);
    std::vector<char> after(static_cast<size_t>(r.span));
    good = ok(gpu::memcpy_async(out_pool_, want.data(), want.size(), stream_), "memcpy_async") &&
           ok(gpu::unpack_async(b, out_pool_, base, stream_), "unpack_async") &&
           ok(gpu::memcpy_async(after.data(), src_pool_, after.size(), stream_), "memcpy_async") &&
           ok(gpu::stream_synchronize(stream_), "stream_synchronize");
    if (!good) return false;
    position = 0;
    MPI_Unpack(want.data(), static_cast<int>(packed), &position, span.data() - r.lowest, 1, l.type, MPI_COMM_SELF);
    if (span != after) {
      if ((*messages)++ < kMaxMessages)
        std::fprintf(stderr, "CHECK FAILED: %s: device unpack differs from MPI_Unpack\n", l.what.c_str());
      return false;
    }
    return true;
  }

  // Blocking pack/unpack (launch + synchronize), host clock, one slot.
  bool latency(const strata::StridedBlock& b, int64_t lowest, LatencyResult* out) {
    char* base = src_pool_ - lowest;
    auto measure = [&](bool pack, double* median, double* p90) {
      std::vector<double> ns;
      for (int i = 0; i < 520; ++i) {
        const double t0 = now_ns();
        const Status s =
            pack ? gpu::pack_async(b, base, out_pool_, stream_) : gpu::unpack_async(b, out_pool_, base, stream_);
        if (!ok(s, pack ? "pack_async" : "unpack_async") || !ok(gpu::stream_synchronize(stream_), "sync")) return false;
        if (i >= 20) ns.push_back(now_ns() - t0);  // 20 warm-up
      }
      *median = quantile(ns, 0.5);
      *p90 = quantile(ns, 0.9);
      out->samples = static_cast<int>(ns.size());
      return true;
    };
    return measure(true, &out->pack_median_ns, &out->pack_p90_ns) &&
           measure(false, &out->unpack_median_ns, &out->unpack_p90_ns);
  }

  // The floors of a blocking device operation, timed the way latency()
  // times a pack: a 1-byte device-to-device copy, and the smallest pack
  // kernel there is (one 1-byte block), each launched then synchronized;
  // for the kernel also how long the launch call alone takes, and a wait
  // that spins on an event instead of synchronizing the stream.
  struct Floors {
    double copy_ns = 0, kernel_ns = 0, launch_ns = 0, kernel_spin_ns = 0;
  };
  bool floors(Floors* f) {
    strata::StridedBlock one;
    one.block = 1;
    one.extent = 1;
    gpu::Event done = nullptr;
    if (!ok(gpu::event_create(&done, false), "event_create")) return false;
    std::vector<double> launch;
    auto median_of = [&](auto&& op, auto&& wait, double* out) {
      std::vector<double> ns;
      launch.clear();
      for (int i = 0; i < 520; ++i) {
        const double t0 = now_ns();
        if (!ok(op(), "floor")) return false;
        const double t1 = now_ns();
        if (!ok(wait(), "wait")) return false;
        if (i >= 20) {
          ns.push_back(now_ns() - t0);
          launch.push_back(t1 - t0);
        }
      }
      *out = quantile(ns, 0.5);
      return true;
    };
    auto sync = [&] { return gpu::stream_synchronize(stream_); };
    auto spin = [&] {
      Status s = gpu::event_record(done, stream_);
      for (bool finished = false; s == Status::ok && !finished;) s = gpu::event_query(done, &finished);
      return s;
    };
    auto kernel = [&] { return gpu::pack_async(one, src_pool_, out_pool_, stream_); };
    const bool good =
        median_of([&] { return gpu::memcpy_async(out_pool_, src_pool_, 1, stream_); }, sync, &f->copy_ns) &&
        median_of(kernel, sync, &f->kernel_ns) && (f->launch_ns = quantile(launch, 0.5), true) &&
        median_of(kernel, spin, &f->kernel_spin_ns);
    gpu::event_destroy(done);
    return good;
  }

  char* src_pool() const { return src_pool_; }
  char* out_pool() const { return out_pool_; }
  int64_t src_bytes() const { return src_bytes_; }
  int64_t out_bytes() const { return out_bytes_; }
  gpu::Stream stream() const { return stream_; }

 private:
  const DeviceOptions& o_;
  gpu::Stream stream_ = nullptr;
  gpu::Event start_ = nullptr, stop_ = nullptr;
  char* src_pool_ = nullptr;
  char* out_pool_ = nullptr;
  int64_t src_bytes_ = 0, out_bytes_ = 0;
  void* host_span_ = nullptr;
  void* host_packed_ = nullptr;
};

std::string stride_name(const Point& p) { return std::to_string(p.stride) + (p.stride == 2 * p.block ? " (2b)" : ""); }

void print_row(const std::vector<std::string>& row, const std::vector<size_t>& width, bool markdown) {
  if (markdown) {
    std::printf("|");
    for (const auto& c : row) std::printf(" %s |", c.c_str());
    std::printf("\n");
    return;
  }
  for (size_t c = 0; c < row.size(); ++c)
    std::printf(c < 4 ? "%-*s  " : "%*s  ", static_cast<int>(width[c]), row[c].c_str());
  std::printf("\n");
}

void print_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                 bool markdown) {
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  print_row(head, width, markdown);
  if (markdown) {
    std::printf("|");
    for (size_t c = 0; c < head.size(); ++c) std::printf(c < 4 ? " --- |" : " ---: |");
    std::printf("\n");
  }
  for (const auto& r : rows) print_row(r, width, markdown);
}

std::string ratio_text(double x) { return x >= 10 ? fmt("%.0fx", x) : fmt("%.2fx", x); }

std::string us(double ns) { return ns >= 1e7 ? fmt("%.0f", ns * 1e-3) : fmt("%.1f", ns * 1e-3); }

// [[count, stride], ...], innermost first.
std::string dims_json(const strata::StridedBlock& b) {
  std::string dims;
  for (size_t d = 0; d < b.dims.size(); ++d)
    dims += fmt("%s[%" PRId64 ", %" PRId64 "]", d ? ", " : "", b.dims[d].count, b.dims[d].stride);
  return dims;
}

bool write_device_json(const std::string& path, const std::string& command, const gpu::DeviceProperties& props,
                       double copy_gbps, int64_t copy_bytes, const std::vector<DeviceResult>& results,
                       const std::vector<LatencyResult>& latency, const std::vector<std::string>& skipped) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::string cmd;
  for (char c : command) {
    if (c == '"' || c == '\\') cmd += '\\';
    cmd += c;
  }
  std::fprintf(f, "{\n  \"tool\": \"strata-bench-pack\",\n  \"mode\": \"device\",\n  \"format\": 1,\n");
  std::fprintf(f, "  \"command\": \"%s\",\n  \"device\": \"%s\",\n  \"sm_count\": %d,\n  \"date\": \"%s\",\n",
               cmd.c_str(), props.name.c_str(), props.sm_count, utc_now().c_str());
  std::fprintf(f, "  \"copy_gbps\": %.4f,\n  \"copy_bytes\": %" PRId64 ",\n  \"sector_bytes\": %" PRId64 ",\n",
               copy_gbps, copy_bytes, kSector);
  std::fprintf(f, "  \"points\": [\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const DeviceResult& r = results[i];
    const Point& p = r.point;
    const std::string dims = dims_json(r.block);
    std::fprintf(f,
                 "    {\"type\": \"%s\", \"block\": %" PRId64 ", \"stride\": %" PRId64 ", \"packed_bytes\": %" PRId64
                 ", \"offset\": %" PRId64 ", \"dims\": [%s], \"lowest_byte\": %" PRId64 ", \"span\": %" PRId64
                 ", \"slots\": %" PRId64 ", \"slot_src_bytes\": %" PRId64 ", \"slot_out_bytes\": %" PRId64
                 ", \"pack_ns\": %.1f, \"pack_p25_ns\": %.1f, \"pack_p75_ns\": %.1f, \"unpack_ns\": %.1f"
                 ", \"unpack_p25_ns\": %.1f, \"unpack_p75_ns\": %.1f, \"samples\": %d, \"reps\": %d"
                 ", \"same_copy_ns\": %.1f, \"host_path_ns\": %s, \"sector_bound_gbps\": %.4f, \"checked\": %s}%s\n",
                 to_string(p.kind), p.block, p.stride, p.packed, r.block.offset, dims.c_str(), r.lowest, r.span,
                 r.slots, r.slot_src, r.slot_out, r.pack.median_ns, r.pack.p25_ns, r.pack.p75_ns, r.unpack.median_ns,
                 r.unpack.p25_ns, r.unpack.p75_ns, r.pack.samples, r.pack.reps, r.same.median_ns,
                 r.have_host ? fmt("%.1f", r.host.median_ns).c_str() : "null",
                 sector_bound_gbps(copy_gbps, p.block, p.stride), r.checked ? "true" : "false",
                 i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"latency\": [\n");
  for (size_t i = 0; i < latency.size(); ++i) {
    const LatencyResult& l = latency[i];
    const Point& p = l.point;
    std::fprintf(f,
                 "    {\"type\": \"%s\", \"block\": %" PRId64 ", \"stride\": %" PRId64 ", \"packed_bytes\": %" PRId64
                 ", \"offset\": %" PRId64 ", \"dims\": [%s], \"lowest_byte\": %" PRId64
                 ", \"pack_ns\": %.1f, \"pack_p90_ns\": %.1f, \"unpack_ns\": %.1f, \"unpack_p90_ns\": %.1f"
                 ", \"samples\": %d}%s\n",
                 to_string(p.kind), p.block, p.stride, p.packed, l.block.offset, dims_json(l.block).c_str(),
                 l.block.lowest_byte(), l.pack_median_ns, l.pack_p90_ns, l.unpack_median_ns, l.unpack_p90_ns, l.samples,
                 i + 1 < latency.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"skipped\": [");
  for (size_t i = 0; i < skipped.size(); ++i) std::fprintf(f, "%s\"%s\"", i ? ", " : "", skipped[i].c_str());
  std::fprintf(f, "]\n}\n");
  return std::fclose(f) == 0;
}

// A point of the grid before its stride is set: `packed` rounded down by
// normalize_point (0 or less when not even one block fits).
Point normalized_point(Kind kind, int64_t block, int64_t size, int64_t rows) {
  Point p;
  p.kind = kind;
  p.block = block;
  p.packed = size;
  p.rows = rows;
  normalize_point(&p);
  return p;
}

// The points to measure and the largest buffers they need.
struct Grid {
  std::vector<Point> points;
  std::vector<std::string> skipped;
  int64_t max_span = 1, max_packed = 1, max_host_span = 0, max_host_packed = 0;
};

// Adds `p` to the grid, or to its skipped list when its source spans more
// than `max_source`.
void add_point(const Point& p, int64_t max_source, int64_t host_path_max, Grid* grid) {
  const int64_t span = source_span(p);
  if (span > max_source) {
    grid->skipped.push_back(fmt("%s %" PRId64 " B x %s stride %" PRId64 ": source spans %.2f GiB > %.2f GiB",
                                to_string(p.kind), p.block, format_bytes(p.packed).c_str(), p.stride,
                                static_cast<double>(span) / (1 << 30), static_cast<double>(max_source) / (1 << 30)));
    return;
  }
  grid->max_span = std::max(grid->max_span, span);
  grid->max_packed = std::max(grid->max_packed, p.packed);
  if (span <= host_path_max) {
    grid->max_host_span = std::max(grid->max_host_span, span);
    grid->max_host_packed = std::max(grid->max_host_packed, p.packed);
  }
  grid->points.push_back(p);
}

// The grid; strides: 0 is tight (2 * block); a block as long as the stride
// or longer gets 2 * block, as in the host mode.
Grid make_grid(const DeviceOptions& o, int64_t total_memory) {
  Grid grid;
  const int64_t device_cap = total_memory > 0 ? total_memory / 3 : o.max_source;
  const int64_t max_source = std::min(o.max_source, device_cap);
  for (Kind kind : o.kinds) {
    for (int64_t block : o.blocks) {
      for (int64_t size : o.sizes) {
        std::vector<int64_t> seen;
        for (int64_t spec : o.strides) {
          Point p = normalized_point(kind, block, size, o.subarray_rows);
          if (p.packed <= 0) continue;
          p.stride = spec == 0 || block >= spec ? 2 * block : spec;
          if (std::find(seen.begin(), seen.end(), p.stride) != seen.end()) continue;
          seen.push_back(p.stride);
          add_point(p, max_source, o.host_path_max, &grid);
        }
      }
    }
  }
  return grid;
}

// Everything the report and the JSON file are made of.
struct DeviceRun {
  gpu::DeviceProperties props;
  double copy_gbps = 0;
  int64_t copy_bytes = 0;
  std::vector<DeviceResult> results;
  std::vector<LatencyResult> latency;
  Bench::Floors floor;
  std::vector<std::string> skipped;
  int failures = 0;  // points whose byte check failed (Bench::check returned false)
};

// make_layout, with its message on stderr when it fails.
bool layout_of(const Point& p, Layout* layout) {
  std::string error;
  if (make_layout(p, layout, &error)) return true;
  std::fprintf(stderr, "%s\n", error.c_str());
  return false;
}

// A point's result before any timing: its source span and rotation slots.
DeviceResult with_slots(const Point& p, const strata::StridedBlock& block, const Bench& bench, int64_t rotate_bytes) {
  DeviceResult r;
  r.point = p;
  r.block = block;
  r.lowest = r.block.lowest_byte();
  r.span = r.block.highest_byte() - r.lowest;
  r.slot_src = round_up(r.span, kSlotAlign);
  r.slot_out = round_up(p.packed, kSlotAlign);
  // Rotate over at least rotate_bytes, so that repeated packs of a source
  // that fits in L2 come from memory, as the first one would.
  const int64_t want_slots = (rotate_bytes + r.slot_src + r.slot_out - 1) / (r.slot_src + r.slot_out);
  r.slots =
      std::max<int64_t>(1, std::min({want_slots, bench.src_bytes() / r.slot_src, bench.out_bytes() / r.slot_out}));
  return r;
}

// Device events around the pack, the unpack and a contiguous copy of the
// packed size, each rotating over the point's slots.
bool time_on_device(Bench& bench, DeviceResult* r) {
  const strata::StridedBlock& b = r->block;
  const int64_t packed = r->point.packed;
  const int64_t slot_src = r->slot_src, slot_out = r->slot_out;
  char* src = bench.src_pool() - r->lowest;
  char* out = bench.out_pool();
  const gpu::Stream s = bench.stream();
  return bench.timed([&](int64_t k) { return gpu::pack_async(b, src + k * slot_src, out + k * slot_out, s); }, r->slots,
                     &r->pack) &&
         bench.timed([&](int64_t k) { return gpu::unpack_async(b, out + k * slot_out, src + k * slot_src, s); },
                     r->slots, &r->unpack) &&
         (slot_src < packed ||  // a source slot smaller than the packed bytes (overlapping blocks): no copy
          bench.timed(
              [&](int64_t k) {
                return gpu::memcpy_async(out + k * slot_out, bench.src_pool() + k * slot_src,
                                         static_cast<size_t>(packed), s);
              },
              r->slots, &r->same));
}

// One point: the byte check (a failed check counts in `failures` and the
// run goes on), the device timings and the host path. False on an error.
bool measure_device_point(Bench& bench, const DeviceOptions& o, const Point& p, DeviceResult* r, int* failures,
                          int* messages) {
  Layout layout;
  if (!layout_of(p, &layout)) return false;
  *r = with_slots(p, layout.block, bench, o.rotate_bytes);
  if (r->span <= o.check_max) {
    r->checked = true;
    if (!bench.check(layout, *r, messages)) ++*failures;
  }
  bool good = time_on_device(bench, r);
  if (good && r->span <= o.host_path_max) {
    good = bench.host_path(layout, *r, &r->host);
    r->have_host = good;
  }
  free_layout(&layout);
  return good;
}

void print_progress(int done, size_t total, const DeviceResult& r) {
  const Point& p = r.point;
  std::fprintf(stderr,
               "[%d/%zu] %-8s %4" PRId64 " B s %5" PRId64 " x %-8s pack %9.1f us %8.1f GB/s  unpack %8.1f GB/s%s\n",
               done, total, to_string(p.kind), p.block, p.stride, format_bytes(p.packed).c_str(),
               r.pack.median_ns * 1e-3, gbps(p.packed, r.pack.median_ns), gbps(p.packed, r.unpack.median_ns),
               r.have_host ? fmt("  host path %.2f GB/s", gbps(p.packed, r.host.median_ns)).c_str() : "");
}

// Every point of the grid, in order, with a progress line each on stderr.
bool measure_grid(Bench& bench, const DeviceOptions& o, const std::vector<Point>& points, DeviceRun* run) {
  int messages = 0, done = 0;
  for (const Point& p : points) {
    ++done;
    DeviceResult r;
    if (!measure_device_point(bench, o, p, &r, &run->failures, &messages)) return false;
    print_progress(done, points.size(), r);
    run->results.push_back(r);
  }
  return true;
}

bool measure_latency_point(Bench& bench, const Point& p, std::vector<LatencyResult>* latency) {
  Layout layout;
  if (!layout_of(p, &layout)) return false;
  LatencyResult l;
  l.point = p;
  l.block = layout.block;
  const bool good = bench.latency(layout.block, layout.block.lowest_byte(), &l);
  free_layout(&layout);
  if (good) latency->push_back(l);
  return good;
}

// Latency: the floors, then blocking pack/unpack of small layouts, stride 512.
bool measure_latency(Bench& bench, const DeviceOptions& o, DeviceRun* run) {
  if (!bench.floors(&run->floor)) return false;
  const std::vector<int64_t> lat_blocks = o.quick ? std::vector<int64_t>{8, 64} : std::vector<int64_t>{4, 8, 64, 512};
  const std::vector<int64_t> lat_sizes =
      o.quick ? std::vector<int64_t>{1024, 65536} : std::vector<int64_t>{256, 1024, 4096, 16384, 65536};
  for (Kind kind : o.kinds) {
    for (int64_t block : lat_blocks) {
      for (int64_t size : lat_sizes) {
        Point p = normalized_point(kind, block, size, o.subarray_rows);
        if (p.packed <= 0) continue;
        p.stride = block >= 512 ? 2 * block : 512;
        if (!measure_latency_point(bench, p, &run->latency)) return false;
      }
    }
  }
  return true;
}

void print_report_header(const DeviceOptions& o, const std::string& command, const DeviceRun& run) {
  const char* item = o.markdown ? "- " : "";
  std::printf("%sstrata-bench-pack --device: %s (%d SMs), %s\n", item, run.props.name.c_str(), run.props.sm_count,
              utc_now().c_str());
  std::printf("%scommand: %s\n", item, command.c_str());
  std::printf("%sdevice-to-device copy: %.1f GB/s of copied data (cudaMemcpy of %s)\n", item, run.copy_gbps,
              format_bytes(run.copy_bytes).c_str());
  std::printf(
      "%ssector bound = copy * b / min(32 * ceil(b / 32), max(b, stride)) GB/s of packed data "
      "(= copy * b / (32 * ceil(b/32)) at stride >= 32 * ceil(b/32))\n",
      item);
  std::printf(
      "%sGB/s: 1e9 bytes of packed data per second; device events around back-to-back launches after "
      "warm-up, median of samples; sources rotate over >= %s\n\n",
      item, format_bytes(o.rotate_bytes).c_str());
}

void print_throughput_table(const DeviceRun& run, bool markdown) {
  const double copy_gbps = run.copy_gbps;
  std::vector<std::vector<std::string>> rows;
  for (const DeviceResult& r : run.results) {
    const Point& p = r.point;
    const double go = gbps(p.packed, r.pack.median_ns);
    const double bound = sector_bound_gbps(copy_gbps, p.block, p.stride);
    rows.push_back({to_string(p.kind), std::to_string(p.block), stride_name(p), format_bytes(p.packed),
                    us(r.pack.median_ns), fmt("%.1f", go), fmt("%.1f", gbps(p.packed, r.unpack.median_ns)),
                    fmt("%.1f", bound), fmt("%.0f%%", 100 * go / bound), fmt("%.0f%%", 100 * go / copy_gbps),
                    r.same.median_ns > 0 ? fmt("%.0f%%", 100 * r.same.median_ns / r.pack.median_ns) : "-",
                    r.have_host ? fmt("%.2f", gbps(p.packed, r.host.median_ns)) : "-",
                    r.have_host ? ratio_text(r.host.median_ns / r.pack.median_ns) : "-"});
  }
  print_table({"type", "block B", "stride B", "packed", "pack µs", "pack GB/s", "unpack GB/s", "bound GB/s", "% bound",
               "% copy", "% same-size copy", "host path GB/s", "ours/host path"},
              rows, markdown);
}

// Summary against the copy-rate target, the byte check and the
// skipped points.
void print_device_summary(const DeviceRun& run, bool markdown) {
  std::printf("\n%sSummary\n\n", markdown ? "### " : "");
  double lo = 1e300, lo_same = 1e300;
  std::string worst;
  int n = 0;
  for (const DeviceResult& r : run.results) {
    if (r.point.block >= 128 && r.point.packed >= (int64_t{16} << 20)) {
      const double share = gbps(r.point.packed, r.pack.median_ns) / run.copy_gbps;
      if (r.same.median_ns > 0) lo_same = std::min(lo_same, r.same.median_ns / r.pack.median_ns);
      ++n;
      if (share < lo) {
        lo = share;
        worst = fmt("%s %" PRId64 " B s %" PRId64 " x %s", to_string(r.point.kind), r.point.block, r.point.stride,
                    format_bytes(r.point.packed).c_str());
      }
    }
  }
  if (n > 0)
    std::printf(
        "%sblocks >= 128 B at >= 16 MiB (%d points): pack at >= %.0f%% of the copy rate (worst %s; target "
        ">= 80%%: %s), at >= %.0f%% of a copy of the same size\n",
        markdown ? "- " : "  ", n, 100 * lo, worst.c_str(), lo >= 0.8 ? "met" : "NOT met", 100 * lo_same);
  int checked = 0;
  for (const DeviceResult& r : run.results) checked += r.checked ? 1 : 0;
  std::printf("%scheck: %d of %zu points packed and unpacked byte for byte like MPI_Pack/MPI_Unpack; %d mismatches\n",
              markdown ? "- " : "  ", checked, run.results.size(), run.failures);
  for (const std::string& s : run.skipped) std::printf("%sskipped: %s\n", markdown ? "- " : "  ", s.c_str());
}

void print_latency_table(const DeviceRun& run, bool markdown) {
  std::printf("\n%sLatency: blocking pack/unpack (launch + stream synchronize), host clock, median of 500\n\n",
              markdown ? "### " : "");
  std::vector<std::vector<std::string>> lrows;
  double worst_us = 0;
  for (const LatencyResult& l : run.latency) {
    const Point& p = l.point;
    worst_us = std::max({worst_us, l.pack_median_ns * 1e-3, l.unpack_median_ns * 1e-3});
    lrows.push_back({to_string(p.kind), std::to_string(p.block), std::to_string(p.stride), format_bytes(p.packed),
                     fmt("%.2f", l.pack_median_ns * 1e-3), fmt("%.2f", l.pack_p90_ns * 1e-3),
                     fmt("%.2f", l.unpack_median_ns * 1e-3), fmt("%.2f", l.unpack_p90_ns * 1e-3)});
  }
  print_table({"type", "block B", "stride B", "packed", "pack µs", "pack p90 µs", "unpack µs", "unpack p90 µs"}, lrows,
              markdown);
  std::printf("\n%sworst median %.2f µs (target <= 8 µs for <= 64 KiB: %s)\n", markdown ? "- " : "  ", worst_us,
              worst_us <= 8 ? "met" : "NOT met");
  const Bench::Floors& floor = run.floor;
  std::printf(
      "%sfloors, timed the same way: a 1-byte device copy %.2f µs, the smallest pack kernel (one 1-byte "
      "block) %.2f µs, of which the launch call %.2f µs; the same kernel waited for by spinning on an "
      "event %.2f µs\n",
      markdown ? "- " : "  ", floor.copy_ns * 1e-3, floor.kernel_ns * 1e-3, floor.launch_ns * 1e-3,
      floor.kernel_spin_ns * 1e-3);
}

void print_report(const DeviceOptions& o, const std::string& command, const DeviceRun& run) {
  print_report_header(o, command, run);
  print_throughput_table(run, o.markdown);
  print_device_summary(run, o.markdown);
  if (!run.latency.empty()) print_latency_table(run, o.markdown);
}

}  // namespace

int run_device(const DeviceOptions& o, const std::string& command) {
  if (!gpu::available()) {
    std::printf("strata-bench-pack --device: no GPU (strata::gpu::available() is false); skipped\n");
    return 0;
  }
  int device = 0;
  DeviceRun run;
  if (!ok(gpu::get_device(&device), "get_device") || !ok(gpu::properties(device, &run.props), "properties")) return 2;
  const int64_t total_memory = run.props.total_memory;
  Grid grid = make_grid(o, total_memory);
  run.skipped = std::move(grid.skipped);

  Bench bench(o);
  if (!bench.init(grid.max_span, grid.max_packed, grid.max_host_span, grid.max_host_packed)) return 2;
  run.copy_bytes = std::min(o.copy_bytes, total_memory > 0 ? total_memory / 8 : o.copy_bytes);
  if (!bench.copy_rate(run.copy_bytes, &run.copy_gbps)) return 2;
  std::fprintf(stderr, "%s: %d SMs; device-to-device copy %.1f GB/s of copied data (%s)\n", run.props.name.c_str(),
               run.props.sm_count, run.copy_gbps, format_bytes(run.copy_bytes).c_str());

  if (!measure_grid(bench, o, grid.points, &run)) return 2;
  if (o.latency && !measure_latency(bench, o, &run)) return 2;
  print_report(o, command, run);

  if (!o.json.empty() && !write_device_json(o.json, command, run.props, run.copy_gbps, run.copy_bytes, run.results,
                                            run.latency, run.skipped)) {
    std::fprintf(stderr, "cannot write %s\n", o.json.c_str());
    return 2;
  }
  return run.failures > 0 ? 1 : 0;
}

}  // namespace strata_bench
