// One (datatype, count) case of Strata's datatype engine checked against the
// MPI library's own type map, PMPI_Pack and PMPI_Unpack, with guard bytes
// and poisoned outputs. Shared by the property test (GoogleTest reports the
// failures) and the fuzzer (a failure aborts, so libFuzzer keeps the input):
//   - describe_datatype's sizes and extents equal the library's;
//   - a reducible type's canonical block is the library's type map, its
//     pack is byte-identical to PMPI_Pack, a too-small output is refused
//     with nothing written, its unpack writes exactly what PMPI_Unpack does;
//   - an irreducible type is reported as such and nothing is written;
//   - what the construction guarantees (random_datatype.hpp) holds.
#pragma once

#include "random_datatype.hpp"

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace strata_test {

// Types the engine hands to the library although their bytes form a strided
// block (informational; types containing a darray, irreducible by policy,
// are not counted).
struct MissedReductions {
  std::map<std::string, int> by_constructor;
  std::vector<std::string> examples;  // the shortest few
};

// Called once per failed check with what went wrong.
using CheckFailure = std::function<void(const std::string&)>;

// Returns whether the engine took the type. `rng` fills the buffers.
bool check_pack_case(const RandomType& rt, int count, std::mt19937_64& rng, const CheckFailure& fail,
                     MissedReductions* missed = nullptr);

}  // namespace strata_test
