// Plain copies on the copy engines between any of host, pinned and device
// memory, each waited for before it returns (on the calling thread's copy
// stream of the device that owns either side, streams.hpp).
#pragma once

#include <strata/status.hpp>

#include "portability/mover/staging.hpp"

#include <cstdint>
#include <utility>

namespace strata::mover {

// Copies `bytes` between any two of host, pinned and device memory.
Status copy_bytes(void* dst, const void* src, int64_t bytes);
// Copies the runs [offset, offset + length) of `src` to the same offsets of
// `dst` (queued together, one wait).
Status copy_runs(char* dst, const char* src, const std::pair<int64_t, int64_t>* runs, size_t count);

// Copies the bytes [lo, hi) of a device buffer into `host` (pinned staging
// it acquires), or back: the span method (method.hpp), and the fallback for
// data the mover cannot pack, which the transport then packs or unpacks on
// the host copy.
Status copy_span_to_host(int device, const char* user, int64_t lo, int64_t hi, Staging* host);
Status copy_span_to_device(int device, const Staging& host, char* user, int64_t lo, int64_t hi);

}  // namespace strata::mover
