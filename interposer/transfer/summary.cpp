#include "interposer/transfer/summary.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/log_file.hpp"
#include "collectives/job_facts.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/summary_time.hpp"
#include "mpi/real_mpi.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace strata::interposer {
namespace {

using mpi::real;

config::BoolParam g_summary{"STRATA_SUMMARY", false,
                            "At MPI_Finalize rank 0 prints what Strata did in the job: each counter and the time by "
                            "path (Strata's own code, the MPI library) summed over the ranks, with the smallest and "
                            "largest rank's (set it on every rank)"};
config::StringParam g_summary_json{"STRATA_SUMMARY_JSON", "",
                                   "With STRATA_SUMMARY=1: rank 0 also writes the summary as JSON to this file"};

struct Count {
  const char* key;    // JSON key
  const char* label;  // table row
  uint64_t value;
  bool ns = false;  // a time (nanoseconds; the table shows seconds), else a count
};

std::vector<Count> my_counts() {
  const Counters& c = counters();
  std::vector<Count> counts = {
      {"calls_intercepted", "MPI calls intercepted", calls_intercepted()},
      {"calls_passed_through", "passed through untouched (STRATA_DISABLE)", calls_passed_through()},
#define STRATA_COUNTER_ROW(name, what) {#name, what, c.name.load(), is_time_counter(#name)},
      STRATA_INTERPOSER_COUNTERS(STRATA_COUNTER_ROW, STRATA_COUNTER_ROW)
#undef STRATA_COUNTER_ROW
  };
  // Calls and time by path (summary_time.hpp): straight to the library, or
  // through Strata's handlers by call family, split into Strata's own code
  // and the library's calls. The counts first, then the times.
  static const char* const kCallsKey[] = {"p2p_calls_handled", "collective_calls_handled", "completion_calls_handled",
                                          "other_calls_handled"};
  static const char* const kCallsLabel[] = {
      "point-to-point calls through Strata's handlers", "collective calls through Strata's handlers",
      "waits and tests through Strata's handlers", "other calls through Strata's handlers"};
  static const char* const kStrataKey[] = {"p2p_strata_ns", "collective_strata_ns", "completion_strata_ns",
                                           "other_strata_ns"};
  static const char* const kStrataLabel[] = {"point-to-point: in Strata's own code",
                                             "collectives: in Strata's own code",
                                             "waits and tests: in Strata's own code", "other: in Strata's own code"};
  static const char* const kLibraryKey[] = {"p2p_library_ns", "collective_library_ns", "completion_library_ns",
                                            "other_library_ns"};
  static const char* const kLibraryLabel[] = {"point-to-point: in the MPI library", "collectives: in the MPI library",
                                              "waits and tests: in the MPI library", "other: in the MPI library"};
  const CallTimes t = call_times();
  counts.push_back({"library_calls_passed", "library calls passed straight through (no handler)", t.passthrough_calls});
  for (int f = 0; f < kCallFamilies; ++f) counts.push_back({kCallsKey[f], kCallsLabel[f], t.calls[f]});
  counts.push_back(
      {"passed_library_ns", "passed straight through: in the MPI library", t.passthrough_library_ns, true});
  for (int f = 0; f < kCallFamilies; ++f) {
    const uint64_t library = t.library_ns[f] < t.total_ns[f] ? t.library_ns[f] : t.total_ns[f];
    counts.push_back({kStrataKey[f], kStrataLabel[f], t.total_ns[f] - library, true});
    counts.push_back({kLibraryKey[f], kLibraryLabel[f], library, true});
  }
  return counts;
}

void write_out(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(log::destination(), text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string table(const std::vector<Count>& counts, const std::vector<uint64_t>& sum, const std::vector<uint64_t>& min,
                  const std::vector<uint64_t>& max, int ranks) {
  std::string out = "strata summary at MPI_Finalize, " + std::to_string(ranks) + " ranks\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-52s %14s %12s %12s\n", "", "job total", "least rank", "most rank");
  out += line;
  bool times = false;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i].ns) {
      if (!times) {
        times = true;
        std::snprintf(line, sizeof line, "  %-52s %14s %12s %12s\n", "time by path, seconds", "job total", "least rank",
                      "most rank");
        out += line;
      }
      std::snprintf(line, sizeof line, "  %-52s %14.6f %12.6f %12.6f\n", counts[i].label, 1e-9 * sum[i], 1e-9 * min[i],
                    1e-9 * max[i]);
    } else {
      std::snprintf(line, sizeof line, "  %-52s %14llu %12llu %12llu\n", counts[i].label,
                    static_cast<unsigned long long>(sum[i]), static_cast<unsigned long long>(min[i]),
                    static_cast<unsigned long long>(max[i]));
    }
    out += line;
  }
  return out;
}

void write_json(const std::string& path, const std::vector<Count>& counts, const std::vector<uint64_t>& sum,
                const std::vector<uint64_t>& min, const std::vector<uint64_t>& max, int ranks) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    STRATA_LOG(warn, kShim, "STRATA_SUMMARY_JSON: cannot write %s", path.c_str());
    return;
  }
  std::fprintf(f, "{\n  \"tool\": \"strata summary\",\n  \"ranks\": %d,\n  \"counters\": {", ranks);
  for (bool ns : {false, true}) {
    if (ns) std::fprintf(f, "\n  },\n  \"time_ns\": {");
    bool first = true;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i].ns != ns) continue;
      std::fprintf(f, "%s\n    \"%s\": {\"total\": %llu, \"min\": %llu, \"max\": %llu}", first ? "" : ",",
                   counts[i].key, static_cast<unsigned long long>(sum[i]), static_cast<unsigned long long>(min[i]),
                   static_cast<unsigned long long>(max[i]));
      first = false;
    }
  }
  std::fprintf(f, "\n  }\n}\n");
  if (std::fclose(f) != 0) STRATA_LOG(warn, kShim, "STRATA_SUMMARY_JSON: cannot write %s", path.c_str());
}

}  // namespace

uint8_t summary_flag() {
  if (!g_summary.get()) return 0;
  start_call_timing();  // at MPI_Init: the time by path from here on
  return kSummaryFlag;
}

void summarise_job() {
  if (!coll::caller_flag_everywhere(kSummaryFlag)) {
    if (g_summary.get()) {
      STRATA_LOG(warn, kShim, "STRATA_SUMMARY=1 is not set on every rank: no summary (mpirun -x STRATA_SUMMARY)");
    }
    return;
  }
  const std::vector<Count> counts = my_counts();
  const int n = static_cast<int>(counts.size());
  std::vector<uint64_t> mine, sum(counts.size()), min(counts.size()), max(counts.size());
  for (const Count& c : counts) mine.push_back(c.value);
  int rank = 0, ranks = 0;
  real().MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  real().MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (real().MPI_Reduce(mine.data(), sum.data(), n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      real().MPI_Reduce(mine.data(), min.data(), n, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      real().MPI_Reduce(mine.data(), max.data(), n, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    STRATA_LOG(warn, kShim, "STRATA_SUMMARY: the reduction of the counters failed; no summary");
    return;
  }
  if (rank != 0) return;
  write_out(table(counts, sum, min, max, ranks));
  if (!g_summary_json.get().empty()) write_json(g_summary_json.get(), counts, sum, min, max, ranks);
}

}  // namespace strata::interposer
