// The flight recorder's device timer (strata::fault::DeviceTimer) on the
// GPU runtime: a mark is a timing event recorded on the call's stream,
// taken from a pool; the watchdog's elapsed() queries the end event and,
// once it has completed, returns both events to the pool. Installed once
// per process when a collectives context is created and a GPU is visible
// (fault/ includes no device header, so this layer supplies it).
#pragma once

namespace strata::coll {

void install_device_timer() noexcept;

}  // namespace strata::coll
