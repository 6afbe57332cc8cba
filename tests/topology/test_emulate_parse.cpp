// parse_emulated_topology: both formats, uneven fills, renumbering, and the
// malformed specs it must reject (no MPI needed).
#include <strata/topology.hpp>

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace {

using strata::Status;
using strata::topo::parse_emulated_topology;
using strata::topo::Place;
using Coords = std::tuple<int, int, int>;  // node, package, gcd

std::vector<Coords> coords(const std::vector<Place>& places) {
  std::vector<Coords> out;
  for (const Place& p : places) out.emplace_back(p.node, p.package, p.gcd);
  return out;
}

TEST(EmulatedTopology, GridFillsInRankOrder) {
  auto r = parse_emulated_topology("2x2x2", 8);
  ASSERT_TRUE(r.ok());
  std::vector<Coords> want = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}};
  EXPECT_EQ(coords(*r), want);
  for (size_t i = 0; i < r->size(); ++i) {
    EXPECT_EQ((*r)[i].rank, static_cast<int>(i));
    EXPECT_EQ((*r)[i].device, -1);  // nothing but coordinates
    EXPECT_TRUE((*r)[i].host.empty());
  }
}

TEST(EmulatedTopology, GridWithFewerRanksIsUneven) {
  auto r = parse_emulated_topology("2x2x2", 5);
  ASSERT_TRUE(r.ok());
  std::vector<Coords> want = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}};
  EXPECT_EQ(coords(*r), want);
}

TEST(EmulatedTopology, GridAcceptsSpacesAndUpperCase) {
  auto r = parse_emulated_topology(" 1X3x1 ", 3);
  ASSERT_TRUE(r.ok());
  std::vector<Coords> want = {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}};
  EXPECT_EQ(coords(*r), want);
}

TEST(EmulatedTopology, ListGivesOneTriplePerRank) {
  auto r = parse_emulated_topology("0.0.0,0.0.1,0.1.0,1.0.0,1.0.1", 5);
  ASSERT_TRUE(r.ok());
  std::vector<Coords> want = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {1, 0, 1}};
  EXPECT_EQ(coords(*r), want);
}

TEST(EmulatedTopology, ListLabelsAreRenumberedByFirstAppearance) {
  // Labels, not numbers: node 7 comes first, so it is node 0; packages and
  // dies are numbered within their parent.
  auto r = parse_emulated_topology("7.3.9, 2.0.0, 7.3.4, 7.1.1", 4);
  ASSERT_TRUE(r.ok());
  std::vector<Coords> want = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {0, 1, 0}};
  EXPECT_EQ(coords(*r), want);
}

TEST(EmulatedTopology, ListAllowsRanksSharingADie) {
  auto r = parse_emulated_topology("0.0.0,0.0.0,0.1.0,0.1.0", 4);
  ASSERT_TRUE(r.ok());
  std::vector<Coords> want = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, {0, 1, 0}};
  EXPECT_EQ(coords(*r), want);
}

TEST(EmulatedTopology, SingleRank) {
  EXPECT_TRUE(parse_emulated_topology("1x1x1", 1).ok());
  EXPECT_TRUE(parse_emulated_topology("0.0.0", 1).ok());
}

TEST(EmulatedTopology, RejectsMalformedSpecs) {
  const std::vector<std::pair<std::string, int>> bad = {
      {"", 4},
      {"   ", 4},
      {"2x2", 4},
      {"2x2x2x2", 4},
      {"2x0x2", 4},
      {"ax2x2", 4},
      {"2x2x-1", 4},
      {"2x2x", 4},
      {"x2x2", 4},
      {"2 x 2 x 1.5", 4},
      {"1x1x1", 2},
      {"2x2x2", 9},
      {"2x2x2", 0},
      {"2x2x2", -1},
      {"+2x2x2", 8},
      {"99999999x1x1", 1},
      {"0.0.0,0.0.1", 3},
      {"0.0.0,0.0", 2},
      {"0.0.0,,0.1.0", 3},
      {"0.0.0.0", 1},
      {"0.0.a", 1},
      {"0.0.-1", 1},
      {"0.0.0,", 1},
      {"0..0", 1},
      {"topology", 4},
  };
  for (const auto& b : bad) {
    auto r = parse_emulated_topology(b.first, b.second);
    EXPECT_FALSE(r.ok()) << "'" << b.first << "' for " << b.second << " ranks was accepted";
    if (!r.ok()) {
      EXPECT_EQ(r.status(), Status::invalid_argument) << b.first;
    }
  }
}

}  // namespace
