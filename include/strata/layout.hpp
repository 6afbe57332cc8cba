// The canonical strided layout engine: an IR of nested streams over dense
// bytes, simplified to a fixed point into one canonical strided block, and
// host pack/unpack of any strided block. No MPI here: the interposer
// translates MPI datatypes into this IR (strata/datatype.hpp), the Kokkos layer
// translates Views into it, and every pack kernel (host, CUDA, HIP, Kokkos)
// consumes the canonical block.
#pragma once

#include <strata/export.h>
#include <strata/status.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// ---------------------------------------------------------------------------
// IR. A layout is a chain of streams ending in dense bytes: the tree of a
// reducible datatype has one child per node, so it is kept innermost-first in
// a vector. The chain
//     offset, streams = {s0, s1, ..., sk}, dense_bytes = b
// describes the byte addresses, in this order (s_k outermost):
//     for i_k < s_k.count: ... for i_0 < s_0.count: for j < b:
//         offset + i_k * s_k.stride + ... + i_0 * s_0.stride + j
// which is exactly the order in which MPI packs a type map.
struct Stream {
  int64_t count = 0;
  int64_t stride = 0;  // bytes; may be zero or negative
  bool operator==(const Stream& o) const { return count == o.count && stride == o.stride; }
  bool operator!=(const Stream& o) const { return !(*this == o); }
};

struct LayoutIR {
  int64_t offset = 0;           // bytes from the buffer pointer to the first byte
  int64_t dense_bytes = 0;      // length of the innermost contiguous run
  std::vector<Stream> streams;  // innermost first

  static LayoutIR dense(int64_t bytes) { return LayoutIR{0, bytes, {}}; }
  // Wraps this layout in a stream of `count` repetitions `stride` bytes apart.
  LayoutIR& repeat(int64_t count, int64_t stride) {
    streams.push_back({count, stride});
    return *this;
  }
  LayoutIR& shift(int64_t bytes) {
    offset += bytes;
    return *this;
  }
};

// The simplification passes, each exposed for tests. Each returns true when
// it changed something.
namespace pass {
// A count-0 stream or 0-byte dense run makes the whole layout empty.
STRATA_API bool collapse_empty(LayoutIR& ir);
// Streams of one repetition are dropped.
STRATA_API bool drop_unit_streams(LayoutIR& ir);
// A stream whose stride equals the dense run's length folds into dense bytes.
STRATA_API bool fold_stream_into_dense(LayoutIR& ir);
// A stream whose stride equals its child's span (count * stride) flattens
// into the child: two nested streams become one.
STRATA_API bool flatten_nested_streams(LayoutIR& ir);
// Puts streams in canonical order. MPI packs in type-map order, so swapping
// two streams changes the packed bytes unless one has a single repetition
// (dropped above) or both are identical; the traversal order (innermost
// first, as built) therefore is the canonical order and no stream moves.
// TEMPI sorted by stride, which breaks byte-identity with MPI_Pack.
STRATA_API bool order_by_stride(LayoutIR& ir);
}  // namespace pass

// Runs the passes to a fixed point. The result is unique for a given ordered
// byte sequence: two differently built layouts that address the same bytes in
// the same order simplify to the same IR.
STRATA_API void simplify(LayoutIR& ir);

// ---------------------------------------------------------------------------
// The canonical strided block: a simplified IR plus the extent of one element
// (what the next element of a count > 1 starts after).
struct STRATA_API StridedBlock {
  int64_t offset = 0;        // bytes from the buffer pointer to the first byte
  int64_t block = 0;         // contiguous bytes per block (the innermost dimension)
  std::vector<Stream> dims;  // outer dimensions, innermost first
  int64_t extent = 0;        // the extent of the described element (0 when unknown)

  int64_t block_count() const;   // number of blocks
  int64_t packed_bytes() const;  // block * block_count()
  bool empty() const { return packed_bytes() == 0; }
  bool contiguous() const { return dims.empty(); }
  // The lowest and one-past-highest byte touched, relative to the pointer.
  int64_t lowest_byte() const;
  int64_t highest_byte() const;
  std::string to_string() const;

  bool operator==(const StridedBlock& o) const {
    return offset == o.offset && block == o.block && dims == o.dims && extent == o.extent;
  }
  bool operator!=(const StridedBlock& o) const { return !(*this == o); }
};

// Simplifies `ir` and returns its canonical block, with the given extent.
STRATA_API StridedBlock canonicalize(LayoutIR ir, int64_t extent);

// The canonical block of `count` consecutive elements of `element` (MPI's
// (buffer, count, datatype) triple).
STRATA_API StridedBlock repeat(const StridedBlock& element, int64_t count);

// ---------------------------------------------------------------------------
// Host pack and unpack. The packed stream of a block is its bytes in
// traversal order; these copy the packed bytes [first, last) between `base`
// (the user's buffer, addressed through the block) and `packed` (which holds
// exactly last - first bytes). Pass last = -1 for the whole stream.
STRATA_API void pack_host(const StridedBlock& layout, const void* base, void* packed, int64_t first = 0,
                          int64_t last = -1) noexcept;
STRATA_API void unpack_host(const StridedBlock& layout, const void* packed, void* base, int64_t first = 0,
                            int64_t last = -1) noexcept;

}  // namespace strata
