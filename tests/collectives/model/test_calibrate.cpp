// calibrate_level against times made by an independent oracle: NCCL's ring
// and chain on one level written out here by hand (ring allreduce 2(n-1)
// steps moving 2(n-1)/n of the buffer, reduce-scatter and allgather n-1
// steps moving (n-1)/n, broadcast and reduce a chain of n-1 hops moving the
// buffer once), two protocol regimes of which the cheaper runs, with and
// without multiplicative noise. The fit must give back the figures and
// predict_us with them must match the oracle.
#include "collectives/model/calibrate.hpp"
#include "machines.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace strata::coll::model {
namespace {

using test::level;
using test::machine;

const Collective kCalibrated[] = {Collective::allreduce, Collective::reduce_scatter, Collective::allgather,
                                  Collective::broadcast, Collective::reduce};

struct Figures {
  double call_us, alpha_us, gbps;
};

double oracle_us(Collective c, double bytes, int n, const Figures& f) {
  const double hops = n - 1;
  double steps = hops, moved = bytes;
  switch (c) {
    case Collective::allreduce:
      steps = 2 * hops;
      moved = 2 * hops / n * bytes;
      break;
    case Collective::reduce_scatter:
    case Collective::allgather: moved = hops / n * bytes; break;
    case Collective::broadcast:
    case Collective::reduce: break;
  }
  return f.call_us + steps * f.alpha_us + moved / (f.gbps * 1e3);
}

std::vector<CollSample> samples(int n, const Figures& bulk, const Figures* small, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<CollSample> out;
  for (Collective c : kCalibrated) {
    for (double bytes = 8; bytes <= 256.0 * (1 << 20); bytes *= 4) {
      double us = oracle_us(c, bytes, n, bulk);
      if (small != nullptr) us = std::min(us, oracle_us(c, bytes, n, *small));
      out.push_back({c, bytes, us * (noise > 0 ? jitter(rng) : 1.0)});
    }
  }
  return out;
}

double rel(double got, double want) { return std::fabs(got / want - 1); }

TEST(Calibrate, RecoversBothRegimesFromExactTimes) {
  for (int n : {2, 4, 8}) {
    const Figures bulk{14, 1.2, 190}, small{6, 0.8, 25};
    const Machine m = machine({level("gpu", n, 335, 2.5, 5)});
    Result<Calibration> cal = calibrate_level(m, samples(n, bulk, &small, 0, 1));
    ASSERT_TRUE(cal.ok()) << n;
    const LinkFigures& f = cal.value().link;
    EXPECT_LT(rel(f.gbps, bulk.gbps), 1e-6) << n;
    EXPECT_LT(rel(f.call_us, bulk.call_us), 1e-6) << n;
    EXPECT_LT(rel(f.alpha_us, bulk.alpha_us), 1e-6) << n;
    EXPECT_LT(rel(f.small.gbps, small.gbps), 1e-6) << n;
    EXPECT_LT(rel(f.small.call_us, small.call_us), 1e-6) << n;
    EXPECT_LT(rel(f.small.alpha_us, small.alpha_us), 1e-6) << n;
    EXPECT_LT(cal.value().max_error_large, 1e-9);
    EXPECT_LT(cal.value().max_error_small, 1e-9);
    for (const LinkFigures::ForCollective& own : f.by_collective) EXPECT_EQ(own.small_below_bytes, 0) << n;
    // The model with the calibrated level predicts the oracle.
    Machine fitted = m;
    fitted.levels[0].link = f;
    for (Collective c : kCalibrated) {
      for (double bytes : {64.0, 65536.0, 3e6, 1e8}) {
        const double want = std::min(oracle_us(c, bytes, n, bulk), oracle_us(c, bytes, n, small));
        Result<double> got = predict_us(c, Algorithm::library, bytes, fitted);
        ASSERT_TRUE(got.ok());
        EXPECT_LT(rel(got.value(), want), 1e-6) << "n " << n << " bytes " << bytes;
      }
    }
  }
}

// NCCL's efficiency differs by collective: each collective's own bulk
// figures (fitted to its sizes of 1 MiB up) come back exactly, and with the
// pooled small-message regime predict every collective within 5% (the
// regimes cross at a different size for each collective, which one pooled
// split only approximates), where one set of figures for all misses by
// more than 20%.
TEST(Calibrate, EachCollectiveGetsItsOwnFigures) {
  const Figures bulk[kCollectiveCount] = {{15, 1, 270}, {20, 1, 210}, {18, 1.5, 215}, {9, 1, 320}, {10, 0.5, 318}};
  const Figures small{7, 1, 40};
  std::vector<CollSample> all;
  for (size_t c = 0; c < kCollectiveCount; ++c) {
    for (double bytes = 8; bytes <= 256.0 * (1 << 20); bytes *= 4) {
      const Collective col = kCalibrated[c];
      all.push_back({col, bytes, std::min(oracle_us(col, bytes, 2, bulk[c]), oracle_us(col, bytes, 2, small))});
    }
  }
  const Machine m = machine({level("gpu", 2, 335, 2.5, 5)});
  Result<Calibration> cal = calibrate_level(m, all);
  ASSERT_TRUE(cal.ok());
  EXPECT_LT(cal.value().max_error_large, 0.05);
  EXPECT_LT(cal.value().max_error_small, 0.05);
  Machine fitted = m;
  fitted.levels[0].link = cal.value().link;
  for (size_t c = 0; c < kCollectiveCount; ++c) {
    const LinkFigures::ForCollective& own = cal.value().link.by_collective[c];
    ASSERT_TRUE(own.set) << c;
    EXPECT_LT(rel(own.bulk.gbps, bulk[c].gbps), 1e-6) << c;
    EXPECT_EQ(own.small.gbps, cal.value().link.small.gbps) << c;
    for (double bytes : {100.0, 70000.0, 5e6, 2e8}) {
      const double want =
          std::min(oracle_us(kCalibrated[c], bytes, 2, bulk[c]), oracle_us(kCalibrated[c], bytes, 2, small));
      EXPECT_LT(rel(predict_us(kCalibrated[c], Algorithm::library, bytes, fitted).value(), want),
                bytes >= 1e6 ? 1e-6 : 0.05)
          << "collective " << c << " bytes " << bytes;
    }
  }
  // The shared figures alone cannot follow five collectives this different.
  fitted.levels[0].link.by_collective = {};
  double worst = 0;
  for (const CollSample& s : all) {
    worst = std::max(worst, rel(predict_us(s.collective, Algorithm::library, s.bytes, fitted).value(), s.us));
  }
  EXPECT_GT(worst, 0.2);
}

// Figures fitted to one collective serve that collective only, and only on
// device buffers.
TEST(Calibrate, CollectiveFiguresApplyToTheirCollective) {
  Machine m = machine({level("gpu", 2, 200, 1, 12)});
  const double before = predict_us(Collective::broadcast, Algorithm::library, 1e8, m).value();
  LinkFigures::ForCollective& bcast = m.levels[0].link.by_collective[static_cast<size_t>(Collective::broadcast)];
  bcast = {true, {1, 400, 12}, {}};
  EXPECT_NEAR(predict_us(Collective::broadcast, Algorithm::library, 1e8, m).value(),
              oracle_us(Collective::broadcast, 1e8, 2, {12, 1, 400}), 1e-6);
  EXPECT_LT(predict_us(Collective::broadcast, Algorithm::library, 1e8, m).value(), before);
  EXPECT_NEAR(predict_us(Collective::allreduce, Algorithm::library, 1e8, m).value(),
              oracle_us(Collective::allreduce, 1e8, 2, {12, 1, 200}), 1e-6);
  m.device = false;
  EXPECT_NE(predict_us(Collective::broadcast, Algorithm::library, 1e8, m).value(),
            oracle_us(Collective::broadcast, 1e8, 2, {12, 1, 400}));
  bcast.bulk.gbps = -1;  // invalid figures make the machine invalid
  m.device = true;
  EXPECT_FALSE(predict_us(Collective::broadcast, Algorithm::library, 1e8, m).ok());
}

// NCCL's tuner switched to its bulk protocol at a size where the fitted
// small regime is still cheaper (2 H200: allreduce 2 MiB in 28 µs, the
// small figures said 21). The oracle here runs every collective in the
// small regime below 1 MiB and in the bulk one from there, whichever is
// cheaper: the calibration must learn that switch where the cheaper-regime
// rule mispredicts a measured size, and then predict every measured size.
TEST(Calibrate, LearnsWhereNcclSwitchesProtocols) {
  const Figures bulk{10, 6, 320}, small{5, 0.5, 140};
  const double kSwitch = 1 << 20;
  std::vector<CollSample> all;
  for (Collective c : kCalibrated) {
    for (double bytes = 8; bytes <= 256.0 * (1 << 20); bytes *= 4) {
      all.push_back({c, bytes, oracle_us(c, bytes, 2, bytes < kSwitch ? small : bulk)});
    }
  }
  const Machine m = machine({level("gpu", 2, 335, 2.5, 5)});
  Result<Calibration> cal = calibrate_level(m, all);
  ASSERT_TRUE(cal.ok());
  EXPECT_LT(cal.value().max_error_large, 1e-6);
  EXPECT_LT(cal.value().max_error_small, 1e-6);
  // The cheaper-regime rule alone puts allreduce 2 MiB in the small regime.
  EXPECT_LT(oracle_us(Collective::allreduce, 2 << 20, 2, small), oracle_us(Collective::allreduce, 2 << 20, 2, bulk));
  EXPECT_EQ(cal.value().link.by_collective[static_cast<size_t>(Collective::allreduce)].small_below_bytes, kSwitch);
  Machine fitted = m;
  fitted.levels[0].link = cal.value().link;
  for (const CollSample& s : all) {
    EXPECT_LT(rel(predict_us(s.collective, Algorithm::library, s.bytes, fitted).value(), s.us), 1e-6)
        << static_cast<int>(s.collective) << " " << s.bytes;
  }
  // Without the switch the same figures miss allreduce 2 MiB by over 20%.
  fitted.levels[0].link.by_collective[static_cast<size_t>(Collective::allreduce)].small_below_bytes = 0;
  const double two = 2 << 20;
  EXPECT_GT(rel(predict_us(Collective::allreduce, Algorithm::library, two, fitted).value(),
                oracle_us(Collective::allreduce, two, 2, bulk)),
            0.2);
}

TEST(Calibrate, OneRegimeNeedsNoSplit) {
  const Figures bulk{10, 2, 300};
  Result<Calibration> cal = calibrate_level(machine({level("gpu", 2, 335, 2.5, 5)}), samples(2, bulk, nullptr, 0, 2));
  ASSERT_TRUE(cal.ok());
  EXPECT_LT(rel(cal.value().link.gbps, bulk.gbps), 1e-6);
  EXPECT_LT(cal.value().max_error_large + cal.value().max_error_small, 1e-9);
}

// Measured times scatter: the fit stays within the noise (every sample
// within 10% for +-5% noise) and the figures near the truth.
TEST(Calibrate, NoisyTimesStayWithinTheNoise) {
  const Figures bulk{14, 1.2, 190}, small{6, 0.8, 25};
  for (unsigned seed = 10; seed < 20; ++seed) {
    Result<Calibration> cal =
        calibrate_level(machine({level("gpu", 2, 335, 2.5, 5)}), samples(2, bulk, &small, 0.05, seed));
    ASSERT_TRUE(cal.ok()) << seed;
    EXPECT_LT(cal.value().max_error_large, 0.10) << seed;
    EXPECT_LT(cal.value().max_error_small, 0.10) << seed;
    EXPECT_LT(rel(cal.value().link.gbps, bulk.gbps), 0.10) << seed;
  }
}

TEST(Calibrate, RefusesWhatItCannotFit) {
  const Figures bulk{10, 2, 300};
  const std::vector<CollSample> good = samples(2, bulk, nullptr, 0, 3);
  // Two active levels: a node's level is calibrated from a one-node run.
  EXPECT_EQ(calibrate_level(machine({level("gpu", 2, 335), level("node", 2, 25, 5, 5, true)}), good).status(),
            Status::not_supported);
  EXPECT_EQ(calibrate_level(machine({level("gpu", 1, 335)}), good).status(), Status::not_supported);
  const Machine m = machine({level("gpu", 2, 335)});
  EXPECT_EQ(calibrate_level(m, {{Collective::allreduce, 1024, 10}, {Collective::broadcast, 1024, 9}}).status(),
            Status::invalid_argument);
  std::vector<CollSample> bad = good;
  bad[3].us = -1;
  EXPECT_EQ(calibrate_level(m, bad).status(), Status::invalid_argument);
  bad[3].us = NAN;
  EXPECT_EQ(calibrate_level(m, bad).status(), Status::invalid_argument);
}

// A machine with a low-latency regime: predictions take the cheaper one.
TEST(Calibrate, PredictionsTakeTheCheaperRegime) {
  Machine m = machine({level("gpu", 2, 200, 1, 12)});
  m.levels[0].link.small = Protocol{0.5, 20, 5};
  const double tiny = oracle_us(Collective::allreduce, 8, 2, {5, 0.5, 20});
  const double big = oracle_us(Collective::allreduce, 1e8, 2, {12, 1, 200});
  EXPECT_NEAR(predict_us(Collective::allreduce, Algorithm::library, 8, m).value(), tiny, 1e-9);
  EXPECT_NEAR(predict_us(Collective::allreduce, Algorithm::library, 1e8, m).value(), big, 1e-6);
  m.device = false;  // host buffers: the MPI library's algorithms, one regime
  EXPECT_GT(predict_us(Collective::allreduce, Algorithm::library, 8, m).value(), tiny);
}

}  // namespace
}  // namespace strata::coll::model
