// choose(): flat unless the hierarchy is predicted at least 5% faster; and
// the ZeRO step built on the same predictions.
#include "collectives/model/cost_model.hpp"
#include "collectives/model/zero_step.hpp"
#include "machines.hpp"

#include <gtest/gtest.h>

namespace strata::coll::model {
namespace {

using test::frontier;
using test::level;
using test::machine;

// 2 nodes x 2 ranks, ranks of a node at X GB/s, the node's NICs N GB/s.
// For huge B: flat ring 1.5 B/N (X >= N), hierarchical B/X + B/N, so
// flat / hierarchical = 1.5 / (1 + N/X). N = 20:
//   X = 43.9  -> 1.5 / 1.4556 = 1.0305  (3% faster: stay flat)
//   X = 55    -> 1.5 / 1.3636 = 1.1000  (10% faster: take the hierarchy)
Machine two_by_two(double x) { return machine({level("package", 2, x, 3, 5), level("node", 2, 20, 5, 5, true)}); }

double ratio(const Machine& m, double b) {
  return predict_us(Collective::allreduce, Algorithm::library, b, m).value() /
         predict_us(Collective::allreduce, Algorithm::hierarchical, b, m).value();
}

TEST(Choose, FlatWhenTheHierarchyGainsLessThanTheMargin) {
  const double b = 1e12;
  const Machine m = two_by_two(43.9);
  ASSERT_NEAR(ratio(m, b), 1.0305, 1e-3);  // the hierarchy is faster, but by less than 5%
  EXPECT_EQ(choose(Collective::allreduce, b, true, m), Algorithm::library);
}

TEST(Choose, HierarchicalWhenItGainsMore) {
  const double b = 1e12;
  const Machine m = two_by_two(55);
  ASSERT_NEAR(ratio(m, b), 1.10, 1e-3);
  const Algorithm a = choose(Collective::allreduce, b, true, m);
  EXPECT_TRUE(a == Algorithm::hierarchical || a == Algorithm::two_level);  // the same machine for two levels
}

TEST(Choose, OneNodeOneLevelIsFlat) {
  const Machine m = machine({level("package", 4, 335, 2.5, 5)});
  for (double b : {1e3, 1e6, 1e9}) EXPECT_EQ(choose(Collective::allreduce, b, true, m), Algorithm::library);
}

TEST(Choose, DeviceCandidatesOnly) {
  Machine m = frontier(48);
  for (Collective c : {Collective::allreduce, Collective::reduce_scatter, Collective::allgather, Collective::broadcast,
                       Collective::reduce}) {
    for (double b : {1e3, 1e6, 1e9}) {
      const Algorithm a = choose(c, b, true, m);
      EXPECT_TRUE(a == Algorithm::library || a == Algorithm::hierarchical || a == Algorithm::two_level);
    }
  }
}

TEST(Choose, HostWithoutTheLibrary) {
  Machine m = machine({level("shm", 4, 5, 1, 1), level("node", 4, 25, 2, 1, true)}, false);
  for (double b : {1e3, 1e6, 1e9}) {
    EXPECT_NE(choose(Collective::allreduce, b, false, m, /*library_ok=*/false), Algorithm::library);
    // The library is credited with its better algorithm: with it allowed, a
    // flat ring or recursive never beats it.
    const Algorithm a = choose(Collective::allreduce, b, false, m);
    EXPECT_TRUE(a != Algorithm::ring && a != Algorithm::recursive);
  }
}

TEST(Choose, PicksTheCheapest) {
  // Whatever it picks costs no more than 1/(1-margin) times the best prediction.
  const Machine m = frontier(48);
  for (double b = 1; b < 1e11; b *= 7) {
    const Algorithm a = choose(Collective::allgather, b, true, m);
    double best = 1e300;
    for (Algorithm c : {Algorithm::library, Algorithm::hierarchical, Algorithm::two_level}) {
      best = std::min(best, predict_us(Collective::allgather, c, b, m).value());
    }
    EXPECT_LE(predict_us(Collective::allgather, a, b, m).value(), best / (1 - kHierarchyMargin) + 1e-9) << b;
  }
}

TEST(Choose, AutomaticPredictsTheChoice) {
  const Machine m = frontier(48);
  for (double b : {1e3, 1e6, 1e9}) {
    const Algorithm a = choose(Collective::allgather, b, true, m);
    EXPECT_DOUBLE_EQ(predict_us(Collective::allgather, Algorithm::automatic, b, m).value(),
                     predict_us(Collective::allgather, a, b, m).value());
  }
}

TEST(ZeroStep, SumsItsCalls) {
  ZeroModel z;  // 20e9 parameters, bf16, 44 layers
  const Machine m = frontier(48);
  const double layer = z.params / z.layers * 2;
  const Result<ZeroStepTimes> flat = predict_zero_step(z, ZeroScheme::zero3, m);
  ASSERT_TRUE(flat.ok());
  const double gather = predict_us(Collective::allgather, Algorithm::library, layer, m).value();
  const double rs = predict_us(Collective::reduce_scatter, Algorithm::library, layer, m).value();
  EXPECT_DOUBLE_EQ(flat.value().forward_gather_us, 44 * gather);
  EXPECT_DOUBLE_EQ(flat.value().backward_gather_us, 44 * gather);
  EXPECT_DOUBLE_EQ(flat.value().reduce_scatter_us, 44 * rs);
  // hpZ: the backward gather runs within one node.
  const Result<ZeroStepTimes> hpz = predict_zero_step(z, ZeroScheme::zeropp, m);
  ASSERT_TRUE(hpz.ok());
  EXPECT_DOUBLE_EQ(hpz.value().backward_gather_us,
                   44 * predict_us(Collective::allgather, Algorithm::library, layer, node_part(m)).value());
  const Result<ZeroStepTimes> three = predict_zero_step(z, ZeroScheme::three_level, m);
  ASSERT_TRUE(three.ok());
  EXPECT_LT(three.value().total_us(), hpz.value().total_us());
}

TEST(ZeroStep, OneNodeHasNoSecondaryGain) {
  ZeroModel z;
  const Machine m = frontier(1);
  EXPECT_DOUBLE_EQ(predict_zero_step(z, ZeroScheme::zero3, m).value().total_us(),
                   predict_zero_step(z, ZeroScheme::zeropp, m).value().total_us());
  // two_level does not apply on one node: it falls back to flat.
  EXPECT_DOUBLE_EQ(predict_zero_step(z, ZeroScheme::two_level, m).value().total_us(),
                   predict_zero_step(z, ZeroScheme::zero3, m).value().total_us());
}

TEST(ZeroStep, RejectsMalformedModels) {
  ZeroModel z;
  z.layers = 0;
  EXPECT_EQ(predict_zero_step(z, ZeroScheme::zero3, frontier(2)).status(), Status::invalid_argument);
}

}  // namespace
}  // namespace strata::coll::model
