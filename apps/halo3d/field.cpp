#include "field.hpp"

#include <limits>

namespace halo3d {

std::int64_t global_coordinate(const LocalGrid& grid, const Placement& place, int axis, int i) {
  const std::int64_t extent = static_cast<std::int64_t>(place.procs[axis]) * grid.owned[axis];
  const std::int64_t g = static_cast<std::int64_t>(place.coords[axis]) * grid.owned[axis] + (i - grid.radius);
  return (g % extent + extent) % extent;
}

std::uint32_t reference_value(const LocalGrid& grid, const Placement& place, std::int64_t gx, std::int64_t gy,
                              std::int64_t gz, int q) {
  const std::uint64_t extent_x = static_cast<std::uint64_t>(place.procs[0]) * grid.owned[0];
  const std::uint64_t extent_y = static_cast<std::uint64_t>(place.procs[1]) * grid.owned[1];
  const std::uint64_t extent_z = static_cast<std::uint64_t>(place.procs[2]) * grid.owned[2];
  const std::uint64_t linear = ((static_cast<std::uint64_t>(q) * extent_z + static_cast<std::uint64_t>(gz)) * extent_y +
                                static_cast<std::uint64_t>(gy)) *
                                   extent_x +
                               static_cast<std::uint64_t>(gx);
  constexpr std::uint64_t kLowMultiplier = 2654435761u;  // odd: bijective modulo 2^24
  constexpr std::uint64_t kHighMultiplier = 40503u;      // odd
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 24) - 1;
  return static_cast<std::uint32_t>((linear * kLowMultiplier + (linear >> 24) * kHighMultiplier) & kMask);
}

std::uint32_t expected_value(const LocalGrid& grid, const Placement& place, int x, int y, int z, int q) {
  return reference_value(grid, place, global_coordinate(grid, place, 0, x), global_coordinate(grid, place, 1, y),
                         global_coordinate(grid, place, 2, z), q);
}

namespace {

template <typename T>
void fill_typed(T* field, const LocalGrid& grid, const Placement& place) {
  const T poison = std::numeric_limits<T>::quiet_NaN();
  grid.for_each_value([&](int x, int y, int z, int q, Direction, bool owned) {
    field[grid.offset(x, y, z, q)] = owned ? static_cast<T>(expected_value(grid, place, x, y, z, q)) : poison;
  });
}

}  // namespace

void fill_field(void* field, ElementType type, const LocalGrid& grid, const Placement& place) {
  if (type == ElementType::Float) {
    fill_typed(static_cast<float*>(field), grid, place);
  } else {
    fill_typed(static_cast<double*>(field), grid, place);
  }
}

}  // namespace halo3d
