// Property test of strata::pack / strata::unpack against the MPI library's
// own PMPI_Pack / PMPI_Unpack on thousands of seeded random datatypes (see
// random_datatype.hpp) and counts 0..5; what each case checks is
// pack_oracle.hpp (shared with the fuzzer, tests/fuzz).
// Each rank runs its own corpus (seed + rank). Replay a failure with
// STRATA_TEST_SEED=<seed printed> (rank 0 uses the seed itself);
// STRATA_TEST_ITERATIONS sets the corpus size.
#include "../pack_oracle.hpp"
#include "../random_datatype.hpp"
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

constexpr uint64_t kDefaultSeed = 0xDA7A7E57ull;

struct Tally {
  int reducible = 0;
  int irreducible = 0;
};

strata_test::MissedReductions g_missed;

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
    const bool r = strata_test::check_pack_case(
        rt, count, gen.rng(), [](const std::string& failure) { ADD_FAILURE() << failure; }, &g_missed);
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
    std::printf("irreducible although the library's type map is strided (missed reductions, no darray inside): %d\n",
                missed);
    for (const auto& [name, n] : g_missed.by_constructor) std::printf("  %-28s %6d\n", name.c_str(), n);
    for (const std::string& e : g_missed.examples) std::printf("  e.g. %s\n", e.c_str());
  }
}

}  // namespace
