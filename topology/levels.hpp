// The levels of a topology and, for every rank, its group, position and
// cross set at each level: computed from the places alone (no MPI), so every
// rank derives the same communicators' colors and tests can check them.
#pragma once

#include <strata/topology.hpp>

#include <vector>

namespace strata::topo::detail {

// One kept level, with per-rank tables indexed by rank.
struct LevelPlan {
  Level level;
  std::vector<int> group;     // id of the rank's level-i group, 0..groups-1
  std::vector<int> parent;    // id of its level-(i+1) group; 0 at the top level
  std::vector<int> position;  // p_i of Topology::cross
  std::vector<int> cross;     // id of its cross(i) set (same level-(i+1) group, same p_0..p_i)
  std::vector<char> leader;   // 1 when first (lowest rank) of its level-i group
};

// The candidate levels are gcd (ranks of one package), package (ranks of one
// node) and node (all ranks). One is kept when some group of it holds more
// than one of the units below it (dies, packages, nodes); ranks sharing a
// die count as one unit. `package_link` is the link class of the package
// level (gpu or shm).
std::vector<LevelPlan> plan_levels(const std::vector<Place>& places, LinkClass package_link);

}  // namespace strata::topo::detail
