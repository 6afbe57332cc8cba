#include "fault/recorder/requests.hpp"

#include <vector>

namespace strata::fault {
namespace {

size_t hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return static_cast<size_t>(k);
}

}  // namespace

size_t RequestTable::probe(uint64_t key) const {
  size_t i = hash(key) & (kCapacity - 1);
  for (size_t n = 0; n < kCapacity; ++n, i = (i + 1) & (kCapacity - 1)) {
    const Entry& e = entries_[i];
    if (e.key == key && !e.tombstone) return i;
    if (e.key == 0 && !e.tombstone) return kCapacity;
  }
  return kCapacity;
}

bool RequestTable::put(MPI_Request request, uint64_t record) {
  const uint64_t key = key_of(request);
  if (key == 0 || key == key_of(MPI_REQUEST_NULL)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (used_ >= kCapacity * 3 / 4) {  // rebuild without tombstones, or give up when really full
    if (size_.load(std::memory_order_relaxed) >= kCapacity / 2) return false;
    std::vector<Entry> live;
    live.reserve(size_.load(std::memory_order_relaxed));
    for (Entry& e : entries_) {
      if (e.key != 0 && !e.tombstone) live.push_back(e);
      e = Entry{};
    }
    used_ = 0;
    for (size_t j = 0; j < live.size(); ++j) {
      size_t i = hash(live[j].key) & (kCapacity - 1);
      while (entries_[i].key != 0) i = (i + 1) & (kCapacity - 1);
      entries_[i] = live[j];
      ++used_;
    }
  }
  if (const size_t at = probe(key); at != kCapacity) {  // a stale entry for a reused handle
    entries_[at].record = record;
    return true;
  }
  size_t i = hash(key) & (kCapacity - 1);
  while (entries_[i].key != 0 && !entries_[i].tombstone) i = (i + 1) & (kCapacity - 1);
  if (entries_[i].key == 0) ++used_;
  entries_[i] = Entry{key, record, false};
  size_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool RequestTable::take(MPI_Request request, uint64_t* record) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t at = probe(key_of(request));
  if (at == kCapacity) return false;
  *record = entries_[at].record;
  entries_[at].tombstone = true;
  size_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

bool RequestTable::find(MPI_Request request, uint64_t* record) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t at = probe(key_of(request));
  if (at == kCapacity) return false;
  *record = entries_[at].record;
  return true;
}

size_t RequestTable::snapshot(uint64_t* records, size_t max) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const Entry& e : entries_) {
    if (n == max) break;
    if (e.key != 0 && !e.tombstone) records[n++] = e.record;
  }
  return n;
}

}  // namespace strata::fault
