#include "verify.hpp"

namespace halo3d {

namespace {

constexpr std::size_t kReportedMismatches = 3;

const char* signed_unit(int v) { return v < 0 ? "-1" : v > 0 ? "+1" : "0"; }

template <typename T>
VerifyResult verify_typed(const T* field, const LocalGrid& grid, const Placement& place) {
  VerifyResult result;
  grid.for_each_value([&](int x, int y, int z, int q, Direction region, bool owned) {
    const T expected = static_cast<T>(expected_value(grid, place, x, y, z, q));
    const T found = field[grid.offset(x, y, z, q)];
    if (found == expected) return;  // false for the NaN poison
    ++(owned ? result.owned_mismatches : result.ghost_mismatches);
    if (result.first.size() < kReportedMismatches) {
      result.first.push_back(Mismatch{region, x, y, z, q, static_cast<double>(expected), static_cast<double>(found)});
    }
  });
  return result;
}

}  // namespace

VerifyResult verify_field(const void* field, ElementType type, const LocalGrid& grid, const Placement& place) {
  if (type == ElementType::Float) {
    return verify_typed(static_cast<const float*>(field), grid, place);
  }
  return verify_typed(static_cast<const double*>(field), grid, place);
}

void print_mismatches(std::FILE* out, int rank, const VerifyResult& result) {
  for (const Mismatch& m : result.first) {
    const bool owned = m.region.dx == 0 && m.region.dy == 0 && m.region.dz == 0;
    char where[64];
    if (owned) {
      std::snprintf(where, sizeof where, "owned cell");
    } else {
      std::snprintf(where, sizeof where, "ghost cell in direction (%s,%s,%s)", signed_unit(m.region.dx),
                    signed_unit(m.region.dy), signed_unit(m.region.dz));
    }
    std::fprintf(out, "strata-halo3d: rank %d: %s, x=%d y=%d z=%d q=%d: expected %.17g, found %.17g\n", rank, where,
                 m.x, m.y, m.z, m.q, m.expected, m.found);
  }
  const long long total = result.ghost_mismatches + result.owned_mismatches;
  if (total > static_cast<long long>(result.first.size())) {
    std::fprintf(out, "strata-halo3d: rank %d: ... %lld mismatches on this rank in all\n", rank, total);
  }
}

void corrupt_one_ghost_cell(void* field, ElementType type, const LocalGrid& grid, const Placement& place) {
  const Box box = grid.ghost_box(Direction{1, 0, 0});
  const int x = box.start[0];
  const int y = box.start[1];
  const int z = box.start[2];
  // Values are below 2^24, so value + 1 is exact in float and never expected here.
  const double wrong = static_cast<double>(expected_value(grid, place, x, y, z, 0)) + 1.0;
  const std::size_t at = grid.offset(x, y, z, 0);
  if (type == ElementType::Float) {
    static_cast<float*>(field)[at] = static_cast<float>(wrong);
  } else {
    static_cast<double*>(field)[at] = wrong;
  }
}

}  // namespace halo3d
