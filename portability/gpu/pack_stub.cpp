// Device pack/unpack in a build without CUDA or HIP: nothing to launch on.
// The launch plan (pack_plan.cpp) is still built and tested everywhere.
//
// Under the device stand-in (STRATA_FAKE_DEVICE, fake_device.hpp) the
// "kernels" are the host engine (strata::pack_host / unpack_host) run at the
// call over host views of the user's and the packed pointers, with the
// kernels' checks (pack_kernels.cu): a block range outside the layout or a
// null packed pointer is invalid_argument, an empty range does nothing, and
// bytes outside a device allocation fail as an illegal access would.
#include "portability/gpu/fake_device.hpp"
#include "portability/gpu/pack_device.hpp"

#include "base/log.hpp"

#include <cinttypes>

namespace strata::gpu {
namespace {

// Blocks [block_begin, block_end) of `layout` between `user` (its base) and
// `packed`, through host views.
Status run(const StridedBlock& layout, char* user, char* packed, Stream stream, int64_t block_begin, int64_t block_end,
           bool pack) noexcept {
  const char* name = pack ? "pack" : "unpack";
  STRATA_TRY(fake::check_stream(stream, name));
  if (layout.block <= 0) return Status::ok;
  const int64_t count = layout.block_count();
  if (count <= 0) return Status::ok;
  if (block_end < 0) block_end = count;
  if (block_begin < 0 || block_begin > block_end || block_end > count) {
    STRATA_LOG(error, kDevice, "device %s: block range [%" PRId64 ", %" PRId64 ") outside the %" PRId64 " blocks", name,
               block_begin, block_end, count);
    return Status::invalid_argument;
  }
  if (block_begin == block_end) return Status::ok;
  if (packed == nullptr) {
    STRATA_LOG(error, kDevice, "device %s: null packed buffer", name);
    return Status::invalid_argument;
  }
  // The user's side: every byte the layout addresses, seen from its lowest
  // one (the layout may start before `user`, with a negative offset or
  // stride); the packed side: the range's bytes.
  const int64_t lo = layout.lowest_byte();
  const int64_t span = layout.highest_byte() - lo;
  const int64_t first = block_begin * layout.block;
  const int64_t last = block_end * layout.block;
  char* u = nullptr;
  char* k = nullptr;
  STRATA_TRY(fake::host_range(user + lo, static_cast<size_t>(span), &u, pack ? "pack (source)" : "unpack (target)"));
  STRATA_TRY(
      fake::host_range(packed, static_cast<size_t>(last - first), &k, pack ? "pack (target)" : "unpack (source)"));
  if (pack) {
    pack_host(layout, u - lo, k, first, last);
  } else {
    unpack_host(layout, k, u - lo, first, last);
  }
  return Status::ok;
}

Status run_batch(const PackJob* jobs, size_t count, Stream stream, bool pack) noexcept {
  if (count == 0) return Status::ok;
  if (!fake::enabled()) return Status::not_supported;
  for (size_t i = 0; i < count; ++i) {
    const PackJob& j = jobs[i];
    STRATA_TRY(run(*j.layout, j.user, j.packed, stream, j.block_begin, j.block_end, pack));
  }
  return Status::ok;
}

}  // namespace

Status pack_async(const StridedBlock& layout, const void* base, void* packed, Stream stream, int64_t block_begin,
                  int64_t block_end) noexcept {
  if (!fake::enabled()) return Status::not_supported;
  return run(layout, const_cast<char*>(static_cast<const char*>(base)), static_cast<char*>(packed), stream, block_begin,
             block_end, true);
}

Status unpack_async(const StridedBlock& layout, const void* packed, void* base, Stream stream, int64_t block_begin,
                    int64_t block_end) noexcept {
  if (!fake::enabled()) return Status::not_supported;
  return run(layout, static_cast<char*>(base), const_cast<char*>(static_cast<const char*>(packed)), stream, block_begin,
             block_end, false);
}

Status pack_batch_async(const PackJob* jobs, size_t count, Stream stream) noexcept {
  return run_batch(jobs, count, stream, true);
}

Status unpack_batch_async(const PackJob* jobs, size_t count, Stream stream) noexcept {
  return run_batch(jobs, count, stream, false);
}

}  // namespace strata::gpu
