// Hang diagnosis on hand-built rank views: who is missing, and whether the
// culprit is a rank (non-comm hang) or a link or the operation (comm hang).
#include "fault/agent/coordinator.hpp"
#include "fault/detect/hang.hpp"
#include "fault/op_kind.hpp"

#include <gtest/gtest.h>

namespace {

using namespace strata::fault;

oob::OpBrief op(OpKind kind, uint64_t seq, int peer = -1, int peer2 = -1) {
  oob::OpBrief b;
  b.kind = static_cast<uint8_t>(kind);
  b.seq = seq;
  b.peer = peer;
  b.peer2 = peer2;
  return b;
}

// n ranks, every one inside allreduce #seq on the world for `age`.
HangInput all_in_allreduce(int n, uint64_t seq, int64_t age = 4000000000) {
  HangInput in;
  in.ranks.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    RankView& v = in.ranks[static_cast<size_t>(r)];
    v.rank = r;
    v.liveness = Liveness::alive;
    v.in_op = true;
    v.current = op(OpKind::allreduce, seq);
    v.age_ns = age;
    v.threshold_ns = 3000000000;
    v.suspect = age > v.threshold_ns;
    v.comms[0] = oob::CommProgress{0, n, 0, seq, seq - 1};
  }
  return in;
}

void outside(RankView& v, uint64_t last_seq, int64_t idle) {
  v.in_op = false;
  v.suspect = false;
  v.has_last = true;
  v.last = op(OpKind::allreduce, last_seq);
  v.idle_ns = idle;
  v.comms[0].entered = last_seq;
  v.comms[0].left = last_seq;
}

TEST(Hang, NothingWithoutASuspect) {
  HangInput in = all_in_allreduce(4, 7, 1000);
  EXPECT_FALSE(diagnose_hang(in, 0).has_value());
}

TEST(Hang, ARankOutsideCommunicationIsANonCommHang) {
  HangInput in = all_in_allreduce(8, 12);
  outside(in.ranks[3], 11, 4100000000);
  auto d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->fault_class, FaultClass::noncomm_hang);
  EXPECT_EQ(d->ranks, std::vector<int>{3});
  EXPECT_EQ(d->missing, std::vector<int>{3});
  EXPECT_EQ(d->op, "allreduce");
  EXPECT_EQ(d->seq, 12u);
  EXPECT_NE(d->message.find("allreduce #12 on comm 0: ranks {3} missing"), std::string::npos) << d->message;
}

TEST(Hang, AMissingRankStuckInASendFollowsTheChain) {
  // Rank 3 never entered: it is in a send to 7, which is outside
  // communication: 7 is the culprit, 3 only waits for it.
  HangInput in = all_in_allreduce(8, 5);
  RankView& r3 = in.ranks[3];
  r3.current = op(OpKind::send, 9, 7);
  r3.comms[0].entered = 4;
  r3.comms[0].left = 4;
  outside(in.ranks[7], 4, 4000000000);
  auto d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->fault_class, FaultClass::noncomm_hang);
  EXPECT_EQ(d->ranks, std::vector<int>{7});
  EXPECT_EQ(d->missing, (std::vector<int>{3, 7}));
  EXPECT_NE(d->message.find("rank 3 in send to 7"), std::string::npos) << d->message;
}

TEST(Hang, TwoRanksWaitingForEachOtherIsACommHangOnTheirLink) {
  HangInput in = all_in_allreduce(8, 5);
  in.ranks[5].current = op(OpKind::sendrecv, 1, 6, 4);  // send to 6, receive from 4
  in.ranks[6].current = op(OpKind::sendrecv, 1, 7, 5);  // send to 7, receive from 5
  in.ranks[4].current = op(OpKind::sendrecv, 1, 3, 5);  // send to 3, receive from 5: not the culprit
  for (int r : {4, 5, 6}) {
    in.ranks[static_cast<size_t>(r)].comms[0].entered = 4;
    in.ranks[static_cast<size_t>(r)].comms[0].left = 4;
  }
  auto d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->fault_class, FaultClass::comm_hang);
  EXPECT_EQ(d->links, (std::vector<std::pair<int, int>>{{5, 6}}));
}

TEST(Hang, EveryMemberInsideIsACommHangOfTheOperation) {
  HangInput in = all_in_allreduce(4, 9);
  auto d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->fault_class, FaultClass::comm_hang);
  EXPECT_TRUE(d->ranks.empty());
  EXPECT_TRUE(d->missing.empty());
  // Some left already: the ones that did not are named.
  in.ranks[0].comms[0].left = 9;
  in.ranks[1].comms[0].left = 9;
  in.ranks[0].in_op = in.ranks[1].in_op = false;
  d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->ranks, (std::vector<int>{2, 3}));
}

TEST(Hang, ADeadOrSilentRankIsTheCulprit) {
  HangInput in = all_in_allreduce(6, 3);
  in.ranks[2].liveness = Liveness::dead;
  in.ranks[2].suspect = false;
  auto d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->fault_class, FaultClass::noncomm_hang);
  EXPECT_EQ(d->ranks, std::vector<int>{2});
  EXPECT_NE(d->message.find("dead"), std::string::npos);
  in.ranks[2].liveness = Liveness::silent;
  d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->ranks, std::vector<int>{2});
  EXPECT_NE(d->message.find("unresponsive"), std::string::npos);
}

TEST(Hang, SubCommunicatorMembersOnly) {
  // Comm 0xabc has ranks {1, 3}; rank 3 never entered its #2; rank 0 is
  // outside communication but not a member: not a culprit.
  HangInput in = all_in_allreduce(4, 1, 100);
  for (RankView& v : in.ranks) v.suspect = false;
  in.members[0xabc] = {1, 3};
  RankView& r1 = in.ranks[1];
  r1.current = op(OpKind::bcast, 2);
  r1.current.comm = 0xabc;
  r1.age_ns = 5000000000;
  r1.suspect = true;
  r1.comms[0xabc] = oob::CommProgress{0xabc, 2, 0, 2, 1};
  outside(in.ranks[3], 1, 5000000000);
  in.ranks[3].comms[0xabc] = oob::CommProgress{0xabc, 2, 0, 1, 1};
  outside(in.ranks[0], 1, 5000000000);
  auto d = diagnose_hang(in, 10);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->comm, "abc");
  EXPECT_EQ(d->missing, std::vector<int>{3});
  EXPECT_EQ(d->ranks, std::vector<int>{3});
}

// A rank dies; the launcher then ends the others. Only the first death is
// a diagnosis, whichever rank numbers the later ones have, and a death long
// after the first is a new fault again.
TEST(CoordinatorDeaths, OnlyTheFirstOfATeardownIsDiagnosed) {
  Settings settings;
  const int64_t t0 = 1000000000;
  Coordinator c(settings, 8, 0, std::vector<std::string>(8, "h"), std::vector<std::string>(8), t0);
  auto dead_ranks = [](const Coordinator::Actions& a) {
    std::vector<int> ranks;
    for (const Diagnosis& d : a.diagnoses) {
      if (d.detector == "death") ranks.insert(ranks.end(), d.ranks.begin(), d.ranks.end());
    }
    return ranks;
  };
  c.on_lost(6, t0 + 10000000);
  EXPECT_EQ(dead_ranks(c.tick(t0 + 20000000)), std::vector<int>{6});
  c.on_lost(2, t0 + 110000000);
  c.on_lost(4, t0 + 111000000);
  EXPECT_TRUE(dead_ranks(c.tick(t0 + 120000000)).empty());  // the teardown
  c.on_lost(5, t0 + 10000000 + settings.heartbeat_timeout_ns + 1);
  EXPECT_EQ(dead_ranks(c.tick(t0 + 20000000 + settings.heartbeat_timeout_ns)), std::vector<int>{5});

  // A coordinator that took over after a death it heard of: the old
  // coordinator's end is the teardown; without that death it is a fault.
  Coordinator e(settings, 8, 2, std::vector<std::string>(8, "h"), std::vector<std::string>(8), t0);
  e.note_earlier_death(t0);
  e.on_lost(0, t0 + 100000000);
  EXPECT_TRUE(dead_ranks(e.tick(t0 + 110000000)).empty());
  Coordinator f(settings, 8, 2, std::vector<std::string>(8, "h"), std::vector<std::string>(8), t0);
  f.on_lost(0, t0 + 100000000);
  EXPECT_EQ(dead_ranks(f.tick(t0 + 110000000)), std::vector<int>{0});

  // Lost in one tick: the earliest close is the diagnosis, not the lowest rank.
  Coordinator d(settings, 8, 0, std::vector<std::string>(8, "h"), std::vector<std::string>(8), t0);
  d.on_lost(7, t0 + 1000);
  d.on_lost(3, t0 + 5000);
  EXPECT_EQ(dead_ranks(d.tick(t0 + 100000)), std::vector<int>{7});
}

}  // namespace
