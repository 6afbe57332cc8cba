// Point-to-point with derived datatypes through every completion call.
//
// A plain MPI program: it links only MPI and GoogleTest, and ctest runs it
// plain (the library alone, proving the test itself) and with
// libstrata_preload.so preloaded. Oracles are hand-written type maps
// (mpi_type_cases.cpp), never Strata's engine.
#include "mpi_type_cases.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using strata_test::TypeCase;

namespace {

enum class Completion { send_recv, sendrecv, wait, waitall, waitany, waitsome, test, testall, testany, testsome };

const char* name_of(Completion c) {
  switch (c) {
    case Completion::send_recv: return "send_recv";
    case Completion::sendrecv: return "sendrecv";
    case Completion::wait: return "wait";
    case Completion::waitall: return "waitall";
    case Completion::waitany: return "waitany";
    case Completion::waitsome: return "waitsome";
    case Completion::test: return "test";
    case Completion::testall: return "testall";
    case Completion::testany: return "testany";
    case Completion::testsome: return "testsome";
  }
  return "?";
}

// Completes every request of `reqs` with the given family of calls, keeping
// each request's status at its index.
void complete_all(Completion how, std::vector<MPI_Request>& reqs, std::vector<MPI_Status>& statuses) {
  const int n = static_cast<int>(reqs.size());
  statuses.assign(reqs.size(), MPI_Status{});
  auto active = [&] {
    int left = 0;
    for (MPI_Request r : reqs) left += r != MPI_REQUEST_NULL;
    return left;
  };
  switch (how) {
    case Completion::wait:
      for (int i = 0; i < n; ++i) ASSERT_EQ(MPI_Wait(&reqs[i], &statuses[i]), MPI_SUCCESS);
      break;
    case Completion::waitall: ASSERT_EQ(MPI_Waitall(n, reqs.data(), statuses.data()), MPI_SUCCESS); break;
    case Completion::waitany:
      while (active() > 0) {
        int index = MPI_UNDEFINED;
        MPI_Status st;
        ASSERT_EQ(MPI_Waitany(n, reqs.data(), &index, &st), MPI_SUCCESS);
        ASSERT_NE(index, MPI_UNDEFINED);
        statuses[index] = st;
      }
      break;
    case Completion::waitsome:
      while (active() > 0) {
        int outcount = 0;
        std::vector<int> indices(reqs.size());
        std::vector<MPI_Status> st(reqs.size());
        ASSERT_EQ(MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), st.data()), MPI_SUCCESS);
        for (int k = 0; k < outcount; ++k) statuses[indices[k]] = st[k];
      }
      break;
    case Completion::test:
      while (active() > 0) {
        for (int i = 0; i < n; ++i) {
          int flag = 0;
          if (reqs[i] != MPI_REQUEST_NULL) ASSERT_EQ(MPI_Test(&reqs[i], &flag, &statuses[i]), MPI_SUCCESS);
        }
      }
      break;
    case Completion::testall: {
      int flag = 0;
      while (!flag) ASSERT_EQ(MPI_Testall(n, reqs.data(), &flag, statuses.data()), MPI_SUCCESS);
      break;
    }
    case Completion::testany:
      while (active() > 0) {
        int index = MPI_UNDEFINED, flag = 0;
        MPI_Status st;
        ASSERT_EQ(MPI_Testany(n, reqs.data(), &index, &flag, &st), MPI_SUCCESS);
        if (flag && index != MPI_UNDEFINED) statuses[index] = st;
      }
      break;
    case Completion::testsome:
      while (active() > 0) {
        int outcount = 0;
        std::vector<int> indices(reqs.size());
        std::vector<MPI_Status> st(reqs.size());
        ASSERT_EQ(MPI_Testsome(n, reqs.data(), &outcount, indices.data(), st.data()), MPI_SUCCESS);
        for (int k = 0; k < outcount && outcount != MPI_UNDEFINED; ++k) statuses[indices[k]] = st[k];
      }
      break;
    default: FAIL() << "not a request completion";
  }
}

class P2P : public testing::TestWithParam<std::tuple<int, Completion>> {
 protected:
  const TypeCase& type_case() const { return strata_test::type_cases()[std::get<0>(GetParam())]; }
};

// A ring exchange: every rank sends `count` elements to rank+1 and receives
// from rank-1, through the completion family under test. Non-blocking forms
// also carry an unrelated contiguous message and a null request in the same
// arrays, so Strata's requests are mixed with the library's own.
TEST_P(P2P, RingExchange) {
  const TypeCase& c = type_case();
  const Completion how = std::get<1>(GetParam());
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  MPI_Datatype type = c.build();
  for (int count : {1, 3}) {
    std::vector<int> sendbuf = strata_test::filled_buffer(c, count, rank);
    std::vector<int> recvbuf = strata_test::poisoned_buffer(c, count);
    int side_send = rank, side_recv = -1;
    MPI_Status status{};
    const int tag = 10 + count;
    if (how == Completion::send_recv) {
      if (rank % 2 == 0) {
        ASSERT_EQ(MPI_Send(sendbuf.data(), count, type, dest, tag, MPI_COMM_WORLD), MPI_SUCCESS);
        ASSERT_EQ(MPI_Recv(recvbuf.data(), count, type, source, tag, MPI_COMM_WORLD, &status), MPI_SUCCESS);
      } else {
        ASSERT_EQ(MPI_Recv(recvbuf.data(), count, type, source, tag, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        ASSERT_EQ(MPI_Send(sendbuf.data(), count, type, dest, tag, MPI_COMM_WORLD), MPI_SUCCESS);
      }
      side_recv = source;  // no side message in the blocking forms
    } else if (how == Completion::sendrecv) {
      ASSERT_EQ(MPI_Sendrecv(sendbuf.data(), count, type, dest, tag, recvbuf.data(), count, type, source, tag,
                             MPI_COMM_WORLD, &status),
                MPI_SUCCESS);
      side_recv = source;  // no side message in the blocking forms
    } else {
      std::vector<MPI_Request> reqs(5, MPI_REQUEST_NULL);
      ASSERT_EQ(MPI_Irecv(recvbuf.data(), count, type, source, tag, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
      ASSERT_EQ(MPI_Irecv(&side_recv, 1, MPI_INT, source, 99, MPI_COMM_WORLD, &reqs[2]), MPI_SUCCESS);
      ASSERT_EQ(MPI_Isend(&side_send, 1, MPI_INT, dest, 99, MPI_COMM_WORLD, &reqs[3]), MPI_SUCCESS);
      ASSERT_EQ(MPI_Isend(sendbuf.data(), count, type, dest, tag, MPI_COMM_WORLD, &reqs[4]), MPI_SUCCESS);
      std::vector<MPI_Status> statuses;
      complete_all(how, reqs, statuses);
      if (HasFatalFailure()) return;
      for (MPI_Request r : reqs) EXPECT_EQ(r, MPI_REQUEST_NULL);
      status = statuses[0];
    }
    EXPECT_EQ(status.MPI_SOURCE, source);
    EXPECT_EQ(status.MPI_TAG, tag);
    int received = -1;
    ASSERT_EQ(MPI_Get_count(&status, type, &received), MPI_SUCCESS);
    EXPECT_EQ(received, count);
    int elements = -1;
    ASSERT_EQ(MPI_Get_elements(&status, type, &elements), MPI_SUCCESS);
    EXPECT_EQ(elements, count * static_cast<int>(c.offsets.size()));
    EXPECT_EQ(side_recv, source);
    EXPECT_EQ(strata_test::check_received(c, recvbuf, count, source), "") << name_of(how) << " count " << count;
  }
  MPI_Type_free(&type);
}

std::string case_name(const testing::TestParamInfo<std::tuple<int, Completion>>& info) {
  return strata_test::type_cases()[std::get<0>(info.param)].name + "_" + name_of(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllTypesAllCompletions, P2P,
                         testing::Combine(testing::Range(0, static_cast<int>(strata_test::type_cases().size())),
                                          testing::Values(Completion::send_recv, Completion::sendrecv, Completion::wait,
                                                          Completion::waitall, Completion::waitany,
                                                          Completion::waitsome, Completion::test, Completion::testall,
                                                          Completion::testany, Completion::testsome)),
                         case_name);

// Fewer elements arrive than were posted: only those are written, and the
// status counts them in the receiver's datatype.
TEST(P2PSemantics, ShortMessageFillsOnlyWhatArrived) {
  const TypeCase& c = strata_test::type_cases()[0];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build();
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 4, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 4);
  MPI_Request req;
  MPI_Status status;
  ASSERT_EQ(MPI_Irecv(recvbuf.data(), 4, type, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &req), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(sendbuf.data(), 2, type, (rank + 1) % size, 5, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&req, &status), MPI_SUCCESS);
  int received = -1;
  MPI_Get_count(&status, type, &received);
  EXPECT_EQ(received, 2);
  EXPECT_EQ(strata_test::check_received(c, recvbuf, 2, (rank + size - 1) % size), "");
  MPI_Type_free(&type);
}

// A partial element: the library and Strata both fill the first bytes and
// report MPI_UNDEFINED as the count but the basic elements that arrived.
TEST(P2PSemantics, PartialElementCountsElements) {
  const TypeCase& c = strata_test::type_cases()[0];  // 15 ints per element
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build();
  std::vector<int> sendbuf(40);
  for (int i = 0; i < 40; ++i) sendbuf[i] = strata_test::value_at(rank, i);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 2);
  MPI_Status status;
  ASSERT_EQ(MPI_Sendrecv(sendbuf.data(), 20, MPI_INT, (rank + 1) % size, 6, recvbuf.data(), 2, type,
                         (rank + size - 1) % size, 6, MPI_COMM_WORLD, &status),
            MPI_SUCCESS);
  int count = 0, elements = 0;
  MPI_Get_count(&status, type, &count);
  MPI_Get_elements(&status, type, &elements);
  EXPECT_EQ(count, MPI_UNDEFINED);
  EXPECT_EQ(elements, 20);
  // The 20 contiguous ints land on the first 20 positions of the type map.
  const int source = (rank + size - 1) % size;
  for (int k = 0; k < 20; ++k) {
    const long pos = (k / 15) * c.extent_ints + c.offsets[static_cast<size_t>(k % 15)];
    EXPECT_EQ(recvbuf[static_cast<size_t>(pos)], strata_test::value_at(source, k)) << "element " << k;
  }
  MPI_Type_free(&type);
}

// Packed data and typed data interoperate in both directions.
TEST(P2PSemantics, PackedMatchesTyped) {
  const TypeCase& c = strata_test::type_cases()[2];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  MPI_Datatype type = c.build();
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 2, rank);
  int packed_size = 0;
  ASSERT_EQ(MPI_Pack_size(2, type, MPI_COMM_WORLD, &packed_size), MPI_SUCCESS);
  std::vector<char> packed(static_cast<size_t>(packed_size));
  int position = 0;
  ASSERT_EQ(MPI_Pack(sendbuf.data(), 2, type, packed.data(), packed_size, &position, MPI_COMM_WORLD), MPI_SUCCESS);
  // Packed out, typed in.
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 2);
  ASSERT_EQ(MPI_Sendrecv(packed.data(), position, MPI_PACKED, dest, 1, recvbuf.data(), 2, type, source, 1,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  EXPECT_EQ(strata_test::check_received(c, recvbuf, 2, source), "");
  // Typed out, packed in, then unpacked.
  std::vector<char> inbox(static_cast<size_t>(packed_size));
  ASSERT_EQ(MPI_Sendrecv(sendbuf.data(), 2, type, dest, 2, inbox.data(), packed_size, MPI_PACKED, source, 2,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  std::vector<int> unpacked = strata_test::poisoned_buffer(c, 2);
  int in_position = 0;
  ASSERT_EQ(MPI_Unpack(inbox.data(), packed_size, &in_position, unpacked.data(), 2, type, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(in_position, position);
  EXPECT_EQ(strata_test::check_received(c, unpacked, 2, source), "");
  MPI_Type_free(&type);
}

// MPI_Pack and MPI_Unpack agree with the library's own (PMPI_) calls, also
// when appending at a position.
TEST(P2PSemantics, PackEqualsLibraryPack) {
  for (const TypeCase& c : strata_test::type_cases()) {
    MPI_Datatype type = c.build();
    std::vector<int> src = strata_test::filled_buffer(c, 3, 1);
    std::vector<char> ours(4096, 'x'), theirs(4096, 'x');
    int pos_ours = 5, pos_theirs = 5;
    ASSERT_EQ(MPI_Pack(src.data(), 3, type, ours.data(), 4000, &pos_ours, MPI_COMM_WORLD), MPI_SUCCESS);
    ASSERT_EQ(PMPI_Pack(src.data(), 3, type, theirs.data(), 4000, &pos_theirs, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(pos_ours, pos_theirs) << c.name;
    EXPECT_EQ(ours, theirs) << c.name;
    std::vector<int> a = strata_test::poisoned_buffer(c, 3), b = strata_test::poisoned_buffer(c, 3);
    int in_a = 5, in_b = 5;
    ASSERT_EQ(MPI_Unpack(ours.data(), 4000, &in_a, a.data(), 3, type, MPI_COMM_WORLD), MPI_SUCCESS);
    ASSERT_EQ(PMPI_Unpack(theirs.data(), 4000, &in_b, b.data(), 3, type, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(in_a, in_b) << c.name;
    EXPECT_EQ(a, b) << c.name;
    MPI_Type_free(&type);
  }
}

// A duplicated committed type is committed too, and behaves the same.
TEST(P2PSemantics, DupOfCommittedType) {
  const TypeCase& c = strata_test::type_cases()[1];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build(), dup;
  ASSERT_EQ(MPI_Type_dup(type, &dup), MPI_SUCCESS);
  MPI_Type_free(&type);  // the dup must outlive the original
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 2, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 2);
  ASSERT_EQ(MPI_Sendrecv(sendbuf.data(), 2, dup, (rank + 1) % size, 3, recvbuf.data(), 2, dup, (rank + size - 1) % size,
                         3, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  EXPECT_EQ(strata_test::check_received(c, recvbuf, 2, (rank + size - 1) % size), "");
  MPI_Type_free(&dup);
}

// A cancelled receive completes as cancelled and leaves the buffer alone.
TEST(P2PSemantics, CancelledReceiveLeavesBufferUntouched) {
  const TypeCase& c = strata_test::type_cases()[0];
  MPI_Datatype type = c.build();
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 1);
  MPI_Request req;
  ASSERT_EQ(MPI_Irecv(recvbuf.data(), 1, type, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &req), MPI_SUCCESS);
  ASSERT_EQ(MPI_Cancel(&req), MPI_SUCCESS);
  MPI_Status status;
  ASSERT_EQ(MPI_Wait(&req, &status), MPI_SUCCESS);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(strata_test::check_received(c, recvbuf, 0, 0), "");
  MPI_Type_free(&type);
}

// A send whose request was freed still delivers its data.
TEST(P2PSemantics, FreedSendRequestStillDelivers) {
  const TypeCase& c = strata_test::type_cases()[3];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build();
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 2, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 2);
  MPI_Request req;
  ASSERT_EQ(MPI_Isend(sendbuf.data(), 2, type, (rank + 1) % size, 8, MPI_COMM_WORLD, &req), MPI_SUCCESS);
  ASSERT_EQ(MPI_Request_free(&req), MPI_SUCCESS);
  EXPECT_EQ(req, MPI_REQUEST_NULL);
  ASSERT_EQ(MPI_Recv(recvbuf.data(), 2, type, (rank + size - 1) % size, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  EXPECT_EQ(strata_test::check_received(c, recvbuf, 2, (rank + size - 1) % size), "");
  MPI_Barrier(MPI_COMM_WORLD);  // the sender may reuse its buffer only now
  MPI_Type_free(&type);
}

// Small sends to self may complete on the spot: the library then hands back
// one shared, already complete request for all of them (Open MPI's
// ompi_request_empty). Every one must still complete and deliver.
TEST(P2PSemantics, ManySendsThatCompleteOnTheSpot) {
  const TypeCase& c = strata_test::type_cases()[0];
  const int rank = strata_test::world_rank();
  MPI_Datatype type = c.build();
  constexpr int kMessages = 26;
  std::vector<std::vector<int>> sendbufs, recvbufs;
  for (int i = 0; i < kMessages; ++i) {
    sendbufs.push_back(strata_test::filled_buffer(c, 1, rank + i));
    recvbufs.push_back(strata_test::poisoned_buffer(c, 1));
  }
  // Any completion call first finishes requests freed earlier (the freed
  // send of FreedSendRequestStillDelivers), so the baseline is settled.
  int flag = 0;
  MPI_Testall(0, nullptr, &flag, MPI_STATUSES_IGNORE);
  const strata_test::StrataCounters* before = strata_test::preload_counters();
  const uint64_t started0 = before ? before->requests_started : 0, completed0 = before ? before->requests_completed : 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<MPI_Request> reqs(2 * kMessages, MPI_REQUEST_NULL);
    for (int i = 0; i < kMessages; ++i) {
      ASSERT_EQ(MPI_Irecv(recvbufs[static_cast<size_t>(i)].data(), 1, type, rank, i, MPI_COMM_WORLD,
                          &reqs[static_cast<size_t>(i)]),
                MPI_SUCCESS);
    }
    for (int i = 0; i < kMessages; ++i) {
      ASSERT_EQ(MPI_Isend(sendbufs[static_cast<size_t>(i)].data(), 1, type, rank, i, MPI_COMM_WORLD,
                          &reqs[static_cast<size_t>(kMessages + i)]),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Waitall(2 * kMessages, reqs.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < kMessages; ++i) {
      EXPECT_EQ(strata_test::check_received(c, recvbufs[static_cast<size_t>(i)], 1, rank + i), "") << "message " << i;
    }
  }
  // Every request Strata started was finished by a completion call.
  if (const strata_test::StrataCounters* after = strata_test::preload_counters()) {
    EXPECT_EQ(after->requests_started - started0, after->requests_completed - completed0);
  }
  MPI_Type_free(&type);
}

// The interposer is really there (and really packing) when it should be:
// without this the preloaded variants could pass by doing nothing.
TEST(P2PSemantics, InterposerPresenceMatchesTheHarness) {
  const strata_test::StrataCounters* counters = strata_test::preload_counters();
  if (!strata_test::expect_preload()) {
    EXPECT_EQ(counters, nullptr);
    return;
  }
  ASSERT_NE(counters, nullptr);
  EXPECT_GT(counters->calls_intercepted, 0u);
  const char* expect = std::getenv("STRATA_TEST_EXPECT_PACKING");
  if (expect != nullptr && std::strcmp(expect, "1") == 0) {
    EXPECT_GT(counters->sends_packed, 0u);
    EXPECT_GT(counters->recvs_unpacked, 0u);
    EXPECT_GT(counters->packs_by_strata, 0u);
    EXPECT_GT(counters->requests_completed, 0u);
    EXPECT_GT(counters->types_reducible, 0u);
    EXPECT_GT(counters->types_irreducible, 0u);
  } else if (expect != nullptr && std::strcmp(expect, "0") == 0) {
    EXPECT_EQ(counters->sends_packed + counters->recvs_unpacked + counters->packs_by_strata, 0u);
  }
  const char* deferred = std::getenv("STRATA_TEST_EXPECT_DEFERRED");
  if (deferred != nullptr && std::strcmp(deferred, "1") == 0) {
    EXPECT_GE(counters->version, 4u);
    EXPECT_GT(counters->sends_deferred, 0u);
  }
}

}  // namespace
