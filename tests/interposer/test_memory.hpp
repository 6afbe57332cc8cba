// The memory a collectives test program works on, with guards: host memory
// (the program as is) or device memory (compiled with
// STRATA_TEST_DEVICE_MEMORY: support/test_device_memory.hpp's CUDA, or the
// interposer's device stand-in in the CPU build). Buffers are poisoned and
// fenced by guard bytes; EXPECT_BYTES_EQ names the first wrong byte.
// Header only, for test_mpi_collectives.cpp and test_mpi_exchanges.cpp.
#pragma once

#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#if defined(STRATA_TEST_DEVICE_MEMORY)
#include "support/device_per_rank.hpp"
#include "support/test_device_memory.hpp"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace test_memory {

constexpr size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xC3;
constexpr unsigned char kPoison = 0xA5;

#if defined(STRATA_TEST_DEVICE_MEMORY)
inline bool memory_available() { return strata_test::all_ranks_agree(strata_test::test_gpu_count() > 0); }
inline void* raw_alloc(size_t n) { return strata_test::test_device_alloc(n); }
inline void raw_free(void* p) { strata_test::test_device_free(p); }
inline void to_memory(void* dst, const void* src, size_t n) { strata_test::test_device_to(dst, src, n); }
inline void from_memory(void* dst, const void* src, size_t n) { strata_test::test_device_from(dst, src, n); }
#else
inline bool memory_available() { return true; }
inline void* raw_alloc(size_t n) { return std::malloc(n); }
inline void raw_free(void* p) { std::free(p); }
// memcpy needs valid pointers even for 0 bytes (an empty vector's data() is null).
inline void to_memory(void* dst, const void* src, size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}
inline void from_memory(void* dst, const void* src, size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}
#endif

#define REQUIRE_MEMORY()                                             \
  do {                                                               \
    if (!memory_available()) GTEST_SKIP() << "no GPU on every rank"; \
  } while (0)

// A buffer of `bytes` in the memory under test, poisoned, with guards.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : bytes_(bytes), base_(static_cast<char*>(raw_alloc(bytes + 2 * kGuard))) {
    std::vector<unsigned char> init(bytes + 2 * kGuard, kPoison);
    std::fill(init.begin(), init.begin() + kGuard, kGuardByte);
    std::fill(init.end() - kGuard, init.end(), kGuardByte);
    if (base_ != nullptr) to_memory(base_, init.data(), init.size());
  }
  ~Buffer() { raw_free(base_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  bool ok() const { return base_ != nullptr; }
  void* data() const { return base_ + kGuard; }
  void put(const std::vector<char>& host) { to_memory(data(), host.data(), std::min(host.size(), bytes_)); }
  std::vector<char> get() const {
    std::vector<char> h(bytes_);
    from_memory(h.data(), data(), bytes_);
    return h;
  }
  bool guards_intact() const {
    std::vector<unsigned char> all(bytes_ + 2 * kGuard);
    from_memory(all.data(), base_, all.size());
    for (size_t i = 0; i < kGuard; ++i) {
      if (all[i] != kGuardByte || all[all.size() - 1 - i] != kGuardByte) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  char* base_;
};

// Both sides are evaluated once (they are often oracle calls).
#define EXPECT_BYTES_EQ(got, want, what)                                                                  \
  do {                                                                                                    \
    const std::vector<char> got_ = (got);                                                                 \
    const std::vector<char> want_ = (want);                                                               \
    ASSERT_EQ(got_.size(), want_.size()) << what;                                                         \
    const size_t first_bad_ =                                                                             \
        static_cast<size_t>(std::mismatch(got_.begin(), got_.end(), want_.begin()).first - got_.begin()); \
    EXPECT_EQ(first_bad_, got_.size()) << what << ": first wrong byte " << first_bad_;                    \
  } while (0)

}  // namespace test_memory
