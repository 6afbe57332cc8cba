// hpZ secondary partition: build_secondary_partition writes the slice of the
// full vector (the library's MPI_Allgather of the primary shards) that the
// rank's position in its level group owns, and gather_from_secondary
// rebuilds the full vector, on every level of an in-order and a round-robin
// 2x2x2 hierarchy. gather_from_secondary is also run with every
// communicator but the level group set to MPI_COMM_NULL and by one group
// only, while the other ranks make no call: any communication outside the
// group would fail or hang (ctest's timeout).
#include "hierarchy_builder.hpp"
#include "test_values.hpp"

#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

namespace {

using namespace strata_test;
using strata::Status;
namespace host = strata::coll::host;

int rank_in(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

std::vector<unsigned char> random_shard(DataType t, size_t count, uint64_t salt) {
  std::mt19937_64 rng(test_seed() + salt * 1000003u + static_cast<uint64_t>(world_rank()));
  std::vector<unsigned char> v(count * elem_size(t));
  fill_random(t, ReduceOp::min, v.data(), count, rng);
  return v;
}

std::vector<unsigned char> library_allgather(const std::vector<unsigned char>& shard, MPI_Comm comm) {
  std::vector<unsigned char> full(shard.size() * static_cast<size_t>(size_of(comm)));
  MPI_Allgather(shard.data(), static_cast<int>(shard.size()), MPI_BYTE, full.data(), static_cast<int>(shard.size()),
                MPI_BYTE, comm);
  return full;
}

// Checks build and gather at one level for one type and shard size.
void check_level(const host::Hierarchy& h, int level, DataType t, size_t count, const std::string& what) {
  const MPI_Comm group = h.levels[static_cast<size_t>(level)].group;
  const size_t es = elem_size(t);
  const size_t p = static_cast<size_t>(size_of(h.comm));
  const size_t g = static_cast<size_t>(size_of(group));
  const size_t slice = count * p / g * es;  // bytes of a secondary shard
  const std::vector<unsigned char> primary = random_shard(t, count, count + static_cast<size_t>(level));
  const std::vector<unsigned char> full = library_allgather(primary, h.comm);

  std::vector<unsigned char> secondary(slice + 64, 0xA5);
  ASSERT_EQ(host::build_secondary_partition(primary.data(), count, secondary.data(), t, level, h), Status::ok) << what;
  const size_t q = static_cast<size_t>(rank_in(group));
  EXPECT_EQ(0, std::memcmp(secondary.data(), full.data() + q * slice, slice)) << what << ": secondary shard";
  EXPECT_EQ(std::vector<unsigned char>(secondary.begin() + static_cast<std::ptrdiff_t>(slice), secondary.end()),
            std::vector<unsigned char>(64, 0xA5))
      << what << ": written past the secondary shard";

  std::vector<unsigned char> gathered(full.size() + 64, 0xA5);
  ASSERT_EQ(host::gather_from_secondary(secondary.data(), count, gathered.data(), t, level, h), Status::ok) << what;
  EXPECT_EQ(0, std::memcmp(gathered.data(), full.data(), full.size())) << what << ": gathered vector";
  EXPECT_EQ(std::vector<unsigned char>(gathered.begin() + static_cast<std::ptrdiff_t>(full.size()), gathered.end()),
            std::vector<unsigned char>(64, 0xA5))
      << what << ": written past the full vector";
}

struct Layout {
  const char* name;
  std::vector<Coord> coords;
};

TEST(SecondaryPartition, EveryLevelTypeAndSize) {
  STRATA_REQUIRE_RANKS(8);
  if (world_size() != 8) GTEST_SKIP() << "needs exactly 8 ranks";
  for (const Layout& l :
       {Layout{"in order", fill_in_order(2, 2, 2, 8)}, Layout{"round-robin", round_robin(2, 2, 2, 8)}}) {
    OwnedHierarchy h;
    h.build(MPI_COMM_WORLD, l.coords);
    ASSERT_TRUE(h.get().uniform);
    for (int level = 0; level < static_cast<int>(h.get().levels.size()); ++level) {
      for (DataType t : {DataType::float32, DataType::float16, DataType::int64}) {
        for (size_t count : {size_t{1}, size_t{5}, size_t{1000}}) {
          check_level(
              h.get(), level, t, count,
              std::string(l.name) + " level " + std::to_string(level) + " " + name(t) + " x" + std::to_string(count));
        }
      }
    }
  }
}

TEST(SecondaryPartition, GatherStaysInTheGroup) {
  if (world_size() != 8) GTEST_SKIP() << "needs exactly 8 ranks";
  OwnedHierarchy owned;
  owned.build(MPI_COMM_WORLD, round_robin(2, 2, 2, 8));
  const host::Hierarchy& h = owned.get();
  const DataType t = DataType::float32;
  const size_t count = 64;
  for (int level = 0; level + 1 < static_cast<int>(h.levels.size()); ++level) {
    const MPI_Comm group = h.levels[static_cast<size_t>(level)].group;
    const std::vector<unsigned char> primary = random_shard(t, count, 77 + static_cast<size_t>(level));
    const std::vector<unsigned char> full = library_allgather(primary, h.comm);
    const size_t slice = count * 8 / static_cast<size_t>(size_of(group)) * elem_size(t);
    std::vector<unsigned char> secondary(slice);
    ASSERT_EQ(host::build_secondary_partition(primary.data(), count, secondary.data(), t, level, h), Status::ok);

    // Only h.comm (for its size) and the level group are usable.
    host::Hierarchy only = h;
    for (size_t k = 0; k < only.levels.size(); ++k) {
      if (k != static_cast<size_t>(level)) only.levels[k].group = MPI_COMM_NULL;
      only.levels[k].cross = MPI_COMM_NULL;
      only.levels[k].leaders = MPI_COMM_NULL;
    }
    // The group of world rank 0 gathers twice; nobody else calls anything.
    int first_of_group = world_rank();
    MPI_Allreduce(MPI_IN_PLACE, &first_of_group, 1, MPI_INT, MPI_MIN, group);
    if (first_of_group == 0) {
      for (int round = 0; round < 2; ++round) {
        std::vector<unsigned char> gathered(full.size(), 0xA5);
        ASSERT_EQ(host::gather_from_secondary(secondary.data(), count, gathered.data(), t, level, only), Status::ok);
        EXPECT_EQ(gathered, full) << "level " << level << " round " << round;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST(SecondaryPartition, UnevenIsNotSupported) {
  if (world_size() < 5 || world_size() > 7) GTEST_SKIP() << "needs an uneven 2x2x2 fill (5 to 7 ranks)";
  OwnedHierarchy h;
  h.build(MPI_COMM_WORLD, fill_in_order(2, 2, 2, world_size()));
  ASSERT_FALSE(h.get().uniform);
  float x[4] = {}, y[64] = {};
  EXPECT_EQ(host::build_secondary_partition(x, 4, y, DataType::float32, 0, h.get()), Status::not_supported);
  EXPECT_EQ(host::gather_from_secondary(x, 4, y, DataType::float32, 0, h.get()), Status::not_supported);
  EXPECT_EQ(host::build_secondary_partition(x, 4, y, DataType::float32, 9, h.get()), Status::invalid_argument);
}

}  // namespace
