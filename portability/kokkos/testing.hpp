// Knobs for the tests only: they reach paths that otherwise need more than
// 4 GiB of memory. Not part of the public API.
#pragma once

#include <cstdint>

namespace strata::kokkos::detail {

// The device kernel takes its 64-bit index path even for small layouts.
void set_force_wide_index(bool force) noexcept;

// Messages are split into pieces of at most this many bytes (default and
// maximum 1 GiB; <= 0 restores the default).
void set_max_piece_bytes(int64_t bytes) noexcept;
int64_t max_piece_bytes() noexcept;

}  // namespace strata::kokkos::detail
