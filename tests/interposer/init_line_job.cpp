// A plain MPI job for the one line Strata logs at MPI_Init
// (interposer/transfer/init_line.hpp; tests/interposer/CMakeLists.txt runs
// it preloaded on 3 ranks, the log in STRATA_LOG_FILE shared by the ranks).
// After a barrier, rank 0 reads the log:
//   `info`: exactly one line "strata <version>: interposer active on N ranks
//           ... over ...; GPUs: ...; host model: ..." and no per-rank line;
//           any further arguments: text the line must also hold;
//   `debug`: the job's line once and each rank's own details (one
//           "interposer active over" line per rank).
// Prints "ok ..." or "FAILED ..." (exit 1).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

int fail(const std::string& why) {
  std::printf("FAILED %s\n", why.c_str());
  return 1;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The first line of `text` that holds `what`.
std::string line_with(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  const size_t end = text.find('\n', at);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

int check(const std::string& mode, const std::vector<std::string>& also, int ranks) {
  const char* path = std::getenv("STRATA_LOG_FILE");
  if (path == nullptr) return fail("STRATA_LOG_FILE must be set");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string log = text.str();
  const std::string job = "interposer active on " + std::to_string(ranks) + " ranks";
  const int lines = count(log, job), per_rank = count(log, "interposer active over");
  if (lines != 1) return fail("the job's line " + std::to_string(lines) + " times, not once:\n" + log);
  const std::string line = line_with(log, job);
  for (const char* part : {" INFO shim] strata ", " over ", "; GPUs: ", "; host model: "}) {
    if (line.find(part) == std::string::npos) return fail(std::string("no '") + part + "' in the line:\n" + line);
  }
  for (const std::string& part : also) {
    if (line.find(part) == std::string::npos) return fail("no '" + part + "' in the line:\n" + line);
  }
  if (mode == "info" && per_rank != 0) return fail("per-rank lines at info level:\n" + log);
  if (mode == "debug" && per_rank != ranks) {
    return fail(std::to_string(per_rank) + " per-rank lines at debug level, not " + std::to_string(ranks) + ":\n" +
                log);
  }
  std::printf("ok one line for %d ranks (%s): %s\n", ranks, mode.c_str(), line.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "info";
  const std::vector<std::string> also(argv + std::min(argc, 2), argv + argc);
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank's MPI_Init has logged
  const int rc = rank == 0 ? check(mode, also, ranks) : 0;
  MPI_Finalize();
  return rc;
}
