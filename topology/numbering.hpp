// Dense node/package/gcd numbers from whatever identifies them (a node
// leader's rank, a GPU board id, a PCI address, a NUMA node, the labels of
// an emulated list). Shared by discovery and emulation so both obey one rule.
#pragma once

#include <strata/topology.hpp>

#include <string>
#include <vector>

namespace strata::topo::detail {

// What identifies a rank's node, its package within the node, and its die
// within the package. Equal strings: the same thing.
struct PlaceKey {
  std::string node;
  std::string package;
  std::string gcd;
};

// Sets rank, node, package and gcd of places[r] from keys[r] (places is
// resized to keys.size(); other fields are kept). Each coordinate is
// numbered 0, 1, ... in order of first appearance in rank order, within its
// parent: nodes by their lowest rank, packages within their node, dies within
// their package.
void number_places(const std::vector<PlaceKey>& keys, std::vector<Place>* places);

}  // namespace strata::topo::detail
