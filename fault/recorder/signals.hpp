// Fatal signals (SEGV, BUS, FPE, ILL, ABRT, TERM): write the flight record
// with the async-signal-safe writer, then hand the signal to whoever
// handled it before (Open MPI's own handler, or the default action).
#pragma once

namespace strata::fault {

void install_signal_handlers();

}  // namespace strata::fault
