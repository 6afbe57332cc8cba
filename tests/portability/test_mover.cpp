// The device data mover (portability/mover): its staging pools, the host
// mirrors the collectives stage device buffers with, and a device message
// packed and unpacked through staging on the copy engines, counted by the
// mover's own counters. On the device stand-in of the CPU build
// (STRATA_FAKE_DEVICE=1: device memory the host cannot touch), or a GPU;
// the device cases skip without either.
#include <strata/device.hpp>
#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/chunked_transfer.hpp"
#include "portability/mover/copies.hpp"
#include "portability/mover/counters.hpp"
#include "portability/mover/device_transfer.hpp"
#include "portability/mover/engine_choice.hpp"
#include "portability/mover/host_mirror.hpp"
#include "portability/mover/pack_order.hpp"
#include "portability/mover/staging.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

namespace strata {
void PrintTo(Status s, std::ostream* os) { *os << to_string(s); }
}  // namespace strata

namespace {

namespace gpu = strata::gpu;
namespace mover = strata::mover;
using strata::Status;
using strata::StridedBlock;
using strata::device::MemoryKind;

#define REQUIRE_DEVICE()                                                           \
  do {                                                                             \
    if (!gpu::available()) GTEST_SKIP() << "no device (set STRATA_FAKE_DEVICE=1)"; \
  } while (0)

// Device memory freed at scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t n) { EXPECT_EQ(gpu::malloc_device(&ptr, n), Status::ok); }
  ~DeviceBuffer() {
    if (ptr != nullptr) {
      EXPECT_EQ(gpu::free_device(ptr), Status::ok);
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* data() const { return static_cast<char*>(ptr); }
};

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 31 + static_cast<size_t>(seed)) & 0xff);
  return v;
}

TEST(Staging, PoolsKeepReleasedBuffersPerSizeClass) {
  const mover::Counters& c = mover::counters();
  char* first = nullptr;
  {
    mover::Staging s = mover::Staging::host(5000);  // the 8 KiB class
    ASSERT_TRUE(s);
    first = s.data();
  }
  const uint64_t allocated = c.staging_allocated.load();
  const uint64_t acquired = c.staging_acquired.load();
  {
    mover::Staging again = mover::Staging::host(8192);  // same class: the kept buffer
    EXPECT_EQ(again.data(), first);
    mover::Staging other = mover::Staging::host(8193);  // the next class
    ASSERT_TRUE(other);
    EXPECT_NE(other.data(), first);
  }
  EXPECT_EQ(c.staging_acquired.load() - acquired, 2u);
  EXPECT_LE(c.staging_allocated.load() - allocated, 1u) << "only the 16 KiB class may have been empty";
  mover::trim_staging();
  mover::Staging after = mover::Staging::host(8192);
  EXPECT_TRUE(after);
}

// A pool at its limit makes room for a returned buffer by freeing the
// buffers kept longest, of any class; before, it freed the returned one, so
// a program whose messages grew allocated (and freed) part of its new
// working set at every step. Host pool, its default limit of 256 MiB
// (untouched allocations: only address space).
TEST(Staging, AFullPoolKeepsTheBuffersReturnedLast) {
  if (std::getenv("STRATA_HOST_POOL_BYTES") != nullptr) GTEST_SKIP() << "the test assumes the default limit";
  constexpr int64_t kLimit = int64_t{256} << 20;
  constexpr int64_t kSmall = int64_t{16} << 20, kLarge = int64_t{64} << 20;
  const mover::Counters& c = mover::counters();
  mover::trim_staging();
  auto hold = [](int64_t bytes, int n) {
    std::vector<mover::Staging> held;
    for (int i = 0; i < n; ++i) held.push_back(mover::Staging::host(bytes));
    for (const mover::Staging& s : held) EXPECT_TRUE(s);
    return held;
  };
  hold(kSmall, static_cast<int>(kLimit / kSmall));  // returned: the pool is full of 16 MiB buffers
  const uint64_t evicted = c.staging_evicted.load();
  hold(kLarge, 3);  // returned: they push out 12 of the 16 MiB ones
  EXPECT_EQ(c.staging_evicted.load() - evicted, 12u);
  for (int step = 0; step < 3; ++step) {
    const uint64_t allocated = c.staging_allocated.load();
    hold(kLarge, 3);
    EXPECT_EQ(c.staging_allocated.load() - allocated, 0u) << "step " << step << ": the 64 MiB buffers were kept";
  }
  // The 4 small ones that were not pushed out are still kept.
  const uint64_t allocated = c.staging_allocated.load();
  const uint64_t before = c.staging_evicted.load();
  hold(kSmall, 4);
  EXPECT_EQ(c.staging_allocated.load() - allocated, 0u);
  EXPECT_EQ(c.staging_evicted.load() - before, 0u) << "taking and returning kept buffers evicts nothing";
  // A buffer larger than the limit is never kept and evicts nothing.
  const uint64_t evicted_before_huge = c.staging_evicted.load();
  hold(kLimit * 2, 1);
  EXPECT_EQ(c.staging_evicted.load() - evicted_before_huge, 0u);
  mover::trim_staging();
}

// A window of more large messages than the pinned pool holds (osu_bw's 64
// of 16 MiB: 1 GiB against the default 512 MiB): those it cannot pin are
// staged unpinned, and the pool is stocked for them only where it will
// have room once the window's buffers are back. Counting only the kept
// buffers, each window stocked a 16 MiB buffer for each unpinned message
// and its return evicted as many (a cudaHostAlloc and a cudaFreeHost a
// message; osu_bw D D staged read 2 GB/s at 8-16 MiB against 4.6 at 4).
// The window as the transport runs it: every message reserved, then the
// unpinned ones stock the pool (note_unpinned, at the pack), then all are
// released.
TEST(Staging, AWindowLargerThanThePinnedPoolDoesNotChurnIt) {
  REQUIRE_DEVICE();
  if (std::getenv("STRATA_PINNED_POOL_BYTES") != nullptr) GTEST_SKIP() << "the test assumes the default limit";
  constexpr int64_t kBytes = int64_t{16} << 20;
  constexpr int kWindow = 48;  // 768 MiB
  const mover::Counters& c = mover::counters();
  mover::trim_staging();
  uint64_t allocated = 0, evicted = 0;
  for (int window = 0; window < 4; ++window) {
    allocated = c.pinned_allocated.load();
    evicted = c.staging_evicted.load();
    std::vector<mover::Staging> held;
    for (int m = 0; m < kWindow; ++m) held.push_back(mover::Staging::pinned_if_kept(kBytes));
    int pinned = 0;
    for (const mover::Staging& s : held) {
      ASSERT_TRUE(s);
      if (s.pinned()) {
        ++pinned;
      } else {
        mover::Staging::keep_pinned(kBytes);
      }
    }
    held.clear();
    if (window >= 2) {
      SCOPED_TRACE(window);
      EXPECT_EQ(pinned, 32) << "the pool's 512 MiB, kept";
      EXPECT_EQ(c.pinned_allocated.load() - allocated, 0u) << "no pinned buffer allocated in the steady state";
      EXPECT_EQ(c.staging_evicted.load() - evicted, 0u) << "and none freed";
    }
  }
  mover::trim_staging();
}

TEST(Staging, PinnedOrHostFollowsTheDevice) {
  mover::Staging s = mover::Staging::pinned_or_host(1000);
  ASSERT_TRUE(s);
  const MemoryKind kind = gpu::classify(s.data()).kind;
  if (gpu::available()) {
    EXPECT_EQ(kind, MemoryKind::pinned_host) << "pinned where a device runtime is there";
  } else {
    EXPECT_EQ(kind, MemoryKind::host);
  }
  std::memset(s.data(), 7, 1000);  // the host may touch it either way
}

TEST(HostMirror, HostMemoryIsUsedInPlace) {
  std::vector<char> host = pattern(256, 1);
  mover::HostMirror m;
  ASSERT_EQ(m.open(host.data(), host.size(), true, nullptr), Status::ok);
  EXPECT_FALSE(m.mirrored());
  EXPECT_EQ(m.data(), host.data());
  EXPECT_EQ(m.flush(nullptr), Status::ok);
}

TEST(HostMirror, DeviceMemoryGoesThroughPinnedStagingAndBack) {
  REQUIRE_DEVICE();
  constexpr size_t kBytes = 3000;
  DeviceBuffer d(kBytes);
  const std::vector<char> in = pattern(kBytes, 2);
  ASSERT_EQ(mover::copy_bytes(d.data(), in.data(), kBytes), Status::ok);
  char* staging = nullptr;
  {
    mover::HostMirror m;
    ASSERT_EQ(m.open(d.data(), kBytes, true, nullptr), Status::ok);
    ASSERT_TRUE(m.mirrored());
    staging = m.data();
    EXPECT_EQ(gpu::classify(staging).kind, MemoryKind::pinned_host);
    EXPECT_EQ(std::memcmp(staging, in.data(), kBytes), 0) << "read: the device bytes copied in";
    for (size_t i = 0; i < kBytes; ++i) staging[i] = static_cast<char>(~staging[i]);
    ASSERT_EQ(m.flush(nullptr), Status::ok);
  }
  std::vector<char> out(kBytes);
  ASSERT_EQ(mover::copy_bytes(out.data(), d.data(), kBytes), Status::ok);
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(out[i], static_cast<char>(~in[i])) << i;
  // Write-only: nothing copied in; the staging is the first mirror's, back
  // in the pinned pool.
  mover::HostMirror w;
  ASSERT_EQ(w.open(d.data(), kBytes, false, nullptr), Status::ok);
  EXPECT_EQ(w.data(), staging);
}

// 16 blocks of 24 bytes, 64 apart: one box of rows for the copy engines.
StridedBlock rows() {
  StridedBlock b;
  b.block = 24;
  b.dims = {strata::Stream{16, 64}};
  b.extent = 16 * 64;
  return b;
}

TEST(DeviceTransfer, StridedPartsThroughPinnedStaging) {
  REQUIRE_DEVICE();
  const StridedBlock layout = rows();
  const size_t span = static_cast<size_t>(layout.highest_byte());
  DeviceBuffer src(span);
  DeviceBuffer dst(span);
  const std::vector<char> host = pattern(span, 3);
  ASSERT_EQ(mover::copy_bytes(src.data(), host.data(), static_cast<int64_t>(span)), Status::ok);
  const std::vector<char> zero(span, 0);
  ASSERT_EQ(mover::copy_bytes(dst.data(), zero.data(), static_cast<int64_t>(span)), Status::ok);

  for (const mover::Method method : {mover::Method::oneshot, mover::Method::staged}) {
    SCOPED_TRACE(mover::to_string(method));
    mover::DeviceMessage message(0, method);
    ASSERT_EQ(message.reserve(layout.packed_bytes()), Status::ok);
    const mover::DevicePart send{&layout, src.data(), 0};
    ASSERT_EQ(mover::device_pack(message, &send, 1), Status::ok);
    std::vector<char> want(static_cast<size_t>(layout.packed_bytes()));
    strata::pack_host(layout, host.data(), want.data());
    EXPECT_EQ(std::memcmp(message.mpi_buffer(), want.data(), want.size()), 0) << "the packed bytes, on the host";
    const mover::DevicePart recv{&layout, dst.data(), 0};
    ASSERT_EQ(mover::device_unpack(message, &recv, 1, layout.packed_bytes()), Status::ok);
    std::vector<char> got(span);
    ASSERT_EQ(mover::copy_bytes(got.data(), dst.data(), static_cast<int64_t>(span)), Status::ok);
    std::vector<char> expect(span, 0);
    strata::unpack_host(layout, want.data(), expect.data());
    EXPECT_EQ(got, expect) << "the blocks written, the gaps untouched";
  }
}

// 8-byte blocks 24 bytes apart, `packed` bytes in all.
StridedBlock every_third_word(int64_t packed) {
  StridedBlock b;
  b.block = 8;
  b.dims = {strata::Stream{packed / 8, 24}};
  b.extent = packed / 8 * 24;
  return b;
}

// A message of a megabyte or more pins host memory only where the pool kept
// a buffer for it: a stream of large receives that got device-direct
// descriptors (a few bytes of each written) allocated and freed pinned
// buffers on every message once more were in flight than the pool keeps
// (2 GB/s on 2 x H200, stop 40). Unpinned, the bytes still move right, and
// the pool is stocked for the next message of the size.
TEST(DeviceTransfer, LargeMessagesPinOnlyWhatThePoolKept) {
  REQUIRE_DEVICE();
  mover::trim_staging();
  const mover::Counters& c = mover::counters();
  constexpr int64_t kPacked = mover::kUnpinnedFrom + 4096;
  {  // reserved and released untouched, as a receive that got a descriptor
    const uint64_t pinned = c.pinned_allocated.load();
    std::vector<mover::DeviceMessage> window;
    for (int m = 0; m < 64; ++m) {
      window.emplace_back(0, mover::Method::staged);
      ASSERT_EQ(window.back().reserve(kPacked), Status::ok);
      EXPECT_FALSE(window.back().host_staging.pinned());
      EXPECT_FALSE(window.back().device_staging) << "device staging before any strided part needed it";
    }
    EXPECT_EQ(c.pinned_allocated.load() - pinned, 0u);
  }
  const StridedBlock layout = every_third_word(kPacked);
  const auto span = static_cast<size_t>(layout.highest_byte());
  DeviceBuffer src(span);
  DeviceBuffer dst(span);
  const std::vector<char> host = pattern(span, 11);
  ASSERT_EQ(mover::copy_bytes(src.data(), host.data(), static_cast<int64_t>(span)), Status::ok);
  std::vector<char> want(static_cast<size_t>(kPacked));
  strata::pack_host(layout, host.data(), want.data());
  std::vector<char> expect(span, static_cast<char>(0xa5));  // poisoned: the gaps keep it
  strata::unpack_host(layout, want.data(), expect.data());
  for (const bool kept : {false, true}) {  // the first unpinned, the second in the buffer it stocked
    SCOPED_TRACE(kept ? "pinned, as the pool kept it" : "unpinned");
    const std::vector<char> poison(span, static_cast<char>(0xa5));
    ASSERT_EQ(mover::copy_bytes(dst.data(), poison.data(), static_cast<int64_t>(span)), Status::ok);
    const uint64_t unpinned = c.staged_unpinned.load(), pinned = c.pinned_allocated.load();
    mover::DeviceMessage message(0, mover::Method::oneshot);
    ASSERT_EQ(message.reserve(kPacked), Status::ok);
    EXPECT_EQ(message.host_staging.pinned(), kept);
    EXPECT_EQ(message.method(), kept ? mover::Method::oneshot : mover::Method::staged)
        << "the kernels cannot reach plain host memory";
    const mover::DevicePart send{&layout, src.data(), 0};
    ASSERT_EQ(mover::device_pack(message, &send, 1), Status::ok);
    EXPECT_EQ(std::memcmp(message.mpi_buffer(), want.data(), want.size()), 0) << "the packed bytes, on the host";
    const mover::DevicePart recv{&layout, dst.data(), 0};
    ASSERT_EQ(mover::device_unpack(message, &recv, 1, kPacked), Status::ok);
    std::vector<char> got(span);
    ASSERT_EQ(mover::copy_bytes(got.data(), dst.data(), static_cast<int64_t>(span)), Status::ok);
    EXPECT_EQ(got, expect) << "the blocks written, the gaps untouched";
    EXPECT_EQ(c.staged_unpinned.load() - unpinned, kept ? 0u : 2u) << "the pack and the unpack";
    EXPECT_EQ(c.pinned_allocated.load() - pinned, kept ? 0u : 2u) << "a buffer stocked by each, within the limit";
  }
  mover::trim_staging();
}

// STRATA_DEVICE_ENGINE=copies (ctest sets it): the strided part goes to the
// copy engines, which the mover counts (the interposer reports the count as
// strata_preload_counters' parts_by_copy_engine).
TEST(DeviceTransfer, CopyEnginePartsAreCounted) {
  REQUIRE_DEVICE();
  if (mover::engine_setting() != mover::EngineSetting::copies) GTEST_SKIP() << "run with STRATA_DEVICE_ENGINE=copies";
  const StridedBlock layout = rows();
  DeviceBuffer src(static_cast<size_t>(layout.highest_byte()));
  const uint64_t before = mover::counters().parts_by_copy_engine.load();
  mover::DeviceMessage message(0, mover::Method::oneshot);
  ASSERT_EQ(message.reserve(layout.packed_bytes()), Status::ok);
  const mover::DevicePart part{&layout, src.data(), 0};
  ASSERT_EQ(mover::device_pack(message, &part, 1), Status::ok);
  ASSERT_EQ(mover::device_unpack(message, &part, 1, layout.packed_bytes()), Status::ok);
  EXPECT_EQ(mover::counters().parts_by_copy_engine.load() - before, 2u) << "the pack and the unpack";
}

// A window of small contiguous one-shot messages (osu_bw's pattern): from
// STRATA_DEVICE_KERNEL_COPIES (8) of them on, a flush moves them all in its
// one kernel launch (whole 4 KiB blocks and a block of the rest), not one
// copy-engine call each, which cost 3-6 us of host time a message on the
// lent machines; fewer stay on the copy engine. Odd sizes at odd offsets,
// poisoned gaps between them, packed bytes checked on the host.
TEST(DeviceTransfer, SmallContiguousMessagesOfAFlush) {
  REQUIRE_DEVICE();
  const std::vector<int64_t> sizes = {1, 7, 4095, 4096, 4097, 9000, 65536, 333, 2};
  constexpr int64_t kGap = 13;
  std::vector<int64_t> at;
  int64_t span = 0;
  for (int64_t n : sizes) {
    at.push_back(span + kGap);
    span += kGap + n;
  }
  span += kGap;
  std::vector<StridedBlock> layouts(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    layouts[i].block = sizes[i];
    layouts[i].extent = sizes[i];
  }
  DeviceBuffer src(static_cast<size_t>(span)), dst(static_cast<size_t>(span));
  for (const size_t count : {size_t{3}, sizes.size()}) {
    SCOPED_TRACE(count);
    const std::vector<char> host = pattern(static_cast<size_t>(span), 40 + static_cast<int>(count));
    ASSERT_EQ(mover::copy_bytes(src.data(), host.data(), span), Status::ok);
    const std::vector<char> poison(static_cast<size_t>(span), static_cast<char>(0xc3));
    ASSERT_EQ(mover::copy_bytes(dst.data(), poison.data(), span), Status::ok);
    const uint64_t by_kernels = mover::counters().contiguous_by_kernels.load();
    std::vector<mover::DeviceMessage> messages;
    std::vector<mover::DevicePart> sends, recvs;
    std::vector<mover::PackTask> tasks;
    messages.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      messages.emplace_back(0, mover::Method::oneshot);
      ASSERT_EQ(messages.back().reserve(sizes[i]), Status::ok);
      sends.push_back(mover::DevicePart{&layouts[i], src.data() + at[i], 0});
      recvs.push_back(mover::DevicePart{&layouts[i], dst.data() + at[i], 0});
    }
    for (size_t i = 0; i < count; ++i) tasks.push_back(mover::PackTask{&messages[i], &sends[i], 1});
    ASSERT_EQ(mover::device_pack_all(tasks.data(), tasks.size()), Status::ok);
    for (size_t i = 0; i < count; ++i) {
      EXPECT_EQ(std::memcmp(messages[i].mpi_buffer(), host.data() + at[i], static_cast<size_t>(sizes[i])), 0)
          << "message " << i << ", packed on the host";
    }
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(mover::device_unpack(messages[i], &recvs[i], 1, sizes[i], /*wait=*/false), Status::ok);
    }
    ASSERT_EQ(mover::wait_for_queued_unpacks(), Status::ok);
    std::vector<char> got(static_cast<size_t>(span)), expect(poison);
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(expect.data() + at[i], host.data() + at[i], static_cast<size_t>(sizes[i]));
    }
    ASSERT_EQ(mover::copy_bytes(got.data(), dst.data(), span), Status::ok);
    EXPECT_EQ(got, expect) << "each message in place, the gaps untouched";
    const bool defaults = std::getenv("STRATA_DEVICE_KERNEL_COPIES") == nullptr &&
                          mover::engine_setting() != mover::EngineSetting::copies;
    if (defaults) {
      EXPECT_EQ(mover::counters().contiguous_by_kernels.load() - by_kernels, count >= 8 ? 2 * count : 0u)
          << "the packs and the unpacks";
    }
  }
}

// A pack of device staging left running behind an IPC event record
// (pack_order.hpp): the order names a record, records count up, the bytes
// are the host engine's once the packer waits for its own record; a reader
// on this process's stream queues a wait only for a record it has not
// waited for yet (an equal or older one is covered); a handle this process
// never exported is refused; a task the host transport reads (pinned
// staging) makes the pack wait, and no order is given.
TEST(PackOrder, DeviceStagingIsLeftRunningBehindAnEventRecord) {
  REQUIRE_DEVICE();
  const StridedBlock layout = rows();
  const size_t span = static_cast<size_t>(layout.highest_byte());
  DeviceBuffer src(span);
  const std::vector<char> host = pattern(span, 5);
  ASSERT_EQ(mover::copy_bytes(src.data(), host.data(), static_cast<int64_t>(span)), Status::ok);
  std::vector<char> want(static_cast<size_t>(layout.packed_bytes()));
  strata::pack_host(layout, host.data(), want.data());
  const mover::DevicePart part{&layout, src.data(), 0};

  mover::DeviceMessage first(0, mover::Method::device), second(0, mover::Method::device);
  ASSERT_EQ(first.reserve(layout.packed_bytes()), Status::ok);
  ASSERT_EQ(second.reserve(layout.packed_bytes()), Status::ok);
  const mover::PackTask one{&first, &part, 1}, two{&second, &part, 1};
  mover::PackOrder a, b;
  ASSERT_EQ(mover::device_pack_all(&one, 1, &a), Status::ok);
  ASSERT_EQ(mover::device_pack_all(&two, 1, &b), Status::ok);
  ASSERT_TRUE(a.pending() && b.pending()) << "device staging alone: left running";
  EXPECT_EQ(b.sequence, a.sequence + 1);
  EXPECT_EQ(std::memcmp(a.event.bytes, b.event.bytes, sizeof a.event.bytes), 0) << "one event per thread and device";
  ASSERT_EQ(mover::wait_for_own_pack(b), Status::ok);
  std::vector<char> got(want.size());
  ASSERT_EQ(mover::copy_bytes(got.data(), second.device_staging.data(), static_cast<int64_t>(got.size())), Status::ok);
  EXPECT_EQ(got, want) << "the packed bytes after the packer's own wait";

  const int64_t me = getpid();
  const uint64_t waits = mover::counters().pack_waits_queued.load();
  ASSERT_EQ(mover::order_reads_after(a.event, a.sequence, me, 0), Status::ok);
  EXPECT_EQ(mover::counters().pack_waits_queued.load(), waits + 1);
  ASSERT_EQ(mover::order_reads_after(a.event, a.sequence, me, 0), Status::ok);
  EXPECT_EQ(mover::counters().pack_waits_queued.load(), waits + 1) << "the same record again: covered";
  ASSERT_EQ(mover::order_reads_after(b.event, b.sequence, me, 0), Status::ok);
  EXPECT_EQ(mover::counters().pack_waits_queued.load(), waits + 2) << "a later record: waited for";
  ASSERT_EQ(mover::order_reads_after(a.event, a.sequence, me, 0), Status::ok);
  EXPECT_EQ(mover::counters().pack_waits_queued.load(), waits + 2) << "an older record: covered by the later wait";
  EXPECT_EQ(mover::wait_for_pack(b.event, b.sequence, me), Status::ok);
  EXPECT_EQ(mover::order_reads_after(a.event, 0, me, 0), Status::ok) << "no record: nothing to wait for";

  gpu::IpcEventHandle stranger{};
  stranger.bytes[0] = 1;
  EXPECT_EQ(mover::order_reads_after(stranger, 1, me, 0), Status::invalid_argument)
      << "a handle this process never exported";

  mover::DeviceMessage pinned(0, mover::Method::oneshot);
  ASSERT_EQ(pinned.reserve(layout.packed_bytes()), Status::ok);
  const mover::PackTask mixed[] = {{&first, &part, 1}, {&pinned, &part, 1}};
  mover::PackOrder c;
  ASSERT_EQ(mover::device_pack_all(mixed, 2, &c), Status::ok);
  EXPECT_FALSE(c.pending()) << "a host-bound message in the pack: waited for, no order";
  EXPECT_EQ(std::memcmp(pinned.mpi_buffer(), want.data(), want.size()), 0) << "its bytes, on the host at once";
}

// How a large message is cut: at most kPackChunks pieces of whole blocks,
// none smaller than asked unless the message is, covering every byte, none
// empty.
TEST(ChunkedTransfer, PlansCoverTheMessageInWholeBlocks) {
  EXPECT_EQ(mover::plan_chunks(1280000, 8, 262144).chunks, 4);
  EXPECT_EQ(mover::plan_chunks(1280000, 8, 262144).chunk_bytes, 320000);
  EXPECT_EQ(mover::plan_chunks(100, 8, 1000).chunks, 1);
  EXPECT_EQ(mover::plan_chunks(int64_t{64} << 20, 8, int64_t{1} << 20).chunks, mover::kPackChunks);
  EXPECT_EQ(mover::plan_chunks(0, 8, 1000).chunks, 0);
  std::mt19937_64 rng(std::random_device{}());
  for (int i = 0; i < 100000; ++i) {
    const int64_t block = 1 + static_cast<int64_t>(rng() % 4096);
    const int64_t bytes = block * (1 + static_cast<int64_t>(rng() % 100000));
    const int64_t least = 1 + static_cast<int64_t>(rng() % (1 << 22));
    const mover::ChunkPlan p = mover::plan_chunks(bytes, block, least);
    ASSERT_GE(p.chunks, 1);
    ASSERT_LE(p.chunks, mover::kPackChunks);
    ASSERT_EQ(p.chunk_bytes % block, 0) << bytes << " " << block;
    ASSERT_LT((p.chunks - 1) * p.chunk_bytes, bytes) << "an empty piece";
    ASSERT_GE(p.chunks * p.chunk_bytes, bytes) << "bytes left over";
    if (p.chunks > 1) {
      ASSERT_GE(p.chunk_bytes, std::min<int64_t>(least, bytes)) << bytes << " " << least;
    }
  }
}

// A pack in chunks left running behind one event record per chunk, read
// back piece by piece into a layout whose blocks straddle the chunks (in
// this process: the reader finds the events among its own); the packer's
// own wait covers the last chunk.
TEST(ChunkedTransfer, PiecesUnpackAfterTheirChunksEvents) {
  REQUIRE_DEVICE();
  StridedBlock sender;  // 8-byte blocks at a 24-byte stride, 4000 of them: 32000 bytes packed
  sender.block = 8;
  sender.dims = {{4000, 24}};
  StridedBlock receiver;  // 100-byte blocks at a 160-byte stride: 320 of them
  receiver.block = 100;
  receiver.dims = {{320, 160}};
  const size_t span = static_cast<size_t>(sender.highest_byte()),
               recv_span = static_cast<size_t>(receiver.highest_byte());
  DeviceBuffer src(span), dst(recv_span);
  const std::vector<char> host = pattern(span, 9);
  ASSERT_EQ(mover::copy_bytes(src.data(), host.data(), static_cast<int64_t>(span)), Status::ok);
  const std::vector<char> poison(recv_span, static_cast<char>(0xa5));
  ASSERT_EQ(mover::copy_bytes(dst.data(), poison.data(), static_cast<int64_t>(recv_span)), Status::ok);
  std::vector<char> packed(32000);
  strata::pack_host(sender, host.data(), packed.data());
  std::vector<char> want = poison;
  strata::unpack_host(receiver, packed.data(), want.data());

  mover::DeviceMessage message(0, mover::Method::device);
  ASSERT_EQ(message.reserve(32000), Status::ok);
  const mover::DevicePart part{&sender, src.data(), 0};
  const mover::ChunkPlan plan = mover::plan_chunks(32000, 8, 3000);  // 8 pieces of 4000 bytes: 40 blocks each
  ASSERT_EQ(plan.chunks, 8);
  mover::PackOrder order;
  ASSERT_EQ(mover::device_pack_chunked(message, part, plan, &order), Status::ok);
  ASSERT_EQ(order.chunks, 8);
  ASSERT_EQ(order.chunk_bytes, 4000);
  ASSERT_NE(order.chunk_events, nullptr);
  EXPECT_TRUE(order.pending());
  const uint64_t waits = mover::counters().pack_waits_queued.load();
  const mover::ChunkedSource source{order.chunk_events, order.chunks, order.chunk_bytes, getpid()};
  ASSERT_EQ(mover::device_unpack_chunked(0, message.device_staging.data(), receiver, dst.data(), 32000, source),
            Status::ok);
  EXPECT_EQ(mover::counters().pack_waits_queued.load(), waits + 8) << "one wait per chunk";
  ASSERT_EQ(mover::wait_for_queued_unpacks(), Status::ok);
  std::vector<char> got(recv_span);
  ASSERT_EQ(mover::copy_bytes(got.data(), dst.data(), static_cast<int64_t>(recv_span)), Status::ok);
  EXPECT_EQ(got, want);
  ASSERT_EQ(mover::wait_for_own_pack(order), Status::ok);

  // A receive shorter than the message, ending inside a block: what
  // arrived, the rest of that block and beyond untouched.
  ASSERT_EQ(mover::copy_bytes(dst.data(), poison.data(), static_cast<int64_t>(recv_span)), Status::ok);
  ASSERT_EQ(mover::device_unpack_chunked(0, message.device_staging.data(), receiver, dst.data(), 12345, source),
            Status::ok);
  ASSERT_EQ(mover::wait_for_queued_unpacks(), Status::ok);
  ASSERT_EQ(mover::copy_bytes(got.data(), dst.data(), static_cast<int64_t>(recv_span)), Status::ok);
  want = poison;
  strata::unpack_host(receiver, packed.data(), want.data(), 0, 12345);
  EXPECT_EQ(got, want) << "a short receive";

  // Consecutive messages take the sets of events in turn: a reader one
  // message behind never waits for the next message's pack.
  const strata::gpu::IpcEventHandle* first_set = order.chunk_events;
  for (int m = 1; m <= mover::kChunkSets; ++m) {
    mover::PackOrder next;
    ASSERT_EQ(mover::device_pack_chunked(message, part, plan, &next), Status::ok);
    ASSERT_EQ(mover::wait_for_own_pack(next), Status::ok);
    EXPECT_EQ(next.chunk_events == first_set, m == mover::kChunkSets) << "message " << m;
  }

  const mover::ChunkPlan bad{9, 4000};
  EXPECT_EQ(mover::device_pack_chunked(message, part, bad, &order), Status::invalid_argument);
}

// Contiguous pulls between device buffers queued by one batch of receives
// are copied by the kernels when the batch holds STRATA_DEVICE_KERNEL_COPIES
// (default 8) or more of them, by the copy engine below; either way every
// byte arrives, a tail past the last 4 KiB block included, and nothing
// around it is written.
TEST(DeviceTransfer, ContiguousDevicePullsOfABatch) {
  REQUIRE_DEVICE();
  constexpr int64_t kBytes = 3 * 4096 + 123;
  constexpr int64_t kGap = 64;
  StridedBlock whole;
  whole.block = kBytes;
  whole.extent = kBytes;
  for (const int pulls : {2, 9}) {
    SCOPED_TRACE(pulls);
    const size_t span = static_cast<size_t>(pulls * (kBytes + kGap));
    DeviceBuffer from(span), to(span);
    const std::vector<char> host = pattern(span, 11 + pulls);
    ASSERT_EQ(mover::copy_bytes(from.data(), host.data(), static_cast<int64_t>(span)), Status::ok);
    const std::vector<char> poison(span, 0x5a);
    ASSERT_EQ(mover::copy_bytes(to.data(), poison.data(), static_cast<int64_t>(span)), Status::ok);
    std::vector<mover::DeviceMessage> messages;
    messages.reserve(static_cast<size_t>(pulls));
    const uint64_t kernels = mover::counters().kernel_copies.load();
    for (int i = 0; i < pulls; ++i) {
      const int64_t at = i * (kBytes + kGap);
      messages.emplace_back(0, mover::Method::device);
      messages.back().device_staging = mover::Staging::borrowed(from.data() + at, from.data() + at);
      const mover::DevicePart part{&whole, to.data() + at, 0};
      ASSERT_EQ(mover::device_unpack(messages.back(), &part, 1, kBytes, /*wait=*/false), Status::ok);
    }
    ASSERT_EQ(mover::wait_for_queued_unpacks(), Status::ok);
    for (mover::DeviceMessage& m : messages) m.device_staging.leak();  // borrowed
    if (std::getenv("STRATA_DEVICE_KERNEL_COPIES") == nullptr) {       // the default, 8
      EXPECT_EQ(mover::counters().kernel_copies.load() - kernels, pulls >= 8 ? static_cast<uint64_t>(pulls) : 0u);
    }
    std::vector<char> got(span), expect(poison);
    for (int i = 0; i < pulls; ++i) {
      const size_t at = static_cast<size_t>(i * (kBytes + kGap));
      std::memcpy(expect.data() + at, host.data() + at, static_cast<size_t>(kBytes));
    }
    ASSERT_EQ(mover::copy_bytes(got.data(), to.data(), static_cast<int64_t>(span)), Status::ok);
    EXPECT_EQ(got, expect);
  }
}

}  // namespace
