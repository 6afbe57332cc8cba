#include "interposer/types/fast_types.hpp"

#include "base/handle_table.hpp"
#include "interposer/types/type_cache.hpp"

#include <type_traits>

namespace strata::interposer {
namespace {

// One word per type: shape (2 bits), reducible (1), block (25 bits), size (36 bits).
constexpr int kBlockBits = 25;
constexpr int kSizeBits = 36;
static_assert(3 + kBlockBits == kFastSizeShift, "fast_shape_and_size reads the size where it is stored");

uint64_t fits(int64_t v, int bits) { return v > 0 && v < (int64_t{1} << bits) ? static_cast<uint64_t>(v) : 0; }

}  // namespace

HandleTable<8192> g_fast_types;
static_assert(std::is_trivially_destructible_v<HandleTable<8192>>, "asked until the process ends: never destroyed");

FastType fast_type(MPI_Datatype type) noexcept {
  const uint64_t w = g_fast_types.find(type);
  FastType t;
  t.shape = static_cast<TypeShape>(w & 3);
  t.reducible = ((w >> 2) & 1) != 0;
  t.block = static_cast<int64_t>((w >> 3) & ((uint64_t{1} << kBlockBits) - 1));
  t.size = static_cast<int64_t>(w >> (3 + kBlockBits));
  return t;
}

TypeShape learn_shape(MPI_Datatype type) noexcept {
  if (type == MPI_DATATYPE_NULL) return TypeShape::unknown;
  (void)type_cache().find_usable(type);  // describes and remembers it (type_cache.cpp)
  return fast_shape(type);
}

void remember_type(MPI_Datatype type, const FastType& what) noexcept {
  const uint64_t w = static_cast<uint64_t>(what.shape) | (what.reducible ? 4u : 0u) |
                     (fits(what.block, kBlockBits) << 3) | (fits(what.size, kSizeBits) << (3 + kBlockBits));
  g_fast_types.set(type, w);
}

void forget_shape(MPI_Datatype type) noexcept { g_fast_types.forget(type); }

}  // namespace strata::interposer
