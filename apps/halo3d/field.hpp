// The field's reference values: every owned cell holds a value that depends
// only on its global coordinates and quantity, so any ghost cell can be
// checked against the periodic global cell it mirrors.
#pragma once

#include "halo_grid.hpp"
#include "options.hpp"

#include <array>
#include <cstdint>

namespace halo3d {

// Where this rank's owned block lies in the global, periodic grid.
struct Placement {
  std::array<int, 3> procs{};
  std::array<int, 3> coords{};
};

// The global coordinate, wrapped periodically, of padded local index i on
// `axis`.
std::int64_t global_coordinate(const LocalGrid& grid, const Placement& place, int axis, int i);

// The reference value of quantity q at global cell (gx, gy, gz): an integer in
// [0, 2^24), hence exact in float and double. The global linear index
// ((q*GZ + gz)*GY + gy)*GX + gx is scrambled by an odd multiplier modulo 2^24
// (a bijection on each block of 2^24 indices, so all values differ while the
// global grid has fewer than 2^24 values) plus a second odd multiplier on the
// bits above 2^24, so a wrong neighbour, offset or quantity changes the value.
std::uint32_t reference_value(const LocalGrid& grid, const Placement& place, std::int64_t gx, std::int64_t gy,
                              std::int64_t gz, int q);

// The reference value of quantity q at padded local cell (x, y, z).
std::uint32_t expected_value(const LocalGrid& grid, const Placement& place, int x, int y, int z, int q);

// Writes the reference values into the owned cells of `field` (a host array of
// grid.element_count() elements of `type`) and NaN into every ghost cell.
void fill_field(void* field, ElementType type, const LocalGrid& grid, const Placement& place);

}  // namespace halo3d
