#include "bench/coll/rows.hpp"

#include "tools/cli/run_metadata.hpp"

#include <algorithm>
#include <cstdio>

namespace strata_bench {
namespace {

// Whether a row has an in-place timing to show (else its cells are "-").
bool shows_in_place(const Row& r, bool in_place) { return in_place && has_in_place(r.c.collective); }

// The in-place cells of the table: time, algbw, busbw, verified (or why not).
void print_in_place_cells(const Row& r, int ranks, bool in_place) {
  const Timing& t = r.in_place;
  if (!shows_in_place(r, in_place)) {
    std::printf(" - | - | - | - |");
  } else if (t.ran) {
    std::printf(" %.1f | %.2f | %.2f | %s |", t.us, algo_bandwidth(r.c, t), bus_bandwidth(r.c, t, ranks),
                t.verified ? "yes" : "NO");
  } else {
    std::printf(" - | - | - | %s |", t.note.empty() ? "-" : t.note.c_str());
  }
}

// nccl-tests' "# Avg bus bandwidth" line of one algorithm, over the sizes
// whose `pick`ed timing ran.
template <class Pick>
void print_average(const std::vector<Row>& rows, int ranks, const std::string& name, const char* what, Pick pick) {
  double sum = 0;
  int n = 0;
  for (const Row& r : rows) {
    const Timing& t = pick(r);
    if (r.algorithm != name || !t.ran) continue;
    sum += bus_bandwidth(r.c, t, ranks);
    ++n;
  }
  if (n > 0) std::printf("# Avg bus bandwidth    : %.3f GB/s  %s%s (%d sizes)\n", sum / n, name.c_str(), what, n);
}

}  // namespace

double algo_bandwidth(const Case& c, const Timing& t) { return static_cast<double>(c.bytes) / (t.us * 1e3); }
double bus_bandwidth(const Case& c, const Timing& t, int ranks) {
  return algo_bandwidth(c, t) * bus_factor(c.collective, ranks);
}

void print_header(bool in_place) {
  std::printf(
      "| collective | size (B) | count | type | redop | algorithm | time µs | algbw GB/s | busbw GB/s | "
      "model µs | model / measured | peer / this | verified |%s\n",
      in_place ? " in-place µs | in-place algbw GB/s | in-place busbw GB/s | in-place verified |" : "");
  std::printf("| --- | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |%s\n",
              in_place ? " ---: | ---: | ---: | --- |" : "");
}

void print_row(const Row& r, int ranks, bool in_place) {
  if (!r.timing.ran) {
    std::printf("| %s | %zu | %zu | %s | %s | %s | - | - | - | - | - | - | %s |",
                strata::coll::to_string(r.c.collective), r.c.bytes, r.c.count, strata::coll::to_string(r.c.type),
                strata::coll::to_string(r.c.op), r.algorithm.c_str(), r.timing.note.c_str());
  } else {
    char pred[32] = "-", ratio[32] = "-", vs[32] = "-";
    if (r.predicted_us > 0) {
      std::snprintf(pred, sizeof pred, "%.1f", r.predicted_us);
      std::snprintf(ratio, sizeof ratio, "%.2f", r.predicted_us / r.timing.us);
    }
    if (r.peer_us > 0) std::snprintf(vs, sizeof vs, "%.2f", r.peer_us / r.timing.us);
    std::printf("| %s | %zu | %zu | %s | %s | %s | %.1f | %.2f | %.2f | %s | %s | %s | %s |",
                strata::coll::to_string(r.c.collective), r.c.bytes, r.c.count, strata::coll::to_string(r.c.type),
                strata::coll::to_string(r.c.op), r.algorithm.c_str(), r.timing.us, algo_bandwidth(r.c, r.timing),
                bus_bandwidth(r.c, r.timing, ranks), pred, ratio, vs, r.timing.verified ? "yes" : "NO");
  }
  if (in_place) print_in_place_cells(r, ranks, in_place);
  std::printf("\n");
}

// nccl-tests' closing lines: the average bus bandwidth (here per algorithm,
// over the sizes that ran; in place on a line of its own) and the count of
// results that failed to verify (in place included).
// The model's prediction over the measured time, its range below 1 MiB and
// from 1 MiB up, per algorithm (the cost model's targets: within 30% below,
// 20% from 1 MiB; docs/scaling.md).
void print_model_ranges(const std::vector<Row>& rows, const std::string& name) {
  double lo[2] = {0, 0}, hi[2] = {0, 0};
  int n[2] = {0, 0};
  for (const Row& r : rows) {
    if (r.algorithm != name || !r.timing.ran || r.timing.us <= 0 || r.predicted_us <= 0) continue;
    const int big = r.c.bytes >= (size_t{1} << 20) ? 1 : 0;
    const double q = r.predicted_us / r.timing.us;
    lo[big] = n[big] == 0 ? q : std::min(lo[big], q);
    hi[big] = n[big] == 0 ? q : std::max(hi[big], q);
    ++n[big];
  }
  if (n[0] + n[1] == 0) return;
  std::printf("# model / measured, %s:", name.c_str());
  if (n[0] > 0) std::printf(" below 1 MiB %.2f-%.2f (%d points);", lo[0], hi[0], n[0]);
  if (n[1] > 0) std::printf(" from 1 MiB %.2f-%.2f (%d points)", lo[1], hi[1], n[1]);
  std::printf("\n");
}

void print_closing_lines(const std::vector<Row>& rows, int ranks, bool in_place) {
  std::vector<std::string> names;
  for (const Row& r : rows) {
    if (std::find(names.begin(), names.end(), r.algorithm) == names.end()) names.push_back(r.algorithm);
  }
  int wrong = 0;
  for (const Row& r : rows) wrong += (r.timing.wrong ? 1 : 0) + (r.in_place.wrong ? 1 : 0);
  std::printf("\n");
  for (const std::string& name : names) {
    print_average(rows, ranks, name, "", [](const Row& r) -> const Timing& { return r.timing; });
    if (in_place)
      print_average(rows, ranks, name, " in place", [](const Row& r) -> const Timing& { return r.in_place; });
  }
  for (const std::string& name : names) print_model_ranges(rows, name);
  std::printf("# #wrong (results that failed verification) : %d\n", wrong);
}

nlohmann::json to_json(const std::vector<Row>& rows, int ranks, bool in_place, int argc, char** argv) {
  nlohmann::json doc = strata::tools::run_metadata("strata-bench-coll", argc, argv);
  doc["ranks"] = ranks;
  nlohmann::json& out = doc["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json row = {{"collective", strata::coll::to_string(r.c.collective)},
                          {"bytes", r.c.bytes},
                          {"count", r.c.count},
                          {"type", strata::coll::to_string(r.c.type)},
                          {"redop", strata::coll::to_string(r.c.op)},
                          {"algorithm", r.algorithm},
                          {"ran", r.timing.ran},
                          {"verified", r.timing.verified}};
    if (r.timing.ran) {
      row["time_us"] = r.timing.us;
      row["algbw_gbps"] = algo_bandwidth(r.c, r.timing);
      row["busbw_gbps"] = bus_bandwidth(r.c, r.timing, ranks);
    } else {
      row["note"] = r.timing.note;
    }
    if (r.predicted_us > 0) row["model_us"] = r.predicted_us;
    if (r.peer_us > 0) row["peer_us"] = r.peer_us;
    if (shows_in_place(r, in_place)) {
      const Timing& t = r.in_place;
      row["in_place_ran"] = t.ran;
      row["in_place_verified"] = t.verified;
      if (t.ran) {
        row["in_place_time_us"] = t.us;
        row["in_place_algbw_gbps"] = algo_bandwidth(r.c, t);
        row["in_place_busbw_gbps"] = bus_bandwidth(r.c, t, ranks);
      } else {
        row["in_place_note"] = t.note;
      }
    }
    out.push_back(row);
  }
  return doc;
}

bool write_csv(const std::string& path, const std::vector<Row>& rows, int ranks, bool in_place) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "strata-bench-coll: cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(
      f, "collective,bytes,count,type,redop,algorithm,time_us,algbw_gbps,busbw_gbps,model_us,peer_us,verified%s\n",
      in_place ? ",in_place_time_us,in_place_algbw_gbps,in_place_busbw_gbps,in_place_verified" : "");
  for (const Row& r : rows) {
    if (!r.timing.ran) continue;
    std::fprintf(f, "%s,%zu,%zu,%s,%s,\"%s\",%.3f,%.4f,%.4f,%.3f,%.3f,%d", strata::coll::to_string(r.c.collective),
                 r.c.bytes, r.c.count, strata::coll::to_string(r.c.type), strata::coll::to_string(r.c.op),
                 r.algorithm.c_str(), r.timing.us, algo_bandwidth(r.c, r.timing), bus_bandwidth(r.c, r.timing, ranks),
                 r.predicted_us, r.peer_us, r.timing.verified ? 1 : 0);
    const Timing& t = r.in_place;
    if (in_place && shows_in_place(r, in_place) && t.ran) {
      std::fprintf(f, ",%.3f,%.4f,%.4f,%d", t.us, algo_bandwidth(r.c, t), bus_bandwidth(r.c, t, ranks),
                   t.verified ? 1 : 0);
    } else if (in_place) {
      std::fprintf(f, ",,,,");  // not timed in place (or it did not run)
    }
    std::fprintf(f, "\n");
  }
  return std::fclose(f) == 0;
}

}  // namespace strata_bench
