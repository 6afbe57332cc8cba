// MPI datatype -> layout IR, through MPI_Type_get_envelope/get_contents.
//
// Only the library's functions are called here, through mpi::real() (the
// datatype queries are never intercepted; MPI_Type_free goes past the
// shim's wrapper), so this code is safe inside the preloaded shim as well.
#include <strata/datatype.hpp>

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

#include <algorithm>
#include <vector>

namespace strata {

using mpi::real;

namespace {

// The arguments the constructor of a derived type was called with.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;

  Contents() = default;
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;
  // Datatypes returned by MPI_Type_get_contents are new handles when derived;
  // the caller must free them.
  ~Contents() {
    for (MPI_Datatype& t : types) {
      int ni = 0, na = 0, nd = 0, comb = 0;
      if (real().MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED) {
        real().MPI_Type_free(&t);
      }
    }
  }
};

Status read_contents(MPI_Datatype type, Contents& c) {
  int ni = 0, na = 0, nd = 0;
  if (real().MPI_Type_get_envelope(type, &ni, &na, &nd, &c.combiner) != MPI_SUCCESS) return Status::mpi_error;
  if (c.combiner == MPI_COMBINER_NAMED) return Status::ok;
  c.ints.resize(static_cast<size_t>(ni));
  c.addrs.resize(static_cast<size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<size_t>(nd));
  if (real().MPI_Type_get_contents(type, ni, na, nd, c.ints.data(), c.addrs.data(), types.data()) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  c.types = std::move(types);
  return Status::ok;
}

Status extent_of(MPI_Datatype type, int64_t* lb, int64_t* extent) {
  MPI_Aint l = 0, e = 0;
  if (real().MPI_Type_get_extent(type, &l, &e) != MPI_SUCCESS) return Status::mpi_error;
  *lb = l;
  *extent = e;
  return Status::ok;
}

bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

Result<LayoutIR> translate(MPI_Datatype type, int depth);

// A named (predefined) type is dense when its bytes have no hole: pair types
// with only trailing padding (MPI_DOUBLE_INT: 12 bytes in an extent of 16)
// are one run, pair types with an inner hole (MPI_SHORT_INT) are
// irreducible.
Result<LayoutIR> translate_named(MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Aint true_lb = 0, true_extent = 0;
  if (real().MPI_Type_size_x(type, &size) != MPI_SUCCESS) return Status::mpi_error;
  if (real().MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) return Status::mpi_error;
  if (size != true_extent) return Status::irreducible;
  LayoutIR ir = LayoutIR::dense(size);
  ir.shift(true_lb);
  return ir;
}

// One block of a block list: `count` units starting `displacement` bytes in.
struct Entry {
  int64_t displacement;
  int64_t count;
};

// Is the child dense: one contiguous run per element, with the elements of a
// block packed back to back (size == extent, no holes)?
bool dense_child(const LayoutIR& child, int64_t child_extent) {
  LayoutIR c = child;
  simplify(c);
  return c.streams.empty() && c.dense_bytes == child_extent;
}

// Block starts that form a regular grid in any number of dimensions, e.g.
// {0,1,2, 10,11,12} = 3 at step 1, twice at step 10. Fills `dims` innermost
// first; false when the starts are not such a grid.
bool regular_grid(const std::vector<int64_t>& starts, std::vector<Stream>* dims) {
  if (starts.size() < 2) return true;
  const int64_t step = starts[1] - starts[0];
  size_t run = 2;
  while (run < starts.size() && starts[run] - starts[run - 1] == step) ++run;
  if (starts.size() % run != 0) return false;
  std::vector<int64_t> outer;
  for (size_t chunk = 0; chunk < starts.size(); chunk += run) {
    for (size_t i = 0; i < run; ++i) {
      if (starts[chunk + i] - starts[chunk] != starts[i] - starts[0]) return false;
    }
    outer.push_back(starts[chunk]);
  }
  dims->push_back({static_cast<int64_t>(run), step});
  return regular_grid(outer, dims);
}

// A list of blocks of `unit` (whose elements are `unit_extent` bytes apart),
// in type-map order: neighbouring blocks merge (the end of one is the start
// of the next), then equal blocks whose starts form a regular grid become
// streams. Anything else is irreducible.
Result<LayoutIR> blocks_to_ir(const std::vector<Entry>& entries, const LayoutIR& unit, int64_t unit_extent) {
  std::vector<Entry> blocks;
  for (const Entry& e : entries) {
    if (e.count == 0) continue;
    if (e.count < 0) return Status::invalid_argument;
    int64_t span = 0, end = 0;
    if (!blocks.empty() && mul(blocks.back().count, unit_extent, &span) &&
        add(blocks.back().displacement, span, &end) && end == e.displacement) {
      blocks.back().count += e.count;
    } else {
      blocks.push_back(e);
    }
  }
  if (blocks.empty()) return LayoutIR{};
  std::vector<int64_t> starts;
  for (const Entry& b : blocks) {
    if (b.count != blocks.front().count) return Status::irreducible;
    starts.push_back(b.displacement);
  }
  std::vector<Stream> grid;
  if (!regular_grid(starts, &grid)) return Status::irreducible;
  LayoutIR ir = unit;
  ir.repeat(blocks.front().count, unit_extent);
  for (const Stream& d : grid) ir.repeat(d.count, d.stride);
  ir.shift(blocks.front().displacement);
  return ir;
}

// Blocks of a dense child as byte runs (so e.g. lengths {1,3} at {0,1}
// merge into one run, whatever the child's own layout).
bool to_byte_runs(const LayoutIR& dense_child_ir, int64_t child_extent, std::vector<Entry>* entries) {
  LayoutIR c = dense_child_ir;
  simplify(c);
  for (Entry& e : *entries) {
    if (!add(e.displacement, c.offset, &e.displacement) || !mul(e.count, child_extent, &e.count)) return false;
  }
  return true;
}

Result<LayoutIR> byte_runs_to_ir(const std::vector<Entry>& runs) { return blocks_to_ir(runs, LayoutIR::dense(1), 1); }

// Shared by indexed, hindexed and the *_block forms: a list of blocks of one
// child type (displacements in bytes, counts in child elements).
Result<LayoutIR> translate_block_list(std::vector<Entry> entries, MPI_Datatype child_type, int depth) {
  Result<LayoutIR> child = translate(child_type, depth + 1);
  if (!child) return child.status();
  int64_t lb = 0, ext = 0;
  STRATA_TRY(extent_of(child_type, &lb, &ext));
  if (ext > 0 && dense_child(*child, ext)) {
    if (!to_byte_runs(*child, ext, &entries)) return Status::irreducible;
    return byte_runs_to_ir(entries);
  }
  return blocks_to_ir(entries, *child, ext);
}

Result<LayoutIR> translate_subarray(const Contents& c, int depth) {
  const int nd = c.ints[0];
  const int* sizes = &c.ints[1];
  const int* subsizes = &c.ints[1 + nd];
  const int* starts = &c.ints[1 + 2 * nd];
  const int order = c.ints[1 + 3 * nd];
  Result<LayoutIR> child = translate(c.types[0], depth + 1);
  if (!child) return child.status();
  int64_t lb = 0, ext = 0;
  STRATA_TRY(extent_of(c.types[0], &lb, &ext));
  // Byte stride of each array dimension, then the streams fastest first.
  std::vector<int64_t> stride(static_cast<size_t>(nd));
  std::vector<int> fastest_first(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) fastest_first[static_cast<size_t>(i)] = order == MPI_ORDER_C ? nd - 1 - i : i;
  int64_t s = ext;
  for (int dim : fastest_first) {
    stride[static_cast<size_t>(dim)] = s;
    if (!mul(s, sizes[dim], &s)) return Status::irreducible;
  }
  LayoutIR ir = std::move(child).value();
  int64_t offset = 0;
  for (int dim : fastest_first) {
    int64_t start = 0;
    if (!mul(starts[dim], stride[static_cast<size_t>(dim)], &start) || !add(offset, start, &offset)) {
      return Status::irreducible;
    }
    ir.repeat(subsizes[dim], stride[static_cast<size_t>(dim)]);
  }
  ir.shift(offset);
  return ir;
}

// Struct: members that are all dense (e.g. {int, float, double[2]}) become
// byte runs; otherwise every member must have one layout and extent, and the
// members form a block list of that type. Anything else is irreducible.
Result<LayoutIR> translate_struct(const Contents& c, int depth) {
  const int count = c.ints[0];
  std::vector<Entry> runs;
  std::vector<Entry> entries;
  bool all_dense = true;
  bool one_layout = true;
  MPI_Datatype first = MPI_DATATYPE_NULL;
  StridedBlock first_block;
  int64_t first_ext = 0;
  for (int i = 0; i < count; ++i) {
    const size_t k = static_cast<size_t>(i);
    MPI_Datatype t = c.types[k];
    MPI_Count size = 0;
    if (real().MPI_Type_size_x(t, &size) != MPI_SUCCESS) return Status::mpi_error;
    const Entry entry{c.addrs[k], c.ints[1 + k]};
    if (entry.count == 0 || size == 0) continue;  // contributes no bytes
    Result<LayoutIR> ir = translate(t, depth + 1);
    if (!ir) return ir.status();
    int64_t lb = 0, ext = 0;
    STRATA_TRY(extent_of(t, &lb, &ext));
    std::vector<Entry> run{entry};
    if (all_dense && ext > 0 && dense_child(*ir, ext) && to_byte_runs(*ir, ext, &run)) {
      runs.push_back(run.front());
    } else {
      all_dense = false;
    }
    if (first == MPI_DATATYPE_NULL) {
      first = t;
      first_block = canonicalize(*ir, ext);
      first_ext = ext;
    } else if (t != first && (ext != first_ext || canonicalize(*ir, ext) != first_block)) {
      one_layout = false;
    }
    entries.push_back(entry);
  }
  if (entries.empty()) return LayoutIR{};
  if (all_dense) return byte_runs_to_ir(runs);
  if (!one_layout) return Status::irreducible;
  return translate_block_list(std::move(entries), first, depth);
}

Result<LayoutIR> translate(MPI_Datatype type, int depth) {
  constexpr int kMaxDepth = 64;
  if (depth > kMaxDepth) return Status::irreducible;
  if (type == MPI_DATATYPE_NULL) return Status::invalid_argument;
  Contents c;
  STRATA_TRY(read_contents(type, c));
  switch (c.combiner) {
    case MPI_COMBINER_NAMED: return translate_named(type);
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the bytes are the child's; only the extent changes
      return translate(c.types[0], depth + 1);
    case MPI_COMBINER_CONTIGUOUS: {
      Result<LayoutIR> child = translate(c.types[0], depth + 1);
      if (!child) return child.status();
      int64_t lb = 0, ext = 0;
      STRATA_TRY(extent_of(c.types[0], &lb, &ext));
      LayoutIR ir = std::move(child).value();
      ir.repeat(c.ints[0], ext);
      return ir;
    }
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      Result<LayoutIR> child = translate(c.types[0], depth + 1);
      if (!child) return child.status();
      int64_t lb = 0, ext = 0;
      STRATA_TRY(extent_of(c.types[0], &lb, &ext));
      int64_t stride = 0;
      if (c.combiner == MPI_COMBINER_VECTOR) {
        if (!mul(c.ints[2], ext, &stride)) return Status::irreducible;
      } else {
        stride = c.addrs[0];  // bytes, full MPI_Aint width
      }
      LayoutIR ir = std::move(child).value();
      ir.repeat(c.ints[1], ext).repeat(c.ints[0], stride);
      return ir;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      const int count = c.ints[0];
      int64_t lb = 0, ext = 0;
      STRATA_TRY(extent_of(c.types[0], &lb, &ext));
      std::vector<Entry> entries(static_cast<size_t>(count));
      for (int i = 0; i < count; ++i) {
        const size_t k = static_cast<size_t>(i);
        int64_t blocklen = 0;
        int64_t displacement = 0;
        switch (c.combiner) {
          case MPI_COMBINER_INDEXED_BLOCK:  // count, blocklength, displacements (in extents)
            blocklen = c.ints[1];
            if (!mul(c.ints[2 + k], ext, &displacement)) return Status::irreducible;
            break;
          case MPI_COMBINER_HINDEXED_BLOCK:  // count, blocklength; byte displacements
            blocklen = c.ints[1];
            displacement = c.addrs[k];
            break;
          case MPI_COMBINER_INDEXED:  // count, blocklengths, displacements (in extents)
            blocklen = c.ints[1 + k];
            if (!mul(c.ints[1 + static_cast<size_t>(count) + k], ext, &displacement)) return Status::irreducible;
            break;
          default:  // HINDEXED: count, blocklengths; byte displacements
            blocklen = c.ints[1 + k];
            displacement = c.addrs[k];
            break;
        }
        entries[k] = {displacement, blocklen};
      }
      return translate_block_list(std::move(entries), c.types[0], depth);
    }
    case MPI_COMBINER_STRUCT: return translate_struct(c, depth);
    case MPI_COMBINER_SUBARRAY: return translate_subarray(c, depth);
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER: return translate_named(type);
    default:  // darray and anything newer: the library handles it
      return Status::irreducible;
  }
}

}  // namespace

Result<LayoutIR> translate_datatype(MPI_Datatype type) { return translate(type, 0); }

Result<TypeLayout> measure_datatype(MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (real().MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
      real().MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      real().MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  TypeLayout out;
  out.size = size;
  out.lb = lb;
  out.extent = extent;
  out.true_lb = true_lb;
  out.true_extent = true_extent;
  return out;
}

Span span_of(const TypeLayout& type, int64_t count) {
  if (type.size == 0 || count <= 0) return Span{};
  const int64_t reach = (count - 1) * type.extent;
  return Span{type.true_lb + std::min<int64_t>(0, reach),
              type.true_lb + type.true_extent + std::max<int64_t>(0, reach)};
}

Result<TypeLayout> describe_datatype(MPI_Datatype type) {
  Result<LayoutIR> ir = translate_datatype(type);
  if (!ir) return ir.status();
  Result<TypeLayout> measured = measure_datatype(type);
  if (!measured) return measured.status();
  TypeLayout out = std::move(measured).value();
  out.element = canonicalize(std::move(ir).value(), out.extent);
  // Trust nothing that disagrees with the library: the packed size must be
  // the type's size and every byte must lie inside its true extent.
  const StridedBlock& e = out.element;
  const int64_t true_hi = out.true_lb + out.true_extent;
  if (e.packed_bytes() != out.size || (out.size > 0 && (e.lowest_byte() < out.true_lb || e.highest_byte() > true_hi))) {
    STRATA_LOG(warn, kTypes,
               "datatype translation disagrees with the library (size %lld vs %lld, bytes [%lld,%lld) vs "
               "true extent [%lld,%lld)); handing it to the library",
               static_cast<long long>(e.packed_bytes()), static_cast<long long>(out.size),
               static_cast<long long>(e.lowest_byte()), static_cast<long long>(e.highest_byte()),
               static_cast<long long>(out.true_lb), static_cast<long long>(true_hi));
    return Status::irreducible;
  }
  return out;
}

}  // namespace strata
