// Deferred sends (interposer/transfer/deferred_sends.hpp): a plain MPI
// program whose patterns hang if a call that can wait for a peer does not
// flush the sends Strata holds, and which check that messages between two
// ranks keep their order across send modes. ctest runs it plain (the
// library alone: the patterns are valid MPI) and preloaded with
// STRATA_DEFER_SENDS=all STRATA_HOST_PACK=always, which defers the
// host-packed sends of a vector type. A hang ends in the test's timeout.
// Oracles: the values each rank computes for its peer, element by element.
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kN = 300;  // elements of the vector type: every other int

int rank() { return strata_test::world_rank(); }
int peer() { return 1 - rank(); }

// A committed vector of kN ints at stride 2.
struct VectorType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  VectorType() {
    MPI_Type_vector(kN, 1, 2, MPI_INT, &type);
    MPI_Type_commit(&type);
  }
  ~VectorType() { MPI_Type_free(&type); }
};

// What rank r sends in message `m`: its source array (2 kN ints, every
// other one sent) and the kN values that arrive.
std::vector<int> source(int r, int m) {
  std::vector<int> v(2 * kN);
  for (int i = 0; i < 2 * kN; ++i) v[i] = (i % 2 == 0) ? r * 1000000 + m * 10000 + i / 2 : -1;
  return v;
}
std::vector<int> arriving(int r, int m) {
  std::vector<int> v(kN);
  for (int i = 0; i < kN; ++i) v[i] = r * 1000000 + m * 10000 + i;
  return v;
}

void expect_message(const std::vector<int>& got, int from, int m) {
  const std::vector<int> want = arriving(from, m);
  ASSERT_EQ(got.size(), want.size());
  for (int i = 0; i < kN; ++i) ASSERT_EQ(got[i], want[i]) << "message " << m << " from " << from << ", element " << i;
}

std::vector<int> poisoned() { return std::vector<int>(kN, -7); }

class Deferred : public testing::Test {
 protected:
  void SetUp() override {
    if (strata_test::world_size() != 2) GTEST_SKIP() << "runs with 2 ranks";
  }
  VectorType vec_;
};

// Rank 0 sends, then enters a barrier; rank 1 receives before its barrier.
TEST_F(Deferred, BarrierFlushes) {
  std::vector<int> src = source(rank(), 1);
  if (rank() == 0) {
    MPI_Request r;
    ASSERT_EQ(MPI_Isend(src.data(), 1, vec_.type, 1, 11, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(r, MPI_REQUEST_NULL);
  } else {
    std::vector<int> got = poisoned();
    ASSERT_EQ(MPI_Recv(got.data(), kN, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    expect_message(got, 0, 1);
    ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  }
}

// Both ranks send, then poll with MPI_Iprobe for the other's message.
TEST_F(Deferred, IprobeLoopFlushes) {
  std::vector<int> src = source(rank(), 2);
  MPI_Request r;
  ASSERT_EQ(MPI_Isend(src.data(), 1, vec_.type, peer(), 12, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  int flag = 0;
  MPI_Status st;
  while (!flag) ASSERT_EQ(MPI_Iprobe(peer(), 12, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  EXPECT_EQ(count, kN);
  std::vector<int> got = poisoned();
  ASSERT_EQ(MPI_Recv(got.data(), kN, MPI_INT, peer(), 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  expect_message(got, peer(), 2);
  ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

// A sender polls its own request with MPI_Request_get_status (which does
// not free it), then frees it with MPI_Wait.
TEST_F(Deferred, RequestGetStatusSeesCompletion) {
  std::vector<int> src = source(rank(), 3);
  if (rank() == 0) {
    MPI_Request r;
    ASSERT_EQ(MPI_Isend(src.data(), 1, vec_.type, 1, 13, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    int flag = 0;
    while (!flag) ASSERT_EQ(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_NE(r, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(r, MPI_REQUEST_NULL);
  } else {
    std::vector<int> got = poisoned();
    ASSERT_EQ(MPI_Recv(got.data(), kN, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    expect_message(got, 0, 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Messages from one rank to another on one tag arrive in the order sent,
// whatever the send mode between deferred sends: Ssend, Send, a persistent
// send, Issend, Rsend (its receive is posted first), Sendrecv_replace.
TEST_F(Deferred, OrderKeptAcrossSendModes) {
  constexpr int kTag = 14;
  constexpr int kMessages = 12;  // even: vector messages, odd: one int
  if (rank() == 0) {
    int go = 0;  // rank 1's receives are posted: MPI_Rsend may go
    ASSERT_EQ(MPI_Recv(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    std::vector<std::vector<int>> src;
    for (int m = 0; m < kMessages; m += 2) src.push_back(source(0, m));
    std::vector<int> ints(kMessages);
    for (int m = 1; m < kMessages; m += 2) ints[m] = 500 + m;
    std::vector<MPI_Request> reqs;
    auto vector_send = [&](int m) {
      reqs.emplace_back();
      ASSERT_EQ(MPI_Isend(src[m / 2].data(), 1, vec_.type, 1, kTag, MPI_COMM_WORLD, &reqs.back()), MPI_SUCCESS);
    };
    vector_send(0);
    ASSERT_EQ(MPI_Ssend(&ints[1], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD), MPI_SUCCESS);
    vector_send(2);
    ASSERT_EQ(MPI_Send(&ints[3], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD), MPI_SUCCESS);
    vector_send(4);
    MPI_Request persistent;
    ASSERT_EQ(MPI_Send_init(&ints[5], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD, &persistent), MPI_SUCCESS);
    ASSERT_EQ(MPI_Start(&persistent), MPI_SUCCESS);
    vector_send(6);
    reqs.emplace_back();
    ASSERT_EQ(MPI_Issend(&ints[7], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD, &reqs.back()), MPI_SUCCESS);
    vector_send(8);
    ASSERT_EQ(MPI_Rsend(&ints[9], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD), MPI_SUCCESS);
    vector_send(10);
    ASSERT_EQ(MPI_Send(&ints[11], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&persistent, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Request_free(&persistent);
  } else {
    std::vector<std::vector<int>> got(kMessages, poisoned());
    std::vector<MPI_Request> reqs(kMessages);
    for (int m = 0; m < kMessages; ++m) {
      ASSERT_EQ(MPI_Irecv(got[m].data(), kN, MPI_INT, 0, kTag, MPI_COMM_WORLD, &reqs[m]), MPI_SUCCESS);
    }
    int go = 1;
    ASSERT_EQ(MPI_Send(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD), MPI_SUCCESS);
    std::vector<MPI_Status> st(kMessages);
    ASSERT_EQ(MPI_Waitall(kMessages, reqs.data(), st.data()), MPI_SUCCESS);
    for (int m = 0; m < kMessages; ++m) {
      int count = -1;
      MPI_Get_count(&st[m], MPI_INT, &count);
      if (m % 2 == 0) {
        ASSERT_EQ(count, kN) << "message " << m;
        expect_message(got[m], 0, m);
      } else {
        ASSERT_EQ(count, 1) << "message " << m;
        EXPECT_EQ(got[m][0], 500 + m) << "message " << m;
      }
    }
  }
}

// A deferred send whose request the user frees at once is still delivered.
TEST_F(Deferred, FreedSendStillDelivers) {
  std::vector<int> src = source(rank(), 5);
  if (rank() == 0) {
    MPI_Request r;
    ASSERT_EQ(MPI_Isend(src.data(), 1, vec_.type, 1, 15, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    ASSERT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
    EXPECT_EQ(r, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  } else {
    std::vector<int> got = poisoned();
    ASSERT_EQ(MPI_Recv(got.data(), kN, MPI_INT, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    expect_message(got, 0, 5);
    ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  }
}

// Collective creation calls and host collectives flush: rank 1 receives
// before it enters each, rank 0 sends just before it.
TEST_F(Deferred, CollectiveCallsFlush) {
  int round = 0;
  auto check = [&](auto collective) {
    ++round;
    std::vector<int> src = source(rank(), 20 + round);
    if (rank() == 0) {
      MPI_Request r;
      ASSERT_EQ(MPI_Isend(src.data(), 1, vec_.type, 1, 16, MPI_COMM_WORLD, &r), MPI_SUCCESS);
      collective();
      ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
      std::vector<int> got = poisoned();
      ASSERT_EQ(MPI_Recv(got.data(), kN, MPI_INT, 0, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
      expect_message(got, 0, 20 + round);
      collective();
    }
  };
  check([] {
    MPI_Comm dup;
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    MPI_Comm_free(&dup);
  });
  check([] {
    MPI_Comm split;
    ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &split), MPI_SUCCESS);
    MPI_Comm_free(&split);
  });
  check([] {
    int in = 1, out = 0;
    ASSERT_EQ(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(out, 2);
  });
  check([] {
    int in = strata_test::world_rank(), out[2] = {-1, -1};
    ASSERT_EQ(MPI_Gather(&in, 1, MPI_INT, out, 1, MPI_INT, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    if (strata_test::world_rank() == 1) EXPECT_EQ(out[0] + out[1], 1);
  });
  check([] {
    int in = 1, out = 0;
    ASSERT_EQ(MPI_Scan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(out, strata_test::world_rank() + 1);
  });
}

// A blocking MPI_Probe for a message the peer sends after its own deferred
// send: both probe, both must have flushed.
TEST_F(Deferred, ProbeFlushes) {
  std::vector<int> src = source(rank(), 6);
  MPI_Request r;
  ASSERT_EQ(MPI_Isend(src.data(), 1, vec_.type, peer(), 17, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  MPI_Status st;
  ASSERT_EQ(MPI_Probe(peer(), 17, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  std::vector<int> got = poisoned();
  ASSERT_EQ(MPI_Recv(got.data(), kN, MPI_INT, peer(), 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  expect_message(got, peer(), 6);
  int flag = 0;
  while (!flag) ASSERT_EQ(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
}

// A send with bad arguments is not deferred: MPI_Isend itself returns the
// library's error class.
TEST_F(Deferred, BadArgumentsFailInIsend) {
  std::vector<int> src = source(rank(), 7);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = MPI_Isend(src.data(), 1, vec_.type, 5, 18, MPI_COMM_WORLD, &r);
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  EXPECT_EQ(cls, MPI_ERR_RANK);
  rc = MPI_Isend(src.data(), 1, vec_.type, peer(), -3, MPI_COMM_WORLD, &r);
  MPI_Error_class(rc, &cls);
  EXPECT_EQ(cls, MPI_ERR_TAG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

// The preloaded variant really deferred (else it proves nothing).
TEST_F(Deferred, InterposerDeferredWhenExpected) {
  MPI_Barrier(MPI_COMM_WORLD);
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  if (!strata_test::expect_preload()) {
    EXPECT_EQ(c, nullptr);
    return;
  }
  ASSERT_NE(c, nullptr);
  const char* expect = std::getenv("STRATA_TEST_EXPECT_DEFERRED");
  if (expect != nullptr && std::strcmp(expect, "1") == 0) {
    ASSERT_GE(c->version, 4u);
    EXPECT_GE(c->sends_deferred, rank() == 0 ? 16u : 2u);  // the sends above
  }
}

}  // namespace
