// gpu::process_carries_gpu_code: a test program carries none (Strata's own
// kernels, linked into it, do not count); a loaded object with a
// .nv_fatbin section does, and so does a library named as the CUDA runtime;
// each is seen when loaded and not after it is unloaded.
#include "portability/gpu/gpu_code.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

namespace {

class GpuCode : public ::testing::Test {};

void* load(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(h, nullptr) << path << ": " << dlerror();
  return h;
}

TEST_F(GpuCode, ThisProgramCarriesNone) {
  std::string what = "unset";
  EXPECT_FALSE(strata::gpu::process_carries_gpu_code(&what)) << what;
  EXPECT_EQ(what, "");
}

TEST_F(GpuCode, AnObjectWithDeviceCodeIsSeen) {
  void* h = load(STRATA_TEST_DEVCODE_MODULE);
  ASSERT_NE(h, nullptr);
  std::string what;
  EXPECT_TRUE(strata::gpu::process_carries_gpu_code(&what));
  EXPECT_NE(what.find("devcode"), std::string::npos) << what;
  dlclose(h);
  EXPECT_FALSE(strata::gpu::process_carries_gpu_code());
}

// Strata opens NCCL itself (collectives/nccl) in every program: its device
// code is not the program's (the bug: every host program under the preload
// turned the device-direct transport on, a GPU context at MPI_Init).
TEST_F(GpuCode, NcclThatStrataLoadsIsNotTheProgramsCode) {
  void* h = load(STRATA_TEST_FAKE_NCCL_MODULE);
  ASSERT_NE(h, nullptr);
  std::string what;
  EXPECT_FALSE(strata::gpu::process_carries_gpu_code(&what)) << what;
  dlclose(h);
}

TEST_F(GpuCode, ARuntimeLibraryIsSeenByName) {
  void* h = load(STRATA_TEST_RUNTIME_MODULE);
  ASSERT_NE(h, nullptr);
  std::string what;
  EXPECT_TRUE(strata::gpu::process_carries_gpu_code(&what));
  EXPECT_NE(what.find("libcudart.so"), std::string::npos) << what;
  dlclose(h);
  EXPECT_FALSE(strata::gpu::process_carries_gpu_code());
}

}  // namespace
