// The benchmarked layouts: each point as an MPI datatype and as the canonical
// strided block we know it to be (built directly, not through
// strata::describe_datatype, which is cross-checked in --check when built).
#include "bench/pack/bench_pack.hpp"

#include <algorithm>
#include <sstream>

namespace strata_bench {
namespace {

// Subarray planes have Point::rows rows (n / rows planes). Two ghost rows per
// plane (starts {0, 1, 0}) keep the planes from folding into one 2D vector.
constexpr int64_t kGhostRows = 2;

// The widest element type dividing both the block and the stride: apps build
// vectors of doubles, not of bytes.
void element_type(int64_t block, int64_t stride, MPI_Datatype* type, int64_t* size, const char** name) {
  if (block % 8 == 0 && stride % 8 == 0) {
    *type = MPI_DOUBLE, *size = 8, *name = "MPI_DOUBLE";
  } else if (block % 4 == 0 && stride % 4 == 0) {
    *type = MPI_INT, *size = 4, *name = "MPI_INT";
  } else if (block % 2 == 0 && stride % 2 == 0) {
    *type = MPI_SHORT, *size = 2, *name = "MPI_SHORT";
  } else {
    *type = MPI_BYTE, *size = 1, *name = "MPI_BYTE";
  }
}

// Canonical 2D block of n blocks (a count-1 dimension is dropped).
strata::StridedBlock vector_block(int64_t offset, int64_t block, int64_t n, int64_t stride, int64_t extent) {
  strata::StridedBlock b;
  b.offset = offset;
  b.block = block;
  if (n > 1) b.dims.push_back({n, stride});
  b.extent = extent;
  return b;
}

struct SubarrayShape {
  int64_t rows = 0, planes = 0;  // subsizes (outer two)
  int64_t array_rows = 0;        // sizes[1]
};

SubarrayShape subarray_shape(const Point& p) {
  const int64_t n = p.packed / p.block;
  SubarrayShape s;
  s.rows = std::min(n, p.rows);
  s.planes = n / s.rows;
  s.array_rows = s.rows + kGhostRows;
  return s;
}

bool mpi_ok(int rc, const char* call, std::string* error) {
  if (rc == MPI_SUCCESS) return true;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  *error = std::string(call) + " failed: " + std::string(msg, static_cast<size_t>(len));
  return false;
}

}  // namespace

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::vector: return "vector";
    case Kind::hvector: return "hvector";
    case Kind::subarray: return "subarray";
  }
  return "?";
}

bool parse_kind(const std::string& name, Kind* kind) {
  for (Kind k : {Kind::vector, Kind::hvector, Kind::subarray}) {
    if (name == to_string(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

void normalize_point(Point* p) {
  p->packed -= p->packed % p->block;
  if (p->kind == Kind::subarray && p->packed > 0) {
    int64_t n = p->packed / p->block;
    n -= n % std::min(n, p->rows);
    p->packed = n * p->block;
  }
}

int64_t source_span(const Point& p) {
  const int64_t n = p.packed / p.block;
  if (p.kind == Kind::subarray) {
    const SubarrayShape s = subarray_shape(p);
    return s.planes * s.array_rows * p.stride;
  }
  return (n - 1) * p.stride + p.block;
}

bool make_layout(const Point& p, Layout* out, std::string* error) {
  *out = Layout{};
  if (p.block <= 0 || p.packed % p.block != 0 || p.stride < p.block) {
    *error = "bad point: packed must be a multiple of block, stride >= block";
    return false;
  }
  const int64_t n = p.packed / p.block;
  std::ostringstream what;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  switch (p.kind) {
    case Kind::vector: {
      MPI_Datatype elem;
      int64_t esize;
      const char* ename;
      element_type(p.block, p.stride, &elem, &esize, &ename);
      if (!mpi_ok(MPI_Type_vector(static_cast<int>(n), static_cast<int>(p.block / esize),
                                  static_cast<int>(p.stride / esize), elem, &type),
                  "MPI_Type_vector", error))
        return false;
      what << "MPI_Type_vector(" << n << ", " << p.block / esize << ", " << p.stride / esize << ", " << ename << ")";
      out->block = vector_block(0, p.block, n, p.stride, (n - 1) * p.stride + p.block);
      break;
    }
    case Kind::hvector: {
      if (!mpi_ok(MPI_Type_create_hvector(static_cast<int>(n), static_cast<int>(p.block), p.stride, MPI_BYTE, &type),
                  "MPI_Type_create_hvector", error))
        return false;
      what << "MPI_Type_create_hvector(" << n << ", " << p.block << ", " << p.stride << ", MPI_BYTE)";
      out->block = vector_block(0, p.block, n, p.stride, (n - 1) * p.stride + p.block);
      break;
    }
    case Kind::subarray: {
      const SubarrayShape s = subarray_shape(p);
      const int sizes[3] = {static_cast<int>(s.planes), static_cast<int>(s.array_rows), static_cast<int>(p.stride)};
      const int subsizes[3] = {static_cast<int>(s.planes), static_cast<int>(s.rows), static_cast<int>(p.block)};
      const int starts[3] = {0, 1, 0};
      if (!mpi_ok(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_BYTE, &type),
                  "MPI_Type_create_subarray", error))
        return false;
      what << "MPI_Type_create_subarray(3, {" << sizes[0] << "," << sizes[1] << "," << sizes[2] << "}, {" << subsizes[0]
           << "," << subsizes[1] << "," << subsizes[2] << "}, {0,1,0}, C, MPI_BYTE)";
      strata::StridedBlock b;
      b.offset = p.stride;  // one ghost row
      b.block = p.block;
      if (s.rows > 1) b.dims.push_back({s.rows, p.stride});
      if (s.planes > 1) b.dims.push_back({s.planes, s.array_rows * p.stride});
      b.extent = s.planes * s.array_rows * p.stride;
      out->block = b;
      break;
    }
  }
  if (!mpi_ok(MPI_Type_commit(&type), "MPI_Type_commit", error)) {
    MPI_Type_free(&type);
    return false;
  }
  int size = 0;
  MPI_Type_size(type, &size);
  if (size != p.packed || out->block.packed_bytes() != p.packed) {
    *error = what.str() + ": MPI_Type_size " + std::to_string(size) + " != " + std::to_string(p.packed);
    MPI_Type_free(&type);
    return false;
  }
  out->type = type;
  out->span = source_span(p);
  out->what = what.str();
  return true;
}

void free_layout(Layout* layout) {
  if (layout->type != MPI_DATATYPE_NULL) MPI_Type_free(&layout->type);
  layout->type = MPI_DATATYPE_NULL;
}

}  // namespace strata_bench
