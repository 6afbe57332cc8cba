// MPI_Alltoallv and the neighbourhood all-to-alls with derived datatypes,
// checked element by element against hand-written type maps.
#include "mpi_type_cases.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

using strata_test::TypeCase;

namespace {

// Each peer's block of a v-collective starts at displs[i] elements; the
// value a rank sends to peer i is value_at(rank, position) as usual, so the
// receiver can predict it from the sender's displacement.
struct Layout {
  std::vector<int> counts, displs;
  int total = 0;
};

Layout layout(int peers, int salt) {
  Layout l;
  for (int i = 0; i < peers; ++i) {
    l.counts.push_back((i + salt) % 3);  // 0, 1 or 2 elements: uneven, some empty
    l.displs.push_back(l.total);
    l.total += l.counts.back() + 1;  // a gap element between peers
  }
  return l;
}

// Checks peer i's part of a receive buffer: the elements that came from
// `source` where it sent them from displacement `sdispl` of its buffer.
std::string check_part(const TypeCase& c, const std::vector<int>& buf, int rdispl, int count, int source, int sdispl) {
  for (int e = 0; e < count; ++e) {
    for (long off : c.offsets) {
      const long pos = (rdispl + e) * c.extent_ints + off;
      const long spos = (sdispl + e) * c.extent_ints + off;
      if (buf[static_cast<size_t>(pos)] != strata_test::value_at(source, spos)) {
        return c.name + ": from " + std::to_string(source) + " element " + std::to_string(e) + " int " +
               std::to_string(pos) + " wrong";
      }
    }
  }
  return "";
}

class AllToAll : public testing::TestWithParam<int> {};

TEST_P(AllToAll, Alltoallv) {
  const TypeCase& c = strata_test::type_cases()[static_cast<size_t>(GetParam())];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build();
  // What I send to peer i: counts (rank + i) % 3; what I receive from j:
  // j's count towards me, (j + rank) % 3.
  Layout send = layout(size, rank), recv;
  for (int j = 0; j < size; ++j) {
    recv.counts.push_back((j + rank) % 3);
    recv.displs.push_back(recv.total);
    recv.total += recv.counts.back() + 1;
  }
  std::vector<int> sendbuf = strata_test::filled_buffer(c, send.total, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, recv.total);
  ASSERT_EQ(MPI_Alltoallv(sendbuf.data(), send.counts.data(), send.displs.data(), type, recvbuf.data(),
                          recv.counts.data(), recv.displs.data(), type, MPI_COMM_WORLD),
            MPI_SUCCESS);
  for (int j = 0; j < size; ++j) {
    Layout their = layout(size, j);
    EXPECT_EQ(check_part(c, recvbuf, recv.displs[j], recv.counts[j], j, their.displs[rank]), "");
  }
  // Gap elements between peers stay poisoned.
  for (int j = 0; j < size; ++j) {
    const long gap = (recv.displs[j] + recv.counts[j]) * c.extent_ints;
    for (long off : c.offsets) EXPECT_EQ(recvbuf[static_cast<size_t>(gap + off)], strata_test::kPoison);
  }
  MPI_Type_free(&type);
}

// A periodic 1D Cartesian ring: neighbours (lower, upper). Dimensions of
// size 1 or 2 make lower == upper, where Open MPI and MPICH pair the two
// messages differently, so the ring needs at least 3 ranks.
TEST_P(AllToAll, NeighborAlltoallvCartesian) {
  STRATA_REQUIRE_RANKS(3);
  const TypeCase& c = strata_test::type_cases()[static_cast<size_t>(GetParam())];
  const int size = strata_test::world_size();
  int dims[1] = {size}, periods[1] = {1};
  MPI_Comm cart;
  ASSERT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart), MPI_SUCCESS);
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  MPI_Datatype type = c.build();
  int lower = 0, upper = 0;
  MPI_Cart_shift(cart, 0, 1, &lower, &upper);
  const int neighbors[2] = {lower, upper};
  std::vector<int> counts = {2, 3}, displs = {0, 3};
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 6, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 6);
  // Block k goes to neighbour k; block k arrives from neighbour k, which sent
  // it as its block 1 - k (towards me), with its own count.
  std::vector<int> rcounts = {counts[1], counts[0]};
  ASSERT_EQ(MPI_Neighbor_alltoallv(sendbuf.data(), counts.data(), displs.data(), type, recvbuf.data(), rcounts.data(),
                                   displs.data(), type, cart),
            MPI_SUCCESS);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(check_part(c, recvbuf, displs[k], rcounts[k], neighbors[k], displs[1 - k]), "") << "neighbour " << k;
  }
  MPI_Type_free(&type);
  MPI_Comm_free(&cart);
}

// A directed ring as a distributed graph: receive from rank-1 and rank-2,
// send to rank+1 and rank+2.
TEST_P(AllToAll, NeighborAlltoallvDistGraph) {
  const TypeCase& c = strata_test::type_cases()[static_cast<size_t>(GetParam())];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  int sources[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
  int dests[2] = {(rank + 1) % size, (rank + 2) % size};
  MPI_Comm graph;
  ASSERT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, MPI_UNWEIGHTED, 2, dests, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &graph),
            MPI_SUCCESS);
  MPI_Datatype type = c.build();
  int scounts[2] = {1, 2}, sdispls[2] = {0, 1};
  int rcounts[2] = {1, 2}, rdispls[2] = {2, 0};  // received in another order
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 3, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 3);
  ASSERT_EQ(
      MPI_Neighbor_alltoallv(sendbuf.data(), scounts, sdispls, type, recvbuf.data(), rcounts, rdispls, type, graph),
      MPI_SUCCESS);
  // From rank-1 (its dest #0): 1 element from its displ 0; from rank-2 (its dest #1): 2 from displ 1.
  EXPECT_EQ(check_part(c, recvbuf, rdispls[0], 1, sources[0], sdispls[0]), "");
  EXPECT_EQ(check_part(c, recvbuf, rdispls[1], 2, sources[1], sdispls[1]), "");
  MPI_Type_free(&type);
  MPI_Comm_free(&graph);
}

std::string param_name(const testing::TestParamInfo<int>& info) {
  return strata_test::type_cases()[static_cast<size_t>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, AllToAll, testing::Range(0, static_cast<int>(strata_test::type_cases().size())),
                         param_name);

// Neighbor_alltoallw with a different datatype per neighbour, one of them
// plain MPI_INT and one irreducible, at byte displacements.
TEST(AllToAllW, MixedTypesPerNeighbor) {
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  int sources[3] = {(rank + size - 1) % size, (rank + size - 1) % size, (rank + size - 1) % size};
  int dests[3] = {(rank + 1) % size, (rank + 1) % size, (rank + 1) % size};
  MPI_Comm graph;
  ASSERT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, dests, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &graph),
            MPI_SUCCESS);
  const auto& cases = strata_test::type_cases();
  const TypeCase* used[3] = {&cases[0], &cases[7], &cases[2]};  // vector, irregular indexed, subarray
  MPI_Datatype types[3] = {cases[0].build(), cases[7].build(), cases[2].build()};
  // Buffers: one region per neighbour, each region's ints laid out for its type.
  const long region = 1000;
  std::vector<int> sendbuf(3 * region), recvbuf(3 * region, strata_test::kPoison);
  for (size_t i = 0; i < sendbuf.size(); ++i) sendbuf[i] = strata_test::value_at(rank, static_cast<long>(i));
  int counts[3] = {2, 3, 1};
  MPI_Aint displs[3] = {0, region * 4, 2 * region * 4};
  ASSERT_EQ(MPI_Neighbor_alltoallw(sendbuf.data(), counts, displs, types, recvbuf.data(), counts, displs, types, graph),
            MPI_SUCCESS);
  const int source = sources[0];
  for (int k = 0; k < 3; ++k) {
    std::vector<int> part(recvbuf.begin() + k * region, recvbuf.begin() + (k + 1) * region);
    // The sender's region k started at int k*region: shift its values.
    for (int e = 0; e < counts[k]; ++e) {
      for (long off : used[k]->offsets) {
        const long pos = e * used[k]->extent_ints + off;
        EXPECT_EQ(part[static_cast<size_t>(pos)], strata_test::value_at(source, k * region + pos))
            << used[k]->name << " element " << e;
      }
    }
  }
  for (MPI_Datatype& t : types) MPI_Type_free(&t);
  MPI_Comm_free(&graph);
}

}  // namespace
