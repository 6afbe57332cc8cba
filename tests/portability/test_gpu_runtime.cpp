// The device runtime layer (portability/gpu/gpu_api.hpp, strata/device.hpp).
//
// Cpu.*  run in every build and on every machine (ctest: test_gpu_runtime,
//        label device): host memory classifies as host; without a device
//        every call fails cleanly with not_supported and writes nothing.
// Gpu.*  need a device and skip without one (ctest: test_gpu_runtime_gpu,
//        labels device;gpu): devices and properties, streams and events,
//        device and pinned memory, the classification cache, IPC handles
//        (opened in a child process: CUDA refuses to open a handle in the
//        process that exported it).
//
// CUDA builds also allocate a few kinds of memory with the runtime directly
// (managed, host-registered), as an application would, to classify them.
#include <strata/device.hpp>
#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/ipc_cache.hpp"

#include <gtest/gtest.h>

#if defined(STRATA_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <spawn.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

extern char** environ;

namespace strata {
void PrintTo(Status s, std::ostream* os) { *os << to_string(s); }
}  // namespace strata

namespace {

using strata::Status;
using strata::device::MemoryKind;
using strata::device::Pointer;
namespace gpu = strata::gpu;

const char* kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::host: return "host";
    case MemoryKind::pinned_host: return "pinned_host";
    case MemoryKind::device: return "device";
    case MemoryKind::managed: return "managed";
  }
  return "?";
}

#define EXPECT_KIND(ptr, expected)                                                                  \
  do {                                                                                              \
    const Pointer got_ = gpu::classify(ptr);                                                        \
    EXPECT_EQ(got_.kind, (expected)) << #ptr << " classified " << kind_name(got_.kind) << ", want " \
                                     << kind_name(expected);                                        \
  } while (0)

#define ASSERT_OK(expr) ASSERT_EQ((expr), Status::ok) << #expr << ": " << gpu::last_error_string()
#define EXPECT_OK(expr) EXPECT_EQ((expr), Status::ok) << #expr << ": " << gpu::last_error_string()

#define SKIP_WITHOUT_DEVICE()                                           \
  do {                                                                  \
    if (!gpu::available()) {                                            \
      GTEST_SKIP() << "no GPU (backend " << gpu::backend_name() << ")"; \
    }                                                                   \
  } while (0)

int g_static_buffer[256];

// Can this process read its own memory through process_vm_readv? (The
// classification cache needs it to cache host answers.)
bool process_vm_readv_works() {
  char src = 1, dst = 0;
  iovec local{&dst, 1};
  iovec remote{&src, 1};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

// Device memory freed at scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_OK(gpu::malloc_device(&ptr, bytes)); }
  ~DeviceBuffer() {
    if (ptr != nullptr) {
      EXPECT_OK(gpu::free_device(ptr));
    }
  }
  char* bytes() const { return static_cast<char*>(ptr); }
};

struct PinnedBuffer {
  void* ptr = nullptr;
  PinnedBuffer(size_t bytes, bool mapped) { EXPECT_OK(gpu::malloc_pinned(&ptr, bytes, mapped)); }
  ~PinnedBuffer() {
    if (ptr != nullptr) {
      EXPECT_OK(gpu::free_pinned(ptr));
    }
  }
  char* bytes() const { return static_cast<char*>(ptr); }
};

// =============================================================================
// Every build, every machine
// =============================================================================

TEST(Cpu, BackendIsConsistent) {
  const std::string backend = gpu::backend_name();
  EXPECT_TRUE(backend == "none" || backend == "cuda" || backend == "hip" || backend == "fake") << backend;
  EXPECT_EQ(backend, strata::device::backend());
  EXPECT_EQ(gpu::available(), strata::device::available());
  if (backend == "none") {
    EXPECT_FALSE(gpu::available());
  }
  int count = -1;
  ASSERT_OK(gpu::device_count(&count));
  EXPECT_EQ(count > 0, gpu::available()) << "count " << count;
  EXPECT_EQ(gpu::device_count(nullptr), Status::invalid_argument);
  EXPECT_NE(gpu::last_error_string(), nullptr);
}

TEST(Cpu, HostMemoryClassifiesAsHost) {
  int on_stack[64] = {};
  std::vector<char> small(100);
  std::unique_ptr<char[]> big(new char[64 << 20]);
  void* mapped = mmap(nullptr, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);

  const void* pointers[] = {on_stack,
                            small.data(),
                            big.get(),
                            big.get() + (64 << 20) - 1,
                            g_static_buffer,
                            mapped,
                            static_cast<char*>(mapped) + (4 << 20)};
  for (int round = 0; round < 3; ++round) {  // answered again from the cache
    for (const void* p : pointers) {
      const Pointer got = gpu::classify(p);
      EXPECT_EQ(got.kind, MemoryKind::host) << p << " round " << round << ": " << kind_name(got.kind);
      EXPECT_EQ(got.device, -1) << p;
      EXPECT_EQ(strata::device::classify(p).kind, MemoryKind::host) << p;
    }
  }
  const Pointer null = gpu::classify(nullptr);
  EXPECT_EQ(null.kind, MemoryKind::host);
  EXPECT_EQ(null.device, -1);
  munmap(mapped, 8 << 20);
}

TEST(Cpu, ConcurrentHostClassification) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&wrong, t] {
      std::vector<char> mine(4096 * (t + 1));
      int local = t;
      for (int i = 0; i < 5000; ++i) {
        if (gpu::classify(mine.data() + (i % mine.size())).kind != MemoryKind::host) ++wrong;
        if (gpu::classify(&local).kind != MemoryKind::host) ++wrong;
        if (t == 0 && i % 1000 == 0) gpu::forget_classifications();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Cpu, WithoutDeviceEveryCallFailsCleanly) {
  if (gpu::available()) {
    GTEST_SKIP() << "a device is visible: covered by the Gpu tests";
  }
  const uint64_t queries = gpu::classify_runtime_queries();
  char host[64] = {};
  void* sentinel = reinterpret_cast<void*>(0x1234);
  void* p = sentinel;
  int d = -7;
  const auto ns = Status::not_supported;

  EXPECT_EQ(gpu::set_device(0), ns);
  EXPECT_EQ(gpu::get_device(&d), ns);
  EXPECT_EQ(d, -7);
  gpu::DeviceProperties props;
  props.name = "untouched";
  EXPECT_EQ(gpu::properties(0, &props), ns);
  EXPECT_EQ(props.name, "untouched");
  EXPECT_EQ(gpu::device_synchronize(), ns);

  gpu::Stream s = sentinel;
  gpu::Event e = sentinel;
  bool done = false;
  float ms = -1.0f;
  EXPECT_EQ(gpu::stream_create(&s), ns);
  EXPECT_EQ(s, sentinel);
  EXPECT_EQ(gpu::stream_destroy(sentinel), ns);
  EXPECT_EQ(gpu::stream_synchronize(nullptr), ns);
  EXPECT_EQ(gpu::event_create(&e, true), ns);
  EXPECT_EQ(e, sentinel);
  EXPECT_EQ(gpu::event_destroy(sentinel), ns);
  EXPECT_EQ(gpu::event_record(sentinel, nullptr), ns);
  EXPECT_EQ(gpu::event_synchronize(sentinel), ns);
  EXPECT_EQ(gpu::event_query(sentinel, &done), ns);
  EXPECT_FALSE(done);
  EXPECT_EQ(gpu::event_elapsed_ms(sentinel, sentinel, &ms), ns);
  EXPECT_EQ(ms, -1.0f);
  EXPECT_EQ(gpu::stream_wait_event(nullptr, sentinel), ns);

  EXPECT_EQ(gpu::malloc_device(&p, 1024), ns);
  EXPECT_EQ(p, sentinel);
  EXPECT_EQ(gpu::free_device(host), ns);
  EXPECT_EQ(gpu::malloc_pinned(&p, 1024, true), ns);
  EXPECT_EQ(gpu::malloc_pinned(&p, 1024, false), ns);
  EXPECT_EQ(p, sentinel);
  EXPECT_EQ(gpu::free_pinned(host), ns);
  EXPECT_EQ(gpu::mapped_device_pointer(host, &p), ns);
  EXPECT_EQ(p, sentinel);
  EXPECT_EQ(gpu::memcpy_async(host, host + 32, 16, nullptr), ns);
  EXPECT_EQ(gpu::memset_async(host, 0, 16, nullptr), ns);

  gpu::IpcHandle handle{};
  std::memset(handle.bytes, 0xEE, sizeof(handle.bytes));
  EXPECT_EQ(gpu::ipc_get_handle(host, &handle), ns);
  EXPECT_EQ(handle.bytes[0], 0xEE);
  EXPECT_EQ(gpu::ipc_open(handle, &p), ns);
  EXPECT_EQ(p, sentinel);
  EXPECT_EQ(gpu::ipc_close(host), ns);
  bool reach = true;
  EXPECT_EQ(gpu::can_access_peer(0, 1, &reach), ns);
  EXPECT_TRUE(reach);  // untouched
  gpu::AllocationRange range;
  range.buffer_id = 77;
  EXPECT_EQ(gpu::allocation_of(host, &range), ns);
  EXPECT_EQ(range.buffer_id, 77u);
  gpu::IpcExport exported{};
  exported.buffer_id = 77;
  EXPECT_EQ(gpu::ipc_export(host, &exported), ns);
  EXPECT_EQ(exported.buffer_id, 77u);
  exported.bytes = 64;
  char* mapped = nullptr;
  EXPECT_EQ(gpu::ipc_import(1, exported, &mapped), ns);
  EXPECT_EQ(mapped, nullptr);

  // Classification answers host and never asks a runtime.
  EXPECT_EQ(gpu::classify(host).kind, MemoryKind::host);
  gpu::forget_classifications();
  EXPECT_EQ(gpu::classify(host).kind, MemoryKind::host);
  EXPECT_EQ(gpu::classify_runtime_queries(), queries);
  EXPECT_NE(std::string(gpu::last_error_string()), "");
}

TEST(Cpu, WithoutDevicePackFailsCleanly) {
  if (gpu::available()) {
    GTEST_SKIP() << "a device is visible: packing is covered by the kernel tests";
  }
  const strata::StridedBlock layout = strata::canonicalize(strata::LayoutIR::dense(4).repeat(8, 16), 0);
  std::vector<char> base(8 * 16), packed(8 * 4);
  const Status p = strata::device::pack(layout, base.data(), packed.data(), nullptr);
  const Status u = strata::device::unpack(layout, packed.data(), base.data(), nullptr);
  EXPECT_NE(p, Status::ok);
  EXPECT_NE(u, Status::ok);
  if (std::string(gpu::backend_name()) == "none") {
    EXPECT_EQ(p, Status::not_supported);
    EXPECT_EQ(u, Status::not_supported);
  }
}

// =============================================================================
// With a device
// =============================================================================

TEST(Gpu, DevicesAndProperties) {
  SKIP_WITHOUT_DEVICE();
  int count = 0;
  ASSERT_OK(gpu::device_count(&count));
  ASSERT_GE(count, 1);
  int current = -1;
  ASSERT_OK(gpu::get_device(&current));
  EXPECT_GE(current, 0);
  EXPECT_LT(current, count);

  std::set<std::tuple<int, int, int>> pci;
  for (int d = 0; d < count; ++d) {
    gpu::DeviceProperties p;
    ASSERT_OK(gpu::properties(d, &p));
    SCOPED_TRACE("device " + std::to_string(d) + ": " + p.name);
    EXPECT_FALSE(p.name.empty());
    EXPECT_GT(p.sm_count, 0);
    EXPECT_TRUE(p.warp_size == 32 || p.warp_size == 64) << p.warp_size;
    EXPECT_GE(p.max_threads_per_block, 256);
    EXPECT_GE(p.max_grid[0], 65535);
    EXPECT_GE(p.max_grid[1], 65535);
    EXPECT_GE(p.max_grid[2], 64);
    EXPECT_GT(p.total_memory, int64_t{1} << 30);
    EXPECT_GT(p.compute_major, 0);
    EXPECT_GE(p.compute_minor, 0);
    EXPECT_GE(p.pci_domain, 0);
    EXPECT_GE(p.pci_bus, 0);
    EXPECT_GE(p.pci_device, 0);
    EXPECT_TRUE(p.multi_gpu_board == 0 || p.multi_gpu_board == 1) << p.multi_gpu_board;
    EXPECT_TRUE(pci.insert({p.pci_domain, p.pci_bus, p.pci_device}).second) << "duplicate PCI id";
    std::printf("device %d: %s, %d SMs, warp %d, cc %d.%d, %.1f GiB, pci %04x:%02x:%02x, board %d group %d\n", d,
                p.name.c_str(), p.sm_count, p.warp_size, p.compute_major, p.compute_minor,
                static_cast<double>(p.total_memory) / (1 << 30), p.pci_domain, p.pci_bus, p.pci_device,
                p.multi_gpu_board, p.multi_gpu_board_group);
  }

  for (int d = 0; d < count; ++d) {
    ASSERT_OK(gpu::set_device(d));
    int got = -1;
    ASSERT_OK(gpu::get_device(&got));
    EXPECT_EQ(got, d);
  }
  ASSERT_OK(gpu::set_device(current));

  // Failures are reported, logged and leave the outputs alone.
  gpu::DeviceProperties untouched;
  untouched.name = "untouched";
  EXPECT_EQ(gpu::properties(count + 100, &untouched), Status::device_error);
  EXPECT_EQ(untouched.name, "untouched");
  EXPECT_STRNE(gpu::last_error_string(), "no error");
  EXPECT_EQ(gpu::properties(0, nullptr), Status::invalid_argument);
  EXPECT_EQ(gpu::set_device(count + 100), Status::device_error);
  EXPECT_OK(gpu::device_synchronize());  // the failures above left nothing sticky behind
}

TEST(Gpu, StreamsAndEvents) {
  SKIP_WITHOUT_DEVICE();
  gpu::Stream stream = nullptr;
  ASSERT_OK(gpu::stream_create(&stream));
  ASSERT_NE(stream, nullptr);
#if defined(STRATA_HAVE_CUDA)
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(static_cast<cudaStream_t>(stream), &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, static_cast<unsigned>(cudaStreamNonBlocking));
#endif
  gpu::Event start = nullptr, stop = nullptr, plain = nullptr;
  ASSERT_OK(gpu::event_create(&start, true));
  ASSERT_OK(gpu::event_create(&stop, true));
  ASSERT_OK(gpu::event_create(&plain, false));

  const size_t bytes = size_t{256} << 20;
  DeviceBuffer buf(bytes);
  ASSERT_NE(buf.ptr, nullptr);
  ASSERT_OK(gpu::event_record(start, stream));
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(gpu::memset_async(buf.ptr, i, bytes, stream));
  }
  ASSERT_OK(gpu::event_record(stop, stream));
  ASSERT_OK(gpu::event_record(plain, stream));
  bool done = true;
  ASSERT_OK(gpu::event_query(stop, &done));  // either answer is fine; it must not fail
  ASSERT_OK(gpu::event_synchronize(stop));
  ASSERT_OK(gpu::event_query(stop, &done));
  EXPECT_TRUE(done);
  float ms = -1.0f;
  ASSERT_OK(gpu::event_elapsed_ms(start, stop, &ms));
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 60000.0f);
  std::printf("4 x memset of 256 MiB: %.3f ms\n", ms);
  float no_timing = -1.0f;
  EXPECT_EQ(gpu::event_elapsed_ms(start, plain, &no_timing), Status::device_error);
  EXPECT_EQ(no_timing, -1.0f);

  // A second stream waits for the first.
  gpu::Stream other = nullptr;
  ASSERT_OK(gpu::stream_create(&other));
  ASSERT_OK(gpu::stream_wait_event(other, stop));
  ASSERT_OK(gpu::stream_synchronize(other));
  ASSERT_OK(gpu::stream_synchronize(stream));
  ASSERT_OK(gpu::stream_synchronize(nullptr));

  EXPECT_EQ(gpu::stream_destroy(nullptr), Status::invalid_argument);
  EXPECT_EQ(gpu::event_destroy(nullptr), Status::invalid_argument);
  EXPECT_OK(gpu::event_destroy(start));
  EXPECT_OK(gpu::event_destroy(stop));
  EXPECT_OK(gpu::event_destroy(plain));
  EXPECT_OK(gpu::stream_destroy(other));
  EXPECT_OK(gpu::stream_destroy(stream));
}

TEST(Gpu, DeviceMemoryRoundTrip) {
  SKIP_WITHOUT_DEVICE();
  const size_t bytes = (1 << 20) + 3;
  DeviceBuffer a(bytes), b(bytes);
  ASSERT_NE(a.ptr, nullptr);
  std::vector<unsigned char> src(bytes), dst(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  ASSERT_OK(gpu::memcpy_async(a.ptr, src.data(), bytes, nullptr));
  ASSERT_OK(gpu::memcpy_async(b.ptr, a.ptr, bytes, nullptr));
  ASSERT_OK(gpu::memset_async(b.bytes() + 10, 0xAB, 5, nullptr));
  ASSERT_OK(gpu::memcpy_async(dst.data(), b.ptr, bytes, nullptr));
  ASSERT_OK(gpu::stream_synchronize(nullptr));
  for (size_t i = 0; i < bytes; ++i) {
    const unsigned char want = (i >= 10 && i < 15) ? 0xAB : src[i];
    ASSERT_EQ(dst[i], want) << "byte " << i;
  }
  EXPECT_OK(gpu::memcpy_async(dst.data(), a.ptr, 0, nullptr));  // nothing to do
  EXPECT_OK(gpu::free_device(nullptr));
}

TEST(Gpu, MappedPinnedMemory) {
  SKIP_WITHOUT_DEVICE();
  const size_t bytes = 1 << 20;
  PinnedBuffer mapped(bytes, true);
  PinnedBuffer unmapped(bytes, false);
  ASSERT_NE(mapped.ptr, nullptr);
  ASSERT_NE(unmapped.ptr, nullptr);
  std::memset(mapped.ptr, 0, bytes);

  void* dptr = nullptr;
  ASSERT_OK(gpu::mapped_device_pointer(mapped.ptr, &dptr));
  ASSERT_NE(dptr, nullptr);
  // Under unified addressing the device address is the host address; other
  // platforms may give another one. Both are valid.
  std::printf("mapped pinned: host %p device %p (%s)\n", mapped.ptr, dptr, dptr == mapped.ptr ? "same" : "differ");

  // Write through the mapping from the device side: a device-to-"device"
  // copy into the mapped address must land in host memory.
  DeviceBuffer src(bytes);
  ASSERT_OK(gpu::memset_async(src.ptr, 0x5A, bytes, nullptr));
  ASSERT_OK(gpu::memcpy_async(dptr, src.ptr, bytes, nullptr));
  ASSERT_OK(gpu::stream_synchronize(nullptr));
  for (size_t i = 0; i < bytes; i += 4093) {
    ASSERT_EQ(static_cast<unsigned char>(mapped.bytes()[i]), 0x5A) << "byte " << i;
  }
  ASSERT_EQ(static_cast<unsigned char>(mapped.bytes()[bytes - 1]), 0x5A);

  EXPECT_KIND(mapped.ptr, MemoryKind::pinned_host);
  EXPECT_KIND(mapped.bytes() + bytes / 2, MemoryKind::pinned_host);
  EXPECT_KIND(unmapped.ptr, MemoryKind::pinned_host);
  EXPECT_EQ(gpu::mapped_device_pointer(nullptr, &dptr), Status::invalid_argument);
  EXPECT_OK(gpu::free_pinned(nullptr));
}

TEST(Gpu, ClassifyDeviceStartMiddleLastByte) {
  SKIP_WITHOUT_DEVICE();
  int count = 0, current = 0;
  ASSERT_OK(gpu::device_count(&count));
  ASSERT_OK(gpu::get_device(&current));
  for (int d = 0; d < count; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    ASSERT_OK(gpu::set_device(d));
    const size_t bytes = (3 << 20) + 17;
    DeviceBuffer buf(bytes);
    ASSERT_NE(buf.ptr, nullptr);
    ASSERT_OK(gpu::set_device(current));  // classification must not depend on the current device
    // Known from the allocation itself.
    for (const char* p : {buf.bytes(), buf.bytes() + bytes / 2, buf.bytes() + bytes - 1}) {
      const Pointer got = gpu::classify(p);
      EXPECT_EQ(got.kind, MemoryKind::device) << kind_name(got.kind);
      EXPECT_EQ(got.device, d);
    }
    // Learnt from the runtime: one query for the whole allocation.
    gpu::forget_classifications();
    const uint64_t q0 = gpu::classify_runtime_queries();
    for (const char* p : {buf.bytes() + bytes / 2, buf.bytes(), buf.bytes() + bytes - 1, buf.bytes() + 1}) {
      const Pointer got = gpu::classify(p);
      EXPECT_EQ(got.kind, MemoryKind::device) << kind_name(got.kind);
      EXPECT_EQ(got.device, d);
    }
    EXPECT_EQ(gpu::classify_runtime_queries() - q0, 1u) << "the allocation's range was not cached";
    ASSERT_OK(gpu::set_device(d));
  }
  ASSERT_OK(gpu::set_device(current));
}

TEST(Gpu, ClassifyCacheAnswersRepeatedQueries) {
  SKIP_WITHOUT_DEVICE();
  DeviceBuffer buf(1 << 20);
  gpu::forget_classifications();
  const uint64_t q0 = gpu::classify_runtime_queries();
  ASSERT_EQ(gpu::classify(buf.ptr).kind, MemoryKind::device);
  EXPECT_EQ(gpu::classify_runtime_queries() - q0, 1u);
  const auto t0 = std::chrono::steady_clock::now();
  int device_answers = 0;
  for (int i = 1; i < 10000; ++i) {
    device_answers += gpu::classify(buf.ptr).kind == MemoryKind::device;
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / 9999.0;
  EXPECT_EQ(device_answers, 9999);
  EXPECT_EQ(gpu::classify_runtime_queries() - q0, 1u) << "lookups 2..10000 went to the runtime";
  RecordProperty("cached_classify_ns", std::to_string(ns));
  std::printf("cached classify of device memory: %.1f ns per lookup\n", ns);

  if (!process_vm_readv_works()) {
    std::printf("process_vm_readv refused here: host answers are not cached (by design)\n");
    return;
  }
  std::vector<char> host(1 << 16);
  const uint64_t q1 = gpu::classify_runtime_queries();
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(gpu::classify(host.data() + (i % host.size())).kind, MemoryKind::host);
  }
  // One query for the granule, two if the vector straddles a 2 MiB boundary.
  EXPECT_LE(gpu::classify_runtime_queries() - q1, 2u);
}

TEST(Gpu, ClassifyPinnedHost) {
  SKIP_WITHOUT_DEVICE();
  const size_t bytes = (1 << 20) + 100;
  PinnedBuffer pinned(bytes, true);
  ASSERT_NE(pinned.ptr, nullptr);
  EXPECT_KIND(pinned.ptr, MemoryKind::pinned_host);
  EXPECT_KIND(pinned.bytes() + bytes - 1, MemoryKind::pinned_host);
  gpu::forget_classifications();
  const uint64_t q0 = gpu::classify_runtime_queries();
  EXPECT_KIND(pinned.bytes() + 5, MemoryKind::pinned_host);
  EXPECT_KIND(pinned.bytes() + bytes - 1, MemoryKind::pinned_host);
  EXPECT_KIND(pinned.bytes() + 5, MemoryKind::pinned_host);
  const uint64_t used = gpu::classify_runtime_queries() - q0;
  EXPECT_GE(used, 1u);
  EXPECT_LE(used, 2u);  // the repeated address is always cached
  std::printf("pinned allocation range from the runtime: %s\n", used == 1 ? "yes" : "no (cached per address)");

  // Ordinary host memory next to pinned memory stays host.
  std::vector<char> pageable(4096);
  EXPECT_KIND(pageable.data(), MemoryKind::host);
  EXPECT_KIND(pinned.ptr, MemoryKind::pinned_host);
}

#if defined(STRATA_HAVE_CUDA)
TEST(Gpu, ClassifyRegisteredHostMemory) {
  SKIP_WITHOUT_DEVICE();
  const size_t bytes = 4 << 20;
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, bytes), 0);
  std::memset(raw, 0, bytes);
  ASSERT_EQ(cudaHostRegister(raw, bytes, cudaHostRegisterDefault), cudaSuccess);
  gpu::forget_classifications();
  EXPECT_KIND(raw, MemoryKind::pinned_host);
  EXPECT_KIND(static_cast<char*>(raw) + bytes - 1, MemoryKind::pinned_host);
  ASSERT_EQ(cudaHostUnregister(raw), cudaSuccess);
  gpu::forget_classifications();  // the application's unregister is not seen by the cache
  EXPECT_KIND(raw, MemoryKind::host);
  std::free(raw);
}

TEST(Gpu, ClassifyManagedMemory) {
  SKIP_WITHOUT_DEVICE();
  int current = 0;
  ASSERT_OK(gpu::get_device(&current));
  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 1 << 20, cudaMemAttachGlobal), cudaSuccess);
  gpu::forget_classifications();
  const Pointer p = gpu::classify(managed);
  EXPECT_EQ(p.kind, MemoryKind::managed) << kind_name(p.kind);
  EXPECT_KIND(static_cast<char*>(managed) + (1 << 19), MemoryKind::managed);
  std::printf("managed memory: device %d (current %d)\n", p.device, current);
  ASSERT_EQ(cudaFree(managed), cudaSuccess);
  gpu::forget_classifications();
}
#endif

TEST(Gpu, ClassifyHostKindsWithDeviceInUse) {
  SKIP_WITHOUT_DEVICE();
  DeviceBuffer keep(4096);
  int on_stack = 0;
  std::unique_ptr<char[]> heap(new char[10 << 20]);
  EXPECT_KIND(&on_stack, MemoryKind::host);
  EXPECT_KIND(heap.get(), MemoryKind::host);
  EXPECT_KIND(heap.get() + (10 << 20) - 1, MemoryKind::host);
  EXPECT_KIND(g_static_buffer, MemoryKind::host);
  EXPECT_KIND(static_cast<const void*>(nullptr), MemoryKind::host);
}

// Probing the address just past a device allocation (or any unallocated
// device address) must not teach the cache that the surrounding 2 MiB are
// host memory: the next small allocations land exactly there.
TEST(Gpu, OnePastTheEndDoesNotPoisonLaterAllocations) {
  SKIP_WITHOUT_DEVICE();
  const size_t bytes = 4096;
  DeviceBuffer first(bytes);
  ASSERT_NE(first.ptr, nullptr);
  gpu::forget_classifications();
  EXPECT_KIND(first.ptr, MemoryKind::device);
  EXPECT_KIND(first.bytes() + bytes - 1, MemoryKind::device);
  const Pointer past = gpu::classify(first.bytes() + bytes);
  std::printf("one past the end of a 4 KiB device allocation: %s\n", kind_name(past.kind));
  (void)gpu::classify(first.bytes() + bytes + 100000);  // free tail of the driver's page

  std::vector<std::unique_ptr<DeviceBuffer>> later;
  for (int i = 0; i < 32; ++i) {
    later.push_back(std::make_unique<DeviceBuffer>(bytes));
    gpu::forget_classifications();  // as if allocated by the application, out of our sight
    (void)gpu::classify(first.bytes() + bytes);
    EXPECT_KIND(later.back()->ptr, MemoryKind::device);
  }
  for (auto& b : later) {
    EXPECT_KIND(b->ptr, MemoryKind::device);
  }
}

// Freed through this API and allocated again (the runtime usually returns
// the same address): still device, with the right device.
TEST(Gpu, FreedAndReallocatedDeviceMemory) {
  SKIP_WITHOUT_DEVICE();
  int current = 0;
  ASSERT_OK(gpu::get_device(&current));
  for (size_t bytes : {size_t{1} << 20, size_t{64} << 20, size_t{512}}) {
    void* a = nullptr;
    ASSERT_OK(gpu::malloc_device(&a, bytes));
    gpu::forget_classifications();
    EXPECT_KIND(a, MemoryKind::device);
    ASSERT_OK(gpu::free_device(a));
    void* b = nullptr;
    ASSERT_OK(gpu::malloc_device(&b, bytes * 2));
    const Pointer got = gpu::classify(static_cast<char*>(b) + bytes * 2 - 1);
    EXPECT_EQ(got.kind, MemoryKind::device) << kind_name(got.kind);
    EXPECT_EQ(got.device, current);
    gpu::forget_classifications();
    EXPECT_KIND(static_cast<char*>(b) + bytes * 2 - 1, MemoryKind::device);
    ASSERT_OK(gpu::free_device(b));
  }
}

TEST(Gpu, ConcurrentClassification) {
  SKIP_WITHOUT_DEVICE();
  const size_t bytes = 8 << 20;
  DeviceBuffer dev(bytes);
  PinnedBuffer pinned(bytes, false);
  std::vector<char> heap(bytes);
  int current = 0;
  ASSERT_OK(gpu::get_device(&current));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      int local = t;
      for (int i = 0; i < 20000; ++i) {
        const size_t off = (static_cast<size_t>(i) * 7919 + t * 104729) % bytes;
        const Pointer d = gpu::classify(dev.bytes() + off);
        if (d.kind != MemoryKind::device || d.device != current) ++wrong;
        if (gpu::classify(pinned.bytes() + off).kind != MemoryKind::pinned_host) ++wrong;
        if (gpu::classify(heap.data() + off).kind != MemoryKind::host) ++wrong;
        if (gpu::classify(&local).kind != MemoryKind::host) ++wrong;
        if (t == 0 && i % 2000 == 0) gpu::forget_classifications();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// --- IPC ------------------------------------------------------------------------

std::string to_hex(const gpu::IpcHandle& h) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned char c : h.bytes) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

bool from_hex(const char* s, gpu::IpcHandle* h) {
  if (std::strlen(s) != 2 * sizeof(h->bytes)) return false;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < sizeof(h->bytes); ++i) {
    h->bytes[i] = static_cast<unsigned char>(nibble(s[2 * i]) * 16 + nibble(s[2 * i + 1]));
  }
  return true;
}

constexpr size_t kIpcBytes = 1 << 20;
constexpr unsigned char kIpcPattern = 0xA7;

TEST(Gpu, IpcHandleOpenedByAnotherProcess) {
  SKIP_WITHOUT_DEVICE();
  DeviceBuffer buf(kIpcBytes);
  ASSERT_NE(buf.ptr, nullptr);
  ASSERT_OK(gpu::memset_async(buf.ptr, kIpcPattern, kIpcBytes, nullptr));
  ASSERT_OK(gpu::stream_synchronize(nullptr));

  gpu::IpcHandle handle{};
  ASSERT_OK(gpu::ipc_get_handle(buf.ptr, &handle));
  bool nonzero = false;
  for (unsigned char c : handle.bytes) nonzero |= c != 0;
  EXPECT_TRUE(nonzero);
  EXPECT_EQ(gpu::ipc_get_handle(nullptr, &handle), Status::invalid_argument);
  EXPECT_EQ(gpu::ipc_close(nullptr), Status::invalid_argument);
  std::vector<char> host(64);
  gpu::IpcHandle bad{};
  EXPECT_EQ(gpu::ipc_get_handle(host.data(), &bad), Status::device_error);

  // The exporting process may not open its own handle (CUDA refuses it); it
  // must fail cleanly, or succeed and close where a runtime allows it.
  void* self = nullptr;
  const Status own = gpu::ipc_open(handle, &self);
  if (own == Status::ok) {
    EXPECT_OK(gpu::ipc_close(self));
  } else {
    EXPECT_EQ(own, Status::device_error);
  }

  // A fresh process opens it: this binary again, running only the child test.
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.push_back("STRATA_TEST_IPC_HANDLE=" + to_hex(handle));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(&s[0]);
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=GpuIpcChild.OpensTheHandle";
  char* argv[] = {exe, &filter[0], nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, exe, nullptr, nullptr, argv, envp.data()), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by a signal";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child failed to open or read the handle (its output is above)";
}

// Runs only as the child of the test above.
TEST(GpuIpcChild, OpensTheHandle) {
  const char* hex = std::getenv("STRATA_TEST_IPC_HANDLE");
  if (hex == nullptr) {
    GTEST_SKIP() << "runs as the child of Gpu.IpcHandleOpenedByAnotherProcess";
  }
  ASSERT_TRUE(gpu::available()) << "the parent saw a device, the child must too";
  gpu::IpcHandle handle{};
  ASSERT_TRUE(from_hex(hex, &handle));
  void* p = nullptr;
  ASSERT_OK(gpu::ipc_open(handle, &p));
  ASSERT_NE(p, nullptr);
  int current = 0;
  ASSERT_OK(gpu::get_device(&current));
  const Pointer got = gpu::classify(p);
  EXPECT_EQ(got.kind, MemoryKind::device) << kind_name(got.kind);
  EXPECT_EQ(got.device, current);
  EXPECT_KIND(static_cast<char*>(p) + kIpcBytes - 1, MemoryKind::device);
  std::vector<unsigned char> host(kIpcBytes, 0);
  ASSERT_OK(gpu::memcpy_async(host.data(), p, kIpcBytes, nullptr));
  ASSERT_OK(gpu::stream_synchronize(nullptr));
  for (size_t i = 0; i < kIpcBytes; i += 997) {
    ASSERT_EQ(host[i], kIpcPattern) << "byte " << i;
  }
  EXPECT_OK(gpu::ipc_close(p));
}

}  // namespace
