// MPI datatype -> layout IR, through MPI_Type_get_envelope/get_contents.
//
// Only the library's query functions (PMPI_*) are called here: they are never
// intercepted, so this code is safe inside the preloaded shim as well.
#include <strata/datatype.hpp>

#include "base/log.hpp"

#include <algorithm>
#include <vector>

namespace strata {
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
      if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED) {
        PMPI_Type_free(&t);
      }
    }
  }
};

Status read_contents(MPI_Datatype type, Contents& c) {
  int ni = 0, na = 0, nd = 0;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &c.combiner) != MPI_SUCCESS) return Status::mpi_error;
  if (c.combiner == MPI_COMBINER_NAMED) return Status::ok;
  c.ints.resize(static_cast<size_t>(ni));
  c.addrs.resize(static_cast<size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<size_t>(nd));
  if (PMPI_Type_get_contents(type, ni, na, nd, c.ints.data(), c.addrs.data(), types.data()) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  c.types = std::move(types);
  return Status::ok;
}

Status extent_of(MPI_Datatype type, int64_t* lb, int64_t* extent) {
  MPI_Aint l = 0, e = 0;
  if (PMPI_Type_get_extent(type, &l, &e) != MPI_SUCCESS) return Status::mpi_error;
  *lb = l;
  *extent = e;
  return Status::ok;
}

bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

Result<LayoutIR> translate(MPI_Datatype type, int depth);

// A named (predefined) type is dense when it has no holes; pair types such
// as MPI_DOUBLE_INT have padding and are irreducible.
Result<LayoutIR> translate_named(MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Aint true_lb = 0, true_extent = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS) return Status::mpi_error;
  if (PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) return Status::mpi_error;
  if (size != true_extent) return Status::irreducible;
  LayoutIR ir = LayoutIR::dense(size);
  ir.shift(true_lb);
  return ir;
}

// One run of contiguous bytes, or one block of `count` child elements.
struct Entry {
  int64_t displacement;  // bytes
  int64_t count;         // child elements
};

// Is the child dense: one contiguous run per element, with the elements of a
// block packed back to back (size == extent, no holes)?
bool dense_child(const LayoutIR& child, int64_t child_extent) {
  LayoutIR c = child;
  simplify(c);
  return c.streams.empty() && c.dense_bytes == child_extent;
}

// Byte runs [displacement, displacement + count) in type-map order: merge
// neighbours into maximal runs, then accept equal runs at a regular step.
Result<LayoutIR> byte_runs_to_ir(const std::vector<Entry>& byte_runs) {
  std::vector<Entry> runs;
  for (const Entry& r : byte_runs) {
    if (r.count == 0) continue;
    if (!runs.empty() && runs.back().displacement + runs.back().count == r.displacement) {
      runs.back().count += r.count;
    } else {
      runs.push_back(r);
    }
  }
  if (runs.empty()) return LayoutIR{};
  const int64_t len = runs.front().count;
  const int64_t step = runs.size() > 1 ? runs[1].displacement - runs[0].displacement : 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].count != len || runs[i].displacement != runs[0].displacement + static_cast<int64_t>(i) * step) {
      return Status::irreducible;
    }
  }
  LayoutIR ir = LayoutIR::dense(len);
  ir.repeat(static_cast<int64_t>(runs.size()), step).shift(runs.front().displacement);
  return ir;
}

// The byte run of `count` elements of a dense child at `displacement`.
bool dense_run(const LayoutIR& dense_child_ir, int64_t child_extent, const Entry& e, Entry* run) {
  LayoutIR c = dense_child_ir;
  simplify(c);
  return add(e.displacement, c.offset, &run->displacement) && mul(e.count, child_extent, &run->count);
}

// Shared by indexed, hindexed and the *_block forms: a list of blocks of one
// child type. Over a dense child the blocks are byte runs (so e.g. lengths
// {1,3} at {0,1} reduce to one dense run); otherwise equal block lengths at a
// regular stride become two streams.
Result<LayoutIR> translate_block_list(std::vector<Entry> entries, MPI_Datatype child_type, int depth) {
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const Entry& e) { return e.count == 0; }),
                entries.end());
  if (entries.empty()) return LayoutIR{};
  for (const Entry& e : entries) {
    if (e.count < 0) return Status::invalid_argument;
  }
  Result<LayoutIR> child = translate(child_type, depth + 1);
  if (!child) return child.status();
  int64_t lb = 0, ext = 0;
  STRATA_TRY(extent_of(child_type, &lb, &ext));

  if (ext > 0 && dense_child(*child, ext)) {
    std::vector<Entry> runs(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!dense_run(*child, ext, entries[i], &runs[i])) return Status::irreducible;
    }
    return byte_runs_to_ir(runs);
  }
  const int64_t blocklen = entries.front().count;
  const int64_t step = entries.size() > 1 ? entries[1].displacement - entries[0].displacement : 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].count != blocklen ||
        entries[i].displacement != entries[0].displacement + static_cast<int64_t>(i) * step) {
      return Status::irreducible;
    }
  }
  LayoutIR ir = std::move(child).value();
  ir.repeat(blocklen, ext).repeat(static_cast<int64_t>(entries.size()), step).shift(entries.front().displacement);
  return ir;
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
    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS) return Status::mpi_error;
    const Entry entry{c.addrs[k], c.ints[1 + k]};
    if (entry.count == 0 || size == 0) continue;  // contributes no bytes
    Result<LayoutIR> ir = translate(t, depth + 1);
    if (!ir) return ir.status();
    int64_t lb = 0, ext = 0;
    STRATA_TRY(extent_of(t, &lb, &ext));
    Entry run{};
    if (all_dense && ext > 0 && dense_child(*ir, ext) && dense_run(*ir, ext, entry, &run)) {
      runs.push_back(run);
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
    case MPI_COMBINER_NAMED:
      return translate_named(type);
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
    case MPI_COMBINER_STRUCT:
      return translate_struct(c, depth);
    case MPI_COMBINER_SUBARRAY:
      return translate_subarray(c, depth);
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
      return translate_named(type);
    default:  // darray and anything newer: the library handles it
      return Status::irreducible;
  }
}

}  // namespace

Result<LayoutIR> translate_datatype(MPI_Datatype type) { return translate(type, 0); }

Result<TypeLayout> describe_datatype(MPI_Datatype type) {
  Result<LayoutIR> ir = translate_datatype(type);
  if (!ir) return ir.status();
  TypeLayout out;
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  out.size = size;
  out.lb = lb;
  out.extent = extent;
  out.element = canonicalize(std::move(ir).value(), extent);
  // Trust nothing that disagrees with the library: the packed size must be
  // the type's size and every byte must lie inside its true extent.
  const StridedBlock& e = out.element;
  if (e.packed_bytes() != size ||
      (size > 0 && (e.lowest_byte() < true_lb || e.highest_byte() > true_lb + true_extent))) {
    STRATA_LOG(warn, kTypes, "datatype translation disagrees with the library (size %lld vs %lld, bytes [%lld,%lld) vs "
               "true extent [%lld,%lld)); handing it to the library",
               static_cast<long long>(e.packed_bytes()), static_cast<long long>(size),
               static_cast<long long>(e.lowest_byte()), static_cast<long long>(e.highest_byte()),
               static_cast<long long>(true_lb), static_cast<long long>(true_lb + true_extent));
    return Status::irreducible;
  }
  return out;
}

}  // namespace strata
