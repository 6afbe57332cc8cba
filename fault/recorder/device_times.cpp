#include "fault/recorder/device_times.hpp"

namespace strata::fault {

bool DeviceMarks::push(const PendingMarks& m) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    queue_.push_back(m);
    return true;
  } catch (...) {
    return false;
  }
}

void DeviceMarks::drain(std::vector<PendingMarks>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  out->insert(out->end(), queue_.begin(), queue_.end());
  queue_.clear();
}

void DeviceTimes::set(uint64_t index, int64_t ns) noexcept {
  Entry& e = entries_[index % kEntries];
  e.key.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  e.ns.store(ns, std::memory_order_relaxed);
  e.key.store(index + 1, std::memory_order_release);
}

int64_t DeviceTimes::find(uint64_t index) const noexcept {
  const Entry& e = entries_[index % kEntries];
  if (e.key.load(std::memory_order_acquire) != index + 1) return -1;
  const int64_t ns = e.ns.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return e.key.load(std::memory_order_relaxed) == index + 1 ? ns : -1;
}

}  // namespace strata::fault
