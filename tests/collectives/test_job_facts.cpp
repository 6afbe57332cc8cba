// What learn_job tells every rank (collectives/job_facts.hpp): the job
// token, the same on every rank and new in every job, and which members of
// a communicator share this rank's host, against the library's own answer
// (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the ranks of a node).
#include "collectives/job_facts.hpp"
#include "collectives/routing.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace {

using strata::coll::job_token;
using strata::coll::learn_job;
using strata::coll::member_on_my_host;

class JobFacts : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(learn_job(MPI_COMM_WORLD), strata::Status::ok); }
  void TearDown() override { strata::coll::forget_job(); }
};

// Which members of `comm` share this rank's node, as the library sees it.
std::vector<bool> library_node_members(MPI_Comm comm) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  std::vector<int> members(static_cast<size_t>(node_size));
  MPI_Allgather(&rank, 1, MPI_INT, members.data(), 1, MPI_INT, node);
  MPI_Comm_free(&node);
  std::vector<bool> on_node(static_cast<size_t>(size), false);
  for (int m : members) on_node[static_cast<size_t>(m)] = true;
  return on_node;
}

TEST_F(JobFacts, TokenIsTheSameOnEveryRankAndNewInEveryJob) {
  const uint64_t token = job_token();
  EXPECT_NE(token, 0u);
  uint64_t lowest = 0, highest = 0;
  MPI_Allreduce(&token, &lowest, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&token, &highest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lowest, token);
  EXPECT_EQ(highest, token);
  // learn_job again (a new draw on every rank): another token, again agreed.
  ASSERT_EQ(learn_job(MPI_COMM_WORLD), strata::Status::ok);
  const uint64_t again = job_token();
  EXPECT_NE(again, token);
  MPI_Allreduce(&again, &lowest, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(lowest, again);
  strata::coll::forget_job();
  EXPECT_EQ(job_token(), 0u);
}

TEST_F(JobFacts, MembersOnMyHostMatchTheLibrarysNodes) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // World, and a communicator whose ranks run the other way round (a member's
  // rank there is not its world rank).
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  for (MPI_Comm comm : {MPI_COMM_WORLD, reversed}) {
    const std::vector<bool> expected = library_node_members(comm);
    for (int m = 0; m < size; ++m) {
      EXPECT_EQ(member_on_my_host(comm, m), expected[static_cast<size_t>(m)]) << "member " << m;
    }
    EXPECT_EQ(strata::coll::world_rank_of(comm, 0), comm == MPI_COMM_WORLD ? 0 : size - 1);
    EXPECT_EQ(strata::coll::world_rank_of(comm, size - 1), comm == MPI_COMM_WORLD ? size - 1 : 0);
    EXPECT_EQ(strata::coll::world_rank_of(comm, size), -1);
    EXPECT_FALSE(member_on_my_host(comm, -1));
    EXPECT_FALSE(member_on_my_host(comm, size));
  }
  MPI_Comm_free(&reversed);
  EXPECT_FALSE(member_on_my_host(MPI_COMM_NULL, 0));
}

// A communicator left to the library (no GPU on its ranks) still runs the
// algorithm a call names (the API's calls name theirs, the same on every
// rank): only the routing's own choice is skipped there, with its vote.
TEST_F(JobFacts, NamedAlgorithmRunsOnACommunicatorLeftToTheLibrary) {
  using strata::coll::Algorithm;
  using strata::coll::Collective;
  using strata::coll::Route;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  auto automatic = strata::coll::decide(Collective::allreduce, comm, 64, true, false);
  ASSERT_TRUE(automatic);
  EXPECT_EQ(automatic.value().route, Route::library);
  const bool left = strata::coll::surely_library_only(comm);
  auto named = strata::coll::decide(Collective::allreduce, comm, 64, true, false, Algorithm::ring, true);
  ASSERT_TRUE(named);
  EXPECT_EQ(named.value().route, Route::host);
  EXPECT_EQ(named.value().algorithm, Algorithm::ring);
  MPI_Comm_free(&comm);
  if (!left) GTEST_SKIP() << "the communicator was not left to the library here (GPUs on every rank)";
}

}  // namespace
