// strata::gpu over the CUDA or HIP runtime, one source for both (names from
// runtime_names.hpp). Compiled by nvcc for CUDA; hipcc compiles it for HIP
// (gfx90a). Every runtime return code is checked: a failure is logged once,
// here where it is detected, with the runtime's own message, and becomes
// Status::device_error; callers only propagate. Nothing throws or aborts.
//
// Without a visible device every call answers Status::not_supported (as the
// stub build does), device_count answers 0 and classify answers host, and no
// runtime call is made beyond the one device count behind available().
#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/runtime_names.hpp"

#include "base/log.hpp"

#if !defined(__HIPCC__)
#include <cuda.h>  // driver types only: the driver is reached through an entry point, never linked
#endif

#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

namespace strata::gpu {
namespace {

thread_local const char* t_last_error = "no error";

// The one place a runtime error is turned into a Status. The error is also
// cleared from the runtime's last-error slot, so that a failure of ours does
// not surface in the application's next cudaGetLastError/hipGetLastError.
Status check(gpuError_t err, const char* call) noexcept {
  if (err == gpuSuccess) {
    return Status::ok;
  }
  t_last_error = gpuGetErrorString(err);
  (void)gpuGetLastError();
  STRATA_LOG(error, kDevice, "%s: %s failed: %s (%s)", STRATA_GPU_BACKEND_NAME, call, gpuGetErrorString(err),
             gpuGetErrorName(err));
  return Status::device_error;
}

#define STRATA_GPU_CHECK(call) check((call), #call)

// Calls below need a device; without one they answer like the stub build.
#define STRATA_GPU_REQUIRE_DEVICE() \
  do {                              \
    if (!available()) {             \
      return Status::not_supported; \
    }                               \
  } while (0)

}  // namespace

// --- devices ----------------------------------------------------------------

namespace {

std::atomic<bool> g_runtime_asked{false};  // available() has asked the runtime (and so started it)
std::atomic<bool> g_deferred{false};       // defer_runtime_until_driver_loaded()

#if !defined(__HIPCC__)
// Is an object named libcuda.so* loaded? One walk of the loaded objects,
// made again only after another object was loaded (dlpi_adds, glibc's
// count of loads, read from the first object: about 15 ns).
int first_object(struct dl_phdr_info* info, size_t, void* out) {
  *static_cast<unsigned long long*>(out) = info->dlpi_adds;
  return 1;
}
int find_driver(struct dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  if (std::strncmp(base, "libcuda.so", 10) != 0) return 0;
  *static_cast<bool*>(out) = true;
  return 1;
}
bool driver_loaded() noexcept {
  static std::atomic<unsigned long long> checked_at{~0ULL};  // dlpi_adds at the last walk that found none
  unsigned long long adds = 0;
  dl_iterate_phdr(first_object, &adds);
  if (checked_at.load(std::memory_order_acquire) == adds) return false;  // nothing loaded since
  bool found = false;
  dl_iterate_phdr(find_driver, &found);
  if (!found) checked_at.store(adds, std::memory_order_release);
  return found;
}
#endif

// Has the process started the driver, or may it have? Not before the
// driver's library is loaded (the CUDA runtime loads it when it starts; a
// program of the driver API links it). HIP: the preload links the HIP
// runtime, so its library is always there.
bool driver_maybe_started() noexcept {
  if (g_runtime_asked.load(std::memory_order_acquire)) return true;
#if defined(__HIPCC__)
  return true;
#else
  return driver_loaded();
#endif
}

// May Strata ask the runtime now? Always, unless the process is a host
// program that has not loaded the driver (defer_runtime_until_driver_loaded).
bool runtime_may_start() noexcept { return !g_deferred.load(std::memory_order_relaxed) || driver_maybe_started(); }

}  // namespace

bool available() noexcept {
  if (!runtime_may_start()) return false;  // a host program's: asked again once it loads the driver
  static const bool visible = [] {
    g_runtime_asked.store(true, std::memory_order_release);
    int count = 0;
    const gpuError_t err = gpuGetDeviceCount(&count);
    if (err != gpuSuccess) {
      (void)gpuGetLastError();
      STRATA_LOG(info, kDevice, "%s: no usable device (%s)", STRATA_GPU_BACKEND_NAME, gpuGetErrorString(err));
      return false;
    }
    return count > 0;
  }();
  return visible;
}

const char* backend_name() noexcept { return STRATA_GPU_BACKEND_NAME; }

Status can_access_peer(int device, int peer, bool* yes) noexcept {
  if (yes == nullptr) return Status::invalid_argument;
  STRATA_GPU_REQUIRE_DEVICE();
  int can = 0;
  STRATA_TRY(STRATA_GPU_CHECK(gpuDeviceCanAccessPeer(&can, device, peer)));
  *yes = can != 0;
  return Status::ok;
}

Status device_count(int* count) noexcept {
  if (count == nullptr) {
    return Status::invalid_argument;
  }
  if (!available()) {
    *count = 0;
    return Status::ok;
  }
  int n = 0;
  STRATA_TRY(STRATA_GPU_CHECK(gpuGetDeviceCount(&n)));
  *count = n;
  return Status::ok;
}

Status set_device(int device) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuSetDevice(device));
}

Status get_device(int* device) noexcept {
  if (device == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  int d = -1;
  STRATA_TRY(STRATA_GPU_CHECK(gpuGetDevice(&d)));
  *device = d;
  return Status::ok;
}

Status properties(int device, DeviceProperties* out) noexcept {
  if (out == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuDeviceProp_t p;
  std::memset(&p, 0, sizeof(p));
  STRATA_TRY(STRATA_GPU_CHECK(gpuGetDeviceProperties(&p, device)));
  DeviceProperties r;
  r.name = p.name;
  r.sm_count = p.multiProcessorCount;
  r.warp_size = p.warpSize;
  r.max_threads_per_block = p.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    r.max_grid[i] = p.maxGridSize[i];
  }
  r.total_memory = static_cast<int64_t>(p.totalGlobalMem);
  r.compute_major = p.major;
  r.compute_minor = p.minor;
  r.pci_domain = p.pciDomainID;
  r.pci_bus = p.pciBusID;
  r.pci_device = p.pciDeviceID;
  r.multi_gpu_board = p.isMultiGpuBoard;
#if !defined(__HIPCC__) || HIP_VERSION_MAJOR >= 6
  r.multi_gpu_board_group = p.multiGpuBoardGroupID;
#endif
  // HIP before 6.0 has no board group id: the default (-1) stays.
  *out = std::move(r);
  return Status::ok;
}

Status device_synchronize() noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuDeviceSynchronize());
}

// --- streams and events -------------------------------------------------------

Status stream_create(Stream* stream, bool ordered_after_default) noexcept {
  if (stream == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuStream_t s = nullptr;
  STRATA_TRY(
      STRATA_GPU_CHECK(gpuStreamCreateWithFlags(&s, ordered_after_default ? gpuStreamDefault : gpuStreamNonBlocking)));
  *stream = static_cast<Stream>(s);
  return Status::ok;
}

Status stream_destroy(Stream stream) noexcept {
  if (stream == nullptr) {
    return Status::invalid_argument;  // the default stream is not ours to destroy
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuStreamDestroy(static_cast<gpuStream_t>(stream)));
}

Status stream_synchronize(Stream stream) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuStreamSynchronize(static_cast<gpuStream_t>(stream)));
}

Status event_create(Event* event, bool timing) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuEvent_t e = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuEventCreateWithFlags(&e, timing ? gpuEventDefault : gpuEventDisableTiming)));
  *event = static_cast<Event>(e);
  return Status::ok;
}

Status event_destroy(Event event) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuEventDestroy(static_cast<gpuEvent_t>(event)));
}

Status event_record(Event event, Stream stream) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuEventRecord(static_cast<gpuEvent_t>(event), static_cast<gpuStream_t>(stream)));
}

Status event_synchronize(Event event) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuEventSynchronize(static_cast<gpuEvent_t>(event)));
}

Status event_query(Event event, bool* done) noexcept {
  if (event == nullptr || done == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  const gpuError_t err = gpuEventQuery(static_cast<gpuEvent_t>(event));
  if (err == gpuErrorNotReady) {  // not an error: the work is still running
    *done = false;
    return Status::ok;
  }
  STRATA_TRY(check(err, "gpuEventQuery(event)"));
  *done = true;
  return Status::ok;
}

Status event_elapsed_ms(Event start, Event stop, float* ms) noexcept {
  if (start == nullptr || stop == nullptr || ms == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  float t = 0.0f;
  STRATA_TRY(STRATA_GPU_CHECK(gpuEventElapsedTime(&t, static_cast<gpuEvent_t>(start), static_cast<gpuEvent_t>(stop))));
  *ms = t;
  return Status::ok;
}

Status stream_wait_event(Stream stream, Event event) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuStreamWaitEvent(static_cast<gpuStream_t>(stream), static_cast<gpuEvent_t>(event), 0));
}

// --- memory -------------------------------------------------------------------
// Allocations made here are entered into the classification cache at once
// (their range is known) and removed when freed here; see classify below.
namespace {
void remember_range(const void* base, size_t bytes, device::Pointer what) noexcept;
void forget_range(const void* ptr) noexcept;
}  // namespace

Status malloc_device(void** ptr, size_t bytes) noexcept {
  if (ptr == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  int device = -1;
  STRATA_TRY(STRATA_GPU_CHECK(gpuGetDevice(&device)));
  void* p = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuMalloc(&p, bytes)));
  remember_range(p, bytes, device::Pointer{device::MemoryKind::device, device});
  *ptr = p;
  return Status::ok;
}

Status free_device(void* ptr) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  if (ptr == nullptr) {
    return Status::ok;
  }
  STRATA_TRY(STRATA_GPU_CHECK(gpuFree(ptr)));
  forget_range(ptr);
  return Status::ok;
}

Status malloc_pinned(void** ptr, size_t bytes, bool mapped) noexcept {
  if (ptr == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  // Portable: pinned for every device's context, not only the current one.
  const unsigned flags = gpuHostAllocPortable | (mapped ? gpuHostAllocMapped : 0u);
  void* p = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuHostAlloc(&p, bytes, flags)));
  remember_range(p, bytes, device::Pointer{device::MemoryKind::pinned_host, -1});
  *ptr = p;
  return Status::ok;
}

Status free_pinned(void* ptr) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  if (ptr == nullptr) {
    return Status::ok;
  }
  STRATA_TRY(STRATA_GPU_CHECK(gpuFreeHost(ptr)));
  forget_range(ptr);
  return Status::ok;
}

Status mapped_device_pointer(void* pinned_host, void** device_ptr) noexcept {
  if (pinned_host == nullptr || device_ptr == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  void* d = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuHostGetDevicePointer(&d, pinned_host, 0)));
  *device_ptr = d;
  return Status::ok;
}

Status memcpy_async(void* dst, const void* src, size_t bytes, Stream stream) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  if (bytes == 0) {
    return Status::ok;
  }
  if (dst == nullptr || src == nullptr) {
    return Status::invalid_argument;
  }
  return STRATA_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, static_cast<gpuStream_t>(stream)));
}

Status copy_box_async(const detail::BoxCopy& box, char* user, char* packed, bool pack, Stream stream) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  if (box.bytes() == 0) {
    return Status::ok;
  }
  if (user == nullptr || packed == nullptr || box.width <= 0 || box.pitch < box.width ||
      box.slice_pitch < box.pitch * box.height || box.slice_pitch % box.pitch != 0) {
    return Status::invalid_argument;
  }
  char* u = user + box.user_offset;
  char* k = packed + box.packed_offset;
  const auto s = static_cast<gpuStream_t>(stream);
  const auto width = static_cast<size_t>(box.width);
  const auto height = static_cast<size_t>(box.height);
  if (box.depth == 1 && box.height == 1) {
    return memcpy_async(pack ? k : u, pack ? u : k, width, stream);
  }
  const auto pitch = static_cast<size_t>(box.pitch);
  if (box.depth == 1) {
    return STRATA_GPU_CHECK(pack ? gpuMemcpy2DAsync(k, width, u, pitch, width, height, gpuMemcpyDefault, s)
                                 : gpuMemcpy2DAsync(u, pitch, k, width, width, height, gpuMemcpyDefault, s));
  }
  // The user's side: rows of `pitch` bytes, slice_pitch / pitch rows a
  // slice; the packed side: dense rows and slices.
  gpuMemcpy3DParms p{};
  const auto user_side = make_gpuPitchedPtr(u, pitch, width, static_cast<size_t>(box.slice_pitch / box.pitch));
  const auto packed_side = make_gpuPitchedPtr(k, width, width, height);
  p.srcPtr = pack ? user_side : packed_side;
  p.dstPtr = pack ? packed_side : user_side;
  p.extent = make_gpuExtent(width, height, static_cast<size_t>(box.depth));
  p.kind = gpuMemcpyDefault;
  return STRATA_GPU_CHECK(gpuMemcpy3DAsync(&p, s));
}

Status memset_async(void* dst, int value, size_t bytes, Stream stream) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  if (bytes == 0) {
    return Status::ok;
  }
  if (dst == nullptr) {
    return Status::invalid_argument;
  }
  return STRATA_GPU_CHECK(gpuMemsetAsync(dst, value, bytes, static_cast<gpuStream_t>(stream)));
}

// --- pointer classification -------------------------------------------------
//
// The runtime's pointer query is a call into the driver on every send
// (TEMPI's defect); classify() pays it once per allocation and once per
// 2 MiB of host address space, then answers from a cache. Measured on an
// H200 (CUDA 13 driver, uncontended): cudaPointerGetAttributes 60-90 ns, a
// cached lookup 17 ns. The cache also keeps the query off the path of
// every send under many threads.
//
//  * ranges_: a sorted map base -> [base, end) of the device, managed and
//    pinned allocations met so far, with their kind and device. The range
//    is the driver's allocation range (CUDA: the driver's pointer query,
//    reached through cudaGetDriverEntryPoint*, so libcuda is not linked; HIP:
//    hipMemGetAddressRange). Where no range can be had, the single queried
//    address is entered, so repeated use of one buffer still hits.
//  * host_granules_: 2 MiB granules known to hold pageable host memory.
//    Ranges take precedence. A granule is entered only when the runtime
//    called the address unregistered AND the address is readable from the
//    host (process_vm_readv of one byte). Without that second test a probe
//    of unallocated device address space (one past the end of a device
//    allocation, or the free tail of the driver's 2 MiB device page) would
//    mark the granule host, and the next device allocation placed there
//    would be classified host: a crash for whoever then reads it on the
//    host. (Seen on an H200: the runtime calls A+4096 of a 4 KiB cudaMalloc
//    unregistered, and the next 4 KiB cudaMalloc returns exactly A+4096.)
//    Readable addresses lie outside the driver's device VA reservations,
//    which are inaccessible (PROT_NONE) host mappings made in 2 MiB-aligned
//    multiples of 2 MiB (seen: a 518 MiB reservation; pinned and managed
//    blocks are 2 MiB-aligned mappings too), so a granule holding readable
//    host memory never holds device memory. This is the one assumption
//    about the driver the cache makes.
//  * Pinned memory is cached by range, never by granule: a page-locked
//    buffer can share a granule with pageable memory. A granule entered as
//    pageable before part of it was registered (cudaHostRegister by the
//    application) keeps answering host there: the safe direction (the
//    buffer is treated as pageable).
//
// Lookups take the shared lock; a miss queries the runtime without any lock
// and then takes the unique lock to insert.
//
// Limits (stale entries). Allocations freed through this API are forgotten.
// Memory the application frees itself cannot be seen: its entry stays. For
// device and managed memory this is harmless in practice: CUDA and ROCm keep
// the device VA reserved when memory is freed (it is never handed to the
// host allocator) and reuse it for later device allocations, so a stale
// range still answers "device"; a reuse by another device or as managed
// memory, or inside a VMM reservation, can be answered with the old device
// id or kind. Re-validating an entry would cost the very runtime query the
// cache saves, so it is not done. Pinned memory freed by the application
// (cudaFreeHost) returns its pages to the host: a later pageable mapping at
// the same address is then answered pinned_host. A new allocation that
// overlaps a stale entry replaces it when it is queried (an overlapping
// range evicts the old one). forget_classifications() drops everything
// (after a device reset). Both tables are capped (kMaxEntries) and simply
// cleared when full.

namespace {

constexpr unsigned kGranuleShift = 21;  // 2 MiB
constexpr size_t kMaxEntries = size_t{1} << 16;

std::atomic<uint64_t> g_queries{0};

class PointerCache {
 public:
  bool lookup(uintptr_t a, device::Pointer* out) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = ranges_.upper_bound(a);
    if (it != ranges_.begin()) {
      --it;
      if (a < it->second.end) {
        *out = it->second.what;
        return true;
      }
    }
    if (host_granules_.count(a >> kGranuleShift) != 0) {
      *out = device::Pointer{};
      return true;
    }
    return false;
  }

  void insert_range(uintptr_t base, uintptr_t end, device::Pointer what) {
    if (end <= base) {
      return;  // wrapped around: not an address anyone allocated
    }
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (ranges_.size() >= kMaxEntries) {
      ranges_.clear();
      STRATA_LOG(debug, kDevice, "pointer cache: %zu ranges, cleared", kMaxEntries);
    }
    // Evict stale entries overlapping the new range.
    auto it = ranges_.lower_bound(base);
    if (it != ranges_.begin() && std::prev(it)->second.end > base) {
      --it;
    }
    while (it != ranges_.end() && it->first < end) {
      it = ranges_.erase(it);
    }
    ranges_.emplace(base, Entry{end, what});
    if (what.kind == device::MemoryKind::pinned_host) {
      return;  // pinned and pageable memory may share a granule
    }
    // A granule wrongly entered as host before this range was known.
    hints::forget_host(base, end);
    const uintptr_t g0 = base >> kGranuleShift;
    const uintptr_t g1 = (end - 1) >> kGranuleShift;
    if (g1 - g0 < host_granules_.size()) {
      for (uintptr_t g = g0; g <= g1; ++g) {
        host_granules_.erase(g);
      }
    } else {
      for (auto g = host_granules_.begin(); g != host_granules_.end();) {
        g = (*g >= g0 && *g <= g1) ? host_granules_.erase(g) : std::next(g);
      }
    }
  }

  void insert_host_granule(uintptr_t a) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (host_granules_.size() >= kMaxEntries) {
      host_granules_.clear();
      STRATA_LOG(debug, kDevice, "pointer cache: %zu host granules, cleared", kMaxEntries);
    }
    const uintptr_t g = a >> kGranuleShift;
    host_granules_.insert(g);
    hints::remember_host(a);
  }

  void forget_containing(uintptr_t a) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = ranges_.upper_bound(a);
    if (it != ranges_.begin()) {
      --it;
      if (a < it->second.end) {
        ranges_.erase(it);
      }
    }
  }

  void clear() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    ranges_.clear();
    host_granules_.clear();
    hints::forget_all();
  }

 private:
  struct Entry {
    uintptr_t end;
    device::Pointer what;
  };
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Entry> ranges_;
  std::unordered_set<uintptr_t> host_granules_;
};

// Never destroyed: classify may run from atexit handlers (MPI_Finalize).
PointerCache& cache() {
  static PointerCache* c = new PointerCache;
  return *c;
}

void remember_range(const void* base, size_t bytes, device::Pointer what) noexcept {
  if (base == nullptr || bytes == 0) {
    return;
  }
  const auto b = reinterpret_cast<uintptr_t>(base);
  cache().insert_range(b, b + bytes, what);
}

void forget_range(const void* ptr) noexcept { cache().forget_containing(reinterpret_cast<uintptr_t>(ptr)); }

// Is one byte at `a` readable by the host? (No signal: the kernel reports
// EFAULT.) Where the call is refused (seccomp), host answers go uncached.
bool host_readable(uintptr_t a) noexcept {
  char byte = 0;
  iovec local{&byte, 1};
  iovec remote{reinterpret_cast<void*>(a), 1};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1) {
    return true;
  }
  if (errno == EPERM || errno == ENOSYS) {
    STRATA_LOG_ONCE(warn, kDevice, "process_vm_readv refused (%s): host pointer classifications are not cached",
                    std::strerror(errno));
  }
  return false;
}

// What the runtime says about one address.
struct Answer {
  device::Pointer what;
  bool known = false;  // the runtime answered (an unregistered answer included)
  uintptr_t base = 0;  // the allocation's range, when size > 0
  size_t size = 0;
};

#if defined(__HIPCC__)

Answer query(const void* ptr) noexcept {
  Answer r;
  gpuPointerAttributes attr;
  std::memset(&attr, 0, sizeof(attr));
  const gpuError_t err = gpuPointerGetAttributes(&attr, ptr);
  if (err != gpuSuccess) {
    // HIP before 6.0 reports memory it does not know (pageable host) as an
    // invalid value; anything else is an answer we cannot trust.
    (void)gpuGetLastError();
    r.known = (err == gpuErrorInvalidValue);
    return r;
  }
  r.known = true;
#if HIP_VERSION_MAJOR >= 6
  const int type = static_cast<int>(attr.type);
  const bool unregistered = (attr.type == hipMemoryTypeUnregistered);
  const bool pinned = (attr.type == hipMemoryTypeHost);
  const bool managed = attr.isManaged != 0 || attr.type == hipMemoryTypeManaged || attr.type == hipMemoryTypeUnified;
#else
  const int type = static_cast<int>(attr.memoryType);
  const bool unregistered = false;  // success means the runtime knows the memory
  const bool pinned = (attr.memoryType == hipMemoryTypeHost);
  const bool managed = attr.isManaged != 0 || attr.memoryType == hipMemoryTypeUnified;
#endif
  if (unregistered) {
    return r;
  }
  if (managed) {
    r.what = device::Pointer{device::MemoryKind::managed, attr.device};
  } else if (pinned) {
    r.what = device::Pointer{device::MemoryKind::pinned_host, -1};
  } else {
    r.what = device::Pointer{device::MemoryKind::device, attr.device};
  }
  STRATA_LOG(trace, kDevice, "classify %p: hip type %d device %d managed %d", ptr, type, attr.device, attr.isManaged);
  gpuDeviceptr_t base = nullptr;
  size_t size = 0;
  if (gpuMemGetAddressRange(&base, &size, const_cast<void*>(ptr)) == gpuSuccess) {
    r.base = reinterpret_cast<uintptr_t>(base);
    r.size = size;
  } else {
    (void)gpuGetLastError();
  }
  return r;
}

#else  // CUDA

// cuPointerGetAttributes, found at run time. The driver query answers kind,
// device and allocation range in one call, never creates a context (the
// runtime's query may initialise the primary context of the current device
// in a process that has used no GPU yet: memory and time on GPU 0 for every
// CPU-only rank), and returns zeros rather than an error for memory it does
// not know.
using PointerGetAttributesFn = CUresult(CUDAAPI*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);

PointerGetAttributesFn driver_pointer_query() noexcept {
  static const PointerGetAttributesFn fn = []() -> PointerGetAttributesFn {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &f, 12000, cudaEnableDefault, &found);
#elif CUDART_VERSION >= 12000
    const cudaError_t err = cudaGetDriverEntryPoint("cuPointerGetAttributes", &f, cudaEnableDefault, &found);
#else
    const cudaError_t err = cudaErrorNotSupported;
#endif
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || f == nullptr) {
      (void)cudaGetLastError();
      STRATA_LOG(warn, kDevice,
                 "cuda: no driver entry point for cuPointerGetAttributes (%s): pointer classification "
                 "falls back to cudaPointerGetAttributes, cached per address",
                 cudaGetErrorString(err));
      return nullptr;
    }
    return reinterpret_cast<PointerGetAttributesFn>(f);
  }();
  return fn;
}

Answer query_runtime(const void* ptr) noexcept {
  Answer r;
  cudaPointerAttributes attr;
  std::memset(&attr, 0, sizeof(attr));
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    r.known = (err == cudaErrorInvalidValue);  // pre-11 runtimes: unknown host memory
    return r;
  }
  r.known = true;
  switch (attr.type) {
    case cudaMemoryTypeHost: r.what = device::Pointer{device::MemoryKind::pinned_host, -1}; break;
    case cudaMemoryTypeDevice: r.what = device::Pointer{device::MemoryKind::device, attr.device}; break;
    case cudaMemoryTypeManaged: r.what = device::Pointer{device::MemoryKind::managed, attr.device}; break;
    default:  // unregistered
      break;
  }
  return r;
}

Answer query(const void* ptr) noexcept {
  PointerGetAttributesFn fn = driver_pointer_query();
  if (fn == nullptr) {
    return query_runtime(ptr);
  }
  unsigned int type = 0;
  int ordinal = -1;
  uint64_t managed = 0;  // the driver writes a boolean of unspecified width
  CUdeviceptr start = 0;
  size_t size = 0;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* data[] = {&type, &ordinal, &managed, &start, &size};
  const CUresult res = fn(5, attrs, data, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)));
  if (res != CUDA_SUCCESS) {
    STRATA_LOG(debug, kDevice, "cuda: cuPointerGetAttributes(%p) = %d, asking the runtime", ptr, static_cast<int>(res));
    return query_runtime(ptr);
  }
  Answer r;
  r.known = true;
  if (managed != 0) {
    r.what = device::Pointer{device::MemoryKind::managed, ordinal};
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    r.what = device::Pointer{device::MemoryKind::device, ordinal};
  } else if (type == CU_MEMORYTYPE_HOST) {
    r.what = device::Pointer{device::MemoryKind::pinned_host, -1};
  } else {
    return r;  // 0: not known to the driver, pageable host memory
  }
  r.base = static_cast<uintptr_t>(start);
  r.size = size;
  return r;
}

#endif

// A cache miss: ask the runtime, remember the answer.
device::Pointer classify_uncached(const void* ptr) noexcept {
  const auto a = reinterpret_cast<uintptr_t>(ptr);
  g_queries.fetch_add(1, std::memory_order_relaxed);
  const Answer r = query(ptr);
  if (r.what.kind == device::MemoryKind::host) {
    if (r.known && host_readable(a)) {
      cache().insert_host_granule(a);
    }
    return r.what;
  }
  if (r.size > 0 && r.base <= a && a - r.base < r.size) {
    cache().insert_range(r.base, r.base + r.size, r.what);
  } else {
    STRATA_LOG(debug, kDevice, "classify %p: no allocation range, caching the address only", ptr);
    cache().insert_range(a, a + 1, r.what);
  }
  return r.what;
}

}  // namespace

device::Pointer classify(const void* ptr) noexcept {
  if (ptr == nullptr) return device::Pointer{};
  if (!runtime_may_start()) {  // host memory: nothing else exists before the driver is loaded
    const auto a = reinterpret_cast<uintptr_t>(ptr);
    if (host_readable(a)) cache().insert_host_granule(a);
    return device::Pointer{};
  }
  if (!available()) return device::Pointer{};
  device::Pointer hit;
  if (cache().lookup(reinterpret_cast<uintptr_t>(ptr), &hit)) {
    return hit;
  }
  return classify_uncached(ptr);
}

bool backend_present() noexcept {
  if (!runtime_may_start()) return true;  // classify() answers host, without starting the runtime
  const bool present = available();
  hints::g_backend.store(present ? 1 : 0, std::memory_order_relaxed);
  return present;
}

void forget_classifications() noexcept { cache().clear(); }

uint64_t classify_runtime_queries() noexcept { return g_queries.load(std::memory_order_relaxed); }

void* host_view(const void* ptr) noexcept { return const_cast<void*>(ptr); }

// --- allocations ----------------------------------------------------------------
//
// The range and buffer id of the allocation holding a pointer, for IPC
// (ipc_cache.cpp keys handles and mappings on base and buffer id, as UCX's
// cuda_ipc does). Asked of the runtime at every call: the id is what tells
// a reused range from the old one, so it cannot come from a cache.

#if defined(__HIPCC__)

Status allocation_of(const void* device_ptr, AllocationRange* out) noexcept {
  if (device_ptr == nullptr || out == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
#if HIP_VERSION < 50200000
  // hipPointerGetAttribute is not there before ROCm 5.2 (the oldest checked).
  STRATA_LOG_ONCE(warn, kDevice, "hip: no buffer ids before ROCm 5.2: allocation_of is not supported");
  return Status::not_supported;
#else
  const Answer kind = query(device_ptr);
  if (kind.what.kind != device::MemoryKind::device) {
    STRATA_LOG(debug, kDevice, "hip: allocation_of(%p): not device memory", device_ptr);
    return Status::invalid_argument;
  }
  gpuDeviceptr_t base = nullptr;
  size_t size = 0;
  STRATA_TRY(STRATA_GPU_CHECK(gpuMemGetAddressRange(&base, &size, const_cast<void*>(device_ptr))));
  // ROCm documents the attribute as a unique id of the allocation, not its
  // width: a zeroed 64-bit value also takes a 32-bit answer.
  uint64_t id = 0;
  STRATA_TRY(
      STRATA_GPU_CHECK(hipPointerGetAttribute(&id, HIP_POINTER_ATTRIBUTE_BUFFER_ID, const_cast<void*>(device_ptr))));
  AllocationRange r;
  r.base = base;
  r.bytes = size;
  r.buffer_id = id;
  r.device = kind.what.device;
  *out = r;
  return Status::ok;
#endif
}

#else  // CUDA

// One driver query: range, buffer id, ordinal and kind together (the
// driver's cuMemGetAddressRange and CU_POINTER_ATTRIBUTE_BUFFER_ID in one
// call, without a current context), through the entry point classify uses.
Status allocation_of(const void* device_ptr, AllocationRange* out) noexcept {
  if (device_ptr == nullptr || out == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  PointerGetAttributesFn fn = driver_pointer_query();
  if (fn == nullptr) {
    return Status::not_supported;  // logged once where the entry point was looked for
  }
  unsigned int type = 0;
  int ordinal = -1;
  uint64_t managed = 0;  // a boolean of unspecified width
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned long long id = 0;  // NOLINT(google-runtime-int): the driver's type
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED,  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE,  CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void* data[] = {&type, &ordinal, &managed, &start, &size, &id};
  const CUresult res = fn(6, attrs, data, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(device_ptr)));
  if (res != CUDA_SUCCESS) {
    t_last_error = "cuPointerGetAttributes failed";
    STRATA_LOG(error, kDevice, "cuda: cuPointerGetAttributes(%p) for its allocation failed: CUresult %d", device_ptr,
               static_cast<int>(res));
    return Status::device_error;
  }
  if (type != CU_MEMORYTYPE_DEVICE || managed != 0 || size == 0) {
    STRATA_LOG(debug, kDevice, "cuda: allocation_of(%p): not device memory (type %u, managed %d)", device_ptr, type,
               static_cast<int>(managed != 0));
    return Status::invalid_argument;
  }
  AllocationRange r;
  r.base = reinterpret_cast<void*>(static_cast<uintptr_t>(start));
  r.bytes = size;
  r.buffer_id = static_cast<uint64_t>(id);
  r.device = ordinal;
  *out = r;
  return Status::ok;
}

#endif

// --- IPC ----------------------------------------------------------------------

static_assert(sizeof(gpuIpcMemHandle_t) <= sizeof(IpcHandle::bytes), "IpcHandle too small for the runtime's handle");

Status ipc_get_handle(void* device_ptr, IpcHandle* handle) noexcept {
  if (device_ptr == nullptr || handle == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuIpcMemHandle_t h;
  STRATA_TRY(STRATA_GPU_CHECK(gpuIpcGetMemHandle(&h, device_ptr)));
  IpcHandle out{};
  std::memcpy(out.bytes, &h, sizeof(h));
  *handle = out;
  return Status::ok;
}

Status ipc_open(const IpcHandle& handle, void** device_ptr) noexcept {
  if (device_ptr == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuIpcMemHandle_t h;
  std::memcpy(&h, handle.bytes, sizeof(h));
  void* p = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuIpcOpenMemHandle(&p, h, gpuIpcMemLazyEnablePeerAccess)));
  // Stale entries may cover the addresses the mapping got: enter the
  // mapping's own range now (an overlapping range evicts them).
  forget_range(p);
  (void)classify_uncached(p);
  *device_ptr = p;
  return Status::ok;
}

Status ipc_close(void* device_ptr) noexcept {
  if (device_ptr == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  STRATA_TRY(STRATA_GPU_CHECK(gpuIpcCloseMemHandle(device_ptr)));
  forget_range(device_ptr);
  return Status::ok;
}

Status ipc_event_create(Event* event) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuEvent_t e = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuEventCreateWithFlags(&e, gpuEventDisableTiming | gpuEventInterprocess)));
  *event = static_cast<Event>(e);
  return Status::ok;
}

Status ipc_event_get_handle(Event event, IpcEventHandle* handle) noexcept {
  if (event == nullptr || handle == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuIpcEventHandle_t h;
  static_assert(sizeof(h) <= sizeof(handle->bytes), "an IPC event handle fits IpcEventHandle");
  STRATA_TRY(STRATA_GPU_CHECK(gpuIpcGetEventHandle(&h, static_cast<gpuEvent_t>(event))));
  IpcEventHandle out{};
  std::memcpy(out.bytes, &h, sizeof(h));
  *handle = out;
  return Status::ok;
}

Status ipc_event_open(const IpcEventHandle& handle, Event* event) noexcept {
  if (event == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuIpcEventHandle_t h;
  std::memcpy(&h, handle.bytes, sizeof(h));
  gpuEvent_t e = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuIpcOpenEventHandle(&e, h)));
  *event = static_cast<Event>(e);
  return Status::ok;
}

// --- graphs ---------------------------------------------------------------------

Status capture_begin(Stream stream) noexcept {
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuStreamBeginCapture(static_cast<gpuStream_t>(stream), gpuStreamCaptureModeThreadLocal));
}

Status is_capturing(Stream stream, bool* capturing) noexcept {
  *capturing = false;
  STRATA_GPU_REQUIRE_DEVICE();
  gpuStreamCaptureStatus status = gpuStreamCaptureStatusNone;
  STRATA_TRY(STRATA_GPU_CHECK(gpuStreamIsCapturing(static_cast<gpuStream_t>(stream), &status)));
  *capturing = status != gpuStreamCaptureStatusNone;
  return Status::ok;
}

Status capture_end(Stream stream, GraphExec* exec) noexcept {
  if (exec == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  gpuGraph_t graph = nullptr;
  STRATA_TRY(STRATA_GPU_CHECK(gpuStreamEndCapture(static_cast<gpuStream_t>(stream), &graph)));
  gpuGraphExec_t e = nullptr;
  const Status s = STRATA_GPU_CHECK(gpuGraphInstantiate(&e, graph, 0));
  (void)gpuGraphDestroy(graph);
  STRATA_TRY(s);
  *exec = static_cast<GraphExec>(e);
  return Status::ok;
}

Status graph_launch(GraphExec exec, Stream stream) noexcept {
  if (exec == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuGraphLaunch(static_cast<gpuGraphExec_t>(exec), static_cast<gpuStream_t>(stream)));
}

Status graph_destroy(GraphExec exec) noexcept {
  if (exec == nullptr) {
    return Status::invalid_argument;
  }
  STRATA_GPU_REQUIRE_DEVICE();
  return STRATA_GPU_CHECK(gpuGraphExecDestroy(static_cast<gpuGraphExec_t>(exec)));
}

const char* last_error_string() noexcept { return t_last_error; }

// The primary context's state per device, from the driver: CUDA through
// the runtime's driver entry point (libcuda is not linked), HIP directly.
void defer_runtime_until_driver_loaded() noexcept { g_deferred.store(true, std::memory_order_relaxed); }

bool context_active() noexcept {
  if (!driver_maybe_started() || !available()) return false;  // no context without the driver
  int n = 0;
  if (gpuGetDeviceCount(&n) != gpuSuccess) {
    (void)gpuGetLastError();
    return false;
  }
#if defined(__HIPCC__)
  for (int d = 0; d < n; ++d) {
    unsigned int flags = 0;
    int active = 0;
    if (hipDevicePrimaryCtxGetState(d, &flags, &active) == hipSuccess && active != 0) return true;
  }
  (void)hipGetLastError();
  return false;
#else
  using GetStateFn = CUresult(CUDAAPI*)(CUdevice, unsigned int*, int*);
  using DeviceGetFn = CUresult(CUDAAPI*)(CUdevice*, int);
  void* state = nullptr;
  void* get = nullptr;
#if CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult a = cudaDriverEntryPointSymbolNotFound, b = a;
  const bool found =
      cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &state, 7000, cudaEnableDefault, &a) ==
          cudaSuccess &&
      cudaGetDriverEntryPointByVersion("cuDeviceGet", &get, 2000, cudaEnableDefault, &b) == cudaSuccess &&
      a == cudaDriverEntryPointSuccess && b == cudaDriverEntryPointSuccess;
#elif CUDART_VERSION >= 12000
  cudaDriverEntryPointQueryResult a = cudaDriverEntryPointSymbolNotFound, b = a;
  const bool found =
      cudaGetDriverEntryPoint("cuDevicePrimaryCtxGetState", &state, cudaEnableDefault, &a) == cudaSuccess &&
      cudaGetDriverEntryPoint("cuDeviceGet", &get, cudaEnableDefault, &b) == cudaSuccess &&
      a == cudaDriverEntryPointSuccess && b == cudaDriverEntryPointSuccess;
#else
  const bool found = false;
#endif
  if (!found || state == nullptr || get == nullptr) {
    (void)cudaGetLastError();
    return false;
  }
  for (int d = 0; d < n; ++d) {
    CUdevice dev = 0;
    unsigned int flags = 0;
    int active = 0;
    if (reinterpret_cast<DeviceGetFn>(get)(&dev, d) == CUDA_SUCCESS &&
        reinterpret_cast<GetStateFn>(state)(dev, &flags, &active) == CUDA_SUCCESS && active != 0) {
      return true;
    }
  }
  return false;
#endif
}

}  // namespace strata::gpu
