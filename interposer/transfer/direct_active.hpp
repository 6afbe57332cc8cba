// Whether descriptors of the device-direct transport (direct.hpp) can
// arrive: then no receive passes straight to the library, host ones
// included. A plain load, for the exported functions' pass-throughs.
#pragma once

#include <atomic>

namespace strata::interposer::device_direct {

extern std::atomic<bool> g_active;
inline bool active() noexcept { return g_active.load(std::memory_order_relaxed); }

}  // namespace strata::interposer::device_direct
