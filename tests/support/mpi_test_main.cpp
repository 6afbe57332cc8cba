// One GoogleTest main for every MPI test (kokkos-comm's idea): rank 0 prints
// the usual report, other ranks stay silent except for their own failures,
// and every rank exits with the same status.
//
// It uses only MPI and GoogleTest, so plain-MPI tests (the ones run with and
// without the preloaded interposer) can use it too.
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace {

// Prints failures of non-zero ranks with the rank in front.
class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (info.result()->Failed()) {
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
    }
  }

 private:
  int rank_;
};

}  // namespace

namespace strata_test {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

bool expect_preload() {
  const char* v = std::getenv("STRATA_TEST_EXPECT_PRELOAD");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

const StrataCounters* preload_counters() {
  using Fn = const StrataCounters* (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "strata_preload_counters"));
  return fn ? fn() : nullptr;
}

bool all_ranks_agree(bool value) {
  int mine = value ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace strata_test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // A library loaded before MPI_Init, as a program linked with it has it
  // (the device-direct transport's auto policy looks at what is loaded).
  if (const char* lib = std::getenv("STRATA_TEST_DLOPEN_BEFORE_INIT"); lib != nullptr && *lib != '\0') {
    if (dlopen(lib, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::fprintf(stderr, "STRATA_TEST_DLOPEN_BEFORE_INIT: %s\n", dlerror());
      return 2;
    }
  }
  int provided = 0;
  int wanted = MPI_THREAD_MULTIPLE;
  if (const char* t = std::getenv("STRATA_TEST_THREAD_LEVEL")) {
    if (std::strcmp(t, "single") == 0) wanted = MPI_THREAD_SINGLE;
  }
  MPI_Init_thread(&argc, &argv, wanted, &provided);
  int rank = strata_test::world_rank();
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !failed) std::fprintf(stderr, "some other rank failed; see its [rank N] lines\n");
  MPI_Finalize();
  return any_failed;
}
