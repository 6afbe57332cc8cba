// The host collectives against the MPI library (collective_check.hpp): every
// collective x type x op x algorithm x in-place or not x counts, flat on the
// whole communicator and hierarchical on emulated hierarchies chosen by the
// rank count:
//   8 ranks  2 nodes x 2 packages x 2 dies in rank order (3 uniform levels),
//            the same merged to two levels (Algorithm::two_level), and a
//            round-robin placement (non-contiguous groups)
//   6, 5     2x2x2 filled in order: nodes of 4 + 2 and 4 + 1 (uneven; 5
//            ranks also has a die group of one), and the two-level merge
//   4        2 nodes x 2 packages (two levels)
//
//   4 ranks  also 1 node x 1 package x 4 dies (one level)
//
// Counts: 1, 7 (below the rank count), 37 (prime: not divisible by any rank
// count here) and 5003 (above the recursive allreduce's whole-vector
// threshold of 8 KiB, so Rabenseifner runs) for every type and op; 0 for one
// type/op per collective and algorithm (it is a no-op); 1M elements for
// float32 sum only (HostLarge) and the message splitting with a tiny piece
// size for a few type/op pairs (HostSplit): the whole label stays under a
// minute with 8 ranks on 2 cores.
#include "collective_check.hpp"
#include "collectives/host/internal.hpp"
#include "hierarchy_builder.hpp"
#include "test_values.hpp"

#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

namespace {

using namespace strata_test;
using strata::Status;
using strata::coll::Algorithm;
namespace host = strata::coll::host;

const Algorithm kFlat[] = {Algorithm::library, Algorithm::ring, Algorithm::recursive};

std::vector<int> roots_for(Coll coll, int p) {
  if (coll != Coll::broadcast && coll != Coll::reduce) return {0};
  if (p <= 2) return {0, p - 1};
  return {0, 1, p - 1};  // rank 1: not a group leader in any hierarchy here
}

// Every case of one collective and algorithm on p ranks.
std::vector<Case> cases(Coll coll, Algorithm algorithm, int p) {
  std::vector<Case> out;
  const bool red = reduces(coll);
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      if (!red && op != ReduceOp::sum) continue;
      if (red && algorithm == Algorithm::library && is_16bit(type)) continue;  // not_supported: HostErrors
      std::vector<size_t> counts = {1, 7, 37, 5003};
      if (type == DataType::float32 && op == ReduceOp::sum) counts.push_back(0);
      for (size_t count : counts) {
        for (int root : roots_for(coll, p)) {
          for (bool in_place : {false, true}) {
            if (coll == Coll::broadcast && in_place) continue;
            out.push_back(Case{coll, type, op, algorithm, in_place, count, root});
          }
        }
      }
    }
  }
  return out;
}

void run_all(Coll coll, Algorithm algorithm, const host::Hierarchy& h, const std::string& what) {
  int p = 0;
  MPI_Comm_size(h.comm, &p);
  for (const Case& c : cases(coll, algorithm, p)) EXPECT_TRUE(run_case(c, h)) << what;
}

// The communicator alone (flat algorithms).
const OwnedHierarchy& flat() {
  static OwnedHierarchy* h = [] {
    auto* o = new OwnedHierarchy();
    o->build(MPI_COMM_WORLD, {});  // no coordinates: no levels
    return o;
  }();
  return *h;
}

struct Layout {
  std::string name;
  Algorithm algorithm;
  const OwnedHierarchy* hierarchy;
};

// The hierarchies for this rank count (built once, collectively).
const std::vector<Layout>& layouts() {
  static std::vector<Layout>* all = [] {
    auto* v = new std::vector<Layout>();
    const int p = world_size();
    auto add = [&](const std::string& name, Algorithm a, const std::vector<Coord>& coords) {
      auto* h = new OwnedHierarchy();
      h->build(MPI_COMM_WORLD, coords);
      v->push_back({name + ": " + h->describe(), a, h});
    };
    if (p == 4) {
      add("2x2x1 in order", Algorithm::two_level, fill_in_order(2, 2, 1, 4));
      add("1x1x4", Algorithm::hierarchical, fill_in_order(1, 1, 4, 4));
    } else if (p >= 5 && p <= 8) {
      add("2x2x2 in order", Algorithm::hierarchical, fill_in_order(2, 2, 2, p));
      add("2x2x2 node-merged", Algorithm::two_level, merge_node_levels(fill_in_order(2, 2, 2, p), 2));
      if (p == 8) add("2x2x2 round-robin", Algorithm::hierarchical, round_robin(2, 2, 2, 8));
    }
    return v;
  }();
  return *all;
}

class HostFlat : public ::testing::TestWithParam<Coll> {};

TEST_P(HostFlat, EveryTypeOpAlgorithm) {
  ASSERT_TRUE(flat().get().levels.empty());
  for (Algorithm a : kFlat) run_all(GetParam(), a, flat().get(), "flat");
}

class HostHierarchical : public ::testing::TestWithParam<Coll> {};

TEST_P(HostHierarchical, EveryTypeOpLayout) {
  if (layouts().empty()) GTEST_SKIP() << "no emulated hierarchy for " << world_size() << " ranks";
  for (const Layout& l : layouts()) run_all(GetParam(), l.algorithm, l.hierarchy->get(), l.name);
}

const Coll kColls[] = {Coll::allreduce, Coll::reduce_scatter, Coll::allgather, Coll::broadcast, Coll::reduce};
std::string coll_name(const ::testing::TestParamInfo<Coll>& info) {
  const char* names[] = {"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce"};
  return names[static_cast<int>(info.param)];
}
INSTANTIATE_TEST_SUITE_P(All, HostFlat, ::testing::ValuesIn(kColls), coll_name);
INSTANTIATE_TEST_SUITE_P(All, HostHierarchical, ::testing::ValuesIn(kColls), coll_name);

// 1M elements (float32 sum) through every algorithm and collective; the
// per-rank collectives (reduce_scatter, allgather) move 1M in all.
TEST(HostLarge, MillionElements) {
  const int p = world_size();
  std::vector<std::pair<Algorithm, const host::Hierarchy*>> runs;
  for (Algorithm a : kFlat) runs.push_back({a, &flat().get()});
  for (const Layout& l : layouts()) runs.push_back({l.algorithm, &l.hierarchy->get()});
  const size_t n = size_t{1} << 20;
  for (const auto& run : runs) {
    for (Coll coll : kColls) {
      const size_t count = coll == Coll::reduce_scatter || coll == Coll::allgather ? n / static_cast<size_t>(p) : n;
      const Case c{coll, DataType::float32, ReduceOp::sum, run.first, coll != Coll::broadcast, count, p - 1};
      EXPECT_TRUE(run_case(c, *run.second));
    }
  }
}

// Messages split into 256-byte pieces (the limit is INT_MAX-safe 1 GiB in
// production): point-to-point pieces, library calls per element range, the
// strided all-gather type, the packed reduce-scatter.
TEST(HostSplit, SmallPieces) {
  std::vector<std::pair<Algorithm, const host::Hierarchy*>> runs;
  for (Algorithm a : kFlat) runs.push_back({a, &flat().get()});
  for (const Layout& l : layouts()) runs.push_back({l.algorithm, &l.hierarchy->get()});
  const std::pair<DataType, ReduceOp> pairs[] = {{DataType::float32, ReduceOp::sum},
                                                 {DataType::float16, ReduceOp::sum},
                                                 {DataType::int64, ReduceOp::prod},
                                                 {DataType::float64, ReduceOp::max}};
  host::detail::set_max_message_bytes(256);
  for (const auto& run : runs) {
    for (Coll coll : kColls) {
      for (const auto& [type, op] : pairs) {
        if (run.first == Algorithm::library && reduces(coll) && is_16bit(type)) continue;
        for (size_t count : {size_t{37}, size_t{1003}}) {
          for (bool in_place : {false, true}) {
            const Case c{coll, type, op, run.first, in_place && coll != Coll::broadcast, count, world_size() - 1};
            EXPECT_TRUE(run_case(c, *run.second));
          }
        }
      }
    }
  }
  host::detail::set_max_message_bytes(0);
}

TEST(HostErrors, RejectedArguments) {
  const host::Hierarchy& h = flat().get();
  const int p = world_size();
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  uint16_t hx[4] = {}, hy[4] = {};
  // The library has no float16/bfloat16 reductions.
  EXPECT_EQ(host::allreduce(hx, hy, 4, DataType::float16, ReduceOp::sum, Algorithm::library, h), Status::not_supported);
  EXPECT_EQ(host::reduce(hx, hy, 4, DataType::bfloat16, ReduceOp::max, 0, Algorithm::library, h),
            Status::not_supported);
  // Bad roots, even with count 0.
  for (Algorithm a : {Algorithm::library, Algorithm::ring, Algorithm::recursive}) {
    EXPECT_EQ(host::broadcast(x, 4, DataType::float32, p, a, h), Status::invalid_argument);
    EXPECT_EQ(host::broadcast(x, 0, DataType::float32, -1, a, h), Status::invalid_argument);
    EXPECT_EQ(host::reduce(x, y, 4, DataType::float32, ReduceOp::sum, p, a, h), Status::invalid_argument);
  }
  // automatic is resolved by the caller.
  EXPECT_EQ(host::allreduce(x, y, 4, DataType::float32, ReduceOp::sum, Algorithm::automatic, h),
            Status::invalid_argument);
  // Invalid type and op values.
  EXPECT_EQ(host::allreduce(x, y, 4, static_cast<DataType>(17), ReduceOp::sum, Algorithm::ring, h),
            Status::invalid_argument);
  EXPECT_EQ(host::allreduce(x, y, 4, DataType::float32, static_cast<ReduceOp>(9), Algorithm::ring, h),
            Status::invalid_argument);
  // A null communicator.
  host::Hierarchy none;
  EXPECT_EQ(host::allreduce(x, y, 4, DataType::float32, ReduceOp::sum, Algorithm::ring, none),
            Status::invalid_argument);
}

}  // namespace
