#include "halo_grid.hpp"

namespace halo3d {

const std::array<Direction, kNeighbourCount>& neighbour_directions() {
  static const std::array<Direction, kNeighbourCount> directions = [] {
    std::array<Direction, kNeighbourCount> all{};
    int n = 0;
    for (int dz = -1; dz <= 1; ++dz) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx != 0 || dy != 0 || dz != 0) {
            all[n++] = Direction{dx, dy, dz};
          }
        }
      }
    }
    return all;
  }();
  return directions;
}

Direction opposite(Direction d) { return Direction{-d.dx, -d.dy, -d.dz}; }

int tag_of(Direction d) { return (d.dz + 1) * 9 + (d.dy + 1) * 3 + (d.dx + 1); }

std::size_t LocalGrid::element_count() const {
  return static_cast<std::size_t>(padded(0)) * static_cast<std::size_t>(padded(1)) *
         static_cast<std::size_t>(padded(2)) * static_cast<std::size_t>(quantities);
}

std::size_t LocalGrid::offset(int x, int y, int z, int q) const {
  const std::size_t nx = static_cast<std::size_t>(padded(0));
  const std::size_t ny = static_cast<std::size_t>(padded(1));
  const std::size_t nz = static_cast<std::size_t>(padded(2));
  const std::size_t cell =
      (static_cast<std::size_t>(z) * ny + static_cast<std::size_t>(y)) * nx + static_cast<std::size_t>(x);
  if (layout == Layout::AoS) {
    return cell * static_cast<std::size_t>(quantities) + static_cast<std::size_t>(q);
  }
  return static_cast<std::size_t>(q) * nx * ny * nz + cell;
}

Box LocalGrid::send_box(Direction d) const {
  Box box;
  for (int a = 0; a < 3; ++a) {
    switch (d[a]) {
      case -1:
        box.start[a] = radius;
        box.size[a] = radius;
        break;
      case 0:
        box.start[a] = radius;
        box.size[a] = owned[a];
        break;
      default:
        box.start[a] = owned[a];
        box.size[a] = radius;
        break;
    }
  }
  return box;
}

Box LocalGrid::ghost_box(Direction d) const {
  Box box;
  for (int a = 0; a < 3; ++a) {
    switch (d[a]) {
      case -1:
        box.start[a] = 0;
        box.size[a] = radius;
        break;
      case 0:
        box.start[a] = radius;
        box.size[a] = owned[a];
        break;
      default:
        box.start[a] = radius + owned[a];
        box.size[a] = radius;
        break;
    }
  }
  return box;
}

Direction LocalGrid::region_of(int x, int y, int z) const {
  const int cell[3] = {x, y, z};
  int side[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    side[a] = cell[a] < radius ? -1 : cell[a] >= radius + owned[a] ? 1 : 0;
  }
  return Direction{side[0], side[1], side[2]};
}

}  // namespace halo3d
