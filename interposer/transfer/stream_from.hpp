// Large device messages moved one by one as they come (STRATA_DEVICE_STREAM_FROM).
//
// A window of large strided device messages (osu_bw's pattern, a rank's
// sends to a peer before one MPI_Waitall) went through two passes in turn:
// the sender packed every message of its flush in one launch before posting
// any, and the receiver's MPI_Waitall unpacked none before the last
// descriptor arrived, its unpacks launched together at the end. From this
// size on, each message is packed and posted on its own (deferred_sends),
// an MPI_Waitall over two or more such receives finishes each as it arrives
// (completion), and its unpack is launched at once (sides, direct): the
// receiver unpacks one while the sender packs the next.
#pragma once

#include <cstdint>

namespace strata::interposer {

// Packed bytes from which a device message streams.
int64_t stream_from() noexcept;

}  // namespace strata::interposer
