// The device stand-in of the CPU build (portability/gpu/fake_device.hpp),
// through strata::gpu as Strata uses it. ctest runs it with
// STRATA_FAKE_DEVICE=2; the pack "kernels" on random layouts are
// test_pack_device's (its _fake variant), the rest of the runtime contract
// test_gpu_runtime's Gpu.* cases (test_gpu_runtime_fake). Here: what only
// the stand-in promises — memory the host cannot touch, its shadow, exact
// allocation bounds — and its copies against naive host loops.
#include <strata/device.hpp>
#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"
#include "portability/layout/box_copies.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace strata {
void PrintTo(Status s, std::ostream* os) { *os << to_string(s); }
}  // namespace strata

namespace {

namespace gpu = strata::gpu;
using strata::Status;
using strata::device::MemoryKind;
using Bytes = std::vector<unsigned char>;

#define ASSERT_OK(expr) ASSERT_EQ((expr), Status::ok) << #expr << ": " << gpu::last_error_string()
#define EXPECT_OK(expr) EXPECT_EQ((expr), Status::ok) << #expr << ": " << gpu::last_error_string()

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Device memory freed at scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n) { EXPECT_OK(gpu::malloc_device(&ptr, n)); }
  ~DeviceBuffer() {
    if (ptr != nullptr) {
      EXPECT_OK(gpu::free_device(ptr));
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* at(size_t offset) const { return static_cast<char*>(ptr) + offset; }
};

Bytes random_bytes(size_t n, std::mt19937_64& rng) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  return b;
}

Bytes read_back(const DeviceBuffer& d) {
  Bytes out(d.bytes);
  EXPECT_OK(gpu::memcpy_async(out.data(), d.ptr, d.bytes, nullptr));
  return out;
}

class FakeDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_STREQ(gpu::backend_name(), "fake") << "run with STRATA_FAKE_DEVICE=2 (ctest does)";
    ASSERT_TRUE(gpu::available());
  }
};

TEST_F(FakeDevice, DevicesAndProperties) {
  int count = 0;
  ASSERT_OK(gpu::device_count(&count));
  EXPECT_EQ(count, 2);
  EXPECT_STREQ(strata::device::backend(), "fake");
  for (int d = 0; d < count; ++d) {
    gpu::DeviceProperties p;
    ASSERT_OK(gpu::properties(d, &p));
    EXPECT_EQ(p.name, "strata fake device");
    EXPECT_EQ(p.sm_count, 4);
    EXPECT_EQ(p.warp_size, 32);
    EXPECT_EQ(p.max_threads_per_block, 1024);
    EXPECT_EQ(p.max_grid[0], 2147483647);
    EXPECT_EQ(p.compute_major, 9);
    EXPECT_EQ(p.compute_minor, 0);
  }
  gpu::DeviceProperties untouched;
  untouched.name = "untouched";
  EXPECT_EQ(gpu::properties(count, &untouched), Status::device_error);
  EXPECT_EQ(untouched.name, "untouched");
  EXPECT_EQ(gpu::set_device(-1), Status::device_error);
  EXPECT_EQ(gpu::set_device(count), Status::device_error);
  EXPECT_STREQ(gpu::last_error_string(), "invalid device ordinal");

  // The current device is per thread, 0 in a new thread.
  ASSERT_OK(gpu::set_device(1));
  int seen = -1;
  std::thread([&seen] { gpu::get_device(&seen); }).join();
  EXPECT_EQ(seen, 0);
  int mine = -1;
  ASSERT_OK(gpu::get_device(&mine));
  EXPECT_EQ(mine, 1);
  ASSERT_OK(gpu::set_device(0));
  EXPECT_OK(gpu::device_synchronize());
}

// Start, middle, last byte: device memory of the device current at
// allocation; one past the end: not (whatever the size's rounding).
TEST_F(FakeDevice, AllocationAndClassification) {
  for (size_t bytes : {size_t{1}, size_t{10000}, 2 * page(), size_t{3} << 20}) {
    for (int device : {0, 1}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes on device " + std::to_string(device));
      ASSERT_OK(gpu::set_device(device));
      DeviceBuffer buf(bytes);
      ASSERT_OK(gpu::set_device(0));
      ASSERT_NE(buf.ptr, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.ptr) % page(), 0u);
      for (size_t off : {size_t{0}, bytes / 2, bytes - 1}) {
        const strata::device::Pointer p = gpu::classify(buf.at(off));
        EXPECT_EQ(p.kind, MemoryKind::device) << "offset " << off;
        EXPECT_EQ(p.device, device) << "offset " << off;
        EXPECT_EQ(strata::device::classify(buf.at(off)).kind, MemoryKind::device);
        char* shadow = static_cast<char*>(gpu::host_view(buf.at(off)));
        EXPECT_NE(shadow, buf.at(off)) << "a device address is its own host view";
        EXPECT_EQ(shadow, static_cast<char*>(gpu::host_view(buf.ptr)) + off);
      }
      EXPECT_EQ(gpu::classify(buf.at(bytes)).kind, MemoryKind::host);
      EXPECT_EQ(gpu::host_view(buf.at(bytes)), buf.at(bytes));
    }
  }
  // Host memory is its own view.
  std::vector<char> host(64);
  EXPECT_EQ(gpu::host_view(host.data()), host.data());
  EXPECT_EQ(gpu::host_view(nullptr), nullptr);
  EXPECT_EQ(gpu::classify(host.data()).kind, MemoryKind::host);

  // Freed memory is forgotten; only an allocation's start can be freed.
  void* p = nullptr;
  ASSERT_OK(gpu::malloc_device(&p, 4096));
  EXPECT_EQ(gpu::free_device(static_cast<char*>(p) + 1), Status::device_error);
  EXPECT_EQ(gpu::free_device(host.data()), Status::device_error);
  ASSERT_OK(gpu::free_device(p));
  EXPECT_EQ(gpu::classify(p).kind, MemoryKind::host);
  EXPECT_EQ(gpu::free_device(p), Status::device_error);  // twice
  EXPECT_OK(gpu::free_device(nullptr));
  // Zero bytes: success and no memory, as cudaMalloc.
  void* none = reinterpret_cast<void*>(0x1);
  EXPECT_OK(gpu::malloc_device(&none, 0));
  EXPECT_EQ(none, nullptr);
}

// The runtime queries a real backend's cache would make (test_gpu_runtime's
// classification tests hold on the stand-in).
TEST_F(FakeDevice, ClassificationQueriesAreCounted) {
  DeviceBuffer buf(1 << 20);
  const uint64_t q0 = gpu::classify_runtime_queries();
  EXPECT_EQ(gpu::classify(buf.at(100)).kind, MemoryKind::device);
  EXPECT_EQ(gpu::classify_runtime_queries(), q0) << "an allocation made here is known";
  gpu::forget_classifications();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(gpu::classify(buf.at(i * 1000)).kind, MemoryKind::device);
  EXPECT_EQ(gpu::classify_runtime_queries() - q0, 1u);
  std::vector<char> host(1000);
  const uint64_t q1 = gpu::classify_runtime_queries();
  for (size_t i = 0; i < host.size(); ++i) EXPECT_EQ(gpu::classify(&host[i]).kind, MemoryKind::host);
  EXPECT_LE(gpu::classify_runtime_queries() - q1, 2u);
}

// Host -> device at an offset, device -> device, device -> host, against a
// host oracle; the bytes around every copy keep their guard values.
TEST_F(FakeDevice, MemcpyBothWaysKeepsGuards) {
  std::mt19937_64 rng(42);
  const size_t n = 3 * page() + 123;
  const size_t guard = 64;
  DeviceBuffer a(n + 2 * guard), b(n + 2 * guard);
  Bytes guards(n + 2 * guard, 0xC3);
  ASSERT_OK(gpu::memcpy_async(a.ptr, guards.data(), guards.size(), nullptr));
  ASSERT_OK(gpu::memcpy_async(b.ptr, guards.data(), guards.size(), nullptr));
  const Bytes data = random_bytes(n, rng);
  ASSERT_OK(gpu::memcpy_async(a.at(guard), data.data(), n, nullptr));
  ASSERT_OK(gpu::memcpy_async(b.at(guard), a.at(guard), n, nullptr));
  Bytes back(n + 2, 0xEE);
  ASSERT_OK(gpu::memcpy_async(back.data() + 1, b.at(guard), n, nullptr));
  EXPECT_EQ(back[0], 0xEE);
  EXPECT_EQ(back[n + 1], 0xEE);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin() + 1));
  Bytes want = guards;
  std::copy(data.begin(), data.end(), want.begin() + static_cast<std::ptrdiff_t>(guard));
  EXPECT_EQ(read_back(a), want);
  EXPECT_EQ(read_back(b), want);

  // The host side of every copy is the shadow: a direct read agrees.
  EXPECT_EQ(std::memcmp(gpu::host_view(b.at(guard)), data.data(), n), 0);

  // Nothing done for 0 bytes; null pointers are invalid.
  EXPECT_OK(gpu::memcpy_async(nullptr, nullptr, 0, nullptr));
  EXPECT_EQ(gpu::memcpy_async(nullptr, a.ptr, 1, nullptr), Status::invalid_argument);
}

TEST_F(FakeDevice, CopiesPastTheEndFailAndWriteNothing) {
  DeviceBuffer a(1000), b(1000);
  Bytes zeros(1000, 0), big(2000, 7);
  ASSERT_OK(gpu::memcpy_async(a.ptr, zeros.data(), 1000, nullptr));
  ASSERT_OK(gpu::memcpy_async(b.ptr, zeros.data(), 1000, nullptr));
  EXPECT_EQ(gpu::memcpy_async(a.ptr, big.data(), 1001, nullptr), Status::device_error);
  EXPECT_EQ(gpu::memcpy_async(a.at(999), big.data(), 2, nullptr), Status::device_error);
  EXPECT_EQ(gpu::memcpy_async(big.data(), a.at(1), 1000, nullptr), Status::device_error);
  EXPECT_EQ(gpu::memset_async(a.at(500), 1, 501, nullptr), Status::device_error);
  // Overlapping ranges of one allocation are refused (undefined on a GPU).
  EXPECT_EQ(gpu::memcpy_async(a.at(10), a.at(0), 100, nullptr), Status::device_error);
  EXPECT_EQ(read_back(a), zeros);
  EXPECT_EQ(big, Bytes(2000, 7));
}

TEST_F(FakeDevice, Memset) {
  DeviceBuffer d(10000);
  ASSERT_OK(gpu::memset_async(d.ptr, 0x11, 10000, nullptr));
  ASSERT_OK(gpu::memset_async(d.at(17), 0xAB, 333, nullptr));
  const Bytes got = read_back(d);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], (i >= 17 && i < 350) ? 0xAB : 0x11) << "byte " << i;
  }
  EXPECT_OK(gpu::memset_async(nullptr, 0, 0, nullptr));
  EXPECT_EQ(gpu::memset_async(nullptr, 0, 1, nullptr), Status::invalid_argument);
}

// The point of the stand-in: a host access to device memory (an MPI library
// that is not GPU-aware reading a send buffer) faults at once.
TEST_F(FakeDevice, HostAccessToDeviceMemoryFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DeviceBuffer d(8192);
  ASSERT_OK(gpu::memset_async(d.ptr, 1, 8192, nullptr));
  auto read = [](const void* p) { return *static_cast<const volatile char*>(p); };
  auto write = [](void* p) { *static_cast<volatile char*>(p) = 1; };
  EXPECT_DEATH(read(d.ptr), "");
  EXPECT_DEATH(read(d.at(8191)), "");
  EXPECT_DEATH(write(d.at(4096)), "");
  EXPECT_DEATH(std::memcpy(std::vector<char>(16).data(), d.at(100), 16), "");
  EXPECT_DEATH(read(d.at(8192)), "") << "the guard page after the allocation";
  // Its shadow is ordinary memory.
  EXPECT_EQ(read(gpu::host_view(d.at(8191))), 1);
}

// copy_box_async against the loop it stands for: `depth` slices of
// `height` rows of `width` bytes on the user's side, dense on the packed one.
TEST_F(FakeDevice, BoxCopiesMatchANaiveLoop) {
  std::mt19937_64 rng(7);
  auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int it = 0; it < 300; ++it) {
    strata::detail::BoxCopy box;
    box.width = pick(1, 40);
    box.pitch = box.width + pick(0, 24);
    box.height = pick(1, 9);
    box.depth = pick(1, 5);
    box.slice_pitch = box.pitch * (box.height + pick(0, 3));
    box.user_offset = pick(0, 50);
    box.packed_offset = pick(0, 30);
    const bool host_packed = it % 3 == 0;
    SCOPED_TRACE("iteration " + std::to_string(it) + (host_packed ? ", packed in host memory" : ""));
    const int64_t user_bytes = box.user_offset + (box.depth - 1) * box.slice_pitch + (box.height - 1) * box.pitch +
                               box.width;  // exactly up to the last byte
    const int64_t packed_bytes = box.packed_offset + box.bytes();
    DeviceBuffer user(static_cast<size_t>(user_bytes));
    DeviceBuffer packed_dev(static_cast<size_t>(packed_bytes));
    Bytes packed_host(static_cast<size_t>(packed_bytes));
    char* packed = host_packed ? reinterpret_cast<char*>(packed_host.data()) : packed_dev.at(0);
    auto put = [](char* dst, const Bytes& b) { ASSERT_OK(gpu::memcpy_async(dst, b.data(), b.size(), nullptr)); };
    auto get = [](Bytes& b, const char* src) { ASSERT_OK(gpu::memcpy_async(b.data(), src, b.size(), nullptr)); };

    // Pack.
    const Bytes src = random_bytes(static_cast<size_t>(user_bytes), rng);
    Bytes want(static_cast<size_t>(packed_bytes), 0x5A);
    put(user.at(0), src);
    put(packed, want);
    int64_t k = box.packed_offset;
    for (int64_t z = 0; z < box.depth; ++z) {
      for (int64_t y = 0; y < box.height; ++y) {
        for (int64_t x = 0; x < box.width; ++x) {
          want[static_cast<size_t>(k++)] =
              src[static_cast<size_t>(box.user_offset + z * box.slice_pitch + y * box.pitch + x)];
        }
      }
    }
    ASSERT_OK(gpu::copy_box_async(box, user.at(0), packed, true, nullptr));
    Bytes got(want.size());
    get(got, packed);
    ASSERT_EQ(got, want);

    // Unpack into a poisoned user buffer.
    const Bytes packed_src = random_bytes(static_cast<size_t>(packed_bytes), rng);
    Bytes user_want(static_cast<size_t>(user_bytes), 0x3C);
    put(user.at(0), user_want);
    put(packed, packed_src);
    k = box.packed_offset;
    for (int64_t z = 0; z < box.depth; ++z) {
      for (int64_t y = 0; y < box.height; ++y) {
        for (int64_t x = 0; x < box.width; ++x) {
          user_want[static_cast<size_t>(box.user_offset + z * box.slice_pitch + y * box.pitch + x)] =
              packed_src[static_cast<size_t>(k++)];
        }
      }
    }
    ASSERT_OK(gpu::copy_box_async(box, user.at(0), packed, false, nullptr));
    Bytes user_got(user_want.size());
    get(user_got, user.at(0));
    ASSERT_EQ(user_got, user_want);
  }
}

TEST_F(FakeDevice, BoxPastTheEndFails) {
  strata::detail::BoxCopy box;
  box.width = 8;
  box.pitch = 16;
  box.height = 4;
  box.slice_pitch = 64;
  DeviceBuffer user(3 * 16 + 7), packed(32);  // one byte short
  EXPECT_EQ(gpu::copy_box_async(box, user.at(0), packed.at(0), true, nullptr), Status::device_error);
  box.height = 1;
  box.slice_pitch = 16;
  EXPECT_EQ(gpu::copy_box_async(box, user.at(0), packed.at(0), true, nullptr), Status::ok);
  box.pitch = 4;  // narrower than a row
  EXPECT_EQ(gpu::copy_box_async(box, user.at(0), packed.at(0), true, nullptr), Status::invalid_argument);
}

// Packs read and write through host views, bounded by the allocations.
TEST_F(FakeDevice, PackThroughHostViews) {
  const strata::StridedBlock layout = strata::canonicalize(strata::LayoutIR::dense(4).repeat(100, 12), 0);
  ASSERT_EQ(layout.packed_bytes(), 400);
  const size_t span = static_cast<size_t>(layout.highest_byte());
  std::mt19937_64 rng(3);
  const Bytes src = random_bytes(span, rng);
  Bytes want(400);
  strata::pack_host(layout, src.data(), want.data());
  DeviceBuffer user(span), packed(400);
  ASSERT_OK(gpu::memcpy_async(user.ptr, src.data(), span, nullptr));
  gpu::Stream s = nullptr;
  ASSERT_OK(gpu::stream_create(&s));
  ASSERT_OK(strata::device::pack(layout, user.ptr, packed.ptr, s));
  ASSERT_OK(gpu::stream_synchronize(s));
  EXPECT_EQ(read_back(packed), want);
  // Blocks [10, 30) into host memory.
  Bytes part(80, 0);
  ASSERT_OK(gpu::pack_async(layout, user.ptr, part.data(), s, 10, 30));
  EXPECT_TRUE(std::equal(part.begin(), part.end(), want.begin() + 40));
  // A layout reaching past the user's allocation, a packed range past the
  // packed one: an illegal access, nothing written.
  ASSERT_OK(gpu::memset_async(packed.ptr, 0, 400, nullptr));
  EXPECT_EQ(gpu::pack_async(layout, user.at(1), packed.ptr, s), Status::device_error);
  EXPECT_EQ(gpu::pack_async(layout, user.ptr, packed.at(4), s), Status::device_error);
  EXPECT_EQ(gpu::unpack_async(layout, packed.ptr, user.at(4), s), Status::device_error);
  EXPECT_EQ(read_back(packed), Bytes(400, 0));
  EXPECT_OK(gpu::stream_destroy(s));
}

TEST_F(FakeDevice, EventsMeasureTime) {
  gpu::Stream s = nullptr;
  gpu::Event start = nullptr, stop = nullptr, plain = nullptr, never = nullptr;
  ASSERT_OK(gpu::stream_create(&s, true));
  ASSERT_OK(gpu::event_create(&start, true));
  ASSERT_OK(gpu::event_create(&stop, true));
  ASSERT_OK(gpu::event_create(&plain, false));
  ASSERT_OK(gpu::event_create(&never, true));
  ASSERT_OK(gpu::event_record(start, s));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_OK(gpu::event_record(stop, s));
  ASSERT_OK(gpu::event_record(plain, nullptr));
  bool done = false;
  ASSERT_OK(gpu::event_query(stop, &done));
  EXPECT_TRUE(done);
  ASSERT_OK(gpu::event_synchronize(stop));
  ASSERT_OK(gpu::stream_wait_event(s, stop));
  float ms = -1.0f;
  ASSERT_OK(gpu::event_elapsed_ms(start, stop, &ms));
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 10000.0f);
  float untouched = -1.0f;
  EXPECT_EQ(gpu::event_elapsed_ms(start, plain, &untouched), Status::device_error);  // no timing
  EXPECT_EQ(gpu::event_elapsed_ms(start, never, &untouched), Status::device_error);  // never recorded
  EXPECT_EQ(untouched, -1.0f);
  for (gpu::Event e : {start, stop, plain, never}) EXPECT_OK(gpu::event_destroy(e));
  EXPECT_OK(gpu::stream_destroy(s));
  // Handles used after their destruction are errors, not crashes.
  EXPECT_EQ(gpu::event_record(start, nullptr), Status::device_error);
  EXPECT_EQ(gpu::stream_synchronize(s), Status::device_error);
  EXPECT_EQ(gpu::memset_async(&ms, 0, sizeof(ms), s), Status::device_error);
  EXPECT_EQ(gpu::stream_destroy(s), Status::device_error);
  EXPECT_OK(gpu::stream_synchronize(nullptr));
}

TEST_F(FakeDevice, PinnedMemory) {
  for (bool mapped : {true, false}) {
    void* p = nullptr;
    ASSERT_OK(gpu::malloc_pinned(&p, 5000, mapped));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % page(), 0u);
    EXPECT_EQ(gpu::classify(p).kind, MemoryKind::pinned_host);
    EXPECT_EQ(gpu::classify(static_cast<char*>(p) + 4999).kind, MemoryKind::pinned_host);
    EXPECT_EQ(gpu::host_view(p), p);
    std::memset(p, 0x42, 5000);  // ordinary host memory
    void* dev = nullptr;
    ASSERT_OK(gpu::mapped_device_pointer(static_cast<char*>(p) + 8, &dev));
    EXPECT_EQ(dev, static_cast<char*>(p) + 8);
    // A copy from device memory lands in it.
    DeviceBuffer d(5000);
    ASSERT_OK(gpu::memset_async(d.ptr, 0x24, 5000, nullptr));
    ASSERT_OK(gpu::memcpy_async(dev, d.ptr, 100, nullptr));
    EXPECT_EQ(static_cast<unsigned char*>(p)[8], 0x24);
    EXPECT_EQ(static_cast<unsigned char*>(p)[7], 0x42);
    EXPECT_EQ(gpu::free_pinned(static_cast<char*>(p) + 1), Status::device_error);
    EXPECT_EQ(gpu::free_device(p), Status::device_error);
    ASSERT_OK(gpu::free_pinned(p));
  }
  std::vector<char> host(16);
  void* dev = nullptr;
  EXPECT_EQ(gpu::mapped_device_pointer(host.data(), &dev), Status::device_error);
  EXPECT_OK(gpu::free_pinned(nullptr));
}

// What of the stand-in's IPC one process can see (test_ipc_fake opens
// handles in another process): a handle names the whole allocation, only
// device memory of this process has one, and this process cannot open it.
TEST_F(FakeDevice, IpcHandlesInOneProcess) {
  DeviceBuffer d(3 * page());
  gpu::IpcHandle h{}, interior{};
  ASSERT_OK(gpu::ipc_get_handle(d.ptr, &h));
  ASSERT_OK(gpu::ipc_get_handle(d.at(page() + 5), &interior));
  EXPECT_EQ(std::memcmp(h.bytes, interior.bytes, sizeof(h.bytes)), 0);
  void* p = nullptr;
  ASSERT_OK(gpu::malloc_pinned(&p, 4096, false));
  std::vector<char> host(16);
  gpu::IpcHandle untouched{};
  EXPECT_EQ(gpu::ipc_get_handle(p, &untouched), Status::device_error);
  EXPECT_EQ(gpu::ipc_get_handle(host.data(), &untouched), Status::device_error);
  EXPECT_EQ(gpu::ipc_get_handle(d.at(3 * page()), &untouched), Status::device_error);  // one past the end
  EXPECT_EQ(untouched.bytes[0], 0);
  EXPECT_OK(gpu::free_pinned(p));
  void* opened = nullptr;
  EXPECT_EQ(gpu::ipc_open(h, &opened), Status::device_error);
  EXPECT_STREQ(gpu::last_error_string(), "invalid device context");
  EXPECT_EQ(opened, nullptr);
  EXPECT_EQ(gpu::ipc_close(d.ptr), Status::device_error);  // not a mapping opened here
  EXPECT_EQ(gpu::ipc_close(nullptr), Status::invalid_argument);
  gpu::IpcHandle garbage{};
  std::memset(garbage.bytes, 0x5A, sizeof(garbage.bytes));
  EXPECT_EQ(gpu::ipc_open(garbage, &opened), Status::device_error);
  EXPECT_EQ(opened, nullptr);
}

TEST_F(FakeDevice, NoGraphs) {
  bool capturing = true;
  EXPECT_OK(gpu::is_capturing(nullptr, &capturing));
  EXPECT_FALSE(capturing);
  EXPECT_EQ(gpu::capture_begin(nullptr), Status::not_supported);
}

TEST_F(FakeDevice, ConcurrentAllocationAndClassification) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&wrong, t] {
      gpu::set_device(t % 2);
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        if (gpu::malloc_device(&p, 4096 * static_cast<size_t>(1 + i % 3)) != Status::ok) {
          ++wrong;
          continue;
        }
        const strata::device::Pointer got = gpu::classify(static_cast<char*>(p) + 100);
        if (got.kind != MemoryKind::device || got.device != t % 2) ++wrong;
        unsigned char v = static_cast<unsigned char>(i);
        if (gpu::memcpy_async(p, &v, 1, nullptr) != Status::ok) ++wrong;
        if (*static_cast<unsigned char*>(gpu::host_view(p)) != v) ++wrong;
        if (gpu::free_device(p) != Status::ok) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The stand-in's devices all reach each other; no device reaches one
// that does not exist.
TEST_F(FakeDevice, EveryDeviceReachesEveryOther) {
  int devices = 0;
  ASSERT_EQ(gpu::device_count(&devices), strata::Status::ok);
  bool yes = false;
  for (int a = 0; a < devices; ++a) {
    for (int b = 0; b < devices; ++b) {
      ASSERT_EQ(gpu::can_access_peer(a, b, &yes), strata::Status::ok);
      EXPECT_TRUE(yes) << a << " -> " << b;
    }
  }
  ASSERT_EQ(gpu::can_access_peer(0, devices, &yes), strata::Status::ok);
  EXPECT_FALSE(yes);
}

}  // namespace
