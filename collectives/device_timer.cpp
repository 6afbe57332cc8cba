#include "collectives/device_timer.hpp"

#include "portability/gpu/gpu_api.hpp"

#include <strata/fault.hpp>

#include <cstdint>
#include <mutex>
#include <vector>

namespace strata::coll {
namespace {

// Events are reused: creating one costs more than recording it. The pool
// only grows to the number of marks outstanding at once (bounded by the
// flight recorder's ring).
struct EventPool {
  std::mutex mutex;
  std::vector<gpu::Event> free;

  gpu::Event take() noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!free.empty()) {
        gpu::Event e = free.back();
        free.pop_back();
        return e;
      }
    }
    gpu::Event e = nullptr;
    return gpu::event_create(&e, true) == Status::ok ? e : nullptr;
  }
  void give(gpu::Event e) noexcept {
    if (e == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex);
    try {
      free.push_back(e);
    } catch (...) {
      gpu::event_destroy(e);
    }
  }
};

EventPool& pool() {
  static auto* p = new EventPool();  // never destroyed: marks may be resolved during exit
  return *p;
}

void* mark(void* stream, void* /*user*/) {
  // A call captured in a graph runs later, at each replay: nothing to time now.
  bool capturing = false;
  if (gpu::is_capturing(stream, &capturing) != Status::ok || capturing) return nullptr;
  gpu::Event e = pool().take();
  if (e == nullptr) return nullptr;
  if (gpu::event_record(e, stream) != Status::ok) {
    pool().give(e);
    return nullptr;
  }
  return e;
}

int elapsed(void* begin, void* end, int64_t* ns, void* /*user*/) {
  if (begin == nullptr || end == nullptr) {
    pool().give(begin);
    pool().give(end);
    return -1;
  }
  bool done = false;
  if (gpu::event_query(end, &done) != Status::ok) done = false;
  if (!done) return 0;
  float ms = 0;
  const bool ok = gpu::event_elapsed_ms(begin, end, &ms) == Status::ok;
  pool().give(begin);
  pool().give(end);
  if (!ok) return -1;
  *ns = static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  return 1;
}

}  // namespace

void install_device_timer() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!gpu::available()) return;
    static const fault::DeviceTimer timer{mark, elapsed, nullptr};
    fault::set_device_timer(&timer);
  });
}

}  // namespace strata::coll
