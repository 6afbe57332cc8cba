// The random datatype corpus (see random_datatype.hpp).
#include "random_datatype.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

namespace strata_test {

const char* to_string(Expect e) {
  switch (e) {
    case Expect::reducible: return "reducible";
    case Expect::irreducible: return "irreducible";
    default: return "unknown";
  }
}

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

OwnedType& OwnedType::operator=(OwnedType&& o) noexcept {
  if (this != &o) {
    reset();
    type_ = o.type_;
    o.type_ = MPI_DATATYPE_NULL;
  }
  return *this;
}

void OwnedType::reset() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  type_ = MPI_DATATYPE_NULL;
}

namespace {

// kOpenMpiMinusOne: Open MPI 4.1 builds a (h)vector whose byte stride is
// exactly -1 as if it were contiguous (opal_datatype_add takes an extent of
// -1 to mean "the child's extent"): MPI_Type_create_hvector(3, 1, -1,
// MPI_BYTE) packs bytes 0,1,2 instead of 0,-1,-2, and its true extent is
// [0,3). The corpus never builds that stride: the library would be the one
// that is wrong (test_translate covers Strata's side of it).

// Bounds on one generated type, so that five elements stay small.
constexpr MPI_Aint kMaxSpan = 24 * 1024;

struct NamedInfo {
  MPI_Datatype type;
  const char* name;
  bool dense;     // size == extent, no holes: bytes [0, extent) once each
  Expect expect;  // pair types: an inner hole (SHORT_INT) or only trailing padding
};

std::vector<NamedInfo> named_types() {
  return {
      {MPI_BYTE, "MPI_BYTE", true, Expect::reducible},
      {MPI_CHAR, "MPI_CHAR", true, Expect::reducible},
      {MPI_SHORT, "MPI_SHORT", true, Expect::reducible},
      {MPI_INT, "MPI_INT", true, Expect::reducible},
      {MPI_FLOAT, "MPI_FLOAT", true, Expect::reducible},
      {MPI_DOUBLE, "MPI_DOUBLE", true, Expect::reducible},
      {MPI_LONG_LONG, "MPI_LONG_LONG", true, Expect::reducible},
      {MPI_UINT16_T, "MPI_UINT16_T", true, Expect::reducible},
      {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", true, Expect::reducible},
      {MPI_2INT, "MPI_2INT", true, Expect::reducible},
      {MPI_FLOAT_INT, "MPI_FLOAT_INT", true, Expect::reducible},
      // Trailing padding only (12 bytes of data, extent 16): the data bytes
      // are one run, so the engine may reduce it; pack must then match.
      {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", false, Expect::unknown},
      {MPI_LONG_INT, "MPI_LONG_INT", false, Expect::unknown},
      // short at 0, int at 4: a hole inside the data.
      {MPI_SHORT_INT, "MPI_SHORT_INT", false, Expect::irreducible},
  };
}

// The expectation of a regular construction over a child.
Expect regular_over(Expect child) { return child == Expect::reducible ? Expect::reducible : Expect::unknown; }

template <class T>
std::string list(const std::vector<T>& v) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << "}";
  return os.str();
}

}  // namespace

struct RandomDatatypeGenerator::Node {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool derived = false;  // ours to free
  std::string desc;
  std::string constructor;
  Expect expect = Expect::unknown;
  bool dense = false;  // bytes [lb, lb + extent) once each, ascending; extent > 0
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Count size = 0;

  void query() {
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Type_size_x(type, &size);
  }
  void free_type() {
    if (derived && type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    type = MPI_DATATYPE_NULL;
    derived = false;
  }
};

RandomDatatypeGenerator::Node RandomDatatypeGenerator::named() {
  static const std::vector<NamedInfo> types = named_types();
  // Plain types far more often than pair types.
  const size_t n = types.size();
  const size_t i = chance(80) ? static_cast<size_t>(uniform(0, 8)) : static_cast<size_t>(uniform(0, int64_t(n) - 1));
  Node node;
  node.type = types[i].type;
  node.desc = types[i].name;
  node.constructor = types[i].dense ? "named" : std::string("named ") + types[i].name;
  node.expect = types[i].expect;
  node.dense = types[i].dense;
  node.query();
  return node;
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::finish(MPI_Datatype made, Node&& child, std::string constructor,
                                                              std::string args, Expect expect) {
  Node node;
  node.type = made;
  node.derived = true;
  node.constructor = std::move(constructor);
  node.expect = expect;
  node.query();
  node.desc = node.constructor + "(" + args + (args.empty() || child.desc.empty() ? "" : ", ") + child.desc + ")";
  child.free_type();  // MPI keeps what the new type needs
  // Open MPI reports sentinel bounds (near INT64_MAX) for some empty types:
  // sums that overflow count as too big.
  MPI_Aint true_hi = 0, hi = 0, span = 0;
  const bool overflow = __builtin_add_overflow(node.true_lb, node.true_extent, &true_hi) ||
                        __builtin_add_overflow(node.lb, node.extent, &hi);
  const MPI_Aint low = std::min(node.true_lb, node.lb);
  const MPI_Aint high = overflow ? 0 : std::max(true_hi, hi);
#if defined(MPICH)
  // MPICH 4.0 divides by zero unpacking a derived type of size 0 with count
  // > 1 (SIGFPE inside PMPI_Unpack): the oracle itself would crash, so the
  // corpus has no such types under MPICH (Open MPI runs cover them).
  const bool library_cannot = node.size == 0;
#else
  const bool library_cannot = false;
#endif
  if (overflow || library_cannot || __builtin_sub_overflow(high, low, &span) || span > kMaxSpan ||
      node.size > kMaxSpan || low < -kMaxSpan || high > 2 * kMaxSpan) {
    node.free_type();  // too big: a leaf instead
    return named();
  }
  return node;
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::build(int depth) {
  if (depth >= max_depth_ || (depth > 0 && chance(10 + 12 * depth)) || (depth == 0 && chance(6))) return named();
  switch (uniform(0, 15)) {
    case 0: return contiguous(depth);
    case 1: return vector(depth, false);
    case 2: return vector(depth, true);
    case 3: return block_list(depth, false, true);  // indexed_block
    case 4: return block_list(depth, true, true);   // hindexed_block
    case 5:
    case 6: return block_list(depth, false, false);  // indexed
    case 7:
    case 8: return block_list(depth, true, false);  // hindexed
    case 9:
    case 10: return structure(depth);
    case 11:
    case 12: return subarray(depth);
    case 13: return resized(depth);
    case 14: return dup(depth);
    default: return darray(depth);
  }
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::contiguous(int depth) {
  Node child = build(depth + 1);
  const int n = static_cast<int>(uniform(0, 4));
  MPI_Datatype t;
  MPI_Type_contiguous(n, child.type, &t);
  const bool dense = child.dense && n > 0;
  const Expect e = regular_over(child.expect);
  Node node = finish(t, std::move(child), "contiguous", "count=" + std::to_string(n), e);
  if (node.constructor == "contiguous") node.dense = dense;
  return node;
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::vector(int depth, bool bytes) {
  Node child = build(depth + 1);
  const int count = static_cast<int>(chance(5) ? 0 : uniform(1, 4));
  const int blocklen = static_cast<int>(chance(5) ? 0 : uniform(1, 3));
  MPI_Datatype t;
  std::string args;
  if (!bytes) {
    int stride = static_cast<int>(uniform(-4, 6));
    if (stride * child.extent == -1) stride = -2;  // see kOpenMpiMinusOne
    MPI_Type_vector(count, blocklen, stride, child.type, &t);
    args = "count=" + std::to_string(count) + ", blocklen=" + std::to_string(blocklen) +
           ", stride=" + std::to_string(stride);
  } else {
    MPI_Aint stride = 0;
    switch (uniform(0, 5)) {
      case 0: stride = 0; break;
      case 1: stride = blocklen * child.extent; break;                               // contiguous
      case 2: stride = -static_cast<MPI_Aint>(uniform(1, 3)) * child.extent; break;  // reversed
      case 3: stride = blocklen * child.extent + uniform(1, 24); break;              // gap
      case 4: stride = uniform(1, std::max<int64_t>(1, child.extent)); break;        // overlap
      default: stride = uniform(-200, 200); break;
    }
    if (stride == -1) stride = -2;  // see kOpenMpiMinusOne
    MPI_Type_create_hvector(count, blocklen, stride, child.type, &t);
    args = "count=" + std::to_string(count) + ", blocklen=" + std::to_string(blocklen) +
           ", stride_bytes=" + std::to_string(stride);
  }
  const Expect e = regular_over(child.expect);
  return finish(t, std::move(child), bytes ? "hvector" : "vector", args, e);
}

// indexed, hindexed, indexed_block, hindexed_block. Lists are regular (equal
// blocks at one step), merged (adjacent blocks of different lengths forming
// equal groups at one step) or irregular.
RandomDatatypeGenerator::Node RandomDatatypeGenerator::block_list(int depth, bool bytes, bool one_blocklen) {
  Node child = build(depth + 1);
  const MPI_Aint ext = child.extent;
  std::vector<int> lens;
  std::vector<int64_t> displs;  // in child extents (indexed) or bytes (hindexed)
  std::string kind;
  Expect e = Expect::unknown;
  const int r = static_cast<int>(uniform(0, 9));
  if (r < 4) {  // regular
    kind = "regular";
    const int n = static_cast<int>(uniform(1, 4));
    const int len = static_cast<int>(chance(5) ? 0 : uniform(1, 3));
    const int64_t d0 = uniform(-3, 5);
    int64_t step = uniform(-6, 8);
    if (bytes && chance(50)) step *= std::max<MPI_Aint>(1, ext);
    for (int i = 0; i < n; ++i) {
      lens.push_back(len);
      displs.push_back(bytes ? d0 * std::max<MPI_Aint>(1, ext) + i * step : d0 + i * step);
    }
    e = regular_over(child.expect);
  } else if (r < 7 && !one_blocklen) {  // merged: groups of adjacent blocks
    kind = "merged";
    const int groups = static_cast<int>(uniform(1, 3));
    const int total = static_cast<int>(uniform(2, 4));
    int64_t step = uniform(total + 1, total + 4);  // in elements
    if (chance(30)) step = -step;
    for (int g = 0; g < groups; ++g) {
      int64_t at = g * step;
      int left = total;
      while (left > 0) {
        const int part = static_cast<int>(uniform(1, left));
        lens.push_back(part);
        displs.push_back(bytes ? at * ext : at);
        at += part;
        left -= part;
      }
    }
    // Over a dense child the byte runs merge into `groups` equal runs.
    e = child.dense && child.expect == Expect::reducible ? Expect::reducible : Expect::unknown;
  } else {  // irregular: gaps of at least one element, unequal lengths or gaps
    kind = "irregular";
    const int n = static_cast<int>(uniform(2, 4));
    const int base_len = static_cast<int>(uniform(1, 3));
    int64_t at = uniform(-2, 3);
    const bool unequal_lengths = !one_blocklen && (n == 2 || chance(50));
    for (int i = 0; i < n; ++i) {
      int len = base_len;
      if (unequal_lengths) len = i == 1 ? base_len + static_cast<int>(uniform(1, 2)) : base_len;
      lens.push_back(len);
      displs.push_back(bytes ? at * ext : at);
      // Gaps 1, 2, 3 (elements): every step differs, so the list is not
      // strided in any number of dimensions (a 2D list {a, a+s, a+t, a+s+t}
      // repeats its first step).
      at += len + i + 1;
    }
    if (n == 2 && !unequal_lengths) {  // two equal blocks are always regular: make them three
      lens.push_back(base_len);
      displs.push_back(bytes ? at * ext : at);
    }
    e = child.dense && child.expect == Expect::reducible ? Expect::irreducible : Expect::unknown;
  }
  const int n = static_cast<int>(lens.size());
  MPI_Datatype t;
  std::string name;
  if (one_blocklen) {
    if (bytes) {
      std::vector<MPI_Aint> d(displs.begin(), displs.end());
      MPI_Type_create_hindexed_block(n, lens[0], d.data(), child.type, &t);
      name = "hindexed_block";
    } else {
      std::vector<int> d(displs.begin(), displs.end());
      MPI_Type_create_indexed_block(n, lens[0], d.data(), child.type, &t);
      name = "indexed_block";
    }
  } else if (bytes) {
    std::vector<MPI_Aint> d(displs.begin(), displs.end());
    MPI_Type_create_hindexed(n, lens.data(), d.data(), child.type, &t);
    name = "hindexed";
  } else {
    std::vector<int> d(displs.begin(), displs.end());
    MPI_Type_indexed(n, lens.data(), d.data(), child.type, &t);
    name = "indexed";
  }
  const std::string args =
      (one_blocklen ? "blocklen=" + std::to_string(lens[0]) : "blocklens=" + list(lens)) + ", displs=" + list(displs);
  return finish(t, std::move(child), name + "(" + kind + ")", args, e);
}

// Struct: one member; one type at regular displacements; adjacent dense
// named members (one run); irregular mixes.
RandomDatatypeGenerator::Node RandomDatatypeGenerator::structure(int depth) {
  const int r = static_cast<int>(uniform(0, 9));
  if (r < 3) {  // one member
    Node child = build(depth + 1);
    int len = static_cast<int>(uniform(1, 3));
    MPI_Aint d = uniform(-16, 32);
    MPI_Datatype t;
    MPI_Type_create_struct(1, &len, &d, &child.type, &t);
    const Expect e = regular_over(child.expect);
    return finish(t, std::move(child), "struct(one)",
                  "blocklens={" + std::to_string(len) + "}, displs={" + std::to_string(d) + "}", e);
  }
  if (r < 6) {  // the same type at regular displacements
    Node child = build(depth + 1);
    const int n = static_cast<int>(uniform(2, 4));
    const int len = static_cast<int>(uniform(1, 2));
    MPI_Aint step = chance(50) ? len * child.extent + uniform(0, 16) : uniform(-64, 64);
    const MPI_Aint d0 = uniform(-8, 8);
    std::vector<int> lens(static_cast<size_t>(n), len);
    std::vector<MPI_Aint> d;
    std::vector<MPI_Datatype> types(static_cast<size_t>(n), child.type);
    for (int i = 0; i < n; ++i) d.push_back(d0 + i * step);
    MPI_Datatype t;
    MPI_Type_create_struct(n, lens.data(), d.data(), types.data(), &t);
    const Expect e = regular_over(child.expect);
    return finish(t, std::move(child), "struct(same-type)", "blocklens=" + list(lens) + ", displs=" + list(d), e);
  }
  // Named dense members: adjacent (one run), or with gaps of unequal size
  // and unequal lengths (irregular).
  struct Member {
    MPI_Datatype type;
    const char* name;
    int size;
  };
  const Member members[] = {{MPI_CHAR, "MPI_CHAR", 1},   {MPI_SHORT, "MPI_SHORT", 2},   {MPI_INT, "MPI_INT", 4},
                            {MPI_FLOAT, "MPI_FLOAT", 4}, {MPI_DOUBLE, "MPI_DOUBLE", 8}, {MPI_2INT, "MPI_2INT", 8}};
  const bool adjacent = r < 8;
  const int n = static_cast<int>(uniform(2, 4));
  std::vector<int> lens;
  std::vector<MPI_Aint> d;
  std::vector<MPI_Datatype> types;
  std::vector<std::string> names;
  MPI_Aint at = uniform(-8, 8);
  std::vector<int64_t> run_lengths;
  for (int i = 0; i < n; ++i) {
    const Member& m = members[uniform(0, 5)];
    const int len = static_cast<int>(uniform(1, 3));
    lens.push_back(len);
    d.push_back(at);
    types.push_back(m.type);
    names.push_back(m.name);
    run_lengths.push_back(int64_t{len} * m.size);
    at += len * m.size + (adjacent ? 0 : i + 1);  // distinct gaps: no stride in any dimension
  }
  Expect e = Expect::reducible;
  if (!adjacent) {
    // Runs cannot merge (gaps); they are irregular when the gaps differ (3+
    // members) or the run lengths differ.
    const bool equal_runs =
        std::all_of(run_lengths.begin(), run_lengths.end(), [&](int64_t l) { return l == run_lengths[0]; });
    e = (n >= 3 || !equal_runs) ? Expect::irreducible : Expect::reducible;
  }
  MPI_Datatype t;
  MPI_Type_create_struct(n, lens.data(), d.data(), types.data(), &t);
  std::string args = "blocklens=" + list(lens) + ", displs=" + list(d) + ", types=" + list(names);
  return finish(t, Node{}, adjacent ? "struct(adjacent-dense)" : "struct(irregular-mix)", args, e);
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::subarray(int depth) {
  Node child = build(depth + 2);  // arrays multiply sizes quickly
  const int nd = static_cast<int>(uniform(2, 4));
  std::vector<int> sizes, subsizes, starts;
  for (int i = 0; i < nd; ++i) {
    const int s = static_cast<int>(uniform(1, nd == 4 ? 3 : 5));
    const int sub = static_cast<int>(uniform(1, s));
    sizes.push_back(s);
    subsizes.push_back(sub);
    starts.push_back(static_cast<int>(uniform(0, s - sub)));
  }
  const bool c_order = chance(50);
  MPI_Datatype t;
  MPI_Type_create_subarray(nd, sizes.data(), subsizes.data(), starts.data(), c_order ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                           child.type, &t);
  const std::string args = "sizes=" + list(sizes) + ", subsizes=" + list(subsizes) + ", starts=" + list(starts) +
                           ", order=" + (c_order ? "C" : "Fortran");
  const Expect e = regular_over(child.expect);
  return finish(t, std::move(child), c_order ? "subarray(C)" : "subarray(Fortran)", args, e);
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::resized(int depth) {
  Node child = build(depth + 1);
  MPI_Aint lb = child.lb, extent = child.extent;
  std::string kind;
  switch (uniform(0, 3)) {
    case 0:
      kind = "larger";
      extent = child.extent + uniform(1, 32);
      break;
    case 1:
      kind = "smaller";
      extent = std::max<MPI_Aint>(1, child.extent - uniform(1, std::max<int64_t>(1, child.extent)));
      break;
    case 2:
      kind = "negative-lb";
      lb = -uniform(1, 32);
      extent = child.true_extent + uniform(0, 40);
      break;
    default:
      kind = "shifted";
      lb = child.lb + uniform(-16, 16);
      extent = std::max<MPI_Aint>(1, child.extent + uniform(-8, 8));
      break;
  }
  MPI_Datatype t;
  MPI_Type_create_resized(child.type, lb, extent, &t);
  const Expect e = regular_over(child.expect);
  return finish(t, std::move(child), "resized(" + kind + ")",
                "lb=" + std::to_string(lb) + ", extent=" + std::to_string(extent), e);
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::dup(int depth) {
  Node child = build(depth + 1);
  const bool dense = child.dense;
  MPI_Datatype t;
  MPI_Type_dup(child.type, &t);
  const Expect e = child.expect;
  Node node = finish(t, std::move(child), "dup", "", e);
  if (node.constructor == "dup") node.dense = dense;
  return node;
}

RandomDatatypeGenerator::Node RandomDatatypeGenerator::darray(int depth) {
  Node child = build(depth + 2);
  if (child.size == 0 || child.extent <= 0) {  // Open MPI refuses a darray of an empty type
    child.free_type();
    child = named();
  }
  const int nd = static_cast<int>(uniform(1, 3));
  // A process grid: one dimension takes all processes, the others 1.
  const int nprocs = static_cast<int>(uniform(1, 4));
  const int rank = static_cast<int>(uniform(0, nprocs - 1));
  const int split = static_cast<int>(uniform(0, nd - 1));
  std::vector<int> gsizes, distribs, dargs, psizes;
  for (int i = 0; i < nd; ++i) {
    const int p = i == split ? nprocs : 1;
    gsizes.push_back(static_cast<int>(uniform(std::max(1, p), 6)));
    int dist = static_cast<int>(uniform(0, 2));
    if (p > 1 && dist == 2) dist = 0;  // NONE needs a single process in that dimension
    distribs.push_back(dist == 0 ? MPI_DISTRIBUTE_BLOCK : dist == 1 ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE);
    dargs.push_back(dist == 1 && chance(50) ? static_cast<int>(uniform(1, 2)) : MPI_DISTRIBUTE_DFLT_DARG);
    psizes.push_back(p);
  }
  const bool c_order = chance(50);
  MPI_Datatype t;
  MPI_Type_create_darray(nprocs, rank, nd, gsizes.data(), distribs.data(), dargs.data(), psizes.data(),
                         c_order ? MPI_ORDER_C : MPI_ORDER_FORTRAN, child.type, &t);
  const std::string args = "size=" + std::to_string(nprocs) + ", rank=" + std::to_string(rank) +
                           ", gsizes=" + list(gsizes) + ", distribs=" + list(distribs) + ", dargs=" + list(dargs) +
                           ", psizes=" + list(psizes) + ", order=" + (c_order ? "C" : "Fortran");
  return finish(t, std::move(child), "darray", args, Expect::irreducible);
}

namespace {
uint64_t fnv1a(const uint8_t* bytes, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}
}  // namespace

RandomDatatypeGenerator::RandomDatatypeGenerator(const uint8_t* bytes, size_t size, int max_depth)
    : rng_(fnv1a(bytes, size)), max_depth_(max_depth), bytes_(bytes), size_(size) {}

int64_t RandomDatatypeGenerator::uniform(int64_t lo, int64_t hi) {
  if (bytes_ == nullptr) return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  uint64_t v = 0;
  for (uint64_t left = range; left != 0 && used_ < size_; left >>= 8) v = (v << 8) | bytes_[used_++];
  return lo + static_cast<int64_t>(range == UINT64_MAX ? v : v % (range + 1));
}

RandomType RandomDatatypeGenerator::next() {
  Node node = build(0);
  MPI_Datatype t = node.type;
  if (!node.derived) {
    // A named type cannot be committed or freed by us: hand out a dup of it,
    // described as the named type it is.
    MPI_Type_dup(node.type, &t);
  }
  MPI_Type_commit(&t);
  RandomType out;
  out.type = OwnedType(t);
  out.description = node.desc;
  out.constructor = node.constructor;
  out.expect = node.expect;
  return out;
}

Footprint footprint(MPI_Datatype type, int count) {
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size_x(type, &size);
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  if (size == 0 || count <= 0) return Footprint{};
  const int64_t reach = int64_t{count - 1} * extent;
  return Footprint{true_lb + std::min<int64_t>(0, reach), true_lb + true_extent + std::max<int64_t>(0, reach)};
}

}  // namespace strata_test
