// A sliding window of the last N values (a ring) and the learned typical
// duration per operation kind and size class, which scales the hang
// threshold: max(factor x typical, floor).
#pragma once

#include "fault/op_kind.hpp"
#include "fault/stats/robust.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::fault::stats {

class Window {
 public:
  explicit Window(size_t capacity = 64) : capacity_(capacity) {}
  void add(double v) {
    if (values_.size() < capacity_) {
      values_.push_back(v);
    } else {
      values_[next_] = v;
      next_ = (next_ + 1) % capacity_;
    }
  }
  size_t size() const { return values_.size(); }
  const std::vector<double>& values() const { return values_; }
  Robust robust() const { return stats::robust(values_); }
  double median() const { return stats::median(values_); }

 private:
  size_t capacity_;
  size_t next_ = 0;
  std::vector<double> values_;
};

class TypicalDurations {
 public:
  void add(OpKind kind, uint64_t bytes, int64_t duration_ns) {
    cell(kind, bytes).add(static_cast<double>(duration_ns));
  }
  // The median of the recent durations of this kind and size class, or -1
  // with fewer than `min_samples`.
  double typical_ns(OpKind kind, uint64_t bytes, size_t min_samples = 8) const {
    const Window& w = cells_[static_cast<size_t>(kind)][static_cast<size_t>(size_class(bytes))];
    return w.size() >= min_samples ? w.median() : -1;
  }

 private:
  Window& cell(OpKind kind, uint64_t bytes) {
    return cells_[static_cast<size_t>(kind)][static_cast<size_t>(size_class(bytes))];
  }
  std::array<std::array<Window, kSizeClasses>, static_cast<size_t>(OpKind::count_)> cells_;
};

}  // namespace strata::fault::stats
