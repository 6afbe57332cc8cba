// Pooled host staging buffers for packed messages: no malloc on the hot path
// once the pool is warm. Buffers come in power-of-two size classes; released
// buffers are kept up to STRATA_HOST_POOL_BYTES in total.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::interposer {

class HostStaging {
 public:
  HostStaging() = default;
  // An empty buffer (data() == nullptr) when the allocation failed.
  static HostStaging acquire(int64_t bytes);
  HostStaging(HostStaging&& other) noexcept;
  HostStaging& operator=(HostStaging&& other) noexcept;
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  ~HostStaging();

  char* data() const { return data_; }
  explicit operator bool() const { return data_ != nullptr; }
  // Gives up ownership without freeing (for a buffer MPI may still touch).
  void leak() { data_ = nullptr; }

 private:
  HostStaging(char* data, int size_class) : data_(data), size_class_(size_class) {}
  void release();
  char* data_ = nullptr;
  int size_class_ = -1;
};

// Frees every cached buffer (MPI_Finalize, tests).
void trim_host_staging();

}  // namespace strata::interposer
