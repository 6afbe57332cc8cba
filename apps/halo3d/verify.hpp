// Verification after the exchanges: every ghost cell must hold the value of
// the periodic global cell it mirrors, and every owned cell its own value.
#pragma once

#include "field.hpp"
#include "halo_grid.hpp"
#include "options.hpp"

#include <cstdio>
#include <vector>

namespace halo3d {

struct Mismatch {
  Direction region;                // ghost direction, or {0,0,0} for an owned cell
  int x = 0, y = 0, z = 0, q = 0;  // padded local cell and quantity
  double expected = 0;
  double found = 0;
};

struct VerifyResult {
  long long ghost_mismatches = 0;
  long long owned_mismatches = 0;
  std::vector<Mismatch> first;  // the first few, in memory order of the cells
};

// Checks `field` (a host array) cell by cell.
VerifyResult verify_field(const void* field, ElementType type, const LocalGrid& grid, const Placement& place);

// Writes the first mismatches of this rank, one line each, to `out`.
void print_mismatches(std::FILE* out, int rank, const VerifyResult& result);

// For the test that proves verification can fail: makes the first ghost cell
// in direction +x hold its expected value plus one.
void corrupt_one_ghost_cell(void* field, ElementType type, const LocalGrid& grid, const Placement& place);

}  // namespace halo3d
