#include "fault/stats/cusum.hpp"

namespace strata::fault::stats {

bool Cusum::update(double z, uint64_t tag) {
  const double next = s_ + z - p_.k;
  if (next <= 0) {
    s_ = 0;
    run_start_ = 0;
    return false;
  }
  if (s_ == 0) run_start_ = tag;
  s_ = next;
  return s_ >= p_.h;
}

}  // namespace strata::fault::stats
