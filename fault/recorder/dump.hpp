// This rank's flight record as JSON lines (docs/fault.md, "Dump format"):
// a header, the communicators, every record still in the ring, oldest
// first. Written to a temporary name and renamed, so a reader never sees
// half a file. Async-signal-safe: the fatal-signal handler calls it.
#pragma once

namespace strata::fault {

// 0 on success, else an errno value. A dump already in progress on another
// thread makes this one return EBUSY.
int write_dump(const char* reason);

}  // namespace strata::fault
