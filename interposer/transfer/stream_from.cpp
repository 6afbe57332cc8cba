#include "interposer/transfer/stream_from.hpp"

#include "base/config.hpp"

namespace strata::interposer {
namespace {

config::IntParam g_stream_from{
    "STRATA_DEVICE_STREAM_FROM",
    int64_t{8} << 20,
    "Device messages of at least this many packed bytes move one by one as they come: a flush of deferred sends "
    "packs and posts each on its own, and an MPI_Waitall over two or more such receives finishes each as it "
    "arrives, its unpack launched at once, so the receiver unpacks one while the sender packs the next. Measured "
    "on 2 x H100 (windows of 16 vectors of 8-byte blocks, docs/device.md): 16 MiB 143 -> 206 GB/s, 64 MiB 112 -> "
    "124-154, 4 MiB 174 -> 157-163 (streamed from 1 MiB); on 2 x H200 from 8 MiB: 8 MiB 167-169 -> 196-197, "
    "4 MiB unchanged (hence the default)",
    1,
    INT64_MAX,
    true};

}  // namespace

int64_t stream_from() noexcept { return g_stream_from.get(); }

}  // namespace strata::interposer
