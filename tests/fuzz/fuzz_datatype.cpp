// libFuzzer target: the input's bytes build an MPI datatype tree (the
// generator of random_datatype.hpp with every construction decision read
// from the input: named, contiguous, (h)vector with negative and zero
// strides, (h)indexed(_block), struct, subarray, resized, dup, darray,
// nested), which is committed and checked against the MPI library by
// pack_oracle.hpp: canonical form against the library's type map, pack and
// unpack byte-identical to PMPI_Pack/PMPI_Unpack, guard bytes untouched.
// A failed check prints the type and aborts, so libFuzzer keeps the input.
//
// Built two ways: fuzz_datatype (clang, -fsanitize=fuzzer: explores) and
// fuzz_datatype_replay (any compiler, replay_main.cpp: runs the seed corpus
// and every saved crash in tests/fuzz/regressions as a ctest).
#include "interposer/pack_oracle.hpp"
#include "interposer/random_datatype.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);  // a singleton: no mpirun needed
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int count = data[0] % 6;  // counts 0..5, as in the property test
  strata_test::RandomDatatypeGenerator gen(data + 1, size - 1);
  const strata_test::RandomType rt = gen.next();
  strata_test::check_pack_case(rt, count, gen.rng(), [&](const std::string& failure) {
    std::fprintf(stderr, "fuzz_datatype: %s\n  type: %s, count %d [expect %s]\n", failure.c_str(),
                 rt.description.c_str(), count, strata_test::to_string(rt.expect));
    std::abort();
  });
  return 0;
}
