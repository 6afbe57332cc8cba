// Every rank of a test program picks its device once, before any device
// allocation: rank r takes device r % n, n the devices visible (the GPUs,
// or the stand-in's STRATA_FAKE_DEVICE), at most STRATA_TEST_GPUS (several
// ranks per device). Including this header registers the choice as a
// GoogleTest global environment.
#pragma once

#include "support/mpi_test.hpp"
#include "support/test_device_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace strata_test {

inline int test_gpu_count() {
  int n = test_device_count();
  if (const char* limit = std::getenv("STRATA_TEST_GPUS")) n = std::min(n, std::atoi(limit));
  return n;
}

class DevicePerRank : public testing::Environment {
 public:
  void SetUp() override {
    const int n = test_gpu_count();
    if (n > 0) test_device_select(world_rank() % n);
  }
};
inline testing::Environment* const g_device_per_rank = testing::AddGlobalTestEnvironment(new DevicePerRank);

}  // namespace strata_test
