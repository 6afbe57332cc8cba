// One-sided CUSUM change-point test on scores (robust_z): S = max(0, S + z
// - k), an alarm when S >= h. With the defaults (k = 2, h = 7, scores
// clipped at 4, a shift of min_shift scoring 2) an alarm needs at least
// four consecutive samples at twice the minimum shift or more, seven at
// 1.5 times; shifts up to min_shift never alarm and isolated outliers,
// however large, decay away.
#pragma once

#include <cstdint>

namespace strata::fault::stats {

struct CusumParams {
  double k = 2.0;  // allowance: scores at or below k only drain S
  double h = 7.0;  // threshold
};

class Cusum {
 public:
  explicit Cusum(CusumParams params = {}) : p_(params) {}

  // Adds one score; true when S reaches h (every sample while it stays there).
  // `tag` (a sample's sequence number, time, ...) is kept for the start of the run.
  bool update(double z, uint64_t tag = 0);
  void reset() {
    s_ = 0;
    run_start_ = 0;
  }
  double value() const { return s_; }
  bool alarmed() const { return s_ >= p_.h; }
  // Tag of the first sample of the run that raised S from 0.
  uint64_t run_start() const { return run_start_; }

 private:
  CusumParams p_;
  double s_ = 0;
  uint64_t run_start_ = 0;
};

}  // namespace strata::fault::stats
