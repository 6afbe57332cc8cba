// The pass-through path takes no lock and allocates nothing ("the preload
// never makes a program slower"). This program links the interposer's
// wrappers and core statically (the preload library's contents) with
// malloc, calloc, realloc, operator new and the pthread lock calls
// wrapped and counted (-Wl,--wrap: only references from Strata's code and
// this file are counted, not the MPI library's own), then calls MPI on host
// buffers of predefined and contiguous types, as a program would, and
// asserts that none of those were used. A first call on a datatype never
// seen before takes the slow path once (a lock: the proof that the counting
// works).
#include "collectives/context.hpp"
#include "collectives/routing.hpp"
#include "interposer/handlers/routed.hpp"
#include "interposer/model/host_model.hpp"
#include "interposer/shim/enter.hpp"
#include "interposer/transfer/summary_time.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <vector>

#include <pthread.h>

namespace {
std::atomic<long> g_allocations{0};
std::atomic<long> g_locks{0};
thread_local bool t_counting = false;  // only the test's own calls are counted
}  // namespace

extern "C" {
void* __real_malloc(size_t);
void* __real_calloc(size_t, size_t);
void* __real_realloc(void*, size_t);
int __real_pthread_mutex_lock(pthread_mutex_t*);
int __real_pthread_rwlock_rdlock(pthread_rwlock_t*);
int __real_pthread_rwlock_wrlock(pthread_rwlock_t*);

void* __wrap_malloc(size_t n) {
  if (t_counting) g_allocations.fetch_add(1);
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t m) {
  if (t_counting) g_allocations.fetch_add(1);
  return __real_calloc(n, m);
}
void* __wrap_realloc(void* p, size_t n) {
  if (t_counting) g_allocations.fetch_add(1);
  return __real_realloc(p, n);
}
int __wrap_pthread_mutex_lock(pthread_mutex_t* m) {
  if (t_counting) g_locks.fetch_add(1);
  return __real_pthread_mutex_lock(m);
}
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  if (t_counting) g_locks.fetch_add(1);
  return __real_pthread_rwlock_rdlock(l);
}
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  if (t_counting) g_locks.fetch_add(1);
  return __real_pthread_rwlock_wrlock(l);
}
}

void* operator new(size_t n) {
  if (t_counting) g_allocations.fetch_add(1);
  if (void* p = std::malloc(n)) return p;
  throw std::bad_alloc();
}
// The nothrow form too: the library's `new (std::nothrow)` must meet the
// same allocator as the `delete` above (AddressSanitizer checks the pair).
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  if (t_counting) g_allocations.fetch_add(1);
  return std::malloc(n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

struct Counts {
  long allocations;
  long locks;
};

// Counts what Strata (and this file) allocate and lock while `body` runs.
template <class Body>
Counts counted(Body body) {
  const long a0 = g_allocations.load(), l0 = g_locks.load();
  t_counting = true;
  body();
  t_counting = false;
  return {g_allocations.load() - a0, g_locks.load() - l0};
}

// A self-message: MPI_Irecv, MPI_Send, then the completion call.
void self_message(MPI_Datatype type, int count, int how) {
  char out[64] = {1, 2, 3}, in[64] = {};
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Irecv(in, count, type, 0, 3, MPI_COMM_SELF, &r);
  MPI_Send(out, count, type, 0, 3, MPI_COMM_SELF);
  int flag = 0;
  switch (how) {
    case 0: MPI_Wait(&r, MPI_STATUS_IGNORE); break;
    case 1: MPI_Waitall(1, &r, MPI_STATUSES_IGNORE); break;
    default:
      while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      break;
  }
}

TEST(PassThrough, PredefinedAndContiguousTypesTakeNoLockAndAllocateNothing) {
  MPI_Datatype contiguous = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(4, MPI_INT, &contiguous);
  MPI_Type_commit(&contiguous);
  const MPI_Datatype types[] = {MPI_BYTE, MPI_CHAR, MPI_INT, MPI_DOUBLE, contiguous};
  for (MPI_Datatype t : types) self_message(t, 1, 0);  // first use of each: learnt
  for (int how = 0; how < 3; ++how) {
    const Counts c = counted([&] {
      for (int i = 0; i < 200; ++i) {
        for (MPI_Datatype t : types) self_message(t, 1, how);
      }
    });
    EXPECT_EQ(c.allocations, 0) << "completion " << how;
    EXPECT_EQ(c.locks, 0) << "completion " << how;
  }
  MPI_Type_free(&contiguous);
}

// The counting itself: a datatype the interposer has not seen is learnt on
// its first call, under a lock.
TEST(PassThrough, FirstUseOfADatatypeIsCounted) {
  const Counts first = counted([] { self_message(MPI_UNSIGNED_SHORT, 2, 0); });
  EXPECT_GT(first.locks, 0);
  const Counts then = counted([] { self_message(MPI_UNSIGNED_SHORT, 2, 0); });
  EXPECT_EQ(then.locks, 0);
}

// What STRATA_HOST_PACK says of host transfers (the ctest variants set it):
// "never" or unset (the built-in model on this one-rank node, a core per
// rank: the library at every size) gives them all to the library.
bool transfers_left_to_library() {
  const char* mode = std::getenv("STRATA_HOST_PACK");
  return mode == nullptr || std::strcmp(mode, "never") == 0 || std::strcmp(mode, "auto") == 0;
}

// A derived type's host data passes from the exported function exactly
// where the host model leaves every transfer to the library (no lock, no
// allocation, the bytes delivered as the library delivers them), and goes
// to the general path (where the model is asked) where it may not.
TEST(PassThrough, DerivedTypesPassWhereTheModelLeavesEveryTransferToTheLibrary) {
  MPI_Datatype vec = MPI_DATATYPE_NULL;
  MPI_Type_vector(8, 3, 5, MPI_BYTE, &vec);  // 8 blocks of 3 bytes at a 5-byte stride: extent 38
  MPI_Type_commit(&vec);
  self_message(vec, 1, 0);  // learnt
  const bool expected = transfers_left_to_library();
  EXPECT_EQ(strata::interposer::g_host_transfers_to_library, expected ? 1 : 0);
  char probe[64] = {};
  EXPECT_EQ(strata::interposer::shim::pass_through<true>(probe, vec), expected);
  if (expected) {
    const Counts c = counted([&] {
      for (int i = 0; i < 200; ++i) self_message(vec, 1, i % 3);
    });
    EXPECT_EQ(c.allocations, 0);
    EXPECT_EQ(c.locks, 0);
  }
  // The bytes: a fresh random message into a poisoned buffer; only the
  // vector's blocks change.
  std::mt19937 rng(std::random_device{}());
  std::vector<unsigned char> out(64), in(64, 0xA5);
  for (auto& b : out) b = static_cast<unsigned char>(rng());
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Irecv(in.data(), 1, vec, 0, 4, MPI_COMM_SELF, &r);
  MPI_Send(out.data(), 1, vec, 0, 4, MPI_COMM_SELF);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < 64; ++i) {
    const bool in_block = i < 38 && i % 5 < 3;
    EXPECT_EQ(in[i], in_block ? out[i] : 0xA5) << "byte " << i;
  }
  MPI_Type_free(&vec);
}

// The variant test_pass_through_gpu_program: a GPU program (the stand-in's
// GPU, STRATA_GPU_PROGRAM=on), so its world communicator is routed (a
// context, agreements on where the buffers are). Its host collectives pass
// from the exported function between two agreements (routed::Passes),
// counted as routing decisions, without a lock or an allocation; before,
// each took the handler and decide() (+70 ns a call on the stand-in).
TEST(PassThrough, GpuProgramsHostCollectivesPassBetweenAgreements) {
  const char* program = std::getenv("STRATA_GPU_PROGRAM");
  if (program == nullptr || std::strcmp(program, "on") != 0) GTEST_SKIP() << "not the GPU-program variant";
  using strata::calls::Id;
  using strata::interposer::routed::Passes;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  float in[4] = {}, out[4] = {};
  // The first calls decide, and vote at calls 1, 2, 4, ... 256, 512 of each
  // size class; the next vote is at call 768.
  for (int i = 0; i < 600; ++i) MPI_Allreduce(in, out, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  ASSERT_NE(strata::coll::Context::routed(MPI_COMM_WORLD), nullptr) << "the world of a GPU job has a routed context";
  const uint64_t decisions = strata::coll::decisions_taken();
  // The variant sets STRATA_SUMMARY=1: calls through a handler are counted
  // by family, the library's calls outside one apart.
  const auto handled = [] {
    return strata::interposer::call_times().calls[static_cast<int>(strata::interposer::CallFamily::collective)];
  };
  const uint64_t handled_before = handled();
  const uint64_t passed_before = strata::interposer::call_times().passthrough_calls;
  bool right = true;
  const Counts c = counted([&] {
    for (int i = 0; i < 100; ++i) {
      for (float& v : in) v = value(rng);
      std::fill_n(out, 4, -1e30f);  // poisoned
      MPI_Allreduce(in, out, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      right = right && std::memcmp(in, out, sizeof in) == 0;  // one rank: the sum is the input
    }
  });
  EXPECT_TRUE(right);
  EXPECT_EQ(c.allocations, 0);
  EXPECT_EQ(c.locks, 0);
  EXPECT_EQ(strata::coll::decisions_taken() - decisions, 100u) << "each call counted as decide() counts it";
  EXPECT_EQ(handled() - handled_before, 0u) << "calls that took the handler";
  EXPECT_GE(strata::interposer::call_times().passthrough_calls - passed_before, 100u);
  // The test itself, at call 701: yes (and counted); a user op: no (decide()
  // asks nothing of it either, but the exported function cannot know).
  EXPECT_TRUE((Passes<Id::MPI_Allreduce>::test(in, out, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)));
  EXPECT_EQ(strata::coll::decisions_taken() - decisions, 101u);
  EXPECT_FALSE((Passes<Id::MPI_Allreduce>::test(in, out, 4, MPI_FLOAT, MPI_REPLACE, MPI_COMM_WORLD)));
  EXPECT_EQ(strata::coll::decisions_taken() - decisions, 101u);

  // The exchanges: one agreement per kind. MPI_Alltoall of 1 KiB blocks
  // and MPI_Gather of 1 KiB blocks (from STRATA_COLL_GATHER_NCCL_MIN, 512 B,
  // the gather decides); a 64-byte gather goes to the library undecided.
  std::vector<unsigned char> send(1024), recv(1024);
  for (int i = 0; i < 600; ++i) {
    MPI_Alltoall(send.data(), 1024, MPI_BYTE, recv.data(), 1024, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Gather(send.data(), 1024, MPI_BYTE, recv.data(), 1024, MPI_BYTE, 0, MPI_COMM_WORLD);
  }
  const uint64_t exchange_decisions = strata::coll::decisions_taken();
  const uint64_t exchanges_handled = handled();
  const Counts e = counted([&] {
    for (int i = 0; i < 50; ++i) {
      for (auto& b : send) b = static_cast<unsigned char>(rng());
      std::fill(recv.begin(), recv.end(), 0xA5);
      MPI_Alltoall(send.data(), 1024, MPI_BYTE, recv.data(), 1024, MPI_BYTE, MPI_COMM_WORLD);
      right = right && recv == send;
      std::fill(recv.begin(), recv.end(), 0xA5);
      MPI_Gather(send.data(), 1024, MPI_BYTE, recv.data(), 1024, MPI_BYTE, 0, MPI_COMM_WORLD);
      right = right && recv == send;
      MPI_Gather(send.data(), 64, MPI_BYTE, recv.data(), 64, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
  });
  EXPECT_TRUE(right);
  EXPECT_EQ(e.allocations, 0);
  EXPECT_EQ(e.locks, 0);
  EXPECT_EQ(strata::coll::decisions_taken() - exchange_decisions, 100u) << "the 1 KiB exchanges, as decided";
  EXPECT_EQ(handled() - exchanges_handled, 0u) << "exchanges that took the handler";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
