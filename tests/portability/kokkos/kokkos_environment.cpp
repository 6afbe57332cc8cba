// Kokkos around every test program of tests/portability/kokkos: a GoogleTest
// environment initialises Kokkos when RUN_ALL_TESTS starts (after MPI_Init
// in the rank-aware main) and finalises it when the tests are done (before
// MPI_Finalize), so the mains themselves stay Kokkos-free.
#include "portability/kokkos/kokkos_test_util.hpp"

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstdio>

namespace {

class KokkosEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    if (!Kokkos::is_initialized()) Kokkos::initialize();
  }
  void TearDown() override {
    if (Kokkos::is_initialized()) Kokkos::finalize();
  }
};

// Registered at load time: the mains (gtest_main, strata_test_main) know
// nothing of it.
testing::Environment* const g_kokkos_environment = testing::AddGlobalTestEnvironment(new KokkosEnvironment);

}  // namespace
