// What the completion-slot tests (test_shared_slots*.cpp) share: a second
// process by fork() with a deadline, pipes standing in for the MPI messages
// that would carry descriptors, and shared host arenas standing in for the
// device memory a location names (an IPC export in the real transport):
//   - the user arena: the sender's buffers;
//   - the bounce arena: the owner's bounces, handed out by a Bouncer, the
//     BounceHooks of the tests.
// Both are mapped (MAP_SHARED) before fork, so either process reads them at
// an offset. A child never uses GoogleTest: it reports through a pipe or
// its exit code, and the parent checks.
#pragma once

#include "portability/host/shared_slots.hpp"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <ostream>

// GoogleTest prints statuses by name.
namespace strata::slots {
inline void PrintTo(SlotStatus s, std::ostream* os) { *os << to_string(s); }
inline void PrintTo(Completion c, std::ostream* os) {
  *os << (c == Completion::delivered ? "delivered" : c == Completion::rehomed ? "rehomed" : "claimer_gone");
}
}  // namespace strata::slots

namespace slot_test {

using strata::Status;
using strata::slots::Location;
using strata::slots::SlotRef;

inline uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strtoull(v, nullptr, 0);
}

// --- processes and pipes -------------------------------------------------------------

struct Pipe {
  int r = -1;
  int w = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) {
      r = fds[0];
      w = fds[1];
    }
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool put(const void* p, size_t n) const {
    const auto* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t k = write(w, c, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      c += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
  bool get(void* p, size_t n) const {
    auto* c = static_cast<char*>(p);
    while (n > 0) {
      const ssize_t k = read(r, c, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      c += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
  template <class T>
  bool put(const T& v) const {
    return put(&v, sizeof(T));
  }
  template <class T>
  bool get(T* v) const {
    return get(v, sizeof(T));
  }
};

// Runs `body` in a child that exits with its return value; a child still
// running after `seconds` is ended by SIGALRM (no hang).
template <class F>
pid_t fork_child(int seconds, F&& body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(static_cast<unsigned>(seconds));
    const int rc = body();
    _exit(rc);
  }
  return pid;
}

// The child's exit code; 128 + signal if it was killed; -1 if it had to be
// killed here after `seconds`.
inline int join(pid_t pid, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -2;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// --- arenas and locations --------------------------------------------------------------

enum Arena : uint32_t { kUser = 0, kBounce = 1 };

// The tests' location format: which arena, where, how many bytes, which message.
struct TestLocation {
  uint32_t arena;
  uint32_t bytes;
  uint64_t offset;
  uint64_t seq;
};

inline Location to_location(const TestLocation& t) {
  Location l{};
  std::memcpy(l.bytes, &t, sizeof(t));
  return l;
}
inline TestLocation from_location(const Location& l) {
  TestLocation t{};
  std::memcpy(&t, l.bytes, sizeof(t));
  return t;
}

struct SharedArena {
  unsigned char* base = nullptr;
  size_t bytes = 0;
  explicit SharedArena(size_t n) : bytes(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
  }
  ~SharedArena() {
    if (base != nullptr) munmap(base, bytes);
  }
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;
};

inline uint64_t splitmix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A message as the sender knows it (the `message` of acquire).
struct TestMessage {
  uint64_t offset;  // in the user arena
  uint32_t bytes;
  uint64_t seq;
};

// The tests' BounceHooks: fixed chunks of the bounce arena. Optionally tells
// a peer through `notify` when a copy starts and makes it last `delay`, or
// fails every copy.
struct Bouncer {
  SharedArena* user = nullptr;
  SharedArena* bounce = nullptr;
  size_t chunk = 0;
  std::mutex mutex;
  std::vector<uint32_t> free_chunks;
  uint64_t copies = 0;
  uint64_t releases = 0;
  const Pipe* notify = nullptr;
  std::chrono::milliseconds delay{0};
  unsigned jitter_us = 0;  // a random pause of up to this long in each copy
  bool fail = false;

  Bouncer(SharedArena* u, SharedArena* b, size_t chunk_bytes) : user(u), bounce(b), chunk(chunk_bytes) {
    for (size_t i = b->bytes / chunk_bytes; i > 0; --i) free_chunks.push_back(static_cast<uint32_t>(i - 1));
  }

  static Status copy_out(void* context, void* message, Location* where, void** cookie) {
    auto* self = static_cast<Bouncer*>(context);
    const auto* m = static_cast<const TestMessage*>(message);
    if (self->notify != nullptr) self->notify->put(char{'w'});
    if (self->delay.count() > 0) std::this_thread::sleep_for(self->delay);
    if (self->jitter_us > 0) {
      thread_local uint64_t state = 0x1badc0de;
      std::this_thread::sleep_for(std::chrono::microseconds(splitmix(&state) % self->jitter_us));
    }
    uint32_t c = 0;
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      if (self->fail || self->free_chunks.empty() || m->bytes > self->chunk) return Status::out_of_memory;
      c = self->free_chunks.back();
      self->free_chunks.pop_back();
      ++self->copies;
    }
    const uint64_t offset = uint64_t{c} * self->chunk;
    std::memcpy(self->bounce->base + offset, self->user->base + m->offset, m->bytes);
    *where = to_location(TestLocation{kBounce, m->bytes, offset, m->seq});
    *cookie = reinterpret_cast<void*>(uintptr_t{c} + 1);
    return Status::ok;
  }
  static void release(void* context, void* cookie) {
    auto* self = static_cast<Bouncer*>(context);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->free_chunks.push_back(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(cookie) - 1));
    ++self->releases;
  }
  strata::slots::BounceHooks hooks() {
    strata::slots::BounceHooks h;
    h.copy_out = &Bouncer::copy_out;
    h.release = &Bouncer::release;
    h.context = this;
    return h;
  }
};

// --- payloads ------------------------------------------------------------------------------

// Message `seq`'s bytes (the receiver recomputes them to check).
inline void fill(unsigned char* p, size_t n, uint64_t seed, uint64_t seq) {
  uint64_t s = seed ^ (seq * 0xd1b54a32d192ed03ull);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = splitmix(&s);
    std::memcpy(p + i, &v, n - i < 8 ? n - i : 8);
  }
}
inline bool matches(const unsigned char* p, size_t n, uint64_t seed, uint64_t seq) {
  std::vector<unsigned char> want(n);
  fill(want.data(), n, seed, seq);
  return std::memcmp(p, want.data(), n) == 0;
}

// What the sender writes in the pipe for one message: the reference a
// descriptor would carry, or (kind 1) a staged message whose bytes follow.
struct Wire {
  uint32_t kind;  // 0: a slot to claim, 1: staged bytes follow, 2: end
  uint32_t bytes;
  uint64_t seq;
  SlotRef ref;
};

// Where a claimed location's bytes are, in this process's view of the arenas.
inline const unsigned char* bytes_at(const TestLocation& t, const SharedArena& user, const SharedArena& bounce) {
  const SharedArena& a = t.arena == kBounce ? bounce : user;
  if (t.offset + t.bytes > a.bytes) return nullptr;
  return a.base + t.offset;
}

}  // namespace slot_test
