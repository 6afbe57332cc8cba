// The fused AllReduce-RMSNorm protocol (collectives/fused/protocol.hpp) run
// by threads: each simulated rank is a driver thread that launches its
// calls one after the other, each call a set of block threads (as a kernel
// launch is), with no synchronisation between the ranks but the protocol's
// flags. Ranks drift apart by whole calls, the block budget and the token
// count change from call to call, and one-shot and two-shot alternate: the
// call counter, the flag comparison and the double-buffered sets are
// exercised as on the GPUs. Every call's residual and output are checked
// against the float64 reference, every rank's output must have the same
// bits, x must stay untouched, and guard bytes around every buffer too.
// Under ThreadSanitizer (label `threads`) this also checks that the flags
// order the data.
#include "collectives/fused/fused_reference.hpp"
#include "collectives/fused/host_platform.hpp"
#include "collectives/fused/protocol.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

using strata::coll::DataType;
using strata::fused::HostPlatform;
namespace proto = strata::fused::proto;
namespace math = strata::fused::math;
using strata_test::fused::Case;
using strata_test::fused::Inputs;
using strata_test::fused::Reference;

using Guarded = strata_test::fused::GuardedBuffer;

using strata_test::fused::Plan;

// Block `block` of `blocks` (Lamport: of row group block % groups, posting
// slice block / groups, as kernels.cu numbers them).
template <class T, int V>
void run_block(const proto::Args<T>& a, proto::Kind kind, int block, int blocks) {
  HostPlatform p;
  const int groups = kind == proto::Kind::lamport ? blocks / proto::slices_of(a) : blocks;
  switch (kind) {
    case proto::Kind::two_shot: proto::two_shot<V>(p, a, block, blocks, nullptr); break;
    case proto::Kind::lamport: proto::lamport<V>(p, a, block % groups, groups, nullptr, block / groups); break;
    case proto::Kind::one_shot: proto::one_shot<V>(p, a, block, blocks, nullptr); break;
  }
}

// Every rank's regions, as the GPUs' IPC mappings are: one address space.
struct Regions {
  proto::Layout layout;
  std::vector<std::vector<unsigned char>> store;
  char* base[proto::kMaxRanks] = {};
  std::vector<uint64_t> error;
  // Lamport sets for messages up to `lamport_max` bytes, filled empty as the exchanges do.
  Regions(int n, size_t max_tokens, size_t hidden, size_t element, size_t lamport_max = SIZE_MAX)
      : layout(proto::Layout::of(max_tokens, hidden, element, n, lamport_max)),
        store(static_cast<size_t>(n), std::vector<unsigned char>(layout.total + 256, 0)),
        error(static_cast<size_t>(n), 0) {
    for (int q = 0; q < n; ++q) {
      auto p = reinterpret_cast<uintptr_t>(store[static_cast<size_t>(q)].data());
      base[q] = reinterpret_cast<char*>((p + 255) / 256 * 256);
      const uint32_t empty = proto::empty_word(element);
      for (size_t at = layout.lamport; at < layout.total; at += 4) std::memcpy(base[q] + at, &empty, 4);
    }
  }
};

struct Outcome {
  std::vector<unsigned char> residual, out;
  bool guards = true;
  bool x_untouched = true;
};

template <class T>
void drive_rank(Regions& r, int rank, const std::vector<Plan>& plans, bool misalign, uint64_t timeout_ns,
                std::vector<Outcome>* outcomes, int skip_call) {
  for (size_t k = 0; k < plans.size(); ++k) {
    if (static_cast<int>(k) == skip_call) continue;  // this rank never arrives
    const Plan& pl = plans[k];
    const size_t bytes = pl.c.tokens * pl.c.hidden * sizeof(T);
    const size_t off = misalign ? sizeof(T) : 0;
    Guarded x(bytes, off), residual(bytes, off), weight(pl.c.hidden * sizeof(T), off), out(bytes, off);
    std::memcpy(x.data(), pl.in.x[static_cast<size_t>(rank)].data(), bytes);
    std::memcpy(residual.data(), pl.in.residual.data(), bytes);
    std::memcpy(weight.data(), pl.in.weight.data(), pl.c.hidden * sizeof(T));
    strata_test::fused::poison(pl.c.type, out.data(), pl.c.tokens * pl.c.hidden);
    proto::Args<T> a{};
    for (int q = 0; q < pl.c.ranks; ++q) a.region[q] = r.base[q];
    a.rank = rank;
    a.nranks = pl.c.ranks;
    a.layout = r.layout;
    a.x = reinterpret_cast<const T*>(x.data());
    a.residual = reinterpret_cast<T*>(residual.data());
    a.weight = reinterpret_cast<const T*>(weight.data());
    a.out = pl.in_place ? reinterpret_cast<T*>(x.data()) : reinterpret_cast<T*>(out.data());
    a.tokens = static_cast<int64_t>(pl.c.tokens);
    a.hidden = static_cast<int64_t>(pl.c.hidden);
    a.epsilon = pl.c.epsilon;
    a.timeout = timeout_ns;
    a.error = &r.error[static_cast<size_t>(rank)];
    a.lag = pl.lag;
    a.post_slices = pl.post_slices;
    const int blocks = proto::blocks_for(pl.kind, a.tokens, a.nranks, pl.budget) *
                       (pl.kind == proto::Kind::lamport ? pl.post_slices : 1);
    const bool vector = !misalign && (pl.c.hidden * sizeof(T)) % 16 == 0;
    std::vector<std::thread> launch;
    for (int b = 1; b < blocks; ++b) {
      launch.emplace_back([&, b] {
        vector ? run_block<T, 16 / sizeof(T)>(a, pl.kind, b, blocks) : run_block<T, 1>(a, pl.kind, b, blocks);
      });
    }
    vector ? run_block<T, 16 / sizeof(T)>(a, pl.kind, 0, blocks) : run_block<T, 1>(a, pl.kind, 0, blocks);
    for (auto& t : launch) t.join();
    Outcome& o = (*outcomes)[k];
    o.residual.assign(residual.data(), residual.data() + bytes);
    const unsigned char* result = pl.in_place ? x.data() : out.data();
    o.out.assign(result, result + bytes);
    o.guards = x.guards_intact() && residual.guards_intact() && weight.guards_intact() && out.guards_intact();
    o.x_untouched = pl.in_place || std::memcmp(x.data(), pl.in.x[static_cast<size_t>(rank)].data(), bytes) == 0;
  }
}

uint64_t seed_from_env() { return strata_test::fused::seed_from_env(0xF05EDull); }

struct Param {
  DataType type;
  int ranks;
  size_t hidden;
  bool misalign;
};

class FusedProtocol : public ::testing::TestWithParam<Param> {};

template <class T>
void check_protocol(const Param& prm) {
  const uint64_t seed = seed_from_env() ^ (static_cast<uint64_t>(prm.ranks) << 32) ^ prm.hidden;
  SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed_from_env()));
  std::mt19937_64 gen(seed);
  const size_t max_tokens = 37;
  const int calls = 24;
  std::vector<Plan> plans(calls);
  for (int k = 0; k < calls; ++k) {
    Plan& p = plans[static_cast<size_t>(k)];
    p.c.type = prm.type;
    p.c.ranks = prm.ranks;
    p.c.hidden = prm.hidden;
    p.c.tokens = 1 + gen() % max_tokens;
    p.c.epsilon = (gen() % 2) ? 1e-5f : 1e-2f;
    p.c.seed = gen();
    p.kind = strata_test::fused::random_kind(gen(), true);
    p.budget = 1 + static_cast<int>(gen() % 5);
    p.lag = static_cast<int>(gen() % 4);
    p.in_place = gen() % 4 == 0;
    // Rows also posted by 1 or 2 more blocks (not in place: post_slices_for).
    p.post_slices = p.in_place ? 1 : 1 + static_cast<int>(gen() % 3);
    p.in = strata_test::fused::make_inputs(p.c);
    if (gen() % 3 == 0) strata_test::fused::negative_zero_column(p.c, &p.in);
    p.ref = strata_test::fused::reference(p.c, p.in);
  }
  Regions regions(prm.ranks, max_tokens, prm.hidden, sizeof(T));
  const std::vector<unsigned char> empty_sets(regions.base[0] + regions.layout.lamport,
                                              regions.base[0] + regions.layout.total);
  std::vector<std::vector<Outcome>> outcomes(static_cast<size_t>(prm.ranks), std::vector<Outcome>(calls));
  std::vector<std::thread> ranks;
  const uint64_t timeout = uint64_t{60} * 1000 * 1000 * 1000;  // a stuck protocol fails the test, not the job
  for (int q = 0; q < prm.ranks; ++q) {
    ranks.emplace_back(drive_rank<T>, std::ref(regions), q, std::cref(plans), prm.misalign, timeout,
                       &outcomes[static_cast<size_t>(q)], -1);
  }
  for (auto& t : ranks) t.join();
  for (int q = 0; q < prm.ranks; ++q) EXPECT_EQ(regions.error[static_cast<size_t>(q)], 0u) << "rank " << q;
  for (int k = 0; k < calls; ++k) {
    const Plan& p = plans[static_cast<size_t>(k)];
    SCOPED_TRACE("call " + std::to_string(k) + ": " + p.c.describe() + " " + strata_test::fused::kind_name(p.kind) +
                 " budget " + std::to_string(p.budget) + (p.in_place ? " in place" : ""));
    for (int q = 0; q < prm.ranks; ++q) {
      const Outcome& o = outcomes[static_cast<size_t>(q)][static_cast<size_t>(k)];
      EXPECT_TRUE(o.guards) << "rank " << q << " wrote outside its buffers";
      EXPECT_TRUE(o.x_untouched) << "rank " << q << " changed x";
      EXPECT_LE(strata_test::fused::relative_error(p.c, p.ref.residual, o.residual.data()),
                strata_test::fused::tolerance(p.c.type))
          << "residual of rank " << q;
      EXPECT_LE(strata_test::fused::relative_error(p.c, p.ref.out, o.out.data()),
                strata_test::fused::tolerance(p.c.type))
          << "output of rank " << q;
      EXPECT_EQ(o.out, outcomes[0][static_cast<size_t>(k)].out) << "rank " << q << "'s output differs from rank 0's";
      EXPECT_EQ(o.residual, outcomes[0][static_cast<size_t>(k)].residual) << "rank " << q << "'s residual differs";
    }
  }
  // Every Lamport slot read was emptied again: the next call's wait must not see stale rows.
  for (int q = 0; q < prm.ranks; ++q) {
    EXPECT_EQ(std::memcmp(empty_sets.data(), regions.base[q] + regions.layout.lamport, empty_sets.size()), 0)
        << "rank " << q << "'s Lamport sets are not all empty after the calls";
  }
}

TEST_P(FusedProtocol, CallsAgainstFloat64) {
  const Param& p = GetParam();
  switch (p.type) {
    case DataType::float32: check_protocol<float>(p); break;
    case DataType::bfloat16: check_protocol<math::Bf16>(p); break;
    default: check_protocol<math::F16>(p); break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FusedProtocol,
    ::testing::Values(Param{DataType::bfloat16, 2, 64, false}, Param{DataType::bfloat16, 4, 136, false},
                      Param{DataType::bfloat16, 8, 32, false}, Param{DataType::float16, 3, 40, false},
                      Param{DataType::float32, 4, 68, false}, Param{DataType::float32, 2, 1000, false},
                      Param{DataType::bfloat16, 5, 24, true}, Param{DataType::float32, 3, 20, true},
                      // one vector a row: Lamport keeps the row in registers (take_row_held)
                      Param{DataType::bfloat16, 2, 8, false}, Param{DataType::float32, 3, 4, false}));

// A rank that never arrives: the others give up after the timeout, each
// records that rank as the missing peer of the start barrier of that call,
// and every thread returns.
class FusedProtocolTimeout : public ::testing::TestWithParam<proto::Kind> {};

TEST_P(FusedProtocolTimeout, NamesTheMissingRank) {
  Param prm{DataType::float32, 3, 16, false};
  std::vector<Plan> plans(2);
  for (size_t k = 0; k < plans.size(); ++k) {
    Plan& p = plans[k];
    p.kind = GetParam();
    p.c.type = prm.type;
    p.c.ranks = prm.ranks;
    p.c.hidden = prm.hidden;
    p.c.tokens = 5;
    p.c.seed = k + 1;
    p.budget = 2;
    p.in = strata_test::fused::make_inputs(p.c);
    p.ref = strata_test::fused::reference(p.c, p.in);
  }
  Regions regions(prm.ranks, 5, prm.hidden, sizeof(float));
  std::vector<std::vector<Outcome>> outcomes(3, std::vector<Outcome>(plans.size()));
  const uint64_t timeout = 50u * 1000 * 1000;  // 50 ms
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ranks;
  for (int q = 0; q < 3; ++q) {
    ranks.emplace_back(drive_rank<float>, std::ref(regions), q, std::cref(plans), false, timeout,
                       &outcomes[static_cast<size_t>(q)], q == 2 ? 1 : -1);
  }
  for (auto& t : ranks) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  // Call 1 (the first of rank 2's skipped) is the protocol's call number 2.
  for (int q = 0; q < 2; ++q) {
    ASSERT_NE(regions.error[static_cast<size_t>(q)], 0u) << "rank " << q << " did not notice";
    const proto::ErrorFields e = proto::unpack_error(regions.error[static_cast<size_t>(q)]);
    EXPECT_EQ(e.code, 1u);
    EXPECT_EQ(e.peer, 2u) << "rank " << q;
    EXPECT_EQ(e.phase, static_cast<uint32_t>(GetParam() == proto::Kind::lamport ? proto::kData : proto::kStart));
    EXPECT_EQ(e.seq, 2u);
  }
  // The call before went through everywhere.
  for (int q = 0; q < 3; ++q) {
    EXPECT_LE(strata_test::fused::relative_error(plans[0].c, plans[0].ref.out,
                                                 outcomes[static_cast<size_t>(q)][0].out.data()),
              1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, FusedProtocolTimeout,
                         ::testing::Values(proto::Kind::one_shot, proto::Kind::two_shot, proto::Kind::lamport),
                         [](const ::testing::TestParamInfo<proto::Kind>& i) {
                           return i.param == proto::Kind::lamport
                                      ? std::string("lamport")
                                      : (i.param == proto::Kind::two_shot ? "two_shot" : "one_shot");
                         });

// Sets too small for a message: the layout says so, and the slots of
// every set and writer are disjoint and inside the region.
TEST(FusedProtocolArithmetic, LamportLayout) {
  const proto::Layout none = proto::Layout::of(64, 1024, 2);
  EXPECT_FALSE(none.lamport_fits(1));
  EXPECT_EQ(none.total, none.lamport);
  const proto::Layout capped = proto::Layout::of(64, 1024, 2, 4, 4096);
  EXPECT_TRUE(capped.lamport_fits(4096));
  EXPECT_FALSE(capped.lamport_fits(4097));
  const proto::Layout l = proto::Layout::of(10, 100, 4, 3, SIZE_MAX);
  EXPECT_TRUE(l.lamport_fits(10 * 100 * 4));
  EXPECT_FALSE(l.lamport_fits(l.slot_bytes + 1));
  std::vector<size_t> starts;
  for (uint32_t s = 0; s < proto::kLamportSets; ++s) {
    for (int w = 0; w < 3; ++w) {
      EXPECT_GE(l.slot(s, w), l.lamport);
      EXPECT_LE(l.slot(s, w) + l.slot_bytes, l.total);
      EXPECT_EQ(l.slot(s, w) % 256, 0u);
      starts.push_back(l.slot(s, w));
    }
  }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) EXPECT_GE(starts[i] - starts[i - 1], l.slot_bytes) << "slots overlap";
  EXPECT_EQ(proto::empty_word(2), 0x80008000u);
  EXPECT_EQ(proto::empty_word(4), 0x80000000u);
}

TEST(FusedProtocolArithmetic, NegativeZeroIsEmptyAndSentAsZero) {
  EXPECT_TRUE(math::is_empty(-0.0f));
  EXPECT_FALSE(math::is_empty(0.0f));
  EXPECT_FALSE(math::is_empty(-1.0f));
  EXPECT_EQ(math::bits_of(math::canonical(-0.0f)), 0u);
  EXPECT_EQ(math::bits_of(math::canonical(-2.5f)), math::bits_of(-2.5f));
  EXPECT_TRUE(math::is_empty(math::Bf16{0x8000}));
  EXPECT_FALSE(math::is_empty(math::Bf16{0x8001}));
  EXPECT_EQ(math::canonical(math::F16{0x8000}).bits, 0u);
  EXPECT_EQ(math::empty_value<math::F16>().bits, 0x8000u);
  EXPECT_EQ(math::bits_of(math::empty_value<float>()), 0x80000000u);
}

// The word-at-a-time empty test and canonical form (row_math.hpp) against
// the element-by-element ones: every 16-bit value in either lane of a word,
// beside the values at the lane's edges and random ones.
TEST(FusedProtocolArithmetic, WordAtATimeEmptyMatchesElementwise) {
  std::mt19937 rng(0xE4E7u);
  std::vector<uint16_t> others = {0x0000, 0x8000, 0x7fff, 0xffff, 0x0001, 0x8001, 0x7f80, 0xff80, 0x4000, 0xc000};
  for (int i = 0; i < 22; ++i) others.push_back(static_cast<uint16_t>(rng()));
  auto check = [](const math::Vec<math::Bf16, 8>& v) {
    bool want_empty = false;
    math::Vec<math::Bf16, 8> want = v;
    for (int k = 0; k < 8; ++k) {
      want_empty = want_empty || math::is_empty(v.e[k]);
      want.e[k] = math::canonical(v.e[k]);
    }
    const math::Vec<math::Bf16, 8> got = math::canonical_vector(v);
    bool same = true;
    for (int k = 0; k < 8; ++k) same = same && got.e[k].bits == want.e[k].bits;
    return math::any_empty(v) == want_empty && same;
  };
  int failures = 0;
  for (uint32_t a = 0; a < 0x10000u && failures < 5; ++a) {
    for (uint16_t b : others) {
      for (int lane = 0; lane < 8; ++lane) {
        math::Vec<math::Bf16, 8> v;
        for (int k = 0; k < 8; ++k) v.e[k].bits = (k % 2 == 0) ? 0x3f80 : 0x1234;  // none empty
        v.e[lane].bits = static_cast<uint16_t>(a);
        v.e[lane ^ 1].bits = b;
        if (!check(v)) {
          ++failures;
          ADD_FAILURE() << "lane " << lane << " = 0x" << std::hex << a << ", its neighbour 0x" << b;
        }
      }
    }
  }
  for (int i = 0; i < 200000 && failures < 5; ++i) {
    math::Vec<math::F16, 8> h;
    math::Vec<math::Bf16, 8> v;
    for (int k = 0; k < 8; ++k) v.e[k].bits = h.e[k].bits = rng() % 4 == 0 ? 0x8000 : static_cast<uint16_t>(rng());
    bool want = false;
    for (int k = 0; k < 8; ++k) want = want || math::is_empty(h.e[k]);
    if (!check(v) || math::any_empty(h) != want) ++failures;
  }
  EXPECT_EQ(failures, 0);
  // Elements of 4 bytes (and vectors of one 2-byte element) go element by element.
  math::Vec<float, 4> f{{1.0f, -0.0f, 0.0f, -2.0f}};
  EXPECT_TRUE(math::any_empty(f));
  EXPECT_EQ(math::bits_of(math::canonical_vector(f).e[1]), 0u);
  EXPECT_EQ(math::bits_of(math::canonical_vector(f).e[3]), math::bits_of(-2.0f));
  EXPECT_TRUE(math::any_empty(math::Vec<math::F16, 1>{{math::F16{0x8000}}}));
  EXPECT_FALSE(math::any_empty(math::Vec<math::F16, 1>{{math::F16{0x0000}}}));
}

// Posting blocks: only Lamport rows a block holds, not in clusters, never
// past the budget, at least 1.
TEST(FusedProtocolArithmetic, PostSlices) {
  std::mt19937 rng(0x5EC7u);
  for (int i = 0; i < 20000; ++i) {
    const auto kind = static_cast<proto::Kind>(rng() % 3);
    const int64_t held = 16384, row = 2 * (1 + static_cast<int64_t>(rng() % 16384));
    const int cluster = 1 << (rng() % 3), blocks = 1 + static_cast<int>(rng() % 140);
    const int budget = blocks + static_cast<int>(rng() % 300), wanted = 1 + static_cast<int>(rng() % 8);
    const bool in_place = rng() % 4 == 0;
    int expected = 1;  // the rule, written out
    if (kind == proto::Kind::lamport && cluster == 1 && row <= held && !in_place) {
      while (expected < wanted && blocks * (expected + 1) <= budget) ++expected;
    }
    ASSERT_EQ(proto::post_slices_for(kind, row, held, cluster, blocks, budget, wanted, in_place), expected)
        << "kind " << static_cast<int>(kind) << " row " << row << " cluster " << cluster << " blocks " << blocks
        << " budget " << budget << " wanted " << wanted << (in_place ? " in place" : "");
  }
}

TEST(FusedProtocolArithmetic, RowsAndBlocks) {
  for (int64_t tokens = 0; tokens < 40; ++tokens) {
    for (int n = 1; n <= 8; ++n) {
      int64_t covered = 0;
      for (int q = 0; q < n; ++q) {
        const int64_t lo = proto::owner_begin(tokens, q, n), hi = proto::owner_begin(tokens, q + 1, n);
        EXPECT_LE(lo, hi);
        EXPECT_LE(hi - lo, (tokens + n - 1) / n);
        EXPECT_GE(hi - lo, tokens / n);
        covered += hi - lo;
      }
      EXPECT_EQ(proto::owner_begin(tokens, 0, n), 0);
      EXPECT_EQ(covered, tokens);
      for (int budget = 1; budget < 300; budget += 37) {
        const int g1 = proto::blocks_for(proto::Kind::one_shot, tokens, n, budget),
                  g2 = proto::blocks_for(proto::Kind::two_shot, tokens, n, budget);
        EXPECT_EQ(proto::blocks_for(proto::Kind::lamport, tokens, n, budget), g1);
        EXPECT_GE(g1, 1);
        EXPECT_LE(g1, std::max<int64_t>(1, std::min<int64_t>(budget, tokens)));
        EXPECT_LE(g2, std::max<int64_t>(1, (tokens + n - 1) / n));
        EXPECT_LE(g1, proto::kMaxBlocks);
      }
    }
  }
  const proto::ErrorFields e = proto::unpack_error(proto::pack_error(1, proto::kMid, 7, 300, 0xfffffff0u));
  EXPECT_EQ(e.code, 1u);
  EXPECT_EQ(e.phase, 1u);
  EXPECT_EQ(e.peer, 7u);
  EXPECT_EQ(e.block, 300u & 0xff);
  EXPECT_EQ(e.seq, 0xfffffff0u);
}

// The cluster a Lamport call's rows are shared by, against the rule
// written out: for rows one block does not hold, the smallest power of two
// (up to `largest`, the clusters within the budget) whose share of a row
// fits the limit, else the largest such; 1 for the other kinds, rows one
// block holds and with no limit.
TEST(FusedProtocolArithmetic, ClusterSizes) {
  std::mt19937_64 gen(strata_test::fused::seed_from_env(0xC1u));
  for (int i = 0; i < 20000; ++i) {
    const auto kind = static_cast<proto::Kind>(gen() % 3);
    const int64_t row = 2 + static_cast<int64_t>(gen() % 70000);
    const int blocks = 1 + static_cast<int>(gen() % 140), budget = 1 + static_cast<int>(gen() % 264);
    const int largest = 1 + static_cast<int>(gen() % 9);
    const int64_t limit = gen() % 5 == 0 ? 0 : static_cast<int64_t>(256 << (gen() % 7));
    const int64_t held = static_cast<int64_t>(gen() % 3) * 8192;
    std::vector<int> allowed;
    for (int c = 1; c <= 8; c *= 2) {
      if (c <= largest && (c == 1 || static_cast<int64_t>(blocks) * c <= budget)) allowed.push_back(c);
    }
    int expected = 1;
    if (kind == proto::Kind::lamport && limit > 0 && row > held) {
      expected = allowed.back();
      for (int c : allowed) {
        if (row <= limit * c) {
          expected = c;
          break;
        }
      }
    }
    ASSERT_EQ(proto::cluster_for(kind, row, blocks, budget, largest, held, limit), expected)
        << "kind " << static_cast<int>(kind) << " row " << row << " blocks " << blocks << " budget " << budget
        << " largest " << largest << " held " << held << " limit " << limit;
  }
  // The shapes that matter, on 132 multiprocessors with the defaults: one
  // row of 16384 bf16 in clusters of 8, of 8192 bf16 (one block holds it)
  // alone, and 100 rows of 16384 bf16 alone (no room for clusters).
  EXPECT_EQ(proto::cluster_for(proto::Kind::lamport, 32768, 1, 132, 8, 16384, 4096), 8);
  EXPECT_EQ(proto::cluster_for(proto::Kind::lamport, 16384, 1, 132, 8, 16384, 4096), 1);
  EXPECT_EQ(proto::cluster_for(proto::Kind::lamport, 32768, 100, 132, 8, 16384, 4096), 1);
}

}  // namespace
