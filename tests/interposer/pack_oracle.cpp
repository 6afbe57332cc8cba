// See pack_oracle.hpp.
#include "pack_oracle.hpp"

#include <strata/datatype.hpp>

#include <mpi.h>

#include <algorithm>
#include <sstream>
#include <utility>

namespace strata_test {

namespace {

// A check's failure message, built with << as in GoogleTest; reported once,
// when the statement ends.
class Check {
 public:
  Check(bool ok, const CheckFailure& fail, const char* expression) : ok_(ok), fail_(&fail) {
    if (!ok_) os_ << "check failed: " << expression << " ";
  }
  Check(Check&& o) noexcept : ok_(o.ok_), fail_(o.fail_), os_(std::move(o.os_)) { o.ok_ = true; }
  Check(const Check&) = delete;
  Check& operator=(const Check&) = delete;
  Check& operator=(Check&&) = delete;
  ~Check() {
    if (!ok_) (*fail_)(os_.str());
  }
  template <class T>
  Check& operator<<(const T& v) {
    if (!ok_) os_ << v;
    return *this;
  }

 private:
  bool ok_;
  const CheckFailure* fail_;
  std::ostringstream os_;
};

template <class T>
const T& shown(const T& v) {
  return v;
}
const char* shown(strata::Status s) { return strata::to_string(s); }

template <class A, class B>
Check check_eq(const A& a, const B& b, const CheckFailure& fail, const char* expression) {
  Check c(a == b, fail, expression);
  c << "(" << shown(a) << " vs " << shown(b) << ") ";
  return c;
}

#define CHECK_TRUE(condition) Check((condition), fail, #condition)
#define CHECK_EQ(a, b) check_eq((a), (b), fail, #a " == " #b)

constexpr size_t kGuard = 64;

std::string first_difference(const std::vector<unsigned char>& want, const std::vector<unsigned char>& got) {
  if (want.size() != got.size()) return "sizes differ";
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      std::ostringstream os;
      os << "first difference at byte " << static_cast<long long>(i) - static_cast<long long>(kGuard)
         << " of the guarded region (library " << int(want[i]) << ", strata " << int(got[i]) << ")";
      return os.str();
    }
  }
  return "";
}

bool all_equal(const std::vector<unsigned char>& v, unsigned char c) {
  return std::all_of(v.begin(), v.end(), [c](unsigned char x) { return x == c; });
}

// The library's own type map: the address (relative to the buffer pointer)
// of every packed byte, in pack order, read back from three PMPI_Pack calls
// over buffers whose bytes hold bits 0-7, 8-15 and 16-23 of their position.
std::vector<int64_t> library_addresses(MPI_Datatype type, int count, int64_t lo, int64_t hi, int64_t packed) {
  std::vector<int64_t> addrs(static_cast<size_t>(packed), 0);
  if (packed == 0) return addrs;
  std::vector<unsigned char> src(static_cast<size_t>(hi - lo));
  std::vector<unsigned char> out(static_cast<size_t>(packed));
  for (int k = 0; k < 3; ++k) {
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i >> (8 * k));
    int pos = 0;
    PMPI_Pack(src.data() - lo, count, type, out.data(), static_cast<int>(packed), &pos, MPI_COMM_WORLD);
    for (size_t i = 0; i < out.size(); ++i) addrs[i] |= int64_t{out[i]} << (8 * k);
  }
  for (int64_t& a : addrs) a += lo;
  return addrs;
}

// The canonical strided form of an address sequence, when it has one (found
// greedily, independently of the engine: the dense run is the longest initial
// run, each dimension the longest arithmetic run of the starts one level in).
bool strided_form(const std::vector<int64_t>& a, strata::StridedBlock* out) {
  *out = strata::StridedBlock{};
  if (a.empty()) return true;
  size_t b = 1;
  while (b < a.size() && a[b] == a[b - 1] + 1) ++b;
  if (a.size() % b != 0) return false;
  std::vector<int64_t> starts;
  for (size_t k = 0; k < a.size(); k += b) {
    for (size_t j = 0; j < b; ++j) {
      if (a[k + j] != a[k] + static_cast<int64_t>(j)) return false;
    }
    starts.push_back(a[k]);
  }
  out->offset = a[0];
  out->block = static_cast<int64_t>(b);
  while (starts.size() > 1) {
    const int64_t s = starts[1] - starts[0];
    size_t c = 1;
    while (c < starts.size() && starts[c] == starts[0] + static_cast<int64_t>(c) * s) ++c;
    if (starts.size() % c != 0) return false;
    std::vector<int64_t> next;
    for (size_t g = 0; g < starts.size(); g += c) {
      for (size_t i = 0; i < c; ++i) {
        if (starts[g + i] != starts[g] + static_cast<int64_t>(i) * s) return false;
      }
      next.push_back(starts[g]);
    }
    out->dims.push_back({static_cast<int64_t>(c), s});
    starts.swap(next);
  }
  return true;
}

bool same_bytes(const strata::StridedBlock& a, const strata::StridedBlock& b) {
  return a.offset == b.offset && a.block == b.block && a.dims == b.dims;
}

}  // namespace

bool check_pack_case(const RandomType& rt, int count, std::mt19937_64& rng, const CheckFailure& fail,
                     MissedReductions* missed) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  MPI_Datatype type = rt.type.get();
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  CHECK_EQ(MPI_Type_size_x(type, &size), MPI_SUCCESS);
  CHECK_EQ(MPI_Type_get_extent(type, &lb, &extent), MPI_SUCCESS);
  CHECK_EQ(MPI_Type_get_true_extent(type, &true_lb, &true_extent), MPI_SUCCESS);

  const strata::Result<strata::TypeLayout> d = strata::describe_datatype(type);
  const bool reducible = d.ok();
  if (reducible) {
    CHECK_EQ(d->element.packed_bytes(), static_cast<int64_t>(size)) << d->element.to_string();
    CHECK_EQ(d->size, static_cast<int64_t>(size));
    CHECK_EQ(d->lb, static_cast<int64_t>(lb));
    CHECK_EQ(d->extent, static_cast<int64_t>(extent));
    CHECK_EQ(d->element.extent, static_cast<int64_t>(extent));
  } else {
    CHECK_EQ(d.status(), strata::Status::irreducible) << "describe_datatype failed with " << to_string(d.status());
  }
  // The engine against the library's own type map, independently of packing.
  if (size > 0) {
    const int64_t elo = true_lb, ehi = true_lb + true_extent;
    strata::StridedBlock lib;
    const bool strided = strided_form(library_addresses(type, 1, elo, ehi, size), &lib);
    if (reducible) {
      CHECK_TRUE(strided) << "reduced to " << d->element.to_string() << " but the library's type map is not strided";
      if (strided) {
        CHECK_TRUE(same_bytes(lib, d->element))
            << "canonical " << d->element.to_string() << ", library type map " << lib.to_string();
      }
    } else if (rt.expect == Expect::irreducible && rt.description.find("darray") == std::string::npos) {
      // The generator's own claim, checked against the library's type map.
      CHECK_TRUE(!(strided)) << "generator bug: claimed irregular, but the type map is " << lib.to_string();
    } else if (strided && missed != nullptr && rt.description.find("darray") == std::string::npos) {
      ++missed->by_constructor[rt.constructor];
      missed->examples.push_back(rt.description + "  ->  " + lib.to_string());
      // Keep the shortest few.
      std::sort(missed->examples.begin(), missed->examples.end(),
                [](const std::string& x, const std::string& y) { return x.size() < y.size(); });
      if (missed->examples.size() > 8) missed->examples.pop_back();
    }
  }
  if (rt.expect == Expect::reducible) {
    CHECK_TRUE(reducible) << "a regular construction was not reduced";
  } else if (rt.expect == Expect::irreducible) {
    CHECK_TRUE(!(reducible)) << "reduced to " << d->element.to_string() << " but must be irreducible";
  }

  // The user buffer: every byte `count` elements can touch, with guards.
  const Footprint fp = footprint(type, count);
  const int64_t lo = fp.lo, hi = fp.hi;
  std::vector<unsigned char> src(static_cast<size_t>(hi - lo) + 2 * kGuard);
  for (auto& c : src) c = static_cast<unsigned char>(uniform(0, 255));
  const char* src_base = reinterpret_cast<const char*>(src.data()) + kGuard - lo;

  int pack_bound = 0;
  CHECK_EQ(PMPI_Pack_size(count, type, MPI_COMM_WORLD, &pack_bound), MPI_SUCCESS);
  const int p0 = static_cast<int>(uniform(0, 8));  // MPI_Pack appends at *position
  const int outsize = p0 + pack_bound;
  const unsigned char poison = static_cast<unsigned char>(uniform(0, 255));
  std::vector<unsigned char> by_mpi(static_cast<size_t>(outsize) + 2 * kGuard, poison);
  std::vector<unsigned char> by_strata = by_mpi;

  int mpi_pos = p0;
  CHECK_EQ(PMPI_Pack(src_base, count, type, by_mpi.data() + kGuard, outsize, &mpi_pos, MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(mpi_pos - p0, static_cast<int>(size * count));
  int64_t strata_pos = p0;
  const strata::Status ps = strata::pack(src_base, count, type, by_strata.data() + kGuard, outsize, &strata_pos);
  if (reducible) {
    CHECK_EQ(ps, strata::Status::ok) << to_string(ps);
    CHECK_EQ(strata_pos, mpi_pos);
    const std::string diff = first_difference(by_mpi, by_strata);
    CHECK_EQ(diff, "") << "pack differs from PMPI_Pack; canonical " << d->element.to_string();
    // Too small an output is refused, and nothing is written.
    if (size * count > 0) {
      std::vector<unsigned char> small(by_mpi.size(), poison);
      int64_t pos = p0;
      const strata::Status too_small =
          strata::pack(src_base, count, type, small.data() + kGuard, p0 + size * count - 1, &pos);
      CHECK_EQ(too_small, strata::Status::invalid_argument);
      CHECK_EQ(pos, p0);
      CHECK_TRUE(all_equal(small, poison)) << "a refused pack wrote into the output";
    }
  } else {
    CHECK_EQ(ps, strata::Status::irreducible) << to_string(ps);
    CHECK_EQ(strata_pos, p0) << "position moved on an irreducible type";
    CHECK_TRUE(all_equal(by_strata, poison)) << "pack wrote for an irreducible type";
  }

  // Unpack the library's packed bytes into identically poisoned buffers.
  const unsigned char dpoison = static_cast<unsigned char>(uniform(0, 255));
  std::vector<unsigned char> dst_mpi(src.size(), dpoison);
  std::vector<unsigned char> dst_strata = dst_mpi;
  char* mpi_base = reinterpret_cast<char*>(dst_mpi.data()) + kGuard - lo;
  char* strata_base = reinterpret_cast<char*>(dst_strata.data()) + kGuard - lo;
  const std::vector<unsigned char> packed_before = by_mpi;
  int mpi_in = p0;
  CHECK_EQ(PMPI_Unpack(by_mpi.data() + kGuard, mpi_pos, &mpi_in, mpi_base, count, type, MPI_COMM_WORLD), MPI_SUCCESS);
  int64_t strata_in = p0;
  const strata::Status us = strata::unpack(by_mpi.data() + kGuard, mpi_pos, &strata_in, strata_base, count, type);
  CHECK_TRUE(by_mpi == packed_before) << "unpack wrote into its input";
  if (reducible) {
    CHECK_EQ(us, strata::Status::ok) << to_string(us);
    CHECK_EQ(strata_in, mpi_in);
    const std::string diff = first_difference(dst_mpi, dst_strata);
    CHECK_EQ(diff, "") << "unpack differs from PMPI_Unpack (destination index relative to byte " << lo << ")";
  } else {
    CHECK_EQ(us, strata::Status::irreducible) << to_string(us);
    CHECK_EQ(strata_in, p0);
    CHECK_TRUE(all_equal(dst_strata, dpoison)) << "unpack wrote for an irreducible type";
  }
  return reducible;
}

}  // namespace strata_test
