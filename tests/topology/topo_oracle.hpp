// A naive model of Topology's levels and communicators, written from the
// definitions in strata/topology.hpp with plain loops over every rank pair,
// independent of topology/levels.cpp: the tests compare the two.
#pragma once

#include <strata/topology.hpp>

#include <string>
#include <vector>

namespace topo_oracle {

struct Coord {
  int node = 0;
  int package = 0;
  int gcd = 0;
};

struct OracleLevel {
  std::string name;  // gcd, package, node
  int groups = 0;
  int min_size = 0;
  int max_size = 0;
  // Per rank, the members (ranks, ascending) of its group, cross set and
  // leaders set; leaders is empty on non-leaders.
  std::vector<std::vector<int>> group, cross, leaders;
};

// The kept levels, fastest first.
std::vector<OracleLevel> levels_of(const std::vector<Coord>& coords);

// Coordinates from a STRATA_TOPOLOGY value, for specs whose list labels are
// already dense (the tests write them so); empty when not understood.
std::vector<Coord> coords_of_spec(const std::string& spec, int ranks);

}  // namespace topo_oracle
