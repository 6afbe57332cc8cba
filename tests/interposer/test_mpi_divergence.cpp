// Collectives whose ranks describe their buffers differently (issue:
// "collectives never diverge across ranks"). For every collective the
// interposer intercepts, in its blocking, non-blocking and persistent forms:
// every rank describes its data with its own datatype of the same signature
// (named, contiguous, vector, irregular indexed, struct of one member,
// resized; reductions: one datatype, as MPI requires), its buffers lie in
// host or device memory by a pattern that mixes the two across ranks, and
// the collective is the first one on a fresh communicator (then a routed
// MPI_Allreduce follows on it, host and device mixed again). Every result
// byte is checked against the library alone (PMPI_* on host ints). Each
// case runs under an alarm: a rank stuck in a case names it and fails the
// test instead of hanging the run.
//
// Device memory is a GPU's (compiled with STRATA_TEST_CUDA) or the device
// stand-in of the CPU build (STRATA_FAKE_DEVICE); without either, every
// buffer is host memory and the datatype mixing is still tested.
#include "call_cases.hpp"
#include "support/mpi_test.hpp"
#include "support/test_device_memory.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

using cases::Completion;
using cases::Flavor;
using cases::Form;
using cases::Setting;

// The case a rank is in, for the alarm.
char g_case[256] = "(none)";

extern "C" void on_alarm(int) {
  const char head[] = "\n[divergence] timed out (a hang?) in case: ";
  (void)!write(2, head, sizeof head - 1);
  (void)!write(2, g_case, strnlen(g_case, sizeof g_case));
  (void)!write(2, "\n", 1);
  _exit(3);
}

int seconds_per_case() {
  const char* s = std::getenv("STRATA_TEST_CASE_SECONDS");
  return s != nullptr ? std::atoi(s) : 60;
}

bool quick() {
  const char* q = std::getenv("STRATA_TEST_QUICK");
  return q != nullptr && q[0] == '1';
}

// Each rank on a GPU of its own where there are enough (NCCL refuses ranks
// that share one); the stand-in has as many as STRATA_FAKE_DEVICE says.
bool have_device() {
  // Device buffers only through the interposer: the library alone (the plain
  // variant) takes none.
  const int n = strata_test::expect_preload() ? strata_test::test_device_count() : 0;
  if (n > 0) strata_test::test_device_select(strata_test::world_rank() % n);
  return strata_test::all_ranks_agree(n > 0);
}

// Memory patterns: which ranks hold device buffers.
struct Pattern {
  const char* name;
  bool (*device)(int rank);
};
const Pattern kPatterns[] = {
    {"all host", [](int) { return false; }},
    {"all device", [](int) { return true; }},
    {"even ranks device", [](int r) { return r % 2 == 0; }},
    {"rank 1 host", [](int r) { return r != 1; }},
};

// A fresh communicator for one case: a duplicate of the world, or a 1-D
// periodic Cartesian one for neighbourhood collectives.
MPI_Comm fresh(bool neighbourhood) {
  MPI_Comm c = MPI_COMM_NULL;
  if (neighbourhood) {
    const int dims[1] = {strata_test::world_size()};
    const int periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
  } else {
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
  }
  return c;
}

// After the case: a routed allreduce on the same communicator, every rank's
// memory by the pattern again, against the library.
std::string follow_up(MPI_Comm comm, const Pattern& p) {
  Setting s;
  s.device = [&](int r) { return p.device(r); };
  for (const cases::Named& c : cases::collectives()) {
    if (std::strcmp(c.call, "MPI_Allreduce") == 0) return c.run(comm, s);
  }
  return "no MPI_Allreduce case";
}

// Every rank took as many routing decisions (collectives/routing.hpp,
// decisions_taken): each may be collective over the communicator, so a
// rank that passed a call to the library on its own while another decided
// diverges. On a GPU machine that hangs (deciding makes the context with
// collectives of its own); without a GPU it may pass unnoticed, so the
// counts are compared after every case.
std::string decisions_alike() {
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  if (c == nullptr || c->version < 6) return "";
  const auto mine = static_cast<long long>(c->collective_decisions);
  long long least = 0, most = 0;
  MPI_Allreduce(&mine, &least, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (least == most) return "";
  return "ranks took different numbers of routing decisions (" + std::to_string(least) + " to " + std::to_string(most) +
         " so far): a rank decided where another passed the call to the library";
}

struct Run {
  const cases::Named* call;
  Form form;
  Completion completion;
  const Pattern* pattern;
  int flavor_offset;
};

// Runs one case on every rank; true when every rank passed.
bool run(const Run& r) {
  const int rank = strata_test::world_rank();
  std::snprintf(g_case, sizeof g_case, "%s, %s (%s), %s, flavors from %s", r.call->call, cases::to_string(r.form),
                cases::to_string(r.completion), r.pattern->name,
                cases::to_string(static_cast<Flavor>(r.flavor_offset % cases::kFlavors)));
  alarm(static_cast<unsigned>(seconds_per_case()));
  Setting s;
  s.form = r.form;
  s.completion = r.completion;
  bool (*device)(int) = r.pattern->device;
  s.device = [device](int k) { return device(k); };
  const int offset = r.flavor_offset;
  const bool same = r.call->reduction;
  s.flavor = [offset, same](int k) { return static_cast<Flavor>(((same ? 0 : k) + offset) % cases::kFlavors); };
  MPI_Comm comm = fresh(r.call->neighbourhood);
  std::string why = r.call->run(comm, s);
  if (why.empty()) why = follow_up(comm, *r.pattern);
  MPI_Comm_free(&comm);
  if (why.empty()) why = decisions_alike();
  alarm(0);
  if (!why.empty()) ADD_FAILURE() << "[rank " << rank << "] " << g_case << ": " << why;
  return strata_test::all_ranks_agree(why.empty());
}

const Pattern* patterns(bool device, int* count) {
  *count = device ? static_cast<int>(sizeof kPatterns / sizeof kPatterns[0]) : 1;
  return kPatterns;
}

class Divergence : public testing::Test {
 protected:
  void SetUp() override {
    STRATA_REQUIRE_RANKS(2);
    std::signal(SIGALRM, on_alarm);
    device_ = have_device();
  }
  bool device_ = false;
};

// Blocking: every collective, every memory pattern, two flavor rotations
// (all six with STRATA_TEST_QUICK unset and few ranks).
TEST_F(Divergence, BlockingCollectives) {
  int np = 0;
  const Pattern* ps = patterns(device_, &np);
  const int rotations = quick() ? 1 : 3;
  for (const cases::Named& c : cases::collectives()) {
    for (int p = 0; p < np; ++p) {
      for (int f = 0; f < rotations; ++f) {
        EXPECT_TRUE(run({&c, Form::blocking, Completion::wait, &ps[p], f * 2 + p}));
      }
    }
  }
}

// Non-blocking and persistent: every collective, mixed memory, completed by
// a completion call that rotates through all eight.
TEST_F(Divergence, NonBlockingAndPersistentCollectives) {
  int np = 0;
  const Pattern* ps = patterns(device_, &np);
  const Pattern& mixed = ps[np - 1];
  int k = 0, substituted = 0, left_out = 0;
  for (const cases::Named& c : cases::collectives()) {
    for (Form form : {Form::nonblocking, Form::persistent}) {
      if (form == Form::persistent && !cases::have_persistent()) continue;
      auto completion = static_cast<Completion>(k % cases::kCompletions);
      ++k;
      if (form == Form::persistent) {
        if (!cases::library_persistent_works(c.call)) {
          ++left_out;
          continue;
        }
        completion = cases::for_persistent_collective(completion, &substituted);
      }
      EXPECT_TRUE(run({&c, form, completion, &mixed, k - 1}));
    }
  }
  cases::report_library_workarounds("divergence", substituted, left_out);
}

// Ranks that share a GPU only because none has picked its own yet (every
// rank on device 0 when the communicator's first collective ran), then host
// collectives whose buffers look new to some ranks: a host buffer in memory
// no call has seen yet may be device memory at a glance, so those ranks ask
// the routing while the others pass their call straight to the library.
// Nothing the routing does may be collective then (it was: the device vote,
// a hang or a mismatched allreduce). Rank 0 takes a fresh mapping each
// time, the others a buffer every call has seen.
TEST_F(Divergence, HostBuffersNewToOneRankOnGpusNotYetPicked) {
  if (!device_ || !strata_test::expect_preload()) GTEST_SKIP() << "needs the interposer and a device";
  std::snprintf(g_case, sizeof g_case, "host buffers new to rank 0, GPUs not yet picked");
  alarm(static_cast<unsigned>(seconds_per_case()));
  strata_test::test_device_select(0);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int rank = strata_test::world_rank(), np = strata_test::world_size();
  std::vector<long long> seen(4, 0);
  MPI_Allreduce(MPI_IN_PLACE, seen.data(), 4, MPI_LONG_LONG, MPI_SUM, comm);  // makes the context
  constexpr size_t kMapping = size_t{4} << 20;                                // two 2 MiB granules at least
  std::vector<void*> mappings;
  std::mt19937_64 random(std::random_device{}());
  for (int i = 0; i < 12; ++i) {
    long long* data = seen.data();
    if (rank == 0) {
      void* m = mmap(nullptr, kMapping, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ASSERT_NE(m, MAP_FAILED);
      mappings.push_back(m);
      data = static_cast<long long*>(m) + (kMapping / 2) / sizeof(long long);
    }
    long long value = static_cast<long long>(random() % 1000);
    MPI_Bcast(&value, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    for (int k = 0; k < 4; ++k) data[k] = value + rank + k;
    ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, data, 4, MPI_LONG_LONG, MPI_SUM, comm), MPI_SUCCESS);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(data[k], np * (value + k) + static_cast<long long>(np) * (np - 1) / 2) << "call " << i;
    }
    for (int k = 0; k < 4; ++k) data[k] = rank == 0 ? -k : 12345;
    ASSERT_EQ(MPI_Bcast(data, 4, MPI_LONG_LONG, 0, comm), MPI_SUCCESS);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(data[k], -k) << "call " << i;
  }
  MPI_Comm_free(&comm);
  for (void* m : mappings) munmap(m, kMapping);
  const std::string why = decisions_alike();
  alarm(0);
  EXPECT_EQ(why, "");
  have_device();  // each rank back on its own GPU
}

// The interposer is really there and really staged device buffers.
TEST_F(Divergence, InterposerStagedDeviceBuffers) {
  const strata_test::StrataCounters* counters = strata_test::preload_counters();
  if (!strata_test::expect_preload()) GTEST_SKIP() << "not preloaded";
  ASSERT_NE(counters, nullptr);
  if (device_) EXPECT_GT(counters->spans_copied, 0u);
}

}  // namespace
