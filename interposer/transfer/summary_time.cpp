#include "interposer/transfer/summary_time.hpp"

#include "mpi/real_mpi.hpp"

#include <chrono>

namespace strata::interposer {
namespace {

constexpr int kPassthrough = -1;

std::atomic<uint64_t> g_passthrough_calls{0};
std::atomic<uint64_t> g_passthrough_ns{0};
std::atomic<uint64_t> g_calls[kCallFamilies];
std::atomic<uint64_t> g_total_ns[kCallFamilies];
std::atomic<uint64_t> g_library_ns[kCallFamilies];

// The family of the handled call this thread is in (kPassthrough: none), and
// whether it is inside a library call already (a library that calls MPI by
// name would come back through the wrappers).
thread_local int t_family = kPassthrough;
thread_local bool t_in_library = false;

uint64_t now_ns() noexcept {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// One library call, timed into the family of the handled call around it.
class LibraryTime {
 public:
  LibraryTime() noexcept : outer_(!t_in_library) {
    if (outer_) {
      t_in_library = true;
      start_ = now_ns();
    }
  }
  ~LibraryTime() {
    if (!outer_) return;
    const uint64_t ns = now_ns() - start_;
    t_in_library = false;
    if (t_family == kPassthrough) {
      g_passthrough_calls.fetch_add(1, std::memory_order_relaxed);
      g_passthrough_ns.fetch_add(ns, std::memory_order_relaxed);
    } else {
      g_library_ns[t_family].fetch_add(ns, std::memory_order_relaxed);
    }
  }
  LibraryTime(const LibraryTime&) = delete;
  LibraryTime& operator=(const LibraryTime&) = delete;

 private:
  bool outer_;
  uint64_t start_ = 0;
};

// The table as it was before the trampolines: what they call.
mpi::RealMpi g_library;

// One trampoline per call of the interception table (its large-count forms
// too), each with the call's own signature.
// NOLINTBEGIN(bugprone-macro-parentheses): parameter lists are pasted
#define STRATA_CALL(fn, kind, lc, params, args, roles) \
  int timed_##fn params {                              \
    const LibraryTime timed;                           \
    return g_library.fn args;                          \
  }
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace

std::atomic<bool> g_time_calls{false};

const char* to_string(CallFamily f) {
  switch (f) {
    case CallFamily::p2p: return "p2p";
    case CallFamily::collective: return "collective";
    case CallFamily::completion: return "completion";
    case CallFamily::other: return "other";
  }
  return "?";
}

void start_call_timing() {
  if (g_time_calls.load(std::memory_order_relaxed)) return;
  g_library = mpi::g_real_mpi;
#define STRATA_CALL(fn, kind, lc, params, args, roles) mpi::g_real_mpi.fn = &timed_##fn;
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
  g_time_calls.store(true, std::memory_order_release);
}

CallTimes call_times() {
  CallTimes t;
  t.passthrough_calls = g_passthrough_calls.load(std::memory_order_relaxed);
  t.passthrough_library_ns = g_passthrough_ns.load(std::memory_order_relaxed);
  for (int f = 0; f < kCallFamilies; ++f) {
    t.calls[f] = g_calls[f].load(std::memory_order_relaxed);
    t.total_ns[f] = g_total_ns[f].load(std::memory_order_relaxed);
    t.library_ns[f] = g_library_ns[f].load(std::memory_order_relaxed);
  }
  return t;
}

void TimedCall::start(CallFamily family) noexcept {
  if (t_family != kPassthrough || t_in_library) return;  // nested: the outer call is timed
  family_ = family;
  t_family = static_cast<int>(family);
  start_ns_ = now_ns();
}

void TimedCall::stop() noexcept {
  const int f = static_cast<int>(family_);
  g_total_ns[f].fetch_add(now_ns() - start_ns_, std::memory_order_relaxed);
  g_calls[f].fetch_add(1, std::memory_order_relaxed);
  t_family = kPassthrough;
}

}  // namespace strata::interposer
