// The one question the hot path asks of a datatype, answered without a
// lock: is one element of it a single run of bytes from the buffer pointer
// (no holes, lower bounds 0), so that a host buffer of it is the library's
// business alone? A fixed table of handles, filled when a type is committed
// (and for predefined types on first use), cleared when it is freed; reads
// are two atomic loads, writes take a mutex.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace strata::interposer {

enum class TypeShape : uint8_t { unknown = 0, contiguous = 1, other = 2 };

// unknown: not in the table (not seen yet, evicted, or freed).
TypeShape fast_shape(MPI_Datatype type) noexcept;
// fast_shape, learning a type not seen yet (a predefined one, or one
// committed before Strata was there) from the type cache: a lock, once.
TypeShape shape_of(MPI_Datatype type) noexcept;
void remember_shape(MPI_Datatype type, TypeShape shape) noexcept;
void forget_shape(MPI_Datatype type) noexcept;

}  // namespace strata::interposer
