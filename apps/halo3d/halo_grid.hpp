// The local grid of one rank: owned cells plus a ghost shell of width radius
// on every side, its memory layout, the 26 neighbour directions, and which
// boxes of cells are sent and received in each direction.
#pragma once

#include "options.hpp"

#include <array>
#include <cstddef>

namespace halo3d {

// A neighbour direction; each component is -1, 0 or +1, not all 0.
struct Direction {
  int dx = 0;
  int dy = 0;
  int dz = 0;
  int operator[](int axis) const { return axis == 0 ? dx : axis == 1 ? dy : dz; }
};

constexpr int kNeighbourCount = 26;

// The 26 directions in a fixed order (faces, edges and corners interleaved).
const std::array<Direction, kNeighbourCount>& neighbour_directions();

Direction opposite(Direction d);

// The message tag of a transfer sent towards direction d: (dz+1)*9 + (dy+1)*3
// + (dx+1), in [0, 27) without 13. The receiver of that message expects
// tag_of(opposite(its ghost direction)), so every message lands in the right
// ghost region even when one rank is the neighbour in several directions.
int tag_of(Direction d);

// A box of cells in padded local coordinates (0 .. owned + 2 radius).
struct Box {
  std::array<int, 3> start{};
  std::array<int, 3> size{};
};

struct LocalGrid {
  std::array<int, 3> owned{};  // owned cells per axis
  int radius = 0;
  int quantities = 1;
  Layout layout = Layout::AoS;

  int padded(int axis) const { return owned[axis] + 2 * radius; }
  std::size_t element_count() const;

  // Element offset of value q of padded cell (x, y, z).
  std::size_t offset(int x, int y, int z, int q) const;

  // The owned cells next to the face, edge or corner in direction d.
  Box send_box(Direction d) const;
  // The ghost cells in direction d, filled from the neighbour there.
  Box ghost_box(Direction d) const;

  // {0,0,0} for an owned cell, else the direction of the ghost region that
  // holds padded cell (x, y, z).
  Direction region_of(int x, int y, int z) const;

  // Calls fn(x, y, z, q, region, owned) for every value of the padded array.
  template <typename Fn>
  void for_each_value(Fn fn) const {
    for (int z = 0; z < padded(2); ++z) {
      for (int y = 0; y < padded(1); ++y) {
        for (int x = 0; x < padded(0); ++x) {
          const Direction region = region_of(x, y, z);
          const bool is_owned = region.dx == 0 && region.dy == 0 && region.dz == 0;
          for (int q = 0; q < quantities; ++q) fn(x, y, z, q, region, is_owned);
        }
      }
    }
  }
};

}  // namespace halo3d
