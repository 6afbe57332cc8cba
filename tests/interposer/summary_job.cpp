// A plain MPI job for STRATA_SUMMARY (tests/interposer/CMakeLists.txt runs
// it preloaded): every rank sends a vector type around a ring and reduces a
// little, then finalizes; rank 0 then reads what Strata wrote at
// MPI_Finalize. `summary`: the JSON (STRATA_SUMMARY_JSON) has the job's
// counters (ranks, calls, packed sends summed over the ranks) and the log
// (STRATA_LOG_FILE) the table. `none`: STRATA_SUMMARY was set on rank 0 only,
// so there is no summary (no JSON, no table), a warning, and no hang.
// Prints "ok ..." or "FAILED ..." (exit 1).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kRounds = 10;
constexpr int kReductions = 5;

std::string read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The "total" of one counter in the summary JSON, or -1.
long long total_of(const std::string& json, const std::string& key) {
  const std::regex field("\"" + key + "\": \\{\"total\": ([0-9]+), \"min\": ([0-9]+), \"max\": ([0-9]+)\\}");
  std::smatch m;
  if (!std::regex_search(json, m, field)) return -1;
  if (std::stoll(m[2]) > std::stoll(m[3])) return -1;
  return std::stoll(m[1]);
}

int fail(const std::string& why) {
  std::printf("FAILED %s\n", why.c_str());
  return 1;
}

int check(bool expect_summary, int ranks) {
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
      log.find("send sides packed by Strata") == std::string::npos) {
    return fail("no table in the log:\n" + log);
  }
  std::printf("ok summary of %d ranks: %lld calls, %lld packed sends\n", ranks, calls, sends);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool expect_summary = argc > 1 && std::strcmp(argv[1], "summary") == 0;
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Datatype vector;
  MPI_Type_vector(64, 2, 5, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  std::vector<int> out(64 * 5, rank), in(64 * 5, -1);
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
  return rank == 0 ? check(expect_summary, ranks) : 0;
}
