// MPI datatypes -> the canonical layout engine (strata/layout.hpp).
//
// Any datatype is translated through MPI_Type_get_envelope/get_contents into
// the IR. Reducible constructors: named types without inner holes, dup,
// contiguous, vector, hvector, subarray (C and Fortran order), resized,
// indexed_block/hindexed_block, indexed/hindexed and struct whose blocks,
// once neighbouring blocks are merged, are equal and start on a regular grid
// of any number of dimensions (so lists that are really contiguous, strided
// or 2D-strided reduce too). Everything else (irregular lists, darray, pair
// types with an inner hole such as MPI_SHORT_INT, ...) is
// Status::irreducible: callers hand such types to the MPI library untouched.
#pragma once

#include <strata/export.h>
#include <strata/layout.hpp>
#include <strata/status.hpp>

// Strata uses the MPI C API only; the deprecated C++ bindings of Open MPI's
// mpi.h would otherwise need libmpi_cxx at link time.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>

namespace strata {

// The IR of one element of `type`, before simplification.
STRATA_API Result<LayoutIR> translate_datatype(MPI_Datatype type);

// What Strata knows of one element of a datatype.
struct TypeLayout {
  StridedBlock element;  // canonical block of one element (extent included)
  int64_t size = 0;      // MPI_Type_size_x
  int64_t lb = 0;        // MPI_Type_get_extent
  int64_t extent = 0;
  int64_t true_lb = 0;  // MPI_Type_get_true_extent: the bytes one element touches
  int64_t true_extent = 0;
};

// The bytes [lo, hi), relative to the buffer pointer, that `count` elements
// of a type can touch (empty for a zero size or count).
struct Span {
  int64_t lo = 0;
  int64_t hi = 0;
};
STRATA_API Span span_of(const TypeLayout& type, int64_t count);

// Size, extents and span of any valid datatype, reducible or not (the
// element block stays empty when it is irreducible).
STRATA_API Result<TypeLayout> measure_datatype(MPI_Datatype type);

// Translates, simplifies and cross-checks against the library's own size and
// true extent (a mismatch is reported as irreducible, never trusted).
STRATA_API Result<TypeLayout> describe_datatype(MPI_Datatype type);

// Packs `count` elements of `type` at `inbuf` with Strata's engine, appending
// at outbuf + *position as MPI_Pack does. Irreducible types return
// Status::irreducible and write nothing; Status::invalid_argument when the
// output does not fit (outsize) or count < 0.
STRATA_API Status pack(const void* inbuf, int64_t count, MPI_Datatype type, void* outbuf, int64_t outsize,
                       int64_t* position);
STRATA_API Status unpack(const void* inbuf, int64_t insize, int64_t* position, void* outbuf, int64_t count,
                         MPI_Datatype type);

}  // namespace strata
