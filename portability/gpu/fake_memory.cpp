// Memory of the device stand-in (fake_device.hpp): device allocations (one
// memfd, a PROT_NONE device view plus a guard page, a read/write shadow
// view), IPC mappings of another process's allocations (its memfd mapped
// the same way, fake_ipc.cpp), pinned host memory, the translation of device
// addresses to their shadows, and classification.
//
// One table, sorted by address: allocation base -> its end, shadow, device,
// kind and serial (the buffer id). A device allocation keeps its memfd's
// descriptor open while it lives, for other processes to open it through
// /proc (one descriptor per live allocation). Lookups take the shared lock.
// The table is the truth for classify(); a second, per-allocation flag and
// a set of 2 MiB host granules only count the runtime queries a real
// backend's cache would make (gpu_runtime.cu), so that tests of the
// counting hold here too.
#include "portability/gpu/fake_device.hpp"

#include "base/log.hpp"
#include "portability/gpu/host_hints.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

namespace strata::gpu::fake {
namespace {

// ipc: another process's device allocation mapped here (device memory).
enum class Kind { device, pinned, ipc };

bool is_device(Kind k) { return k != Kind::pinned; }

struct Allocation {
  uintptr_t end = 0;       // base + the bytes asked for
  char* shadow = nullptr;  // device: the read/write view; pinned: the memory itself
  size_t mapped = 0;       // bytes mapped (whole pages); a device view has one guard page more
  int device = -1;         // device memory: the device current at allocation (ipc: the owner's)
  Kind kind = Kind::device;
  bool known = true;    // counted as known to the (emulated) classification cache
  uint64_t serial = 0;  // device and ipc: the buffer id, never reused in this process
  int fd = -1;          // device: its memfd, open while it lives
  int creator_pid = 0;  // device: the process that allocated it
};

constexpr unsigned kGranuleShift = 21;  // 2 MiB, as gpu_runtime.cu's cache

size_t page_size() noexcept {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

class Table {
 public:
  void insert(uintptr_t base, const Allocation& a) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    map_[base] = a;
    // As gpu_runtime.cu: a granule taken for host before is not host now
    // (pinned and pageable memory may share one).
    if (is_device(a.kind)) hints::forget_host(base, base + a.mapped);
  }

  // Removes the allocation starting exactly at `base` if it is of `kind`.
  bool erase(uintptr_t base, Kind kind, Allocation* out) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = map_.find(base);
    if (it == map_.end() || it->second.kind != kind) return false;
    *out = it->second;
    map_.erase(it);
    return true;
  }

  // The allocation holding address `a`.
  bool find(uintptr_t a, uintptr_t* base, Allocation* out) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return find_locked(a, base, out);
  }

  // classify(): the answer, and whether the emulated cache had to ask.
  device::Pointer classify(uintptr_t a, bool* queried) {
    uintptr_t base = 0;
    Allocation found;
    bool is_allocation = false;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      is_allocation = find_locked(a, &base, &found);
      *queried = is_allocation ? !found.known : host_granules_.count(a >> kGranuleShift) == 0;
    }
    if (*queried) {
      std::unique_lock<std::shared_mutex> lock(mu_);
      if (is_allocation) {
        auto it = map_.find(base);
        if (it != map_.end()) it->second.known = true;
      } else {
        host_granules_.insert(a >> kGranuleShift);
        if (!device_in_granule(a >> kGranuleShift)) hints::remember_host(a);
      }
    }
    if (!is_allocation) return device::Pointer{};
    if (found.kind == Kind::pinned) return device::Pointer{device::MemoryKind::pinned_host, -1};
    return device::Pointer{device::MemoryKind::device, found.device};
  }

  void forget() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (auto& entry : map_) entry.second.known = false;
    host_granules_.clear();
    hints::forget_all();
  }

 private:
  // Does a device allocation lie (partly) in granule `g`? Then the granule
  // is never hinted as host. Allocations do not overlap: walk down from the
  // last one that starts before the granule ends.
  bool device_in_granule(uintptr_t g) const {
    const uintptr_t start = g << kGranuleShift, end = (g + 1) << kGranuleShift;
    for (auto it = map_.lower_bound(end); it != map_.begin();) {
      --it;
      if (it->first + it->second.mapped <= start) return false;
      if (is_device(it->second.kind)) return true;
    }
    return false;
  }

  bool find_locked(uintptr_t a, uintptr_t* base, Allocation* out) const {
    auto it = map_.upper_bound(a);
    if (it == map_.begin()) return false;
    --it;
    if (a >= it->second.end) return false;
    *base = it->first;
    *out = it->second;
    return true;
  }

  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Allocation> map_;
  std::unordered_set<uintptr_t> host_granules_;
};

// Never destroyed: memory may be freed and classified from atexit handlers.
Table& table() {
  static Table* t = new Table;
  return *t;
}

std::atomic<uint64_t> g_queries{0};
std::atomic<uint64_t> g_serial{0};  // the last buffer id given

// Whole pages for `bytes`, false on overflow.
bool round_to_pages(size_t bytes, size_t* rounded) {
  const size_t page = page_size();
  if (bytes > SIZE_MAX - 2 * page) return false;
  *rounded = (bytes + page - 1) / page * page;
  return true;
}

// The two views of memfd `fd` of `bytes` (whole pages); false when the
// system refuses. The descriptor stays the caller's.
bool map_views(int fd, size_t bytes, void** view, void** shadow) {
  // The device view and a guard page after it, reserved together.
  void* reserved = mmap(nullptr, bytes + page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  bool ok = reserved != MAP_FAILED;
  void* s = MAP_FAILED;
  if (ok) ok = mmap(reserved, bytes, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
  if (ok) {
    s = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ok = s != MAP_FAILED;
  }
  if (!ok) {
    if (reserved != MAP_FAILED) munmap(reserved, bytes + page_size());
    return false;
  }
  *view = reserved;
  *shadow = s;
  return true;
}

// A fresh memfd of `bytes`, named after this process and the allocation's
// serial (fake_ipc.cpp checks the name), -1 when the system refuses.
int new_memfd(size_t bytes, int pid, uint64_t serial) {
  char name[64];
  std::snprintf(name, sizeof(name), "strata-fake-device-%d-%" PRIu64, pid, serial);
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool allocated_any() noexcept { return g_serial.load(std::memory_order_relaxed) > 0; }

Status malloc_device(void** ptr, size_t bytes) noexcept {
  if (ptr == nullptr) return Status::invalid_argument;
  if (bytes == 0) {  // as cudaMalloc: success and no memory
    *ptr = nullptr;
    return Status::ok;
  }
  size_t rounded = 0;
  void* view = nullptr;
  void* shadow = nullptr;
  const uint64_t serial = g_serial.fetch_add(1, std::memory_order_relaxed) + 1;
  const int pid = static_cast<int>(getpid());
  const int fd = round_to_pages(bytes, &rounded) ? new_memfd(rounded, pid, serial) : -1;
  if (fd < 0 || !map_views(fd, rounded, &view, &shadow)) {
    if (fd >= 0) close(fd);
    return fail("malloc_device", "out of memory");
  }
  Allocation a;
  a.end = reinterpret_cast<uintptr_t>(view) + bytes;
  a.shadow = static_cast<char*>(shadow);
  a.mapped = rounded;
  (void)get_device(&a.device);
  a.kind = Kind::device;
  a.serial = serial;
  a.fd = fd;
  a.creator_pid = pid;
  try {
    table().insert(reinterpret_cast<uintptr_t>(view), a);
  } catch (...) {
    munmap(view, rounded + page_size());
    munmap(shadow, rounded);
    close(fd);
    return Status::out_of_memory;
  }
  *ptr = view;
  return Status::ok;
}

Status free_device(void* ptr) noexcept {
  if (ptr == nullptr) return Status::ok;
  Allocation a;
  if (!table().erase(reinterpret_cast<uintptr_t>(ptr), Kind::device, &a)) {
    STRATA_LOG(error, kDevice, "fake: free_device(%p): not the start of a device allocation", ptr);
    return fail("free_device", "invalid argument");
  }
  munmap(ptr, a.mapped + page_size());
  munmap(a.shadow, a.mapped);
  close(a.fd);
  return Status::ok;
}

Status malloc_pinned(void** ptr, size_t bytes, bool) noexcept {
  if (ptr == nullptr) return Status::invalid_argument;
  if (bytes == 0) {
    *ptr = nullptr;
    return Status::ok;
  }
  size_t rounded = 0;
  void* p = MAP_FAILED;
  if (round_to_pages(bytes, &rounded)) {
    p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (p == MAP_FAILED) return fail("malloc_pinned", "out of memory");
  Allocation a;
  a.end = reinterpret_cast<uintptr_t>(p) + bytes;
  a.shadow = static_cast<char*>(p);
  a.mapped = rounded;
  a.kind = Kind::pinned;
  try {
    table().insert(reinterpret_cast<uintptr_t>(p), a);
  } catch (...) {
    munmap(p, rounded);
    return Status::out_of_memory;
  }
  *ptr = p;
  return Status::ok;
}

Status free_pinned(void* ptr) noexcept {
  if (ptr == nullptr) return Status::ok;
  Allocation a;
  if (!table().erase(reinterpret_cast<uintptr_t>(ptr), Kind::pinned, &a)) {
    STRATA_LOG(error, kDevice, "fake: free_pinned(%p): not the start of a pinned allocation", ptr);
    return fail("free_pinned", "invalid argument");
  }
  munmap(ptr, a.mapped);
  return Status::ok;
}

// Unified addressing: a pinned buffer's device address is its host address.
Status mapped_device_pointer(void* pinned_host, void** device_ptr) noexcept {
  if (pinned_host == nullptr || device_ptr == nullptr) return Status::invalid_argument;
  uintptr_t base = 0;
  Allocation a;
  if (!table().find(reinterpret_cast<uintptr_t>(pinned_host), &base, &a) || a.kind != Kind::pinned) {
    return fail("mapped_device_pointer", "invalid argument");
  }
  *device_ptr = pinned_host;
  return Status::ok;
}

Status host_range(const void* ptr, size_t bytes, char** host, const char* call) noexcept {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  uintptr_t base = 0;
  Allocation a;
  if (ptr == nullptr || !table().find(p, &base, &a) || !is_device(a.kind)) {
    *host = const_cast<char*>(static_cast<const char*>(ptr));
    return Status::ok;
  }
  if (bytes > a.end - p) {
    STRATA_LOG(error, kDevice, "fake: %s: %zu bytes at %p run past the end of the device allocation [%p, +%zu)", call,
               bytes, ptr, reinterpret_cast<void*>(base), static_cast<size_t>(a.end - base));
    return fail(call, "an illegal memory access was encountered");
  }
  *host = a.shadow + (p - base);
  return Status::ok;
}

void* host_view(const void* ptr) noexcept {
  char* host = nullptr;
  (void)host_range(ptr, 0, &host, "host_view");
  return host;
}

device::Pointer classify(const void* ptr) noexcept {
  if (ptr == nullptr) return device::Pointer{};
  bool queried = false;
  device::Pointer p;
  try {
    p = table().classify(reinterpret_cast<uintptr_t>(ptr), &queried);
  } catch (...) {  // a granule not remembered: the answer stands
    uintptr_t base = 0;
    Allocation a;
    if (table().find(reinterpret_cast<uintptr_t>(ptr), &base, &a)) {
      p = a.kind == Kind::pinned ? device::Pointer{device::MemoryKind::pinned_host, -1}
                                 : device::Pointer{device::MemoryKind::device, a.device};
    }
    queried = true;
  }
  if (queried) g_queries.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void forget_classifications() noexcept { table().forget(); }

Status allocation_of(const void* ptr, AllocationRange* out) noexcept {
  if (ptr == nullptr || out == nullptr) return Status::invalid_argument;
  uintptr_t base = 0;
  Allocation a;
  if (!table().find(reinterpret_cast<uintptr_t>(ptr), &base, &a) || !is_device(a.kind)) {
    STRATA_LOG(debug, kDevice, "fake: allocation_of(%p): not device memory", ptr);
    return Status::invalid_argument;
  }
  AllocationRange r;
  r.base = reinterpret_cast<void*>(base);
  r.bytes = a.end - base;
  r.buffer_id = a.serial;
  r.device = a.device;
  *out = r;
  return Status::ok;
}

Status exported_allocation(const void* ptr, ExportedAllocation* out, const char* call) noexcept {
  uintptr_t base = 0;
  Allocation a;
  if (ptr == nullptr || !table().find(reinterpret_cast<uintptr_t>(ptr), &base, &a) || a.kind != Kind::device) {
    // Host, pinned, or a mapping opened here: none can be exported.
    STRATA_LOG(error, kDevice, "fake: %s(%p): not in a device allocation of this process", call, ptr);
    return fail(call, "invalid argument");
  }
  ExportedAllocation e;
  e.base = base;
  e.bytes = a.end - base;
  e.mapped = a.mapped;
  e.buffer_id = a.serial;
  e.device = a.device;
  e.fd = a.fd;
  e.creator_pid = a.creator_pid;
  *out = e;
  return Status::ok;
}

Status map_ipc(int fd, size_t bytes, size_t mapped, int device, void** view) noexcept {
  void* v = nullptr;
  void* shadow = nullptr;
  if (!map_views(fd, mapped, &v, &shadow)) return fail("ipc_open", "out of memory");
  Allocation a;
  a.end = reinterpret_cast<uintptr_t>(v) + bytes;
  a.shadow = static_cast<char*>(shadow);
  a.mapped = mapped;
  a.device = device;
  a.kind = Kind::ipc;
  a.serial = g_serial.fetch_add(1, std::memory_order_relaxed) + 1;
  try {
    table().insert(reinterpret_cast<uintptr_t>(v), a);
  } catch (...) {
    munmap(v, mapped + page_size());
    munmap(shadow, mapped);
    return Status::out_of_memory;
  }
  *view = v;
  return Status::ok;
}

Status unmap_ipc(void* view) noexcept {
  Allocation a;
  if (view == nullptr || !table().erase(reinterpret_cast<uintptr_t>(view), Kind::ipc, &a)) {
    STRATA_LOG(error, kDevice, "fake: ipc_close(%p): not an IPC mapping opened here", view);
    return fail("ipc_close", "invalid argument");
  }
  munmap(view, a.mapped + page_size());
  munmap(a.shadow, a.mapped);
  return Status::ok;
}

uint64_t classify_runtime_queries() noexcept { return g_queries.load(std::memory_order_relaxed); }

}  // namespace strata::gpu::fake
