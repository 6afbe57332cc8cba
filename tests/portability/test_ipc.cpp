// The IPC layer (portability/gpu): allocation_of, the runtime's IPC handles
// between two processes, and the caches of ipc_cache.hpp.
//
// ctest runs it twice: test_ipc_fake on the CPU build's device stand-in
// (STRATA_FAKE_DEVICE=2: its IPC is real, across processes, through
// /proc/<pid>/fd), and test_ipc (labels device;gpu), which needs a device
// and skips without one.
//
// The second process is this binary again (posix_spawn, not fork: CUDA
// cannot be used in a child forked after the parent initialised it), running
// only IpcPeer.Serve, which serves requests from the test over two pipes:
// allocate and fill device memory, export it, free it, or import an export
// of the test's and check every byte it reads through the mapping (copies
// to the host and to its own device memory, a strided pack), guards and
// poisoned destinations included. Data is fresh random bytes per run (the
// seed is printed on failure).
#include <strata/device.hpp>
#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/ipc_cache.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace strata {
void PrintTo(Status s, std::ostream* os) { *os << to_string(s); }
}  // namespace strata

namespace {

namespace gpu = strata::gpu;
using strata::Status;
using Bytes = std::vector<unsigned char>;

#define ASSERT_OK(expr) ASSERT_EQ((expr), Status::ok) << #expr << ": " << gpu::last_error_string()
#define EXPECT_OK(expr) EXPECT_EQ((expr), Status::ok) << #expr << ": " << gpu::last_error_string()

constexpr unsigned char kPoison = 0xEE;
constexpr size_t kGuard = 64;
constexpr uint64_t kNoMismatch = ~uint64_t{0};

// The bytes a seed stands for: both processes compute them.
Bytes pattern(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  return b;
}

uint64_t fresh_seed() {
  static std::mt19937_64 rng(std::random_device{}());
  return rng();
}

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

Status fill(void* device, uint64_t seed, size_t n) {
  const Bytes b = pattern(seed, n);
  STRATA_TRY(gpu::memcpy_async(device, b.data(), n, nullptr));
  return gpu::stream_synchronize(nullptr);
}

// The first byte of device memory [src, src + n) that differs from
// pattern(seed), read into a poisoned host buffer with guards around it;
// kNoMismatch when all match. A guard overwritten counts as a mismatch at n.
uint64_t first_mismatch(const void* src, uint64_t seed, size_t n, Status* status) {
  Bytes host(n + 2 * kGuard, kPoison);
  *status = gpu::memcpy_async(host.data() + kGuard, src, n, nullptr);
  if (*status == Status::ok) *status = gpu::stream_synchronize(nullptr);
  if (*status != Status::ok) return 0;
  const Bytes want = pattern(seed, n);
  for (size_t i = 0; i < n; ++i) {
    if (host[kGuard + i] != want[i]) return i;
  }
  for (size_t i = 0; i < kGuard; ++i) {
    if (host[i] != kPoison || host[kGuard + n + i] != kPoison) return n;
  }
  return kNoMismatch;
}

// --- the peer process's protocol ----------------------------------------------

enum class Op : uint32_t { alloc, fill, export_buffer, free, check, stats, forget, exit };

struct Request {
  Op op = Op::exit;
  uint32_t pad = 0;
  uint64_t ptr = 0;    // alloc: bytes; fill, export_buffer, free: the peer's pointer
  uint64_t bytes = 0;  // fill, check: how many bytes
  uint64_t seed = 0;   // fill, check: their pattern
  uint64_t peer = 0;   // check, forget: the id the peer's cache knows the test by
  gpu::IpcExport e{};  // check: what to import
};

struct Reply {
  int32_t status = -1;  // a Status; -1: no reply (the peer died)
  uint32_t pad = 0;
  uint64_t value = 0;  // alloc: the pointer; check: the first mismatch or kNoMismatch
  gpu::IpcExport e{};  // export_buffer
  gpu::IpcCacheStats stats{};
};

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The test's other process, serving Requests (IpcPeer.Serve).
class Peer {
 public:
  Peer() = default;
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  ~Peer() {
    if (pid_ > 0) (void)finish();
  }

  // Spawns it; false (with a message in `why`) when that fails.
  bool start(std::string* why) {
    // A peer that died must fail the test, not kill it with SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
      *why = std::string("pipe2: ") + std::strerror(errno);
      return false;
    }
    // The peer's ends survive exec; ours do not.
    fcntl(to[0], F_SETFD, 0);
    fcntl(from[1], F_SETFD, 0);
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
      *why = "readlink /proc/self/exe failed";
      return false;
    }
    exe[n] = '\0';
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("STRATA_TEST_IPC_PEER=" + std::to_string(to[0]) + "," + std::to_string(from[1]));
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(&s[0]);
    envp.push_back(nullptr);
    std::string filter = "--gtest_filter=IpcPeer.Serve";
    char* argv[] = {exe, &filter[0], nullptr};
    const int rc = posix_spawn(&pid_, exe, nullptr, nullptr, argv, envp.data());
    close(to[0]);
    close(from[1]);
    to_ = to[1];
    from_ = from[0];
    if (rc != 0) {
      pid_ = -1;
      *why = std::string("posix_spawn: ") + std::strerror(rc);
      return false;
    }
    return true;
  }

  Reply call(const Request& r) {
    Reply reply;
    if (!write_all(to_, &r, sizeof(r)) || !read_all(from_, &reply, sizeof(reply))) reply.status = -1;
    return reply;
  }

  // Tells it to exit and reaps it: its exit status (0: every check of its
  // own passed), -1 when it was killed.
  int finish() {
    if (pid_ <= 0) return -1;
    Request r;
    r.op = Op::exit;
    (void)write_all(to_, &r, sizeof(r));
    close(to_);
    close(from_);
    int status = 0;
    const pid_t got = waitpid(pid_, &status, 0);
    pid_ = -1;
    if (got <= 0 || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  }

  pid_t pid() const { return pid_; }
  uint64_t id() const { return static_cast<uint64_t>(pid_); }  // the test's cache knows it by its pid

  // Conveniences; each fails the test when the peer does.
  uint64_t alloc(size_t bytes) {
    Request r;
    r.op = Op::alloc;
    r.ptr = bytes;
    const Reply a = call(r);
    EXPECT_EQ(a.status, 0) << "the peer's malloc_device";
    return a.value;
  }
  void fill(uint64_t ptr, uint64_t seed, size_t bytes) {
    Request r;
    r.op = Op::fill;
    r.ptr = ptr;
    r.seed = seed;
    r.bytes = bytes;
    EXPECT_EQ(call(r).status, 0) << "the peer's fill";
  }
  gpu::IpcExport export_buffer(uint64_t ptr) {
    Request r;
    r.op = Op::export_buffer;
    r.ptr = ptr;
    const Reply x = call(r);
    EXPECT_EQ(x.status, 0) << "the peer's ipc_export";
    return x.e;
  }
  // The peer imports `e` (from us, known to it as our pid) and checks
  // `bytes` of pattern(seed) at its offset.
  Reply check(const gpu::IpcExport& e, uint64_t seed, size_t bytes) {
    Request r;
    r.op = Op::check;
    r.e = e;
    r.seed = seed;
    r.bytes = bytes;
    r.peer = static_cast<uint64_t>(getpid());
    return call(r);
  }
  gpu::IpcCacheStats stats() {
    Request r;
    r.op = Op::stats;
    return call(r).stats;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

// Device memory of this process, freed at scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_OK(gpu::malloc_device(&ptr, bytes)); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void reset() {
    if (ptr != nullptr) {
      EXPECT_OK(gpu::free_device(ptr));
    }
    ptr = nullptr;
  }
  char* at(size_t offset) const { return static_cast<char*>(ptr) + offset; }
};

class Ipc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu::available()) {
      GTEST_SKIP() << "no device (backend " << gpu::backend_name() << ")";
    }
    seed_ = fresh_seed();
  }
  void start(Peer* peer) {
    std::string why;
    ASSERT_TRUE(peer->start(&why)) << why;
  }
  // Fills `bytes` at `ptr` with pattern(seed), exports them (*e) and has the
  // peer import and check them (*r, its reply).
  void export_and_check(Peer& peer, void* ptr, uint64_t seed, size_t bytes, gpu::IpcExport* e, Reply* r) {
    ASSERT_OK(fill(ptr, seed, bytes));
    ASSERT_OK(gpu::ipc_export(ptr, e));
    *r = peer.check(*e, seed, bytes);
  }
  uint64_t seed_ = 0;
};

#define SEED_TRACE() SCOPED_TRACE("seed " + std::to_string(seed_))

// =============================================================================
// One process
// =============================================================================

TEST_F(Ipc, AllocationOfInteriorPointers) {
  const size_t n = 3 * page() + 123;
  DeviceBuffer a(n), b(n);
  gpu::AllocationRange ra, rb;
  ASSERT_OK(gpu::allocation_of(a.ptr, &ra));
  ASSERT_OK(gpu::allocation_of(b.ptr, &rb));
  EXPECT_NE(ra.buffer_id, rb.buffer_id);
  int current = -1;
  ASSERT_OK(gpu::get_device(&current));
  for (size_t off : {size_t{0}, size_t{1}, n / 2, n - 1}) {
    SCOPED_TRACE("offset " + std::to_string(off));
    gpu::AllocationRange r;
    ASSERT_OK(gpu::allocation_of(a.at(off), &r));
    EXPECT_EQ(r.base, a.ptr);
    EXPECT_EQ(r.buffer_id, ra.buffer_id);
    EXPECT_EQ(r.device, current);
    EXPECT_GE(r.bytes, n);  // CUDA may round the range up
    EXPECT_EQ(r.bytes, ra.bytes);
  }
  // Not device memory: refused, and the output untouched.
  std::vector<char> host(64);
  gpu::AllocationRange untouched;
  untouched.buffer_id = 77;
  EXPECT_EQ(gpu::allocation_of(host.data(), &untouched), Status::invalid_argument);
  EXPECT_EQ(untouched.buffer_id, 77u);
  EXPECT_EQ(gpu::allocation_of(nullptr, &untouched), Status::invalid_argument);
  EXPECT_EQ(gpu::allocation_of(a.ptr, nullptr), Status::invalid_argument);
  void* pinned = nullptr;
  ASSERT_OK(gpu::malloc_pinned(&pinned, 4096, false));
  EXPECT_EQ(gpu::allocation_of(pinned, &untouched), Status::invalid_argument);
  EXPECT_OK(gpu::free_pinned(pinned));

  // Freed and allocated again: a new id, wherever the range lands.
  void* base = a.ptr;
  a.reset();
  DeviceBuffer again(n);
  gpu::AllocationRange r2;
  ASSERT_OK(gpu::allocation_of(again.ptr, &r2));
  EXPECT_NE(r2.buffer_id, ra.buffer_id);
  EXPECT_NE(r2.buffer_id, rb.buffer_id);
  if (again.ptr != base) std::printf("note: the new allocation did not land at the freed address\n");

  // On another device: that device's ordinal.
  int count = 0;
  ASSERT_OK(gpu::device_count(&count));
  if (count > 1) {
    ASSERT_OK(gpu::set_device(1));
    DeviceBuffer other(page());
    ASSERT_OK(gpu::set_device(current));
    gpu::AllocationRange ro;
    ASSERT_OK(gpu::allocation_of(other.at(10), &ro));
    EXPECT_EQ(ro.device, 1);
    EXPECT_EQ(ro.base, other.ptr);
  }
}

// A process cannot open its own handle (CUDA refuses it, and so does the
// stand-in); through the cache that is a clean failure that caches nothing.
TEST_F(Ipc, OwnHandleIsRefused) {
  DeviceBuffer a(page());
  gpu::IpcHandle h{};
  ASSERT_OK(gpu::ipc_get_handle(a.ptr, &h));
  void* p = reinterpret_cast<void*>(0x1);
  const Status own = gpu::ipc_open(h, &p);
  if (own == Status::ok && std::strcmp(gpu::backend_name(), "fake") != 0) {
    EXPECT_OK(gpu::ipc_close(p));  // a runtime that allows it: not what CUDA documents
    GTEST_SKIP() << gpu::backend_name() << " opened a handle in the process that exported it";
  }
  EXPECT_EQ(own, Status::device_error);
  EXPECT_EQ(p, reinterpret_cast<void*>(0x1));

  gpu::IpcExport e{};
  ASSERT_OK(gpu::ipc_export(a.at(8), &e));
  const gpu::IpcCacheStats s0 = gpu::ipc_cache_stats();
  char* mapped = nullptr;
  EXPECT_EQ(gpu::ipc_import(static_cast<uint64_t>(getpid()), e, &mapped), Status::device_error);
  EXPECT_EQ(mapped, nullptr);
  const gpu::IpcCacheStats s1 = gpu::ipc_cache_stats();
  EXPECT_EQ(s1.misses, s0.misses + 1);
  EXPECT_EQ(s1.opens, s0.opens);
  EXPECT_EQ(s1.mapped, s0.mapped);
}

// The exporter's cache: one get-handle per allocation, the offset of an
// interior pointer, and a new entry for a range freed and allocated again.
TEST_F(Ipc, ExportCachesHandlesPerAllocation) {
  const size_t n = 5 * page();
  DeviceBuffer a(n);
  const gpu::IpcCacheStats s0 = gpu::ipc_cache_stats();
  gpu::IpcExport e0{}, e1{};
  ASSERT_OK(gpu::ipc_export(a.ptr, &e0));
  ASSERT_OK(gpu::ipc_export(a.at(n - 1), &e1));
  const gpu::IpcCacheStats s1 = gpu::ipc_cache_stats();
  EXPECT_EQ(s1.export_misses, s0.export_misses + 1);
  EXPECT_EQ(s1.export_hits, s0.export_hits + 1);
  EXPECT_EQ(e0.base, reinterpret_cast<uint64_t>(a.ptr));
  EXPECT_EQ(e0.offset, 0u);
  EXPECT_EQ(e1.offset, n - 1);
  EXPECT_EQ(e1.base, e0.base);
  EXPECT_EQ(e1.buffer_id, e0.buffer_id);
  EXPECT_EQ(std::memcmp(&e0.handle, &e1.handle, sizeof(e0.handle)), 0);
  EXPECT_GE(e0.bytes, n);
  EXPECT_EQ(e0.reserved, 0u);
  int current = -1;
  ASSERT_OK(gpu::get_device(&current));
  EXPECT_EQ(e0.device, current);

  // Not device memory: refused, nothing cached.
  std::vector<char> host(64);
  gpu::IpcExport none{};
  EXPECT_EQ(gpu::ipc_export(host.data(), &none), Status::invalid_argument);
  EXPECT_EQ(gpu::ipc_export(nullptr, &none), Status::invalid_argument);

  // A new allocation at the freed address: a new id, a new handle.
  void* base = a.ptr;
  a.reset();
  std::vector<void*> held;  // other ranges, until one lands on `base`
  void* again = nullptr;
  for (int i = 0; i < 16 && again != base; ++i) {
    if (again != nullptr) held.push_back(again);
    ASSERT_OK(gpu::malloc_device(&again, n));
  }
  for (void* p : held) EXPECT_OK(gpu::free_device(p));
  if (again != base) {
    EXPECT_OK(gpu::free_device(again));
    GTEST_SKIP() << "the runtime never placed a new allocation at the freed address";
  }
  gpu::IpcExport e2{};
  const gpu::IpcCacheStats s2 = gpu::ipc_cache_stats();
  ASSERT_OK(gpu::ipc_export(again, &e2));
  const gpu::IpcCacheStats s3 = gpu::ipc_cache_stats();
  EXPECT_EQ(e2.base, e0.base);
  EXPECT_NE(e2.buffer_id, e0.buffer_id);
  EXPECT_EQ(s3.export_misses, s2.export_misses + 1);
  EXPECT_EQ(s3.export_stale_replaced, s2.export_stale_replaced + 1);
  EXPECT_OK(gpu::free_device(again));
}

TEST_F(Ipc, MalformedDescriptorsAreRefused) {
  gpu::IpcExport e{};
  char* mapped = nullptr;
  e.bytes = 0;
  EXPECT_EQ(gpu::ipc_import(1, e, &mapped), Status::invalid_argument);
  e.bytes = 4096;
  e.offset = 4096;
  EXPECT_EQ(gpu::ipc_import(1, e, &mapped), Status::invalid_argument);
  e.offset = 0;
  EXPECT_EQ(gpu::ipc_import(1, e, nullptr), Status::invalid_argument);
  EXPECT_EQ(mapped, nullptr);
  // Garbage as a handle: the runtime refuses it.
  std::memset(&e.handle, 0x5A, sizeof(e.handle));
  EXPECT_EQ(gpu::ipc_import(1, e, &mapped), Status::device_error);
  EXPECT_EQ(mapped, nullptr);
  char host[16];
  EXPECT_EQ(gpu::ipc_release(host), Status::invalid_argument);
  EXPECT_EQ(gpu::ipc_release(nullptr), Status::invalid_argument);
}

// =============================================================================
// Two processes
// =============================================================================

// The test allocates and fills, exports a buffer inside the allocation; the
// peer imports it and checks every byte, twice (the second import is a hit).
TEST_F(Ipc, TransferToAnotherProcess) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  const size_t n = (1 << 20) + 4099;
  const size_t offset = 2 * page() + 17;
  const size_t len = n - offset;  // to the allocation's last byte
  DeviceBuffer a(n);
  ASSERT_OK(gpu::memset_async(a.ptr, kPoison, n, nullptr));
  ASSERT_OK(fill(a.at(offset), seed_, len));
  gpu::IpcExport e{};
  ASSERT_OK(gpu::ipc_export(a.at(offset), &e));
  EXPECT_EQ(e.offset, offset);

  const gpu::IpcCacheStats p0 = peer.stats();
  Reply r = peer.check(e, seed_, len);
  ASSERT_EQ(r.status, 0) << "the peer could not import or read: " << r.status;
  EXPECT_EQ(r.value, kNoMismatch) << "first wrong byte at " << r.value;
  EXPECT_EQ(r.stats.misses, p0.misses + 1);
  EXPECT_EQ(r.stats.opens, p0.opens + 1);

  // Same allocation, another buffer in it (and new bytes): a hit on both sides.
  const uint64_t seed2 = fresh_seed();
  ASSERT_OK(fill(a.at(100), seed2, 1000));
  const gpu::IpcCacheStats s0 = gpu::ipc_cache_stats();
  gpu::IpcExport e2{};
  ASSERT_OK(gpu::ipc_export(a.at(100), &e2));
  EXPECT_EQ(gpu::ipc_cache_stats().export_hits, s0.export_hits + 1);
  r = peer.check(e2, seed2, 1000);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.value, kNoMismatch) << "first wrong byte at " << r.value;
  EXPECT_EQ(r.stats.hits, p0.hits + 1);
  EXPECT_EQ(r.stats.opens, p0.opens + 1);
  EXPECT_EQ(peer.finish(), 0) << "the peer failed (its output is above)";
}

// Between two transfers the test frees the allocation and allocates again at
// the same address with new bytes. The peer's cache holds a mapping of the
// old allocation for that (peer, base): used again, it would show the old
// bytes (the old allocation stays alive while mapped). The new buffer id
// must make the cache drop it: the new bytes arrive, stale_replaced moves.
TEST_F(Ipc, ReallocatedRangeIsNeverReadThroughAStaleMapping) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  const size_t n = 64 * 1024;
  void* a = nullptr;
  ASSERT_OK(gpu::malloc_device(&a, n));
  gpu::IpcExport e1{};
  Reply r;
  ASSERT_NO_FATAL_FAILURE(export_and_check(peer, a, seed_, n, &e1, &r));
  ASSERT_EQ(r.status, 0);
  ASSERT_EQ(r.value, kNoMismatch);
  const gpu::IpcCacheStats p1 = r.stats;

  void* base = a;
  ASSERT_OK(gpu::free_device(a));
  std::vector<void*> held;
  a = nullptr;
  for (int i = 0; i < 16 && a != base; ++i) {
    if (a != nullptr) held.push_back(a);
    ASSERT_OK(gpu::malloc_device(&a, n));
  }
  for (void* p : held) EXPECT_OK(gpu::free_device(p));
  if (a != base) {
    EXPECT_OK(gpu::free_device(a));
    GTEST_SKIP() << "the runtime never placed a new allocation at the freed address";
  }
  const uint64_t seed2 = fresh_seed();
  gpu::IpcExport e2{};
  ASSERT_NO_FATAL_FAILURE(export_and_check(peer, a, seed2, n, &e2, &r));
  ASSERT_EQ(e2.base, e1.base);
  ASSERT_NE(e2.buffer_id, e1.buffer_id);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.value, kNoMismatch) << "the peer read old bytes through a stale mapping (first wrong byte at " << r.value
                                  << ")";
  EXPECT_EQ(r.stats.stale_replaced, p1.stale_replaced + 1);
  EXPECT_EQ(r.stats.opens, p1.opens + 1);
  EXPECT_EQ(r.stats.closes, p1.closes + 1);
  EXPECT_EQ(r.stats.mapped, p1.mapped);
  EXPECT_OK(gpu::free_device(a));
  EXPECT_EQ(peer.finish(), 0);
}

// The same with a new allocation at another base inside the freed range (a
// smaller one in the hole; CUDA does this, and then refuses to open the new
// handle while the old range is mapped here: "already mapped"). The peer's
// cache must drop the overlapping mapping before it opens the new one.
TEST_F(Ipc, NewAllocationOverlappingAFreedOneReplacesItsMapping) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  const size_t n = 4 << 20;
  void* a = nullptr;
  ASSERT_OK(gpu::malloc_device(&a, n));
  gpu::IpcExport e1{};
  Reply r;
  ASSERT_NO_FATAL_FAILURE(export_and_check(peer, a, seed_, n, &e1, &r));
  ASSERT_EQ(r.status, 0);
  ASSERT_EQ(r.value, kNoMismatch);
  const gpu::IpcCacheStats p1 = r.stats;

  // Allocations of a quarter of the size until one starts inside the freed
  // range at another base.
  const auto old_base = reinterpret_cast<uintptr_t>(a);
  ASSERT_OK(gpu::free_device(a));
  std::vector<void*> held;
  void* b = nullptr;
  for (int i = 0; i < 64; ++i) {
    void* p = nullptr;
    ASSERT_OK(gpu::malloc_device(&p, n / 4));
    const auto at = reinterpret_cast<uintptr_t>(p);
    if (at != old_base && at > old_base - n / 4 && at < old_base + n) {
      b = p;
      break;
    }
    held.push_back(p);
  }
  for (void* p : held) EXPECT_OK(gpu::free_device(p));
  if (b == nullptr) GTEST_SKIP() << "the runtime never placed a new allocation inside the freed range";
  const uint64_t seed2 = fresh_seed();
  gpu::IpcExport e2{};
  ASSERT_NO_FATAL_FAILURE(export_and_check(peer, b, seed2, n / 4, &e2, &r));
  ASSERT_NE(e2.base, e1.base);
  EXPECT_EQ(r.status, 0) << "the peer could not open the new allocation";
  EXPECT_EQ(r.value, kNoMismatch);
  EXPECT_EQ(r.stats.stale_replaced, p1.stale_replaced + 1);
  EXPECT_EQ(r.stats.closes, p1.closes + 1);
  EXPECT_EQ(r.stats.mapped, p1.mapped);
  EXPECT_OK(gpu::free_device(b));
  EXPECT_EQ(peer.finish(), 0);
}

// A handle whose allocation was freed: the open fails cleanly, even when the
// freed memfd's descriptor number now belongs to a new allocation (the
// stand-in's descriptors are the lowest free ones, so it is reused here).
TEST_F(Ipc, FreedAllocationCannotBeOpened) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  void* a = nullptr;
  ASSERT_OK(gpu::malloc_device(&a, page()));
  gpu::IpcExport freed{};
  ASSERT_OK(gpu::ipc_export(a, &freed));
  ASSERT_OK(gpu::free_device(a));
  DeviceBuffer b(page());
  ASSERT_OK(fill(b.ptr, seed_, page()));
  const gpu::IpcCacheStats p0 = peer.stats();
  Reply r = peer.check(freed, seed_, page());
  EXPECT_EQ(r.status, static_cast<int32_t>(Status::device_error)) << "opening a freed allocation's handle";
  EXPECT_EQ(r.stats.opens, p0.opens);
  EXPECT_EQ(r.stats.mapped, p0.mapped);
  // The live one still works.
  gpu::IpcExport live{};
  ASSERT_OK(gpu::ipc_export(b.ptr, &live));
  r = peer.check(live, seed_, page());
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.value, kNoMismatch);
  EXPECT_EQ(peer.finish(), 0);
}

// This process imports from the peer (the other direction), then the peer
// exits: a handle of the dead owner fails to open, cleanly.
TEST_F(Ipc, OwnerExitedBeforeOpen) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  const uint64_t id = peer.id();
  const size_t n = 3 * page() + 5;
  const uint64_t p = peer.alloc(n), q = peer.alloc(n);
  peer.fill(p, seed_, n);
  const gpu::IpcExport ep = peer.export_buffer(p), eq = peer.export_buffer(q);
  char* mapped = nullptr;
  ASSERT_OK(gpu::ipc_import(id, ep, &mapped));
  Status s = Status::ok;
  EXPECT_EQ(first_mismatch(mapped + ep.offset, seed_, n, &s), kNoMismatch);
  EXPECT_OK(s);
  EXPECT_OK(gpu::ipc_release(mapped));
  EXPECT_EQ(peer.finish(), 0);
  gpu::ipc_forget_peer(id);

  const gpu::IpcCacheStats s0 = gpu::ipc_cache_stats();
  mapped = nullptr;
  EXPECT_EQ(gpu::ipc_import(id, eq, &mapped), Status::device_error);
  EXPECT_EQ(gpu::ipc_import(id, ep, &mapped), Status::device_error);
  EXPECT_EQ(mapped, nullptr);
  const gpu::IpcCacheStats s1 = gpu::ipc_cache_stats();
  EXPECT_EQ(s1.misses, s0.misses + 2);
  EXPECT_EQ(s1.opens, s0.opens);
  EXPECT_EQ(s1.mapped, s0.mapped);
}

// More allocations of one peer than the cache holds: the least recently
// used mappings are closed, never more than kIpcMaxMappings stay open, and
// a mapping in use survives eviction and ipc_forget_peer until released.
TEST_F(Ipc, LeastRecentlyUsedBoundAndPinning) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  const uint64_t id = peer.id();
  const size_t extra = 5;
  const size_t count = gpu::kIpcMaxMappings + extra;
  std::vector<gpu::IpcExport> exports;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t p = peer.alloc(page());
    peer.fill(p, seed_ + i, page());
    exports.push_back(peer.export_buffer(p));
  }
  ASSERT_FALSE(HasFailure());
  const gpu::IpcCacheStats s0 = gpu::ipc_cache_stats();
  // Hold the first one through everything below.
  char* pinned = nullptr;
  ASSERT_OK(gpu::ipc_import(id, exports[0], &pinned));
  for (size_t i = 1; i < count; ++i) {
    char* mapped = nullptr;
    ASSERT_OK(gpu::ipc_import(id, exports[i], &mapped)) << "allocation " << i;
    Status s = Status::ok;
    ASSERT_EQ(first_mismatch(mapped, seed_ + i, page(), &s), kNoMismatch) << "allocation " << i;
    ASSERT_OK(s);
    ASSERT_OK(gpu::ipc_release(mapped));
    ASSERT_LE(gpu::ipc_cache_stats().mapped - s0.mapped, gpu::kIpcMaxMappings);
  }
  gpu::IpcCacheStats s1 = gpu::ipc_cache_stats();
  EXPECT_EQ(s1.misses - s0.misses, count);
  EXPECT_EQ(s1.opens - s0.opens, count);
  EXPECT_EQ(s1.evicted - s0.evicted, extra);
  EXPECT_EQ(s1.mapped - s0.mapped, gpu::kIpcMaxMappings);

  // The most recent: a hit. The pinned first one: still there, a hit. The
  // second (the least recently used, not pinned): evicted, a miss.
  char* mapped = nullptr;
  ASSERT_OK(gpu::ipc_import(id, exports[count - 1], &mapped));
  EXPECT_OK(gpu::ipc_release(mapped));
  char* again = nullptr;
  ASSERT_OK(gpu::ipc_import(id, exports[0], &again));
  EXPECT_EQ(again, pinned);
  EXPECT_OK(gpu::ipc_release(again));
  gpu::IpcCacheStats s2 = gpu::ipc_cache_stats();
  EXPECT_EQ(s2.hits - s1.hits, 2u);
  ASSERT_OK(gpu::ipc_import(id, exports[1], &mapped));
  EXPECT_OK(gpu::ipc_release(mapped));
  EXPECT_EQ(gpu::ipc_cache_stats().misses - s2.misses, 1u);

  // Forgetting the peer closes everything but the pinned mapping, which is
  // still readable, is taken back by an import of the same allocation (not
  // opened twice), and closes at its last release.
  gpu::ipc_forget_peer(id);
  s2 = gpu::ipc_cache_stats();
  EXPECT_EQ(s2.mapped, s0.mapped + 1);
  Status s = Status::ok;
  EXPECT_EQ(first_mismatch(pinned, seed_, page(), &s), kNoMismatch);
  EXPECT_OK(s);
  ASSERT_OK(gpu::ipc_import(id, exports[0], &again));
  EXPECT_EQ(again, pinned);
  EXPECT_EQ(gpu::ipc_cache_stats().opens, s2.opens);
  EXPECT_OK(gpu::ipc_release(again));
  gpu::ipc_forget_peer(id);
  s2 = gpu::ipc_cache_stats();
  EXPECT_EQ(s2.mapped, s0.mapped + 1);
  EXPECT_OK(gpu::ipc_release(pinned));
  const gpu::IpcCacheStats s3 = gpu::ipc_cache_stats();
  EXPECT_EQ(s3.mapped, s0.mapped);
  EXPECT_EQ(s3.closes, s2.closes + 1);
  EXPECT_EQ(gpu::ipc_release(pinned), Status::invalid_argument);  // released twice
  EXPECT_EQ(peer.finish(), 0);
}

// Threads importing one buffer at once: one open, every other import a hit.
TEST_F(Ipc, ConcurrentImportsOpenOnce) {
  SEED_TRACE();
  Peer peer;
  ASSERT_NO_FATAL_FAILURE(start(&peer));
  const uint64_t id = peer.id();
  const size_t n = 8 * page();
  const uint64_t p = peer.alloc(n);
  peer.fill(p, seed_, n);
  const gpu::IpcExport e = peer.export_buffer(p);
  const gpu::IpcCacheStats s0 = gpu::ipc_cache_stats();
  constexpr int kThreads = 8, kImports = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kImports; ++i) {
        char* mapped = nullptr;
        Status s = gpu::ipc_import(id, e, &mapped);
        if (s == Status::ok && first_mismatch(mapped, seed_, 64, &s) != kNoMismatch) ++failures;
        if (s != Status::ok) ++failures;
        if (mapped != nullptr && gpu::ipc_release(mapped) != Status::ok) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const gpu::IpcCacheStats s1 = gpu::ipc_cache_stats();
  EXPECT_EQ(s1.opens - s0.opens, 1u);
  EXPECT_EQ(s1.hits - s0.hits, static_cast<uint64_t>(kThreads * kImports - 1));
  gpu::ipc_forget_peer(id);
  EXPECT_EQ(gpu::ipc_cache_stats().mapped, s0.mapped);
  EXPECT_EQ(peer.finish(), 0);
}

// =============================================================================
// The peer process
// =============================================================================

// Imports `r.e` and checks r.bytes of pattern(r.seed) at its offset: read to
// the host, copied into device memory of this process, and packed (8-byte
// blocks every 24 bytes) by the pack kernels.
Reply check_import(const Request& r) {
  Reply reply;
  char* mapped = nullptr;
  Status s = gpu::ipc_import(r.peer, r.e, &mapped);
  reply.status = static_cast<int32_t>(s);
  if (s != Status::ok) return reply;
  const char* src = mapped + r.e.offset;
  const size_t n = r.bytes;
  const Bytes want = pattern(r.seed, n);
  reply.value = first_mismatch(src, r.seed, n, &s);
  // Device to device, into poisoned memory with guards.
  void* own = nullptr;
  if (s == Status::ok && reply.value == kNoMismatch) s = gpu::malloc_device(&own, n + 2 * kGuard);
  if (own != nullptr) {
    Bytes back(n + 2 * kGuard, 0);
    if (s == Status::ok) s = gpu::memset_async(own, kPoison, n + 2 * kGuard, nullptr);
    if (s == Status::ok) s = gpu::memcpy_async(static_cast<char*>(own) + kGuard, src, n, nullptr);
    if (s == Status::ok) s = gpu::memcpy_async(back.data(), own, n + 2 * kGuard, nullptr);
    if (s == Status::ok) s = gpu::stream_synchronize(nullptr);
    for (size_t i = 0; s == Status::ok && i < n + 2 * kGuard && reply.value == kNoMismatch; ++i) {
      const bool guard = i < kGuard || i >= kGuard + n;
      if (back[i] != (guard ? kPoison : want[i - kGuard])) reply.value = i < kGuard ? 0 : i - kGuard;
    }
    // A strided pack straight from the peer's memory.
    const int64_t blocks = static_cast<int64_t>(n / 24);
    if (s == Status::ok && blocks > 0 && reply.value == kNoMismatch) {
      const strata::StridedBlock layout = strata::canonicalize(strata::LayoutIR::dense(8).repeat(blocks, 24), 0);
      s = strata::device::pack(layout, src, own, nullptr);
      Bytes packed(static_cast<size_t>(blocks) * 8);
      if (s == Status::ok) s = gpu::memcpy_async(packed.data(), own, packed.size(), nullptr);
      if (s == Status::ok) s = gpu::stream_synchronize(nullptr);
      for (size_t i = 0; s == Status::ok && i < packed.size() && reply.value == kNoMismatch; ++i) {
        const size_t at = i / 8 * 24 + i % 8;
        if (packed[i] != want[at]) reply.value = at;
      }
    }
    const Status f = gpu::free_device(own);
    if (s == Status::ok) s = f;
  }
  const Status rel = gpu::ipc_release(mapped);
  if (s == Status::ok) s = rel;
  reply.status = static_cast<int32_t>(s);
  return reply;
}

Reply serve(const Request& r) {
  Reply reply;
  Status s = Status::ok;
  switch (r.op) {
    case Op::alloc: {
      void* p = nullptr;
      s = gpu::malloc_device(&p, r.ptr);
      reply.value = reinterpret_cast<uint64_t>(p);
      break;
    }
    case Op::fill: s = fill(reinterpret_cast<void*>(r.ptr), r.seed, r.bytes); break;
    case Op::export_buffer: s = gpu::ipc_export(reinterpret_cast<void*>(r.ptr), &reply.e); break;
    case Op::free: s = gpu::free_device(reinterpret_cast<void*>(r.ptr)); break;
    case Op::check:
      reply = check_import(r);
      s = static_cast<Status>(reply.status);
      break;
    case Op::forget: gpu::ipc_forget_peer(r.peer); break;
    case Op::stats:
    case Op::exit: break;
  }
  reply.status = static_cast<int32_t>(s);
  reply.stats = gpu::ipc_cache_stats();
  return reply;
}

TEST(IpcPeer, Serve) {
  const char* fds = std::getenv("STRATA_TEST_IPC_PEER");
  if (fds == nullptr) {
    GTEST_SKIP() << "runs as the peer process of the Ipc tests";
  }
  int in = -1, out = -1;
  ASSERT_EQ(std::sscanf(fds, "%d,%d", &in, &out), 2);
  ASSERT_TRUE(gpu::available()) << "the test saw a device, its peer must too";
  Request r;
  while (read_all(in, &r, sizeof(r)) && r.op != Op::exit) {
    const Reply reply = serve(r);
    ASSERT_TRUE(write_all(out, &reply, sizeof(reply)));
  }
}

}  // namespace
