// Readable GoogleTest output for Strata's layout types.
#pragma once

#include <strata/layout.hpp>

#include <ostream>

namespace strata {
inline void PrintTo(const StridedBlock& b, std::ostream* os) { *os << b.to_string(); }
}  // namespace strata
