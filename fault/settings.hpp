// The fault detection settings in effect (from the STRATA_FAULT_*
// variables, read once by the runtime; see runtime.cpp for each one's help).
#pragma once

#include "fault/detect/slow_params.hpp"

#include <cstdint>
#include <string>

namespace strata::fault {

enum class Action { report, abort, exclude };
const char* to_string(Action a);

struct Settings {
  int64_t tick_ns = 100000000;         // agent period (heartbeats, scans)
  int64_t hang_floor_ns = 3000000000;  // hang threshold: max(factor x typical, floor)
  double hang_factor = 10;
  int64_t heartbeat_timeout_ns = 5000000000;  // silent after this long without a heartbeat
  int64_t probe_period_ns = 1000000000;       // 0: no probes
  uint32_t probe_bytes = 1024;
  int64_t final_timeout_ns = 5000000000;  // how long stop() waits for the other ranks
  SlowParams slow;
  Action action = Action::report;
  int exit_code = 75;
  std::string dir = "strata-fault";
  std::string iface;
};

}  // namespace strata::fault
