// The result table (plain or markdown), the summary against the targets, and
// the JSON a performance model can be fitted from.
#include "bench/pack/bench_pack.hpp"

#include "tools/cli/osu_table.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace strata_bench {
namespace {

constexpr int64_t kLine = 64;

double gbps(int64_t bytes, double ns) { return ns > 0 ? static_cast<double>(bytes) / ns : 0; }
double ratio(const Result& r) { return r.strata.median_ns > 0 ? r.library.median_ns / r.strata.median_ns : 0; }

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string fmt_us(double ns) {
  const double us = ns * 1e-3;
  if (us < 10) return fmt("%.3f", us);
  if (us < 1000) return fmt("%.1f", us);
  return fmt("%.0f", us);
}

std::string point_name(const Point& p) {
  return std::string(to_string(p.kind)) + " " + std::to_string(p.block) + " B x " + format_bytes(p.packed);
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

// A block of b bytes at a stride of at least a line costs ceil(b/64) lines of
// traffic: the rate of useful packed bytes is at most that share of memcpy's.
double bound_gbps(double memcpy_gbps, int64_t block) {
  const int64_t lines = (block + kLine - 1) / kLine;
  return memcpy_gbps * static_cast<double>(block) / static_cast<double>(kLine * lines);
}

void print_table(const RunInfo& info, const std::vector<Result>& results, bool markdown) {
  const char* head[] = {"type",         "block B",   "packed",         "library µs",      "ours µs",
                        "library GB/s", "ours GB/s", "ratio lib/ours", "library % bound", "ours % bound"};
  constexpr int kCols = 10;
  std::vector<std::vector<std::string>> rows;
  for (const Result& r : results) {
    const Point& p = r.point;
    const double bound = bound_gbps(info.memcpy_gbps, p.block);
    const double gl = gbps(p.packed, r.library.median_ns), go = gbps(p.packed, r.strata.median_ns);
    std::string block = std::to_string(p.block);
    if (p.stride != 512) block += " (s " + std::to_string(p.stride) + ")";
    std::string rt = fmt("%.2f", ratio(r));
    if (r.noisy) rt += " ~";
    rows.push_back({to_string(p.kind), block, format_bytes(p.packed), fmt_us(r.library.median_ns),
                    fmt_us(r.strata.median_ns), fmt("%.3f", gl), fmt("%.3f", go), rt, fmt("%.0f%%", 100 * gl / bound),
                    fmt("%.0f%%", 100 * go / bound)});
  }
  if (markdown) {
    std::printf("|");
    for (const char* h : head) std::printf(" %s |", h);
    std::printf("\n|");
    for (int c = 0; c < kCols; ++c) std::printf(c < 3 ? " --- |" : " ---: |");
    std::printf("\n");
    for (const auto& row : rows) {
      std::printf("|");
      for (const auto& cell : row) std::printf(" %s |", cell.c_str());
      std::printf("\n");
    }
    return;
  }
  size_t width[kCols];
  for (int c = 0; c < kCols; ++c) {
    width[c] = std::string(head[c]).size() - (c == 3 || c == 4 ? 1 : 0);  // "µ" is two bytes
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  for (int c = 0; c < kCols; ++c)
    std::printf(c < 3 ? "%-*s  " : "%*s  ", static_cast<int>(width[c] + (c == 3 || c == 4 ? 1 : 0)), head[c]);
  std::printf("\n");
  for (const auto& row : rows) {
    for (int c = 0; c < kCols; ++c) std::printf(c < 3 ? "%-*s  " : "%*s  ", static_cast<int>(width[c]), row[c].c_str());
    std::printf("\n");
  }
}

void print_summary(const RunInfo& info, const std::vector<Result>& results, bool markdown) {
  const char* item = markdown ? "- " : "  ";
  std::printf("\n%sSummary\n\n", markdown ? "### " : "");
  // The target: >= 1.5x for blocks <= 16 B at >= 1 MiB packed.
  double lo = 1e300, hi = 0;
  std::vector<double> target;
  std::string worst;
  for (const Result& r : results) {
    if (r.point.block <= 16 && r.point.packed >= (int64_t{1} << 20)) {
      const double x = ratio(r);
      target.push_back(x);
      if (x < lo) lo = x, worst = point_name(r.point);
      hi = std::max(hi, x);
    }
  }
  if (!target.empty()) {
    std::sort(target.begin(), target.end());
    std::printf(
        "%sblocks <= 16 B at >= 1 MiB packed (%zu points): ratio min %.2fx (%s), median %.2fx, max %.2fx "
        "(target >= 1.5x: %s)\n",
        item, target.size(), lo, worst.c_str(), target[target.size() / 2], hi, lo >= 1.5 ? "met" : "NOT met");
  }
  for (double limit : {1.0, 0.95}) {
    std::string list;
    int n = 0;
    for (const Result& r : results) {
      if (ratio(r) < limit) {
        list += (n++ ? "; " : "") + point_name(r.point) + fmt(" (%.2fx", ratio(r)) + (r.noisy ? ", noisy)" : ")");
      }
    }
    std::printf("%spoints below %.2fx: %d%s%s\n", item, limit, n, n ? ": " : "", list.c_str());
  }
  int noisy = 0;
  for (const Result& r : results) noisy += r.noisy;
  if (noisy)
    std::printf("%s%d point(s) marked ~: quartile spread above 15%% after re-measuring (machine busy)\n", item, noisy);
  for (const std::string& s : info.skipped) std::printf("%sskipped: %s\n", item, s.c_str());
  for (const std::string& s : info.notes) std::printf("%s%s\n", item, s.c_str());
}

void print_osu(const RunInfo& info, const std::vector<Result>& results) {
  std::printf("# strata-bench-pack --osu: MPI_Pack of the MPI library (the peer) and Strata's pack_host, one rank\n");
  std::printf("# CPU: %s; MPI: %s; %s\n", info.cpu.c_str(), info.mpi.c_str(), info.date.c_str());
  std::printf("# memcpy %.2f GB/s (%s); Size: packed bytes; Latency: one pack (median); Ratio: MPI / Strata\n",
              info.memcpy_gbps, format_bytes(info.memcpy_bytes).c_str());
  // One section per shape, in the order the shapes were measured.
  std::vector<const Result*> order;
  order.reserve(results.size());
  for (const Result& r : results) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const Result* a, const Result* b) {
    const Point &x = a->point, &y = b->point;
    if (x.kind != y.kind) return static_cast<int>(x.kind) < static_cast<int>(y.kind);
    if (x.block != y.block) return x.block < y.block;
    if (x.stride != y.stride) return x.stride < y.stride;
    return x.packed < y.packed;
  });
  for (size_t i = 0; i < order.size();) {
    const Point& shape = order[i]->point;
    strata::tools::OsuTable table(
        {"MPI Latency (us)", "Strata Latency (us)", "MPI Bandwidth (MB/s)", "Strata Bandwidth (MB/s)", "Ratio"});
    table.comment(
        fmt("%s, blocks of %" PRId64 " B at stride %" PRId64 " B", to_string(shape.kind), shape.block, shape.stride));
    for (; i < order.size() && order[i]->point.kind == shape.kind && order[i]->point.block == shape.block &&
           order[i]->point.stride == shape.stride;
         ++i) {
      const Result& r = *order[i];
      const double lib_us = r.library.median_ns * 1e-3, ours_us = r.strata.median_ns * 1e-3;
      table.add_row(r.point.packed, {lib_us, ours_us, strata::tools::osu_mbps(r.point.packed, lib_us),
                                     strata::tools::osu_mbps(r.point.packed, ours_us), ratio(r)});
    }
    std::printf("\n%s", table.str().c_str());
  }
}

bool write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& results) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "{\n  \"tool\": \"strata-bench-pack\",\n  \"format\": 1,\n");
  std::fprintf(f, "  \"command\": \"%s\",\n  \"cpu\": \"%s\",\n  \"mpi\": \"%s\",\n  \"date\": \"%s\",\n",
               json_escape(info.command).c_str(), json_escape(info.cpu).c_str(), json_escape(info.mpi).c_str(),
               json_escape(info.date).c_str());
  std::fprintf(f, "  \"memcpy_gbps\": %.4f,\n  \"memcpy_bytes\": %" PRId64 ",\n  \"line_bytes\": %" PRId64 ",\n",
               info.memcpy_gbps, info.memcpy_bytes, kLine);
  std::fprintf(f, "  \"points\": [\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Point& p = r.point;
    std::fprintf(f,
                 "    {\"type\": \"%s\", \"block\": %" PRId64 ", \"stride\": %" PRId64 ", \"packed_bytes\": %" PRId64
                 ", \"library_ns\": %.1f, \"strata_ns\": %.1f, \"library_p25_ns\": %.1f, \"library_p75_ns\": %.1f"
                 ", \"strata_p25_ns\": %.1f, \"strata_p75_ns\": %.1f, \"samples\": %d, \"reps\": %d"
                 ", \"noisy\": %s}%s\n",
                 to_string(p.kind), p.block, p.stride, p.packed, r.library.median_ns, r.strata.median_ns,
                 r.library.p25_ns, r.library.p75_ns, r.strata.p25_ns, r.strata.p75_ns, r.library.samples,
                 r.library.reps, r.noisy ? "true" : "false", i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"skipped\": [");
  for (size_t i = 0; i < info.skipped.size(); ++i)
    std::fprintf(f, "%s\"%s\"", i ? ", " : "", json_escape(info.skipped[i]).c_str());
  std::fprintf(f, "]\n}\n");
  return std::fclose(f) == 0;
}

}  // namespace strata_bench
