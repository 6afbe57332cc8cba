#include "bench/coll/rows.hpp"

#include "tools/cli/run_metadata.hpp"

#include <algorithm>
#include <cstdio>

namespace strata_bench {

void print_header() {
  std::printf(
      "| collective | size (B) | count | type | redop | algorithm | time µs | algbw GB/s | busbw GB/s | "
      "model µs | model / measured | peer / this | verified |\n");
  std::printf("| --- | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
}

double algo_bandwidth(const Row& r) { return static_cast<double>(r.c.bytes) / (r.timing.us * 1e3); }
double bus_bandwidth(const Row& r, int ranks) { return algo_bandwidth(r) * bus_factor(r.c.collective, ranks); }

void print_row(const Row& r, int ranks) {
  if (!r.timing.ran) {
    std::printf("| %s | %zu | %zu | %s | %s | %s | - | - | - | - | - | - | %s |\n",
                strata::coll::to_string(r.c.collective), r.c.bytes, r.c.count, strata::coll::to_string(r.c.type),
                strata::coll::to_string(r.c.op), r.algorithm.c_str(), r.timing.note.c_str());
    return;
  }
  const double algbw = algo_bandwidth(r);
  const double busbw = bus_bandwidth(r, ranks);
  char pred[32] = "-", ratio[32] = "-", vs[32] = "-";
  if (r.predicted_us > 0) {
    std::snprintf(pred, sizeof pred, "%.1f", r.predicted_us);
    std::snprintf(ratio, sizeof ratio, "%.2f", r.predicted_us / r.timing.us);
  }
  if (r.peer_us > 0) std::snprintf(vs, sizeof vs, "%.2f", r.peer_us / r.timing.us);
  std::printf("| %s | %zu | %zu | %s | %s | %s | %.1f | %.2f | %.2f | %s | %s | %s | %s |\n",
              strata::coll::to_string(r.c.collective), r.c.bytes, r.c.count, strata::coll::to_string(r.c.type),
              strata::coll::to_string(r.c.op), r.algorithm.c_str(), r.timing.us, algbw, busbw, pred, ratio, vs,
              r.timing.verified ? "yes" : "NO");
}

// nccl-tests' closing lines: the average bus bandwidth (here per algorithm,
// over the sizes that ran) and the count of results that failed to verify.
void print_closing_lines(const std::vector<Row>& rows, int ranks) {
  std::vector<std::string> names;
  for (const Row& r : rows) {
    if (std::find(names.begin(), names.end(), r.algorithm) == names.end()) names.push_back(r.algorithm);
  }
  int wrong = 0;
  for (const Row& r : rows) wrong += r.timing.wrong ? 1 : 0;
  std::printf("\n");
  for (const std::string& name : names) {
    double sum = 0;
    int n = 0;
    for (const Row& r : rows) {
      if (r.algorithm != name || !r.timing.ran) continue;
      sum += bus_bandwidth(r, ranks);
      ++n;
    }
    if (n > 0) std::printf("# Avg bus bandwidth    : %.3f GB/s  %s (%d sizes)\n", sum / n, name.c_str(), n);
  }
  std::printf("# #wrong (results that failed verification) : %d\n", wrong);
}

nlohmann::json to_json(const std::vector<Row>& rows, int ranks, int argc, char** argv) {
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
      row["algbw_gbps"] = algo_bandwidth(r);
      row["busbw_gbps"] = bus_bandwidth(r, ranks);
    } else {
      row["note"] = r.timing.note;
    }
    if (r.predicted_us > 0) row["model_us"] = r.predicted_us;
    if (r.peer_us > 0) row["peer_us"] = r.peer_us;
    out.push_back(row);
  }
  return doc;
}

bool write_csv(const std::string& path, const std::vector<Row>& rows, int ranks) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "strata-bench-coll: cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(f,
               "collective,bytes,count,type,redop,algorithm,time_us,algbw_gbps,busbw_gbps,model_us,peer_us,verified\n");
  for (const Row& r : rows) {
    if (!r.timing.ran) continue;
    std::fprintf(f, "%s,%zu,%zu,%s,%s,\"%s\",%.3f,%.4f,%.4f,%.3f,%.3f,%d\n", strata::coll::to_string(r.c.collective),
                 r.c.bytes, r.c.count, strata::coll::to_string(r.c.type), strata::coll::to_string(r.c.op),
                 r.algorithm.c_str(), r.timing.us, algo_bandwidth(r), bus_bandwidth(r, ranks), r.predicted_us,
                 r.peer_us, r.timing.verified ? 1 : 0);
  }
  return std::fclose(f) == 0;
}

}  // namespace strata_bench
