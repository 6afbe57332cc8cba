#include "interposer/transfer/host_staging.hpp"

#include "base/config.hpp"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace strata::interposer {
namespace {

config::IntParam g_pool_bytes{"STRATA_HOST_POOL_BYTES", int64_t{256} << 20,
                              "Most bytes of host staging buffers kept for reuse", 0, INT64_MAX, true};

constexpr int kMinClass = 12;  // 4 KiB
constexpr int kClasses = 48;

struct Pool {
  std::mutex mutex;
  std::vector<char*> free[kClasses];
  int64_t cached_bytes = 0;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: buffers may be released at exit
  return *p;
}

int size_class(int64_t bytes) {
  int c = kMinClass;
  while (c < kClasses - 1 && (int64_t{1} << c) < bytes) ++c;
  return c;
}

}  // namespace

HostStaging HostStaging::acquire(int64_t bytes) {
  const int c = size_class(bytes < 1 ? 1 : bytes);
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (!p.free[c].empty()) {
      char* data = p.free[c].back();
      p.free[c].pop_back();
      p.cached_bytes -= int64_t{1} << c;
      return HostStaging(data, c);
    }
  }
  void* data = nullptr;
  if (posix_memalign(&data, 64, static_cast<size_t>(int64_t{1} << c)) != 0) return HostStaging();
  return HostStaging(static_cast<char*>(data), c);
}

HostStaging::HostStaging(HostStaging&& other) noexcept : data_(other.data_), size_class_(other.size_class_) {
  other.data_ = nullptr;
}

HostStaging& HostStaging::operator=(HostStaging&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_class_ = other.size_class_;
    other.data_ = nullptr;
  }
  return *this;
}

HostStaging::~HostStaging() { release(); }

void HostStaging::release() {
  if (data_ == nullptr) return;
  Pool& p = pool();
  const int64_t bytes = int64_t{1} << size_class_;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.cached_bytes + bytes <= g_pool_bytes.get()) {
      try {
        p.free[size_class_].push_back(data_);
        p.cached_bytes += bytes;
        data_ = nullptr;
        return;
      } catch (...) {  // no room to remember it: free it below
      }
    }
  }
  std::free(data_);
  data_ = nullptr;
}

void trim_host_staging() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (auto& list : p.free) {
    for (char* d : list) std::free(d);
    list.clear();
  }
  p.cached_bytes = 0;
}

}  // namespace strata::interposer
