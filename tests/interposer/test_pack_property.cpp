// Property test of strata::pack / strata::unpack against the MPI library's
// own PMPI_Pack / PMPI_Unpack on thousands of seeded random datatypes (see
// random_datatype.hpp) and counts 0..5:
//   - a reducible type packs byte-identically to PMPI_Pack, guards included;
//   - an irreducible one is reported as such and nothing is written;
//   - unpack writes exactly what PMPI_Unpack writes into the same poisoned
//     destination (guards and holes included);
//   - describe_datatype's packed size equals MPI_Type_size_x;
//   - what the construction guarantees (regular: reducible; darray and
//     irregular byte lists: irreducible) holds.
// Each rank runs its own corpus (seed + rank). Replay a failure with
// STRATA_TEST_SEED=<seed printed> (rank 0 uses the seed itself);
// STRATA_TEST_ITERATIONS sets the corpus size.
#include "random_datatype.hpp"
#include "support/mpi_test.hpp"

#include <strata/datatype.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using strata_test::Expect;

constexpr size_t kGuard = 64;
constexpr uint64_t kDefaultSeed = 0xDA7A7E57ull;

struct Tally {
  int reducible = 0;
  int irreducible = 0;
};

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

// Types the engine hands to the library although their bytes form a strided
// block (informational; types containing a darray, irreducible by policy,
// are not counted).
struct Missed {
  std::map<std::string, int> by_constructor;
  std::vector<std::string> examples;
};
Missed g_missed;

// One (type, count) case. Returns whether the engine took the type.
bool check_case(const strata_test::RandomType& rt, int count, std::mt19937_64& rng) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  MPI_Datatype type = rt.type.get();
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  EXPECT_EQ(MPI_Type_size_x(type, &size), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_get_extent(type, &lb, &extent), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_get_true_extent(type, &true_lb, &true_extent), MPI_SUCCESS);

  const strata::Result<strata::TypeLayout> d = strata::describe_datatype(type);
  const bool reducible = d.ok();
  if (reducible) {
    EXPECT_EQ(d->element.packed_bytes(), static_cast<int64_t>(size)) << d->element.to_string();
    EXPECT_EQ(d->size, static_cast<int64_t>(size));
    EXPECT_EQ(d->lb, static_cast<int64_t>(lb));
    EXPECT_EQ(d->extent, static_cast<int64_t>(extent));
    EXPECT_EQ(d->element.extent, static_cast<int64_t>(extent));
  } else {
    EXPECT_EQ(d.status(), strata::Status::irreducible) << "describe_datatype failed with " << to_string(d.status());
  }
  // The engine against the library's own type map, independently of packing.
  if (size > 0) {
    const int64_t elo = true_lb, ehi = true_lb + true_extent;
    strata::StridedBlock lib;
    const bool strided = strided_form(library_addresses(type, 1, elo, ehi, size), &lib);
    if (reducible) {
      EXPECT_TRUE(strided) << "reduced to " << d->element.to_string() << " but the library's type map is not strided";
      if (strided) {
        EXPECT_TRUE(same_bytes(lib, d->element))
            << "canonical " << d->element.to_string() << ", library type map " << lib.to_string();
      }
    } else if (rt.expect == Expect::irreducible && rt.description.find("darray") == std::string::npos) {
      // The generator's own claim, checked against the library's type map.
      EXPECT_FALSE(strided) << "generator bug: claimed irregular, but the type map is " << lib.to_string();
    } else if (strided && rt.description.find("darray") == std::string::npos) {
      ++g_missed.by_constructor[rt.constructor];
      g_missed.examples.push_back(rt.description + "  ->  " + lib.to_string());
      // Keep the shortest few.
      std::sort(g_missed.examples.begin(), g_missed.examples.end(),
                [](const std::string& x, const std::string& y) { return x.size() < y.size(); });
      if (g_missed.examples.size() > 8) g_missed.examples.pop_back();
    }
  }
  if (rt.expect == Expect::reducible) {
    EXPECT_TRUE(reducible) << "a regular construction was not reduced";
  } else if (rt.expect == Expect::irreducible) {
    EXPECT_FALSE(reducible) << "reduced to " << d->element.to_string() << " but must be irreducible";
  }

  // The user buffer: every byte `count` elements can touch, with guards.
  const strata_test::Footprint fp = strata_test::footprint(type, count);
  const int64_t lo = fp.lo, hi = fp.hi;
  std::vector<unsigned char> src(static_cast<size_t>(hi - lo) + 2 * kGuard);
  for (auto& c : src) c = static_cast<unsigned char>(uniform(0, 255));
  const char* src_base = reinterpret_cast<const char*>(src.data()) + kGuard - lo;

  int pack_bound = 0;
  EXPECT_EQ(PMPI_Pack_size(count, type, MPI_COMM_WORLD, &pack_bound), MPI_SUCCESS);
  const int p0 = static_cast<int>(uniform(0, 8));  // MPI_Pack appends at *position
  const int outsize = p0 + pack_bound;
  const unsigned char poison = static_cast<unsigned char>(uniform(0, 255));
  std::vector<unsigned char> by_mpi(static_cast<size_t>(outsize) + 2 * kGuard, poison);
  std::vector<unsigned char> by_strata = by_mpi;

  int mpi_pos = p0;
  EXPECT_EQ(PMPI_Pack(src_base, count, type, by_mpi.data() + kGuard, outsize, &mpi_pos, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(mpi_pos - p0, static_cast<int>(size * count));
  int64_t strata_pos = p0;
  const strata::Status ps = strata::pack(src_base, count, type, by_strata.data() + kGuard, outsize, &strata_pos);
  if (reducible) {
    EXPECT_EQ(ps, strata::Status::ok) << to_string(ps);
    EXPECT_EQ(strata_pos, mpi_pos);
    const std::string diff = first_difference(by_mpi, by_strata);
    EXPECT_EQ(diff, "") << "pack differs from PMPI_Pack; canonical " << d->element.to_string();
    // Too small an output is refused, and nothing is written.
    if (size * count > 0) {
      std::vector<unsigned char> small(by_mpi.size(), poison);
      int64_t pos = p0;
      const strata::Status too_small = strata::pack(src_base, count, type, small.data() + kGuard,
                                                    p0 + size * count - 1, &pos);
      EXPECT_EQ(too_small, strata::Status::invalid_argument);
      EXPECT_EQ(pos, p0);
      EXPECT_TRUE(all_equal(small, poison)) << "a refused pack wrote into the output";
    }
  } else {
    EXPECT_EQ(ps, strata::Status::irreducible) << to_string(ps);
    EXPECT_EQ(strata_pos, p0) << "position moved on an irreducible type";
    EXPECT_TRUE(all_equal(by_strata, poison)) << "pack wrote for an irreducible type";
  }

  // Unpack the library's packed bytes into identically poisoned buffers.
  const unsigned char dpoison = static_cast<unsigned char>(uniform(0, 255));
  std::vector<unsigned char> dst_mpi(src.size(), dpoison);
  std::vector<unsigned char> dst_strata = dst_mpi;
  char* mpi_base = reinterpret_cast<char*>(dst_mpi.data()) + kGuard - lo;
  char* strata_base = reinterpret_cast<char*>(dst_strata.data()) + kGuard - lo;
  const std::vector<unsigned char> packed_before = by_mpi;
  int mpi_in = p0;
  EXPECT_EQ(PMPI_Unpack(by_mpi.data() + kGuard, mpi_pos, &mpi_in, mpi_base, count, type, MPI_COMM_WORLD),
            MPI_SUCCESS);
  int64_t strata_in = p0;
  const strata::Status us = strata::unpack(by_mpi.data() + kGuard, mpi_pos, &strata_in, strata_base, count, type);
  EXPECT_TRUE(by_mpi == packed_before) << "unpack wrote into its input";
  if (reducible) {
    EXPECT_EQ(us, strata::Status::ok) << to_string(us);
    EXPECT_EQ(strata_in, mpi_in);
    const std::string diff = first_difference(dst_mpi, dst_strata);
    EXPECT_EQ(diff, "") << "unpack differs from PMPI_Unpack (destination index relative to byte " << lo << ")";
  } else {
    EXPECT_EQ(us, strata::Status::irreducible) << to_string(us);
    EXPECT_EQ(strata_in, p0);
    EXPECT_TRUE(all_equal(dst_strata, dpoison)) << "unpack wrote for an irreducible type";
  }
  return reducible;
}

TEST(PackProperty, RandomDatatypesMatchTheLibrary) {
  const uint64_t base_seed = strata_test::env_u64("STRATA_TEST_SEED", kDefaultSeed);
  const uint64_t seed = base_seed + static_cast<uint64_t>(strata_test::world_rank());
  const int iterations = static_cast<int>(strata_test::env_u64("STRATA_TEST_ITERATIONS", 20000));
  strata_test::RandomDatatypeGenerator gen(seed);
  std::map<std::string, Tally> tally;
  std::map<std::string, int> expectation;
  int reducible = 0, nonempty_reducible = 0;
  for (int it = 0; it < iterations; ++it) {
    const strata_test::RandomType rt = gen.next();
    const int count = static_cast<int>(std::uniform_int_distribution<int>(0, 5)(gen.rng()));
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed) + " (case " + std::to_string(it) + ") count=" +
                 std::to_string(count) + " type=" + rt.description + " [expect " + to_string(rt.expect) + "]");
    const bool r = check_case(rt, count, gen.rng());
    Tally& t = tally[rt.constructor];
    (r ? t.reducible : t.irreducible) += 1;
    ++expectation[to_string(rt.expect)];
    if (r) {
      ++reducible;
      MPI_Count size = 0;
      MPI_Type_size_x(rt.type.get(), &size);
      if (size > 0 && count > 0) ++nonempty_reducible;
    }
    if (testing::Test::HasFailure()) break;  // one replayable case, not a flood
  }
  // The corpus must not pass vacuously (judged on complete runs only).
  if (!testing::Test::HasFailure()) {
  EXPECT_GE(reducible, iterations * 4 / 10) << "too few reducible types";
  EXPECT_GE(nonempty_reducible, iterations / 4) << "too few non-empty reducible cases";
  EXPECT_GE(iterations - reducible, iterations / 20) << "too few irreducible types";
  for (const char* e : {"reducible", "irreducible", "unknown"}) {
    EXPECT_GT(expectation[e], 0) << "no type expected " << e;
  }
  }

  if (strata_test::world_rank() == 0) {
    std::printf("\nreducible / irreducible by outermost constructor (seed %llu, %d types, counts 0..5):\n",
                static_cast<unsigned long long>(seed), iterations);
    for (const auto& [name, t] : tally) {
      std::printf("  %-28s %6d reducible %6d irreducible\n", name.c_str(), t.reducible, t.irreducible);
    }
    std::printf("  %-28s %6d reducible %6d irreducible\n", "TOTAL", reducible, iterations - reducible);
    std::printf("  by construction: %d must reduce, %d must not, %d either way\n", expectation["reducible"],
                expectation["irreducible"], expectation["unknown"]);
    int missed = 0;
    for (const auto& [name, n] : g_missed.by_constructor) missed += n;
    std::printf("irreducible although the library's type map is strided (missed reductions, no darray inside): %d\n", missed);
    for (const auto& [name, n] : g_missed.by_constructor) std::printf("  %-28s %6d\n", name.c_str(), n);
    for (const std::string& e : g_missed.examples) std::printf("  e.g. %s\n", e.c_str());
  }
}

}  // namespace
