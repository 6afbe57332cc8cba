// The recorder's clock: CLOCK_MONOTONIC in nanoseconds (a vDSO call, no
// system call). Ranks on one node share it; across nodes the agent
// estimates each rank's offset to the coordinator (oob/ping) and the
// coordinator corrects arrival times by it.
#pragma once

#include <cstdint>
#include <ctime>

namespace strata::fault {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace strata::fault
