// Topology::create under MPI, emulated (STRATA_TOPOLOGY, one registration
// per layout) or discovered: every rank's group, cross and leaders
// communicators against the naive oracle (topo_oracle.cpp), the level table
// against STRATA_TEST_TOPO_LEVELS, and the fallback on an invalid spec.
//
// Harness variables (set per registration in CMakeLists.txt):
//   STRATA_TEST_TOPO_LEVELS   "name:link:groups:min:max/..." fastest first; "none": no level
//   STRATA_TEST_TOPO_UNIFORM  1 or 0
//   STRATA_TEST_TOPO_FALLBACK 1: STRATA_TOPOLOGY is invalid; expect a warning and discovery
#include "support/mpi_test.hpp"
#include "topology/topo_oracle.hpp"

#include <strata/topology.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using strata::topo::Topology;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::shared_ptr<const Topology> create_or_fail() {
  auto t = Topology::create(MPI_COMM_WORLD);
  EXPECT_TRUE(t.ok()) << strata::to_string(t.status());
  return t.ok() ? t.value() : nullptr;
}

// The members of `comm` as ranks of `reference`, in the comm's rank order.
std::vector<int> members(MPI_Comm comm, MPI_Comm reference) {
  if (comm == MPI_COMM_NULL) return {};
  MPI_Group group = MPI_GROUP_NULL, ref = MPI_GROUP_NULL;
  int size = 0;
  EXPECT_EQ(MPI_Comm_group(comm, &group), MPI_SUCCESS);
  EXPECT_EQ(MPI_Comm_group(reference, &ref), MPI_SUCCESS);
  EXPECT_EQ(MPI_Group_size(group, &size), MPI_SUCCESS);
  std::vector<int> in(static_cast<size_t>(size)), out(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) in[static_cast<size_t>(i)] = i;
  EXPECT_EQ(MPI_Group_translate_ranks(group, size, in.data(), ref, out.data()), MPI_SUCCESS);
  MPI_Group_free(&group);
  MPI_Group_free(&ref);
  return out;
}

std::vector<topo_oracle::Coord> coords_of(const Topology& t) {
  std::vector<topo_oracle::Coord> c;
  for (const auto& p : t.places()) c.push_back({p.node, p.package, p.gcd});
  return c;
}

std::string level_text(const Topology& t) {
  if (t.num_levels() == 0) return "none";
  std::string out;
  for (int i = 0; i < t.num_levels(); ++i) {
    const auto& l = t.level(i);
    out += (i ? "/" : "") + l.name + ":" + to_string(l.link) + ":" + std::to_string(l.groups) + ":" +
           std::to_string(l.min_group_size) + ":" + std::to_string(l.max_group_size);
  }
  return out;
}

// Every rank holds the same table of places.
bool same_places_everywhere(const Topology& t) {
  std::vector<int> mine;
  for (const auto& p : t.places()) {
    mine.insert(mine.end(), {p.rank, p.node, p.package, p.gcd, p.device, p.numa});
  }
  std::vector<int> root = mine;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_INT, 0, MPI_COMM_WORLD);
  return strata_test::all_ranks_agree(root == mine);
}

class TopologyTest : public ::testing::Test {
 protected:
  bool fallback() const { return env("STRATA_TEST_TOPO_FALLBACK") == "1"; }
  bool emulating() const { return !env("STRATA_TOPOLOGY").empty() && !fallback(); }
};

// Redirects this process's stderr into a file while alive; text() reads it.
class CaptureStderr {
 public:
  CaptureStderr() : path_("/tmp/strata_topo_stderr_" + std::to_string(getpid())) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    std::FILE* f = std::fopen(path_.c_str(), "w");
    if (f != nullptr) {
      dup2(fileno(f), STDERR_FILENO);
      std::fclose(f);
    }
  }
  ~CaptureStderr() {
    restore();
    std::remove(path_.c_str());
  }
  std::string text() {
    restore();
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

// First in the file: the warning is printed once per process, and gtest runs
// the tests in the order they are written.
TEST_F(TopologyTest, InvalidSpecWarnsAndDiscovers) {
  if (!fallback()) GTEST_SKIP() << "STRATA_TOPOLOGY is not an invalid one here";
  std::string log;
  std::shared_ptr<const Topology> t;
  {
    CaptureStderr capture;
    t = create_or_fail();
    log = capture.text();
  }
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->emulated());
  if (t->rank() == 0) {
    EXPECT_NE(log.find("WARN"), std::string::npos) << log;
    EXPECT_NE(log.find("STRATA_TOPOLOGY"), std::string::npos) << log;
    EXPECT_NE(log.find("discovering"), std::string::npos) << log;
  } else {
    EXPECT_EQ(log.find("STRATA_TOPOLOGY"), std::string::npos) << "only rank 0 warns: " << log;
  }
}

TEST_F(TopologyTest, PlacesAreTheEmulatedOnes) {
  if (!emulating()) GTEST_SKIP() << "not emulated";
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->emulated());
  auto want = topo_oracle::coords_of_spec(env("STRATA_TOPOLOGY"), strata_test::world_size());
  ASSERT_EQ(want.size(), t->places().size());
  for (size_t r = 0; r < want.size(); ++r) {
    const auto& p = t->places()[r];
    EXPECT_EQ(p.rank, static_cast<int>(r));
    EXPECT_EQ(p.node, want[r].node) << "rank " << r;
    EXPECT_EQ(p.package, want[r].package) << "rank " << r;
    EXPECT_EQ(p.gcd, want[r].gcd) << "rank " << r;
  }
}

TEST_F(TopologyTest, BasicsHold) {
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->rank(), strata_test::world_rank());
  EXPECT_EQ(t->size(), strata_test::world_size());
  EXPECT_EQ(t->self().rank, t->rank());
  ASSERT_EQ(static_cast<int>(t->places().size()), t->size());
  EXPECT_TRUE(same_places_everywhere(*t));
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(t->comm(), MPI_COMM_WORLD, &cmp);
  EXPECT_EQ(cmp, MPI_CONGRUENT);  // a duplicate, not the caller's communicator
  EXPECT_EQ(t->group(-1), MPI_COMM_NULL);
  EXPECT_EQ(t->group(t->num_levels()), MPI_COMM_NULL);
  EXPECT_EQ(t->cross(t->num_levels()), MPI_COMM_NULL);
  EXPECT_FALSE(t->is_leader(t->num_levels()));
  EXPECT_TRUE(t->level(t->num_levels()).name.empty());
}

TEST_F(TopologyTest, LevelsMatchExpectation) {
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  const std::string want = env("STRATA_TEST_TOPO_LEVELS");
  if (!want.empty()) {
    EXPECT_EQ(level_text(*t), want);
  }
  const std::string uniform = env("STRATA_TEST_TOPO_UNIFORM");
  if (!uniform.empty()) {
    EXPECT_EQ(t->uniform(), uniform == "1");
  }
}

// Every communicator of every level of `t` against the oracle, in the rank
// numbers of t's own communicator.
void expect_oracle_communicators(const Topology& t) {
  const auto oracle = topo_oracle::levels_of(coords_of(t));
  ASSERT_EQ(t.num_levels(), static_cast<int>(oracle.size()));
  const size_t me = static_cast<size_t>(t.rank());
  bool uniform = true;
  for (int i = 0; i < t.num_levels(); ++i) {
    const auto& o = oracle[static_cast<size_t>(i)];
    SCOPED_TRACE("level " + std::to_string(i) + " (" + o.name + ")");
    EXPECT_EQ(t.level(i).name, o.name);
    EXPECT_EQ(t.level(i).groups, o.groups);
    EXPECT_EQ(t.level(i).min_group_size, o.min_size);
    EXPECT_EQ(t.level(i).max_group_size, o.max_size);
    uniform = uniform && o.min_size == o.max_size;
    EXPECT_EQ(members(t.group(i), t.comm()), o.group[me]);
    EXPECT_EQ(members(t.cross(i), t.comm()), o.cross[me]);
    EXPECT_EQ(members(t.leaders(i), t.comm()), o.leaders[me]);
    EXPECT_EQ(t.is_leader(i), !o.leaders[me].empty());
    EXPECT_EQ(t.leaders(i) == MPI_COMM_NULL, o.leaders[me].empty());
  }
  EXPECT_EQ(t.uniform(), uniform);
  if (t.num_levels() > 0) {
    // The top level's cross set is the rank alone.
    EXPECT_EQ(members(t.cross(t.num_levels() - 1), t.comm()), std::vector<int>{t.rank()});
  }
}

TEST_F(TopologyTest, CommunicatorsMatchOracle) {
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  expect_oracle_communicators(*t);
}

// Labels renumbered by first appearance within their parent (the rule of
// topology/numbering.hpp), naively.
std::vector<topo_oracle::Coord> renumbered(const std::vector<topo_oracle::Coord>& in) {
  std::vector<topo_oracle::Coord> out(in.size());
  for (size_t r = 0; r < in.size(); ++r) {
    std::vector<int> nodes, packages, gcds;
    for (size_t s = 0; s <= r; ++s) {
      auto add = [](std::vector<int>& seen, int v) {
        if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
      };
      add(nodes, in[s].node);
      if (in[s].node == in[r].node) add(packages, in[s].package);
      if (in[s].node == in[r].node && in[s].package == in[r].package) add(gcds, in[s].gcd);
    }
    out[r] = {static_cast<int>(std::find(nodes.begin(), nodes.end(), in[r].node) - nodes.begin()),
              static_cast<int>(std::find(packages.begin(), packages.end(), in[r].package) - packages.begin()),
              static_cast<int>(std::find(gcds.begin(), gcds.end(), in[r].gcd) - gcds.begin())};
  }
  return out;
}

TEST_F(TopologyTest, EmulationPlacesSubCommunicatorsByWorldRank) {
  if (!emulating()) GTEST_SKIP() << "not emulated";
  const int world_rank = strata_test::world_rank();
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half), MPI_SUCCESS);
  {
    auto t = Topology::create(half);
    ASSERT_TRUE(t.ok());
    EXPECT_TRUE((*t)->emulated());
    const auto world = topo_oracle::coords_of_spec(env("STRATA_TOPOLOGY"), strata_test::world_size());
    std::vector<topo_oracle::Coord> mine;
    for (int w : members((*t)->comm(), MPI_COMM_WORLD)) mine.push_back(world[static_cast<size_t>(w)]);
    const auto want = renumbered(mine);
    const auto got = coords_of(**t);
    ASSERT_EQ(got.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(got[r].node, want[r].node) << "rank " << r;
      EXPECT_EQ(got[r].package, want[r].package) << "rank " << r;
      EXPECT_EQ(got[r].gcd, want[r].gcd) << "rank " << r;
    }
    expect_oracle_communicators(**t);
  }
  MPI_Comm_free(&half);
}

TEST_F(TopologyTest, LevelCommunicatorsCarryMessages) {
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  for (int i = 0; i < t->num_levels(); ++i) {
    for (MPI_Comm c : {t->group(i), t->cross(i), t->leaders(i)}) {
      if (c == MPI_COMM_NULL) continue;
      int one = 1, sum = 0, size = 0;
      ASSERT_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
      MPI_Comm_size(c, &size);
      EXPECT_EQ(sum, size);
    }
  }
}

TEST_F(TopologyTest, TextAndJsonDescribeIt) {
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  const std::string text = t->to_text();
  EXPECT_NE(text.find("strata topology: " + std::to_string(t->size()) + " ranks"), std::string::npos) << text;
  EXPECT_NE(text.find("levels"), std::string::npos) << text;
  auto j = nlohmann::json::parse(t->to_json(), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["ranks"], t->size());
  EXPECT_EQ(j["emulated"], t->emulated());
  EXPECT_EQ(j["uniform"], t->uniform());
  ASSERT_EQ(j["levels"].size(), static_cast<size_t>(t->num_levels()));
  for (int i = 0; i < t->num_levels(); ++i) {
    EXPECT_EQ(j["levels"][static_cast<size_t>(i)]["name"], t->level(i).name);
    EXPECT_EQ(j["levels"][static_cast<size_t>(i)]["link"], to_string(t->level(i).link));
  }
  size_t ranks = 0;
  for (const auto& node : j["nodes"]) {
    for (const auto& package : node["packages"]) {
      for (const auto& gcd : package["gcds"]) ranks += gcd["ranks"].size();
    }
  }
  EXPECT_EQ(ranks, static_cast<size_t>(t->size()));
  if (t->rank() == 0 && env("STRATA_TEST_TOPO_PRINT") == "1") std::printf("%s", text.c_str());
}

TEST_F(TopologyTest, DiscoveryOnThisMachine) {
  if (emulating()) GTEST_SKIP() << "emulated";
  auto t = create_or_fail();
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->emulated());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (const auto& p : t->places()) EXPECT_FALSE(p.host.empty());
  // Ranks of one host share a node; nodes are numbered by their lowest rank.
  for (const auto& p : t->places()) {
    for (const auto& q : t->places()) EXPECT_EQ(p.host == q.host, p.node == q.node);
  }
  EXPECT_EQ(t->places()[0].node, 0);
  EXPECT_EQ(t->self().host.empty(), false);
}

TEST_F(TopologyTest, WorksOnOneRank) {
  auto t = Topology::create(MPI_COMM_SELF);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->size(), 1);
  EXPECT_EQ((*t)->num_levels(), 0);
  EXPECT_TRUE((*t)->uniform());
}

// Kept until the process exits, after MPI_Finalize: the destructor must see
// that MPI is gone and free nothing.
std::shared_ptr<const Topology> g_outlives_mpi;

TEST_F(TopologyTest, DestroyedAfterFinalizeIsSafe) {
  g_outlives_mpi = create_or_fail();
  ASSERT_TRUE(g_outlives_mpi);
}

}  // namespace
