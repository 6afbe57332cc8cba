// Builds a host::Hierarchy from emulated per-rank coordinates, with the
// communicators defined as strata/topology.hpp defines them, so the host
// algorithms are tested without the topology component:
//   levels: gcd (group = same node and package), package (group = same node),
//           node (group = everyone); a level is kept when some group of it
//           holds more than one group of the level kept below it (more than
//           one rank for the first).
//   group(i)   split by the level-i group, ordered by rank
//   cross(i)   the ranks of my level-(i+1) group (everyone at the top) with my
//              position vector (p_0, ..., p_i): p_0 = my index in group(0),
//              p_i = my index in cross(i-1)
//   leaders(i) the first ranks of the level-i groups, split by level-(i+1)
//              group; MPI_COMM_NULL elsewhere
//   uniform    every group of every kept level has the same size
#pragma once

#include "collectives/host/host_collectives.hpp"

#include <string>
#include <vector>

namespace strata_test {

struct Coord {
  int node = 0;
  int package = 0;
  int gcd = 0;
};

// "NxPxG" filled in order by `ranks` ranks (the last groups short when
// fewer), or round-robin: rank r on node r % N, then package, then gcd.
std::vector<Coord> fill_in_order(int nodes, int packages, int gcds, int ranks);
std::vector<Coord> round_robin(int nodes, int packages, int gcds, int ranks);
// The same ranks with the levels inside a node merged (package * G + gcd,
// one die): what Algorithm::two_level is given.
std::vector<Coord> merge_node_levels(const std::vector<Coord>& coords, int gcds);

// Owns the communicators (freed on destruction, before MPI_Finalize).
class OwnedHierarchy {
 public:
  OwnedHierarchy() = default;
  OwnedHierarchy(const OwnedHierarchy&) = delete;
  OwnedHierarchy& operator=(const OwnedHierarchy&) = delete;
  ~OwnedHierarchy();

  // Collective over comm (which is duplicated); coords has one entry per rank,
  // or none for a flat hierarchy (no levels).
  void build(MPI_Comm comm, const std::vector<Coord>& coords);

  const strata::coll::host::Hierarchy& get() const { return h_; }
  std::string describe() const;  // "3 levels (2,2,2) uniform"

 private:
  strata::coll::host::Hierarchy h_;
  std::vector<MPI_Comm> owned_;
  std::vector<int> group_sizes_;
};

}  // namespace strata_test
