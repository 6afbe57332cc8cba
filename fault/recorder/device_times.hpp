// Device-side durations of the sampled collectives, kept beside the ring so
// that only the calling threads ever write ring slots (the ring's single-
// writer mode has no atomic read-modify-write on its hot path).
//
// DeviceMarks: the timer marks of a record, queued by the calling thread
// when the call ends (a few hundred a second at most: the hooks sample by
// STRATA_FAULT_DEVICE_EVERY and STRATA_FAULT_DEVICE_PERIOD_US), drained by
// the watchdog. DeviceTimes: the resolved durations, by record index,
// written by the watchdog alone and read by dumps (async-signal-safe).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace strata::fault {

struct PendingMarks {
  uint64_t index = 0;  // the record
  void* begin = nullptr;
  void* end = nullptr;
};

class DeviceMarks {
 public:
  // False when the marks could not be queued (out of memory): the caller
  // releases them.
  bool push(const PendingMarks& m) noexcept;
  // Moves everything queued to the end of `out`.
  void drain(std::vector<PendingMarks>* out);

 private:
  std::mutex mutex_;
  std::vector<PendingMarks> queue_;
};

class DeviceTimes {
 public:
  static constexpr size_t kEntries = 1024;  // the last this many resolved durations

  // The watchdog thread only.
  void set(uint64_t index, int64_t ns) noexcept;
  // The duration of record `index`, or -1 (none, or no longer kept).
  int64_t find(uint64_t index) const noexcept;

 private:
  struct Entry {
    std::atomic<uint64_t> key{0};  // index + 1; 0 while empty or being written
    std::atomic<int64_t> ns{-1};
  };
  Entry entries_[kEntries];
};

}  // namespace strata::fault
