// A plain MPI job for STRATA_SUMMARY (tests/interposer/CMakeLists.txt runs
// it preloaded): every rank sends a vector type around a ring and reduces a
// little, then finalizes; rank 0 then reads what Strata wrote at
// MPI_Finalize. `summary`: the JSON (STRATA_SUMMARY_JSON) has the job's
// counters (ranks, calls, packed sends summed over the ranks) and the log
// (STRATA_LOG_FILE) the table. The time by path too: rank 1 sleeps before
// its first send, so the rank that receives from it waits in the library
// for about kSleepMs: that time must be the library's share of the
// point-to-point calls (the most of one rank), not Strata's own; the
// reductions pass straight to the library; no rank's times add up to more
// than the job lasted. `none`: STRATA_SUMMARY was set on rank 0 only,
// so there is no summary (no JSON, no table), a warning, and no hang.
// Prints "ok ..." or "FAILED ..." (exit 1).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kRounds = 10;
constexpr int kReductions = 5;
constexpr int kSleepMs = 600;

std::string read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Field {
  long long total = -1, min = -1, max = -1;  // -1: missing or inconsistent
};

// One counter or time of the summary JSON.
Field field_of(const std::string& json, const std::string& key) {
  const std::regex field("\"" + key + "\": \\{\"total\": ([0-9]+), \"min\": ([0-9]+), \"max\": ([0-9]+)\\}");
  std::smatch m;
  if (!std::regex_search(json, m, field)) return {};
  const Field f{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
  if (f.min > f.max || f.max > f.total) return {};
  return f;
}

// The "total" of one counter in the summary JSON, or -1.
long long total_of(const std::string& json, const std::string& key) { return field_of(json, key).total; }

int fail(const std::string& why) {
  std::printf("FAILED %s\n", why.c_str());
  return 1;
}

// The time by path (summary_time.hpp) against what the job did; "" or the failure.
std::string check_times(const std::string& json, int ranks, double job_seconds) {
  const char* families[] = {"p2p", "collective", "completion", "other"};
  double all = 0;
  for (const char* f : families) {
    const Field strata = field_of(json, std::string(f) + "_strata_ns");
    const Field library = field_of(json, std::string(f) + "_library_ns");
    if (strata.total < 0 || library.total < 0 || total_of(json, std::string(f) + "_calls_handled") < 0) {
      return std::string("no consistent time of ") + f;
    }
    all += 1e-9 * static_cast<double>(strata.total + library.total);
  }
  const Field passed = field_of(json, "passed_library_ns");
  if (passed.total < 0) return "no time of the calls passed to the library";
  all += 1e-9 * static_cast<double>(passed.total);
  // Each rank's calls lie within its own run of the job.
  if (all > ranks * (job_seconds + 1.0)) {
    return "the ranks' MPI time " + std::to_string(all) + " s exceeds " + std::to_string(ranks) + " x the job's " +
           std::to_string(job_seconds) + " s";
  }
  const Field p2p_calls = field_of(json, "p2p_calls_handled");
  if (p2p_calls.total < static_cast<long long>(ranks) * kRounds) return "p2p_calls_handled below the sendrecvs";
  const Field p2p_strata = field_of(json, "p2p_strata_ns"), p2p_library = field_of(json, "p2p_library_ns");
  // The rank that receives from the sleeping rank waited in the library.
  if (p2p_library.max < (kSleepMs - 100) * 1000000LL) {
    return "the wait for the sleeping rank is not the library's (most rank " + std::to_string(p2p_library.max) + " ns)";
  }
  if (p2p_strata.max <= 0 || p2p_strata.max >= kSleepMs / 2 * 1000000LL) {
    return "Strata's own point-to-point time " + std::to_string(p2p_strata.max) + " ns (most rank)";
  }
  // The reductions of host integers take the pass-through (but a thread's
  // first call, which takes the handlers' path).
  if (total_of(json, "library_calls_passed") < static_cast<long long>(ranks) * (kReductions - 1) || passed.total <= 0) {
    return "the reductions did not pass straight to the library";
  }
  return "";
}

int check(bool expect_summary, int ranks, double job_seconds) {
  const char* json_path = std::getenv("STRATA_SUMMARY_JSON");
  const char* log_path = std::getenv("STRATA_LOG_FILE");
  if (json_path == nullptr || log_path == nullptr) return fail("STRATA_SUMMARY_JSON and STRATA_LOG_FILE must be set");
  const std::string json = read_file(json_path), log = read_file(log_path);
  if (!expect_summary) {
    if (!json.empty()) return fail("a summary was written though one rank did not ask for it");
    if (log.find("strata summary") != std::string::npos) return fail("a table was printed:\n" + log);
    if (log.find("STRATA_SUMMARY=1 is not set on every rank") == std::string::npos) {
      return fail("no warning on the rank that asked:\n" + log);
    }
    std::printf("ok no summary where one rank did not ask, and a warning\n");
    return 0;
  }
  if (json.find("\"ranks\": " + std::to_string(ranks) + ",") == std::string::npos) return fail("ranks:\n" + json);
  const long long calls = total_of(json, "calls_intercepted");
  const long long sends = total_of(json, "sends_packed");
  const long long recvs = total_of(json, "recvs_unpacked");
  // Each rank: Init, Comm_rank, Comm_size, Type_vector, Type_commit, the
  // sendrecvs, the reductions, Type_free, Finalize (at least).
  if (calls < static_cast<long long>(ranks) * (kRounds + kReductions + 4)) return fail("calls:\n" + json);
  if (sends != static_cast<long long>(ranks) * kRounds) return fail("sends_packed:\n" + json);
  if (recvs != static_cast<long long>(ranks) * kRounds) return fail("recvs_unpacked:\n" + json);
  if (log.find("strata summary at MPI_Finalize, " + std::to_string(ranks) + " ranks") == std::string::npos ||
      log.find("send sides packed by Strata") == std::string::npos ||
      log.find("point-to-point: in Strata's own code") == std::string::npos ||
      log.find("point-to-point: in the MPI library") == std::string::npos) {
    return fail("no table in the log:\n" + log);
  }
  const std::string times = check_times(json, ranks, job_seconds);
  if (!times.empty()) return fail(times + ":\n" + json);
  std::printf(
      "ok summary of %d ranks: %lld calls, %lld packed sends; point-to-point %.3f s in the library, %.6f s "
      "in Strata (most rank)\n",
      ranks, calls, sends, 1e-9 * static_cast<double>(field_of(json, "p2p_library_ns").max),
      1e-9 * static_cast<double>(field_of(json, "p2p_strata_ns").max));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool expect_summary = argc > 1 && std::strcmp(argv[1], "summary") == 0;
  const auto started = std::chrono::steady_clock::now();
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Datatype vector;
  MPI_Type_vector(64, 2, 5, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  std::vector<int> out(64 * 5, rank), in(64 * 5, -1);
  if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(kSleepMs));
  for (int i = 0; i < kRounds; ++i) {
    MPI_Sendrecv(out.data(), 1, vector, (rank + 1) % ranks, i, in.data(), 1, vector, (rank + ranks - 1) % ranks, i,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  long long sum = 0, one = 1;
  for (int i = 0; i < kReductions; ++i) MPI_Allreduce(&one, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Type_free(&vector);
  const bool received = in[0] == (rank + ranks - 1) % ranks && sum == ranks;
  MPI_Finalize();
  if (!received) return fail("the job's own data");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return rank == 0 ? check(expect_summary, ranks, seconds) : 0;
}
