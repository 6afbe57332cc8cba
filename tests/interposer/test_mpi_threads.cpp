// MPI_THREAD_MULTIPLE: several threads exchange derived datatypes at once,
// each on its own tag, through non-blocking calls and mixed completions.
#include "mpi_type_cases.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(Threads, ConcurrentDerivedTypeExchanges) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "the library does not provide MPI_THREAD_MULTIPLE";
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  constexpr int kThreads = 4;
  constexpr int kIterations = 60;
  std::atomic<int> failures{0};
  std::vector<std::string> first_failure(kThreads);
  auto worker = [&](int t) {
    const auto& c = strata_test::type_cases()[static_cast<size_t>(t) % 7];  // the reducible cases
    MPI_Datatype type = c.build();
    for (int it = 0; it < kIterations; ++it) {
      const int count = 1 + (it % 3);
      std::vector<int> sendbuf = strata_test::filled_buffer(c, count, rank);
      std::vector<int> recvbuf = strata_test::poisoned_buffer(c, count);
      MPI_Request reqs[2];
      const int tag = 1000 + t;
      MPI_Irecv(recvbuf.data(), count, type, source, tag, MPI_COMM_WORLD, &reqs[0]);
      MPI_Isend(sendbuf.data(), count, type, dest, tag, MPI_COMM_WORLD, &reqs[1]);
      if (it % 2 == 0) {
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
      } else {
        int done = 0;
        while (!done) MPI_Testall(2, reqs, &done, MPI_STATUSES_IGNORE);
      }
      std::string problem = strata_test::check_received(c, recvbuf, count, source);
      if (!problem.empty() && failures.fetch_add(1) == 0) first_failure[static_cast<size_t>(t)] = problem;
    }
    MPI_Type_free(&type);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << [&] {
    std::string all;
    for (const auto& f : first_failure) all += f.empty() ? "" : f + "\n";
    return all;
  }();
}

}  // namespace
