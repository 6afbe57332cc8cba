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
  } else if (plan.path == Path::device_span) {
    STRATA_LOG(debug, kP2p, "%s %s: %s, bytes [%lld,%lld) of GPU %d", call, side, to_string(plan.path),
               static_cast<long long>(plan.span.lo), static_cast<long long>(plan.span.hi), plan.device);
  } else {
    STRATA_LOG(debug, kP2p, "%s %s: %s%s%s, %lld bytes in %lld blocks of %lld", call, side, to_string(plan.path),
               plan.path == Path::device_pack ? ", method " : "",
               plan.path == Path::device_pack ? to_string(plan.method) : "", static_cast<long long>(plan.bytes),
               static_cast<long long>(plan.layout.block().block_count()),
               static_cast<long long>(plan.layout.block().block));
  }
}

}  // namespace strata::interposer
