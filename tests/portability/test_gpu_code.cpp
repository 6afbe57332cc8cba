// gpu::process_carries_gpu_code: a test program carries none (Strata's own
// kernels, linked into it, do not count); a loaded object with a
// .nv_fatbin section does, and so does a library named as the CUDA runtime;
// each is seen when loaded and not after it is unloaded.
#include "portability/gpu/gpu_code.hpp"

#include "base/config.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// gpu::uses_gpus: STRATA_GPU_PROGRAM decides where set; under auto, what
// the program shows (GPUs bound by the launcher, GPU code loaded). The
// variables it reads are cleared first and put back after.
class UsesGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kRead) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v != nullptr ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name, value->c_str(), 1);
      } else {
        unsetenv(name);
      }
    }
    strata::config::load(true);
  }
  static void program(const char* value) {
    setenv("STRATA_GPU_PROGRAM", value, 1);
    strata::config::load(true);
  }
  static constexpr const char* kRead[] = {"STRATA_GPU_PROGRAM", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                                          "ROCR_VISIBLE_DEVICES"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST_F(UsesGpus, TheSettingDecidesWhereSet) {
  std::string why;
  program("on");
  EXPECT_TRUE(strata::gpu::uses_gpus(&why));
  EXPECT_EQ(why, "STRATA_GPU_PROGRAM=on");
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  program("off");
  EXPECT_FALSE(strata::gpu::uses_gpus(&why));
  EXPECT_EQ(why, "STRATA_GPU_PROGRAM=off");
}

TEST_F(UsesGpus, AutoFollowsWhatTheProgramShows) {
  std::string why;
  program("auto");
  EXPECT_FALSE(strata::gpu::uses_gpus(&why)) << why;  // this test program: no GPU use
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    setenv(name, "1", 1);
    EXPECT_TRUE(strata::gpu::uses_gpus(&why)) << name;
    EXPECT_EQ(why, "GPUs bound by the launcher");
    setenv(name, "", 1);  // set but empty: bound to nothing
    EXPECT_FALSE(strata::gpu::uses_gpus()) << name;
    unsetenv(name);
  }
  void* h = load(STRATA_TEST_RUNTIME_MODULE);
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(strata::gpu::uses_gpus(&why));
  EXPECT_NE(why.find("libcudart.so"), std::string::npos) << why;
  dlclose(h);
  EXPECT_FALSE(strata::gpu::uses_gpus());
}

}  // namespace
