// plan_levels (no MPI): which levels are kept, their sizes, and the position
// vectors behind cross(i), on hand-made layouts.
#include "topology/levels.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using strata::topo::LinkClass;
using strata::topo::parse_emulated_topology;
using strata::topo::detail::LevelPlan;
using strata::topo::detail::plan_levels;

std::vector<LevelPlan> plan(const std::string& spec, int ranks, LinkClass package_link = LinkClass::gpu) {
  auto places = parse_emulated_topology(spec, ranks);
  EXPECT_TRUE(places.ok()) << spec;
  return plan_levels(places.value(), package_link);
}

std::string names(const std::vector<LevelPlan>& plans) {
  std::string out;
  for (const auto& p : plans) out += (out.empty() ? "" : ",") + p.level.name + "/" + to_string(p.level.link);
  return out;
}

TEST(LevelPlan, FullHierarchy) {
  auto p = plan("2x2x2", 8);
  EXPECT_EQ(names(p), "gcd/die,package/gpu,node/network");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].level.groups, 4);
  EXPECT_EQ(p[1].level.groups, 2);
  EXPECT_EQ(p[2].level.groups, 1);
  EXPECT_EQ(p[2].level.min_group_size, 8);
  EXPECT_EQ(p[0].group, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(p[0].position, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(p[1].position, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(p[2].position, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  // The top level's cross set is the rank alone.
  EXPECT_EQ(p[2].cross, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p[2].leader, (std::vector<char>{1, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(LevelPlan, DropsWhatAddsNothing) {
  EXPECT_EQ(names(plan("1x2x2", 4)), "gcd/die,package/gpu");       // one node
  EXPECT_EQ(names(plan("2x2x1", 4)), "package/gpu,node/network");  // one die per package
  EXPECT_EQ(names(plan("4x1x1", 4)), "node/network");
  EXPECT_EQ(names(plan("1x1x4", 4)), "gcd/die");
  EXPECT_EQ(names(plan("1x1x1", 1)), "");
  EXPECT_EQ(names(plan("2x2x1", 4, LinkClass::shm)), "package/shm,node/network");
}

TEST(LevelPlan, RanksSharingADieAreOneUnit) {
  // Four ranks on one die: nothing to split.
  EXPECT_EQ(names(plan("0.0.0,0.0.0,0.0.0,0.0.0", 4)), "");
  // Two packages of one die, two ranks each: only the package level.
  auto p = plan("0.0.0,0.0.0,0.1.0,0.1.0", 4);
  EXPECT_EQ(names(p), "package/gpu");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].level.groups, 1);
  EXPECT_EQ(p[0].level.max_group_size, 4);
  // Two dies, two ranks each: one gcd group of four ranks.
  auto q = plan("0.0.0,0.0.0,0.0.1,0.0.1", 4);
  EXPECT_EQ(names(q), "gcd/die");
}

TEST(LevelPlan, UnevenSizes) {
  auto p = plan("0.0.0,0.0.1,0.1.0,1.0.0,1.0.1", 5);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].level.groups, 3);
  EXPECT_EQ(p[0].level.min_group_size, 1);
  EXPECT_EQ(p[0].level.max_group_size, 2);
  EXPECT_EQ(p[1].level.min_group_size, 2);
  EXPECT_EQ(p[1].level.max_group_size, 3);
  // cross(0): {0,2} and {1} on node 0, {3} and {4} on node 1.
  EXPECT_EQ(p[0].cross, (std::vector<int>{0, 1, 0, 2, 3}));
  EXPECT_EQ(p[0].leader, (std::vector<char>{1, 0, 1, 1, 0}));
}

TEST(LevelPlan, MixedPlacementUsesPositionVectors) {
  // Node 0 fills its packages in order, node 1 alternates them. Rank 1 holds
  // (p0=1, p1=0) and rank 5 (p0=0, p1=1), although both are the second rank
  // of their node: cross(1) pairs rank 1 with rank 6, which holds (1, 0).
  auto p = plan("0.0.0,0.0.1,0.1.0,0.1.1,1.0.0,1.1.0,1.0.1,1.1.1", 8);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].position, (std::vector<int>{0, 1, 0, 1, 0, 0, 1, 1}));
  EXPECT_EQ(p[1].position, (std::vector<int>{0, 0, 1, 1, 0, 1, 0, 1}));
  EXPECT_EQ(p[1].cross[1], p[1].cross[6]);
  EXPECT_NE(p[1].cross[1], p[1].cross[5]);
}

}  // namespace
