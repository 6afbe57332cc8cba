// Thresholds shared by the fail-slow detectors.
#pragma once

#include "fault/stats/cusum.hpp"

#include <cstdint>

namespace strata::fault {

struct SlowParams {
  double min_shift_ns = 1e7;  // shifts up to this never count (STRATA_FAULT_SLOW_MIN_US)
  double rel_shift = 0.5;     // ... nor up to this fraction of the typical value (STRATA_FAULT_SLOW_REL_PCT)
  stats::CusumParams cusum;   // k, h (STRATA_FAULT_CUSUM_H)
  double dominance = 0.75;    // ranks alarmed together: keep those within this fraction of the worst
};

}  // namespace strata::fault
