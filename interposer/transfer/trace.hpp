// One debug line per intercepted call saying which path it took
// (STRATA_LOG=debug), and the pass-through counter.
#pragma once

#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/plan.hpp"

namespace strata::interposer {

inline void trace_plan(const char* call, const char* side, const Plan& plan) {
  if (plan.path == Path::library) {
    STRATA_LOG(debug, kP2p, "%s %s: library (%s)", call, side, plan.reason);
  } else {
    STRATA_LOG(debug, kP2p, "%s %s: strata host pack, %lld bytes in %lld blocks of %lld", call, side,
               static_cast<long long>(plan.bytes), static_cast<long long>(plan.layout.block().block_count()),
               static_cast<long long>(plan.layout.block().block));
  }
}

}  // namespace strata::interposer
