// strata::kokkos::pack / unpack: the kernel choice and the launches of
// pack_kernels.hpp on the caller's execution-space instance. On CUDA and
// HIP spaces the automatic choice is Strata's native kernels on the
// space's stream (measured faster than the Kokkos launch of the same index
// math: bench/results/kokkos-h200.md), the Kokkos kernel where this build
// of Strata has no matching GPU backend.
#include "portability/kokkos/compat.hpp"
#include "portability/kokkos/pack_kernels.hpp"
#include "portability/kokkos/spaces.hpp"
#include "portability/kokkos/testing.hpp"

#include "base/log.hpp"

#include <strata/device.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>

namespace strata::kokkos {
namespace detail {
namespace {

std::atomic<bool> g_force_wide{false};

using strata::detail::FastDivisor;
using strata::detail::StridedIndex;
constexpr int kMaxDims = StridedIndex::kMaxDims;

// Host engine: packed bytes per work item, at least, so that a range is
// worth a task; a single-threaded space gets the whole stream as one range.
constexpr int64_t kMinChunkBytes = int64_t{256} << 10;

// The word the device kernel moves: the lowest set bit of the block length,
// every block start in `base` and the packed pointer, capped at 16 (the
// rule of the native kernels' plan, portability/gpu/pack_plan.cpp).
int word_of(const StridedBlock& layout, const void* base, const void* packed) {
  uint64_t bits = static_cast<uint64_t>(layout.block) | reinterpret_cast<uintptr_t>(packed) |
                  (reinterpret_cast<uintptr_t>(base) + static_cast<uint64_t>(layout.offset));
  for (const Stream& d : layout.dims) {
    if (d.count > 1) bits |= static_cast<uint64_t>(d.stride);
  }
  const uint64_t low = bits & (~bits + 1);
  return low == 0 || low >= 16 ? 16 : static_cast<int>(low);
}

template <class ExecSpace, Dir D, class W>
void launch_words(const ExecSpace& space, const WordArgs& a) {
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int64_t>>;
  if (a.items <= int64_t{UINT32_MAX} && !g_force_wide.load(std::memory_order_relaxed)) {
    Kokkos::parallel_for("strata::kokkos::words32", Policy(space, 0, a.lanes), WordCopy<D, W, true>{a});
  } else {
    Kokkos::parallel_for("strata::kokkos::words64", Policy(space, 0, a.lanes), WordCopy<D, W, false>{a});
  }
}

// One launch over `blocks` blocks of the (at most kMaxDims-dimensional)
// sub-block `dims` at byte `offset` of `user`, packed bytes at `packed`.
template <class ExecSpace, Dir D>
void words_once(const ExecSpace& space, int word, int64_t offset, const Stream* dims, int nd, int64_t block,
                int64_t blocks, char* user, char* packed) {
  WordArgs a;
  a.index.offset = offset;
  a.index.block = block;
  a.index.ndims = nd;
  for (int d = 0; d < nd; ++d) a.index.dims[d] = dims[d];
  a.words = block / word;
  a.items = blocks * a.words;
  if (a.items <= int64_t{UINT32_MAX}) {
    for (int d = 0; d + 1 < nd; ++d) {
      a.count_div[d] = strata::detail::make_fast_divisor(static_cast<uint32_t>(dims[d].count));
    }
    a.word_div = strata::detail::make_fast_divisor(static_cast<uint32_t>(a.words));
  }
  a.user = user;
  a.packed = packed;
  const int unroll = word >= 16 ? 2 : 4;
  a.lanes = (a.items + unroll - 1) / unroll;
  switch (word) {
    case 1: launch_words<ExecSpace, D, uint8_t>(space, a); break;
    case 2: launch_words<ExecSpace, D, uint16_t>(space, a); break;
    case 4: launch_words<ExecSpace, D, uint32_t>(space, a); break;
    case 8: launch_words<ExecSpace, D, uint64_t>(space, a); break;
    default: launch_words<ExecSpace, D, Word16>(space, a); break;
  }
}

template <class ExecSpace, Dir D>
void run_words(const ExecSpace& space, const StridedBlock& layout, char* user, char* packed) {
  const int word = word_of(layout, user, packed);
  const int nd = static_cast<int>(layout.dims.size());
  if (nd <= kMaxDims) {
    words_once<ExecSpace, D>(space, word, layout.offset, layout.dims.data(), nd, layout.block, layout.block_count(),
                             user, packed);
    return;
  }
  // More dimensions than a launch takes: one launch per sub-block of the
  // inner kMaxDims dimensions, placed by the outer ones (shared index math).
  int64_t sub = 1;
  for (int d = 0; d < kMaxDims; ++d) sub *= layout.dims[static_cast<size_t>(d)].count;
  const Stream* outer = layout.dims.data() + kMaxDims;
  const int outer_nd = nd - kMaxDims;
  int64_t outer_blocks = 1;
  for (int d = 0; d < outer_nd; ++d) outer_blocks *= outer[d].count;
  for (int64_t k = 0; k < outer_blocks; ++k) {
    const int64_t offset = strata::detail::block_offset(layout.offset, outer, outer_nd, k);
    words_once<ExecSpace, D>(space, word, offset, layout.dims.data(), kMaxDims, layout.block, sub, user,
                             packed + k * sub * layout.block);
  }
}

template <class ExecSpace, Dir D>
void run_host_engine(const ExecSpace& space, const StridedBlock& layout, char* user, char* packed) {
  if constexpr (runs_on_host<ExecSpace>()) {
    const int64_t total = layout.packed_bytes();
    const int64_t threads = std::max(1, static_cast<int>(space.concurrency()));
    int64_t chunk = total;
    if (threads > 1) chunk = std::max(kMinChunkBytes, (total + 4 * threads - 1) / (4 * threads));
    const int64_t chunks = (total + chunk - 1) / chunk;
    if (chunks == 1) {  // nothing to spread: the engine itself, no launch
      if (D == Dir::pack) {
        pack_host(layout, user, packed);
      } else {
        unpack_host(layout, packed, user);
      }
      return;
    }
    HostChunks<D> f{std::make_shared<const StridedBlock>(layout), user, packed, chunk, total};
    Kokkos::parallel_for("strata::kokkos::host_engine",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int64_t>>(space, 0, chunks), f);
  }
}

// The native kernels (portability/gpu) on the space's stream: not_supported
// for host spaces, for spaces without a stream Strata's kernels can use, and
// where Strata was built without the space's GPU backend.
template <class ExecSpace, Dir D>
Status run_native(const ExecSpace& space, const StridedBlock& layout, char* user, char* packed) noexcept {
  void* stream = nullptr;  // the default stream may be null: `found` says whether there is one
  bool found = false;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    stream = space.cuda_stream();
    found = true;
  }
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
  if constexpr (std::is_same<ExecSpace, Kokkos::HIP>::value) {
    stream = space.hip_stream();
    found = true;
  }
#endif
  (void)space;
  if (!found) return Status::not_supported;
  return D == Dir::pack ? device::pack(layout, user, packed, stream) : device::unpack(layout, packed, user, stream);
}

template <class ExecSpace, Dir D>
Status run(const ExecSpace& space, const StridedBlock& layout, char* user, char* packed,
           const PackOptions& options) noexcept {
  if (layout.block < 0) {
    STRATA_LOG(error, kLayout, "kokkos %s: negative block length %lld", D == Dir::pack ? "pack" : "unpack",
               static_cast<long long>(layout.block));
    return Status::invalid_argument;
  }
  for (const Stream& d : layout.dims) {
    if (d.count < 0) {
      STRATA_LOG(error, kLayout, "kokkos %s: negative count in %s", D == Dir::pack ? "pack" : "unpack",
                 layout.to_string().c_str());
      return Status::invalid_argument;
    }
  }
  if (layout.empty()) return Status::ok;
  if (user == nullptr || packed == nullptr) {
    STRATA_LOG(error, kLayout, "kokkos %s: null buffer for %lld bytes", D == Dir::pack ? "pack" : "unpack",
               static_cast<long long>(layout.packed_bytes()));
    return Status::invalid_argument;
  }
  Kernel kernel = options.kernel;
  if (kernel == Kernel::automatic && !runs_on_host<ExecSpace>()) {
    const Status native = run_native<ExecSpace, D>(space, layout, user, packed);
    if (native != Status::not_supported) return native;
  }
  if (kernel == Kernel::automatic) kernel = runs_on_host<ExecSpace>() ? Kernel::host_engine : Kernel::words;
  if (kernel == Kernel::host_engine && !runs_on_host<ExecSpace>()) {
    STRATA_LOG(error, kLayout, "kokkos pack: the host engine cannot run on execution space %s", ExecSpace::name());
    return Status::not_supported;
  }
  try {
    if (kernel == Kernel::host_engine) {
      run_host_engine<ExecSpace, D>(space, layout, user, packed);
    } else {
      run_words<ExecSpace, D>(space, layout, user, packed);
    }
  } catch (const std::bad_alloc&) {
    STRATA_LOG(error, kLayout, "kokkos pack: out of memory");
    return Status::out_of_memory;
  } catch (const std::exception& e) {
    STRATA_LOG(error, kLayout, "kokkos pack on %s failed: %s", ExecSpace::name(), e.what());
    return runs_on_host<ExecSpace>() ? Status::internal : Status::device_error;
  }
  return Status::ok;
}

}  // namespace

void set_force_wide_index(bool force) noexcept { g_force_wide.store(force, std::memory_order_relaxed); }

}  // namespace detail

template <class ExecSpace>
Status pack(const ExecSpace& space, const StridedBlock& layout, const void* base, void* packed,
            const PackOptions& options) noexcept {
  return detail::run<ExecSpace, detail::Dir::pack>(space, layout, const_cast<char*>(static_cast<const char*>(base)),
                                                   static_cast<char*>(packed), options);
}

template <class ExecSpace>
Status unpack(const ExecSpace& space, const StridedBlock& layout, const void* packed, void* base,
              const PackOptions& options) noexcept {
  return detail::run<ExecSpace, detail::Dir::unpack>(space, layout, static_cast<char*>(base),
                                                     const_cast<char*>(static_cast<const char*>(packed)), options);
}

#define STRATA_KOKKOS_INSTANTIATE_PACK(Space)                                                     \
  template STRATA_API Status pack<Space>(const Space&, const StridedBlock&, const void*, void*,   \
                                         const PackOptions&) noexcept;                            \
  template STRATA_API Status unpack<Space>(const Space&, const StridedBlock&, const void*, void*, \
                                           const PackOptions&) noexcept;
STRATA_KOKKOS_FOR_EACH_SPACE(STRATA_KOKKOS_INSTANTIATE_PACK)

}  // namespace strata::kokkos
