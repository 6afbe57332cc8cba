// A sliding window of the last N values (a ring), the same with times, and
// the learned typical duration per operation kind and size class, which
// scales the hang threshold: max(factor x typical, floor).
#pragma once

#include "fault/op_kind.hpp"
#include "fault/stats/robust.hpp"

#include <algorithm>
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

// The last N values with the time of each, for comparing what several
// series did over the same period.
class TimedWindow {
 public:
  explicit TimedWindow(size_t capacity) : capacity_(capacity) {}
  void add(int64_t t_ns, double v) {
    if (values_.size() < capacity_) {
      values_.push_back(v);
      times_.push_back(t_ns);
    } else {
      values_[next_] = v;
      times_[next_] = t_ns;
      next_ = (next_ + 1) % capacity_;
    }
  }
  // The values whose times lie in [from_ns, to_ns].
  struct Span {
    double sum = 0;
    size_t count = 0;
    int64_t first_ns = 0, last_ns = 0;  // their earliest and latest times
    double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0; }
  };
  Span between(int64_t from_ns, int64_t to_ns) const {
    Span s;
    for (size_t i = 0; i < values_.size(); ++i) {
      if (times_[i] < from_ns || times_[i] > to_ns) continue;
      s.first_ns = s.count == 0 ? times_[i] : std::min(s.first_ns, times_[i]);
      s.last_ns = s.count == 0 ? times_[i] : std::max(s.last_ns, times_[i]);
      s.sum += values_[i];
      ++s.count;
    }
    return s;
  }

 private:
  size_t capacity_;
  size_t next_ = 0;
  std::vector<double> values_;
  std::vector<int64_t> times_;
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
