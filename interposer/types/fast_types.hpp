// What the hot paths ask of a datatype, answered without a lock: is one
// element a single run of bytes from the buffer pointer (no holes, lower
// bounds 0), so that host data of it is the library's business alone? And
// for other types, what the host pack model needs (reducible, the block
// length, the size), so that a call the model leaves to the library costs
// no visit to the type cache. Filled when a type is committed (predefined
// types on first use), cleared when it is freed (base/handle_table.hpp).
#pragma once

#include "base/handle_table.hpp"

#include <mpi.h>

#include <cstdint>

namespace strata::interposer {

enum class TypeShape : uint8_t { unknown = 0, contiguous = 1, other = 2 };

struct FastType {
  TypeShape shape = TypeShape::unknown;
  bool reducible = false;  // other: Strata's engine can pack it
  int64_t block = 0;       // other, reducible: bytes per contiguous block (0: too large to keep)
  int64_t size = 0;        // bytes of one element's data (0: too large to keep)
};

// The table: one word per type, its low two bits the shape. A namespace-
// scope object, constant-initialised (no guard on the hot path) and
// trivially destructible (asked until the process ends).
extern HandleTable<8192> g_fast_types;

// unknown: not in the table (not seen yet, evicted, or freed).
FastType fast_type(MPI_Datatype type) noexcept;
__attribute__((always_inline)) inline TypeShape fast_shape(MPI_Datatype type) noexcept {
  return static_cast<TypeShape>(g_fast_types.find(type) & 3);
}
// fast_shape and the bytes of one element's data (0: not known) from one
// look-up.
struct ShapeAndSize {
  TypeShape shape;
  uint64_t size;
};
constexpr int kFastSizeShift = 28;  // the word: shape (2 bits), reducible (1), block (25), size (36)
__attribute__((always_inline)) inline ShapeAndSize fast_shape_and_size(MPI_Datatype type) noexcept {
  const uint64_t w = g_fast_types.find(type);
  return {static_cast<TypeShape>(w & 3), w >> kFastSizeShift};
}
// fast_shape, learning a type not seen yet (a predefined one, or one
// committed before Strata was there) from the type cache: a lock, once.
TypeShape learn_shape(MPI_Datatype type) noexcept;
__attribute__((always_inline)) inline TypeShape shape_of(MPI_Datatype type) noexcept {
  const TypeShape s = fast_shape(type);
  return __builtin_expect(s != TypeShape::unknown, 1) ? s : learn_shape(type);
}
void remember_type(MPI_Datatype type, const FastType& what) noexcept;
inline void remember_shape(MPI_Datatype type, TypeShape shape) noexcept {
  FastType t;
  t.shape = shape;
  remember_type(type, t);
}
void forget_shape(MPI_Datatype type) noexcept;

}  // namespace strata::interposer
