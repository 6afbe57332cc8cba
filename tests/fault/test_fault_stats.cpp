// The fail-slow statistics against naive oracles (sorting for the median
// and the MAD, the CUSUM recursion written out), and the detectors on
// synthetic data: a late rank or a slow link is found within the promised
// number of samples, noise, isolated outliers and a machine-wide slowdown
// never raise an alarm.
#include "fault/detect/links.hpp"
#include "fault/detect/skew.hpp"
#include "fault/stats/cusum.hpp"
#include "fault/stats/robust.hpp"
#include "fault/stats/window.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using namespace strata::fault;

unsigned seed() {
  const char* s = std::getenv("STRATA_TEST_SEED");
  return s ? static_cast<unsigned>(std::strtoul(s, nullptr, 10)) : 20240611u;
}

double naive_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double naive_mad(const std::vector<double>& v) {
  const double m = naive_median(v);
  std::vector<double> d;
  for (double x : v) d.push_back(std::fabs(x - m));
  return naive_median(d);
}

TEST(Robust, MedianAndMadMatchSorting) {
  std::mt19937 rng(seed());
  std::uniform_int_distribution<int> size(1, 60);
  std::lognormal_distribution<double> heavy(0, 2);
  for (int round = 0; round < 500; ++round) {
    std::vector<double> v(static_cast<size_t>(size(rng)));
    for (double& x : v) x = (rng() % 4 == 0) ? std::floor(heavy(rng)) : heavy(rng);  // ties too
    SCOPED_TRACE("round " + std::to_string(round) + ", seed " + std::to_string(seed()));
    EXPECT_DOUBLE_EQ(stats::median(v), naive_median(v));
    const stats::Robust r = stats::robust(v);
    EXPECT_DOUBLE_EQ(r.median, naive_median(v));
    EXPECT_DOUBLE_EQ(r.mad, naive_mad(v));
    EXPECT_DOUBLE_EQ(r.sigma(), 1.4826 * naive_mad(v));
  }
  EXPECT_EQ(stats::median({}), 0);
  EXPECT_EQ(stats::median({3}), 3);
  EXPECT_EQ(stats::median({4, 1}), 2.5);
}

TEST(Robust, MadIgnoresOutliers) {
  std::vector<double> v(100, 10.0);
  for (int i = 0; i < 100; ++i) v[static_cast<size_t>(i)] += (i % 7) * 0.1;
  const stats::Robust clean = stats::robust(v);
  for (int i = 0; i < 40; ++i) v[static_cast<size_t>(i)] = 1e9;  // 40% garbage
  const stats::Robust dirty = stats::robust(v);
  EXPECT_LT(std::fabs(dirty.median - clean.median), 0.7);
  EXPECT_LT(dirty.mad, 1.0);
}

TEST(Robust, ZScoreFloorAndClip) {
  stats::Robust quiet{100, 0};                                  // no spread at all
  EXPECT_DOUBLE_EQ(stats::robust_z(100 + 10, quiet, 10), 2.0);  // a shift of min_shift scores the allowance
  EXPECT_DOUBLE_EQ(stats::robust_z(100 + 15, quiet, 10), 3.0);
  EXPECT_DOUBLE_EQ(stats::robust_z(100 + 1e6, quiet, 10), 4.0);  // clipped
  EXPECT_DOUBLE_EQ(stats::robust_z(100 - 1e6, quiet, 10), -4.0);
  stats::Robust noisy{100, 20};  // sigma 29.65 > min_shift / 2
  EXPECT_NEAR(stats::robust_z(100 + 29.652, noisy, 10), 1.0, 1e-3);
  EXPECT_EQ(stats::robust_z(5, stats::Robust{5, 0}, 0), 0);
}

TEST(Cusum, MatchesTheRecursion) {
  std::mt19937 rng(seed() + 1);
  std::normal_distribution<double> z(0, 2);
  for (int round = 0; round < 200; ++round) {
    stats::CusumParams p;
    p.k = 1 + (rng() % 3);
    p.h = 3 + (rng() % 8);
    stats::Cusum c(p);
    double s = 0;
    uint64_t start = 0;
    for (uint64_t t = 1; t <= 300; ++t) {
      const double x = std::clamp(z(rng) + (t > 150 ? 1.5 : 0.0), -4.0, 4.0);
      const double next = std::max(0.0, s + x - p.k);
      if (s == 0 && next > 0) start = t;
      if (next == 0) start = 0;
      s = next;
      const bool alarm = c.update(x, t);
      ASSERT_DOUBLE_EQ(c.value(), s) << "round " << round << " t " << t;
      ASSERT_EQ(alarm, s >= p.h);
      ASSERT_EQ(c.run_start(), start);
    }
  }
}

TEST(Cusum, NeedsFourConsecutiveShiftsAndForgetsOutliers) {
  stats::Cusum c;
  EXPECT_FALSE(c.update(4, 1));
  EXPECT_FALSE(c.update(4, 2));
  EXPECT_FALSE(c.update(4, 3));
  EXPECT_TRUE(c.update(4, 4));
  EXPECT_EQ(c.run_start(), 1u);
  stats::Cusum d;
  for (int i = 0; i < 1000; ++i) {  // an isolated maximal score every third sample
    ASSERT_FALSE(d.update(i % 3 == 0 ? 4.0 : 0.0, static_cast<uint64_t>(i)));
  }
  stats::Cusum e;  // exactly the allowance never accumulates
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(e.update(2.0));
}

TEST(Window, SlidingMedianMatchesTheLastValues) {
  std::mt19937 rng(seed() + 2);
  stats::Window w(16);
  std::vector<double> all;
  for (int i = 0; i < 200; ++i) {
    const double x = static_cast<double>(rng() % 1000);
    w.add(x);
    all.push_back(x);
    std::vector<double> last(all.end() - std::min<std::ptrdiff_t>(16, static_cast<std::ptrdiff_t>(all.size())),
                             all.end());
    ASSERT_DOUBLE_EQ(w.median(), naive_median(last));
  }
  stats::TypicalDurations t;
  for (int i = 0; i < 7; ++i) t.add(OpKind::allreduce, 8, 100);
  EXPECT_LT(t.typical_ns(OpKind::allreduce, 8), 0);  // too few samples
  t.add(OpKind::allreduce, 8, 100);
  EXPECT_EQ(t.typical_ns(OpKind::allreduce, 8), 100);
  EXPECT_LT(t.typical_ns(OpKind::allreduce, 1 << 20), 0);  // another size class
}

// 8 ranks, one collective every `period`; compute time per rank with
// scheduling noise; rank `slow` computes `extra` longer from `onset` on.
struct SkewRun {
  std::vector<Diagnosis> alarms;
};
SkewRun run_skew(unsigned s, int slow, double extra_ns, uint64_t onset, uint64_t count, bool outliers, int ranks = 8) {
  SlowParams p;  // defaults: min shift 10 ms
  SkewDetector d(ranks, p);
  std::mt19937 rng(s);
  std::exponential_distribution<double> noise(1.0 / 300000.0);  // 0.3 ms mean
  SkewRun out;
  int64_t t = 0;
  for (uint64_t seq = 1; seq <= count; ++seq) {
    t += 5000000;
    for (int r = 0; r < ranks; ++r) {
      oob::CollSample c;
      c.comm = 0;
      c.seq = seq;
      c.kind = static_cast<uint8_t>(OpKind::allreduce);
      c.bytes = 8;
      double compute = 2e6 + noise(rng);
      if (outliers && rng() % 50 == 0) compute += 40e6;  // a rank descheduled once in a while
      if (r == slow && seq >= onset) compute += extra_ns;
      c.compute_ns = static_cast<int64_t>(compute);
      c.start_ns = t + c.compute_ns;
      c.end_ns = t + 3000000;
      d.add(r, c);
    }
    for (Diagnosis& a : d.take_alarms()) out.alarms.push_back(a);
  }
  return out;
}

TEST(SkewDetector, FindsTheLateRankWithinTenCollectives) {
  for (unsigned s = 0; s < 20; ++s) {
    const int slow = static_cast<int>(s % 8);
    SkewRun run = run_skew(seed() + s, slow, 50e6, 100, 140, true);
    ASSERT_EQ(run.alarms.size(), 1u) << "seed " << seed() + s;
    const Diagnosis& d = run.alarms[0];
    EXPECT_EQ(d.fault_class, FaultClass::noncomm_slow);
    EXPECT_EQ(d.ranks, std::vector<int>{slow});
    EXPECT_GE(d.detect_seq, 100u);
    EXPECT_LE(d.detect_seq, 110u);
    EXPECT_LE(d.onset_seq, 100u);  // the run may start on a noisy sample just before
    EXPECT_GE(d.onset_seq, 95u);
  }
}

// Two and three ranks (a job of 2 GPUs): too few for the members' spread,
// the slow one is still named within ten collectives, and noise with
// outliers raises nothing.
TEST(SkewDetector, FindsTheLateRankOfTwoOrThree) {
  for (int ranks : {2, 3}) {
    for (unsigned s = 0; s < 10; ++s) {
      const int slow = static_cast<int>(s % static_cast<unsigned>(ranks));
      SkewRun run = run_skew(seed() + s, slow, 50e6, 100, 140, true, ranks);
      ASSERT_EQ(run.alarms.size(), 1u) << ranks << " ranks, seed " << seed() + s;
      EXPECT_EQ(run.alarms[0].ranks, std::vector<int>{slow});
      EXPECT_GE(run.alarms[0].detect_seq, 100u);
      EXPECT_LE(run.alarms[0].detect_seq, 110u);
    }
    for (unsigned s = 0; s < 3; ++s) {
      SkewRun quiet = run_skew(seed() + 200 + s, -1, 0, 0, 3000, true, ranks);
      EXPECT_TRUE(quiet.alarms.empty()) << ranks << " ranks: " << quiet.alarms[0].message;
    }
  }
}

TEST(SkewDetector, NoAlarmOnNoiseAndOutliers) {
  for (unsigned s = 0; s < 5; ++s) {
    SkewRun run = run_skew(seed() + 100 + s, -1, 0, 0, 3000, true);
    EXPECT_TRUE(run.alarms.empty()) << run.alarms[0].message;
  }
  // A shift no larger than the minimum never counts.
  SkewRun small = run_skew(seed() + 7, 3, 9e6, 10, 2000, false);
  EXPECT_TRUE(small.alarms.empty());
}

// A ring of 8 ranks, one iteration every 10 ms: each rank sends one
// 16-byte message to each neighbour, taking latency(it, src, dst) ns.
template <class Latency>
std::vector<Diagnosis> run_ring(uint64_t count, Latency latency) {
  SlowParams p;
  LinkDetector d(8, p);
  std::vector<Diagnosis> out;
  int64_t t = 0;
  for (uint64_t it = 1; it <= count; ++it) {
    t += 10000000;
    for (int src = 0; src < 8; ++src) {
      for (int dst : {(src + 1) % 8, (src + 7) % 8}) {
        oob::P2pSample send, recv;
        send.peer = dst;
        send.role = 0;
        send.ordinal = it;
        send.bytes = 16;
        send.ready_ns = t;
        send.end_ns = t + 1000;
        recv.peer = src;
        recv.role = 1;
        recv.ordinal = it;
        recv.bytes = 16;
        recv.ready_ns = t;
        recv.end_ns = t + static_cast<int64_t>(latency(it, src, dst));
        d.add(src, send, t);
        d.add(dst, recv, t);
      }
    }
    for (Diagnosis& x : d.take_alarms()) out.push_back(x);
  }
  return out;
}

// The link a->b (and b->a) gets `extra` from iteration `onset` on. With
// `pollute`, the receiver's other incoming link inflates as a sendrecv's
// would (its receive ends with its slow send).
std::vector<Diagnosis> run_links(unsigned s, int a, double extra_ns, uint64_t onset, uint64_t count, bool pollute) {
  std::mt19937 rng(s);
  std::exponential_distribution<double> noise(1.0 / 20000.0);
  const int b = (a + 1) % 8;
  return run_ring(count, [&](uint64_t it, int src, int dst) {
    double latency = 10000 + noise(rng);
    const bool slow = it >= onset && ((src == a && dst == b) || (src == b && dst == a));
    if (slow) latency += extra_ns;
    // x->a (x != b) ends with a's slow send to b, when a is the receiver in a sendrecv.
    if (pollute && it >= onset && dst == a && src != b) latency += extra_ns;
    return latency;
  });
}

// The machine slows down from iteration `from` to `to` (CPU
// oversubscription, as under `ctest -j`): any message waits, with
// probability 1/2, 2 to 5 quanta of 4 ms for its receiver to be scheduled
// again; with `burst`, link 3->4 takes 8 such waits in a row (its ends
// descheduled) from `from + 10`, which alarms against medians of the past.
// Noise as in run_links otherwise.
double slowdown_latency(std::mt19937& rng, uint64_t it, int src, int dst, uint64_t from, uint64_t to, bool burst) {
  std::exponential_distribution<double> noise(1.0 / 20000.0);
  double latency = 10000 + noise(rng);
  if (it < from || it >= to) return latency;
  const bool in_burst = burst && src == 3 && dst == 4 && it >= from + 10 && it < from + 18;
  if (in_burst || rng() % 2 == 0) latency += 4e6 * static_cast<double>(2 + rng() % 4);
  return latency;
}

TEST(LinkDetector, FindsTheSlowLinkWithinTenMessages) {
  for (unsigned s = 0; s < 16; ++s) {
    const int a = static_cast<int>(s % 8);
    const std::vector<Diagnosis> alarms = run_links(seed() + s, a, 30e6, 50, 80, s % 2 == 1);
    ASSERT_EQ(alarms.size(), 1u) << "seed " << seed() + s << ": " << alarms.size() << " alarms";
    EXPECT_EQ(alarms[0].fault_class, FaultClass::comm_slow);
    const std::pair<int, int> link = std::minmax(a, (a + 1) % 8);
    EXPECT_EQ(alarms[0].links, (std::vector<std::pair<int, int>>{link}));
    EXPECT_LE(alarms[0].detect_seq, 60u);
    EXPECT_GE(alarms[0].detect_seq, 50u);
  }
}

TEST(LinkDetector, NoAlarmOnNoiseAndCoverage) {
  const std::vector<Diagnosis> alarms = run_links(seed() + 50, 0, 0, 1, 1000, false);
  EXPECT_TRUE(alarms.empty());
  SlowParams p;
  LinkDetector d(4, p);
  oob::P2pSample s;
  s.peer = 1;
  s.role = 0;
  s.ordinal = 1;
  s.ready_ns = 100;
  d.add(0, s, 1000);
  s.peer = 0;
  s.role = 1;
  s.end_ns = 200;
  d.add(1, s, 1000);
  const auto uncovered = d.uncovered(1000, 500);
  EXPECT_EQ(uncovered.size(), 5u);  // of 6 pairs, 0-1 has traffic
  EXPECT_EQ(std::count(uncovered.begin(), uncovered.end(), std::make_pair(0, 1)), 0);
}

TEST(LinkDetector, NoAlarmWhenTheMachineSlowsDown) {
  for (unsigned s = 0; s < 16; ++s) {
    std::mt19937 rng(seed() + 200 + s);
    const std::vector<Diagnosis> alarms = run_ring(
        200, [&](uint64_t it, int src, int dst) { return slowdown_latency(rng, it, src, dst, 100, 160, true); });
    EXPECT_TRUE(alarms.empty()) << "seed " << seed() + 200 + s << ": " << alarms[0].message;
  }
}

TEST(LinkDetector, FindsTheSlowLinkWhileTheMachineSlowsDown) {
  for (unsigned s = 0; s < 16; ++s) {
    std::mt19937 rng(seed() + 300 + s);
    const int a = static_cast<int>(s % 8), b = (a + 1) % 8;
    const std::pair<int, int> slow = std::minmax(a, b);
    const std::vector<Diagnosis> alarms = run_ring(200, [&](uint64_t it, int src, int dst) {
      double latency = slowdown_latency(rng, it, src, dst, 100, 160, false);
      if (it >= 120 && std::pair<int, int>(std::minmax(src, dst)) == slow) latency += 50e6;
      return latency;
    });
    // Found within 10 messages; nothing else blamed (an episode that ends
    // while the slowdown raises its ends' levels is reported again after it).
    ASSERT_FALSE(alarms.empty()) << "seed " << seed() + 300 + s;
    EXPECT_GE(alarms[0].detect_seq, 120u) << "seed " << seed() + 300 + s << ": " << alarms[0].message;
    EXPECT_LE(alarms[0].detect_seq, 130u) << "seed " << seed() + 300 + s << ": " << alarms[0].message;
    for (const Diagnosis& d : alarms) {
      EXPECT_EQ(d.links, (std::vector<std::pair<int, int>>{slow})) << "seed " << seed() + 300 + s << ": " << d.message;
    }
  }
}

TEST(LinkDetector, TwoSlowLinksWithoutACommonRankAreBothFound) {
  // Each is as slow as the other: neither may count as the machine's slowdown.
  std::mt19937 rng(seed() + 400);
  std::exponential_distribution<double> noise(1.0 / 20000.0);
  const std::vector<Diagnosis> alarms = run_ring(80, [&](uint64_t it, int src, int dst) {
    const std::pair<int, int> link = std::minmax(src, dst);
    const bool slow = it >= 50 && (link == std::make_pair(1, 2) || link == std::make_pair(5, 6));
    return 10000 + noise(rng) + (slow ? 30e6 : 0);
  });
  ASSERT_EQ(alarms.size(), 2u);
  std::vector<std::pair<int, int>> links{alarms[0].links[0], alarms[1].links[0]};
  std::sort(links.begin(), links.end());
  EXPECT_EQ(links, (std::vector<std::pair<int, int>>{{1, 2}, {5, 6}}));
  for (const Diagnosis& d : alarms) EXPECT_LE(d.detect_seq, 60u);
}

TEST(LinkDetector, ProbesOfABusyRankDoNotBlameItsLinks) {
  // Rank 0's agent answers slowly on every link (the coordinator is busy):
  // no link of its is singled out. Link 2-3 alone is slow: it is.
  SlowParams p;
  LinkDetector d(6, p);
  std::mt19937 rng(seed() + 9);
  std::vector<Diagnosis> alarms;
  for (uint64_t n = 1; n <= 40; ++n) {
    for (int a = 0; a < 6; ++a) {
      for (int b = a + 1; b < 6; ++b) {
        oob::ProbeSample s;
        s.peer = b;
        s.number = n;
        s.rtt_ns = 200000 + static_cast<int64_t>(rng() % 50000);
        if (a == 0) s.rtt_ns += 30000000;
        if (a == 2 && b == 3 && n > 20) s.rtt_ns += 50000000;
        d.add_probe(a, s);
      }
    }
    for (Diagnosis& x : d.take_alarms()) alarms.push_back(x);
  }
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_EQ(alarms[0].links, (std::vector<std::pair<int, int>>{{2, 3}}));
  EXPECT_EQ(alarms[0].detector, "probe");
}

}  // namespace
