// The device-direct transport (interposer/transfer/direct.hpp) from an
// unchanged MPI program's side: device messages between ranks of one node,
// run preloaded with STRATA_P2P_IPC=on on the GPU of a CUDA build or the
// device stand-in of a CPU build (whose IPC maps one process's stand-in
// memory into another). Ranks pair up (0-1, 2-3, ...); every message is
// fresh random bytes, every receive buffer is poisoned and framed by guard
// bytes; the oracle is the sender's bytes at the positions the datatypes
// name, and the counters say that the bytes went through IPC (a test that
// staged them would prove nothing about the transport).
#include "support/mpi_test.hpp"
#include "support/test_device_memory.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// A device-direct descriptor's size on the wire (interposer/transfer/direct_descriptor.hpp): the
// receives of exactly this many bytes are the ones checked for one.
constexpr size_t kDescriptorBytes = 256;

using strata_test::preload_counters;

constexpr size_t kGuard = 64;
constexpr unsigned char kPoison = 0xa5;

int rank() { return strata_test::world_rank(); }
int size() { return strata_test::world_size(); }
int partner() { return rank() ^ 1; }
bool sender() { return rank() % 2 == 0; }

std::vector<unsigned char> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// A device buffer with guard bytes on both sides, filled from the host.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    base_ = static_cast<unsigned char*>(strata_test::test_device_alloc(bytes + 2 * kGuard));
    if (base_ == nullptr) return;
    std::vector<unsigned char> poison(bytes + 2 * kGuard, kPoison);
    strata_test::test_device_to(base_, poison.data(), poison.size());
  }
  ~DeviceBuffer() {
    if (base_ != nullptr) strata_test::test_device_free(base_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  explicit operator bool() const { return base_ != nullptr; }
  void* data() const { return base_ + kGuard; }
  void fill(const std::vector<unsigned char>& host) { strata_test::test_device_to(data(), host.data(), host.size()); }
  // The payload, and whether both guards kept the poison.
  std::vector<unsigned char> read(bool* guards_intact) const {
    std::vector<unsigned char> all(bytes_ + 2 * kGuard);
    strata_test::test_device_from(all.data(), base_, all.size());
    bool intact = true;
    for (size_t i = 0; i < kGuard; ++i) intact = intact && all[i] == kPoison && all[kGuard + bytes_ + i] == kPoison;
    *guards_intact = intact;
    return {all.begin() + kGuard, all.end() - kGuard};
  }

 private:
  size_t bytes_;
  unsigned char* base_ = nullptr;
};

// Bytes of a receive `got` that differ from the sender's `sent`: within the
// 8-byte blocks every 64 bytes where `strided` (the gaps must keep their
// poison), everywhere otherwise.
size_t wrong_bytes(const std::vector<unsigned char>& got, const std::vector<unsigned char>& sent, bool strided) {
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != (!strided || i % 64 < 8 ? sent[i] : kPoison) ? 1 : 0;
  return wrong;
}

// STRATA_TEST_DEVICE_BEFORE_INIT=1 (a policy variant): the program
// allocates device memory before MPI_Init, at static initialisation, as a
// program that picks its GPU first does; the preload then finds a context.
const bool g_device_before_init = [] {
  if (std::getenv("STRATA_TEST_DEVICE_BEFORE_INIT") != nullptr) (void)strata_test::test_device_alloc(4096);
  return true;
}();

uint64_t sends_direct() { return preload_counters() ? preload_counters()->sends_direct : 0; }
uint64_t recvs_direct() { return preload_counters() ? preload_counters()->recvs_direct : 0; }
uint64_t rehomed() { return preload_counters() ? preload_counters()->direct_rehomed : 0; }

class Direct : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!strata_test::all_ranks_agree(strata_test::test_device_count() > 0)) GTEST_SKIP() << "no device";
    if (size() % 2 != 0) GTEST_SKIP() << "needs an even number of ranks";
    const strata_test::StrataCounters* c = preload_counters();
    ASSERT_NE(c, nullptr) << "run preloaded";
    ASSERT_GE(c->version, 8u);
    strata_test::test_device_select(rank() % strata_test::test_device_count());
    seed_ = std::random_device{}();
    MPI_Bcast(&seed_, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  }
  // One stream of bytes per case, per pair of ranks (`r`'s pair).
  uint64_t seed(int k, int r = rank()) const {
    return seed_ * 1000003u + static_cast<uint64_t>(k) * 7919u + static_cast<uint64_t>(r / 2) * 31u;
  }
  // Messages to and from the partner: per message a send buffer holding
  // this rank's bytes of its case, a poisoned receive buffer, and the
  // partner's bytes of that case (what must arrive there).
  struct Messages {
    std::vector<std::unique_ptr<DeviceBuffer>> out, in;
    std::vector<std::vector<unsigned char>> expect;
  };
  // Adds a message of `span` bytes, case `k` (ASSERT_NO_FATAL_FAILURE).
  void add_message(Messages* ms, size_t span, int k) const {
    ms->out.push_back(std::make_unique<DeviceBuffer>(span));
    ms->in.push_back(std::make_unique<DeviceBuffer>(span));
    ASSERT_TRUE(*ms->out.back() && *ms->in.back());
    ms->out.back()->fill(random_bytes(span, seed(k) ^ static_cast<uint64_t>(rank())));
    ms->expect.push_back(random_bytes(span, seed(k) ^ static_cast<uint64_t>(partner())));
  }
  // Message m arrived whole: guards intact, every byte as sent (`strided`:
  // the gaps between 8-byte blocks every 64 bytes kept their poison).
  static void expect_arrived(const Messages& ms, int m, bool strided, const std::string& what) {
    bool guards = false;
    const std::vector<unsigned char> got = ms.in[static_cast<size_t>(m)]->read(&guards);
    EXPECT_TRUE(guards) << what;
    EXPECT_EQ(wrong_bytes(got, ms.expect[static_cast<size_t>(m)], strided), 0u) << what;
  }
  uint64_t seed_ = 0;
};

TEST_F(Direct, ContiguousMessagesArriveWhole) {
  for (size_t bytes : {size_t{64} << 10, size_t{1} << 20, (size_t{3} << 20) + 13}) {
    const std::vector<unsigned char> expect = random_bytes(bytes, seed(static_cast<int>(bytes)));
    DeviceBuffer buf(bytes);
    ASSERT_TRUE(buf);
    const uint64_t sent = sends_direct(), got = recvs_direct();
    if (sender()) {
      buf.fill(expect);
      ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, partner(), 7, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(sends_direct(), sent + 1) << bytes << " bytes: not sent through IPC";
    } else {
      MPI_Status status;
      ASSERT_EQ(MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, partner(), 7, MPI_COMM_WORLD, &status),
                MPI_SUCCESS);
      int count = -1;
      MPI_Get_count(&status, MPI_BYTE, &count);
      EXPECT_EQ(count, static_cast<int>(bytes));
      EXPECT_EQ(status.MPI_SOURCE, partner());
      EXPECT_EQ(status.MPI_TAG, 7);
      EXPECT_EQ(recvs_direct(), got + 1);
      bool guards = false;
      EXPECT_EQ(buf.read(&guards), expect) << bytes << " bytes";
      EXPECT_TRUE(guards);
    }
  }
}

// 8-byte blocks every 64 bytes on both sides, or on one side only: the
// receiver unpacks straight from the sender's packed bytes; the gaps of a
// strided receive keep their poison.
TEST_F(Direct, StridedTypesOnEitherSide) {
  constexpr int kBlocks = 16384;  // 128 KiB of packed data
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  const size_t packed = static_cast<size_t>(kBlocks) * 8;
  for (int shape = 0; shape < 3; ++shape) {  // 0: both strided, 1: strided sender, 2: strided receiver
    const bool send_strided = shape != 2, recv_strided = shape != 1;
    const std::vector<unsigned char> source = random_bytes(span, seed(100 + shape));
    std::vector<unsigned char> payload(packed);
    for (int b = 0; b < kBlocks; ++b) {
      std::memcpy(&payload[static_cast<size_t>(b) * 8], &source[static_cast<size_t>(b) * 64], 8);
    }
    if (sender()) {
      DeviceBuffer buf(send_strided ? span : packed);
      ASSERT_TRUE(buf);
      buf.fill(send_strided ? source : payload);
      const uint64_t sent = sends_direct();
      ASSERT_EQ(send_strided
                    ? MPI_Send(buf.data(), 1, strided, partner(), shape, MPI_COMM_WORLD)
                    : MPI_Send(buf.data(), static_cast<int>(packed), MPI_BYTE, partner(), shape, MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(sends_direct(), sent + 1) << "shape " << shape;
    } else {
      DeviceBuffer buf(recv_strided ? span : packed);
      ASSERT_TRUE(buf);
      MPI_Status status;
      ASSERT_EQ(recv_strided ? MPI_Recv(buf.data(), 1, strided, partner(), shape, MPI_COMM_WORLD, &status)
                             : MPI_Recv(buf.data(), static_cast<int>(packed), MPI_BYTE, partner(), shape,
                                        MPI_COMM_WORLD, &status),
                MPI_SUCCESS);
      int count = -1;
      MPI_Get_count(&status, recv_strided ? strided : MPI_BYTE, &count);
      EXPECT_EQ(count, recv_strided ? 1 : static_cast<int>(packed));
      bool guards = false;
      const std::vector<unsigned char> got = buf.read(&guards);
      EXPECT_TRUE(guards);
      if (!recv_strided) {
        EXPECT_EQ(got, payload) << "shape " << shape;
        continue;
      }
      EXPECT_EQ(wrong_bytes(got, source, true), 0u) << "shape " << shape;
    }
  }
  MPI_Type_free(&strided);
}

// Non-blocking, several messages in flight each way, completed by
// MPI_Waitall, MPI_Waitany and MPI_Testsome loops.
TEST_F(Direct, NonBlockingInFlightTogether) {
  constexpr int kMessages = 6;
  constexpr size_t kBytes = 96 << 10;
  for (int how = 0; how < 3; ++how) {
    std::vector<std::unique_ptr<DeviceBuffer>> out, in;
    std::vector<std::vector<unsigned char>> expect;
    std::vector<MPI_Request> requests;
    for (int m = 0; m < kMessages; ++m) {
      out.push_back(std::make_unique<DeviceBuffer>(kBytes));
      in.push_back(std::make_unique<DeviceBuffer>(kBytes));
      out.back()->fill(random_bytes(kBytes, seed(1000 + how * 100 + m) ^ static_cast<uint64_t>(rank())));
      expect.push_back(random_bytes(kBytes, seed(1000 + how * 100 + m) ^ static_cast<uint64_t>(partner())));
      requests.emplace_back();
      MPI_Irecv(in.back()->data(), static_cast<int>(kBytes), MPI_BYTE, partner(), m, MPI_COMM_WORLD, &requests.back());
    }
    for (int m = 0; m < kMessages; ++m) {
      requests.emplace_back();
      MPI_Isend(out[static_cast<size_t>(m)]->data(), static_cast<int>(kBytes), MPI_BYTE, partner(), m, MPI_COMM_WORLD,
                &requests.back());
    }
    std::vector<MPI_Status> statuses(requests.size());
    if (how == 0) {
      ASSERT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()), MPI_SUCCESS);
    } else if (how == 1) {
      for (size_t done = 0; done < requests.size(); ++done) {
        int index = -1;
        MPI_Status st;
        ASSERT_EQ(MPI_Waitany(static_cast<int>(requests.size()), requests.data(), &index, &st), MPI_SUCCESS);
        ASSERT_GE(index, 0);
        statuses[static_cast<size_t>(index)] = st;
      }
    } else {
      size_t done = 0;
      std::vector<int> indices(requests.size());
      std::vector<MPI_Status> some(requests.size());
      while (done < requests.size()) {
        int outcount = 0;
        ASSERT_EQ(
            MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &outcount, indices.data(), some.data()),
            MPI_SUCCESS);
        for (int k = 0; k < outcount; ++k) statuses[static_cast<size_t>(indices[static_cast<size_t>(k)])] = some[k];
        done += static_cast<size_t>(outcount);
      }
    }
    for (int m = 0; m < kMessages; ++m) {
      int count = -1;
      MPI_Get_count(&statuses[static_cast<size_t>(m)], MPI_BYTE, &count);
      EXPECT_EQ(count, static_cast<int>(kBytes)) << "receive " << m << ", completion " << how;
      bool guards = false;
      EXPECT_EQ(in[static_cast<size_t>(m)]->read(&guards), expect[static_cast<size_t>(m)]) << "message " << m;
      EXPECT_TRUE(guards);
    }
  }
}

uint64_t deferred_flushes() { return preload_counters() ? preload_counters()->deferred_flushes : 0; }
uint64_t ahead_of_pack() { return preload_counters() ? preload_counters()->sends_ahead_of_pack : 0; }
uint64_t reads_after_event() { return preload_counters() ? preload_counters()->reads_after_event : 0; }

// A halo exchange's pattern both ways: every receive posted, then a small
// strided device send staged, strided and contiguous ones over IPC, all
// MPI_Isend, completed by one MPI_Waitall with the sends first in the array
// (their completion waits for the partner's pulls). The sends are packed in
// one batch (one flush: a device-direct MPI_Isend no longer posts the ones
// deferred before it), and every byte arrives, gaps keeping their poison.
// The deferred ones are all over IPC (the small staged one is not
// deferred), so the two strided ones leave ahead of their pack.
TEST_F(Direct, HaloPatternOfIsendsIsPackedInOneBatch) {
  constexpr int kBlocks = 16384;    // 128 KiB packed: over IPC
  constexpr int kSmallBlocks = 64;  // 512 B packed: staged
  MPI_Datatype strided = MPI_DATATYPE_NULL, small = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &strided);
  MPI_Type_vector(kSmallBlocks, 8, 64, MPI_BYTE, &small);
  MPI_Type_commit(&strided);
  MPI_Type_commit(&small);
  // Per message: its count and type, and the bytes of its buffer.
  struct Shape {
    int count;
    MPI_Datatype type;
    size_t span;
    bool strided;
  };
  // The small one first: it is not deferred (its span is copied to the
  // host at once), and a send that is not deferred posts the deferred ones
  // to the same peer before it, to keep their order.
  const Shape shapes[] = {{1, small, static_cast<size_t>(kSmallBlocks - 1) * 64 + 8, true},
                          {1, strided, static_cast<size_t>(kBlocks - 1) * 64 + 8, true},
                          {200 << 10, MPI_BYTE, size_t{200} << 10, false},
                          {1, strided, static_cast<size_t>(kBlocks - 1) * 64 + 8, true}};
  constexpr int kShapes = 4;
  for (int round = 0; round < 3; ++round) {
    Messages ms;
    std::vector<MPI_Request> recvs(kShapes), sends(kShapes);
    for (int m = 0; m < kShapes; ++m) {
      const Shape& sh = shapes[m];
      ASSERT_NO_FATAL_FAILURE(add_message(&ms, sh.span, 5000 + round * 10 + m));
      ASSERT_EQ(MPI_Irecv(ms.in.back()->data(), sh.count, sh.type, partner(), m, MPI_COMM_WORLD, &recvs[m]),
                MPI_SUCCESS);
    }
    const uint64_t flushes = deferred_flushes(), sent = sends_direct(), got = recvs_direct();
    const uint64_t ahead = ahead_of_pack(), ordered = reads_after_event();
    for (int m = 0; m < kShapes; ++m) {
      ASSERT_EQ(MPI_Isend(ms.out[m]->data(), shapes[m].count, shapes[m].type, partner(), m, MPI_COMM_WORLD, &sends[m]),
                MPI_SUCCESS);
    }
    std::vector<MPI_Request> all(sends);
    all.insert(all.end(), recvs.begin(), recvs.end());
    ASSERT_EQ(MPI_Waitall(static_cast<int>(all.size()), all.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(deferred_flushes(), flushes + 1) << "round " << round << ": the sends were not packed in one batch";
    EXPECT_EQ(sends_direct(), sent + 3) << "round " << round;
    EXPECT_EQ(recvs_direct(), got + 3) << "round " << round;
    EXPECT_EQ(ahead_of_pack(), ahead + 2) << "round " << round;
    EXPECT_EQ(reads_after_event(), ordered + 2) << "round " << round;
    for (int m = 0; m < kShapes; ++m) {
      expect_arrived(ms, m, shapes[m].strided, "round " + std::to_string(round) + ", message " + std::to_string(m));
    }
  }
  MPI_Type_free(&strided);
  MPI_Type_free(&small);
}

uint64_t pack_groups() { return preload_counters() ? preload_counters()->deferred_pack_groups : 0; }

// A batch of strided MPI_Isends that all travel over IPC, to the partner
// and to this rank itself: the flush does not wait for their pack; each
// descriptor names the IPC event recorded after it, and every receiver's
// pull waits for that record on its GPU (a message to self finds the event
// among its own). Large messages (512 KiB packed from 4 MiB spans, under
// the suite's streaming threshold: one group) and
// several rounds reusing the staging of the round before, so that a pull
// not ordered after its pack reads bytes not yet packed. Every byte
// arrives, gaps keeping their poison.
TEST_F(Direct, DescriptorsLeaveBeforeTheirPackAndReceiversWaitOnTheDevice) {
  ASSERT_GE(preload_counters()->version, 11u);
  constexpr int kBlocks = 1 << 16;
  constexpr int kToPartner = 3;
  constexpr int kSelfTag = 900;
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  for (int round = 0; round < 3; ++round) {
    Messages ms;
    std::vector<MPI_Request> requests;
    for (int m = 0; m < kToPartner; ++m) {
      ASSERT_NO_FATAL_FAILURE(add_message(&ms, span, 5800 + round * 10 + m));
      requests.emplace_back();
      ASSERT_EQ(MPI_Irecv(ms.in.back()->data(), 1, strided, partner(), m, MPI_COMM_WORLD, &requests.back()),
                MPI_SUCCESS);
    }
    DeviceBuffer self_out(span), self_in(span);
    ASSERT_TRUE(self_out && self_in);
    const std::vector<unsigned char> mine = random_bytes(span, seed(5900 + round) ^ static_cast<uint64_t>(rank()));
    self_out.fill(mine);
    requests.emplace_back();
    ASSERT_EQ(MPI_Irecv(self_in.data(), 1, strided, rank(), kSelfTag, MPI_COMM_WORLD, &requests.back()), MPI_SUCCESS);
    const uint64_t ahead = ahead_of_pack(), ordered = reads_after_event(), sent = sends_direct();
    for (int m = 0; m < kToPartner; ++m) {
      requests.emplace_back();
      ASSERT_EQ(MPI_Isend(ms.out[m]->data(), 1, strided, partner(), m, MPI_COMM_WORLD, &requests.back()), MPI_SUCCESS);
    }
    requests.emplace_back();
    ASSERT_EQ(MPI_Isend(self_out.data(), 1, strided, rank(), kSelfTag, MPI_COMM_WORLD, &requests.back()), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(sends_direct(), sent + kToPartner + 1) << "round " << round;
    EXPECT_EQ(ahead_of_pack(), ahead + kToPartner + 1) << "round " << round << ": a flush waited for its pack";
    EXPECT_EQ(reads_after_event(), ordered + kToPartner + 1)
        << "round " << round << ": a receiver did not order its pull after the sender's pack";
    for (int m = 0; m < kToPartner; ++m) {
      expect_arrived(ms, m, true, "round " + std::to_string(round) + ", message " + std::to_string(m));
    }
    bool guards = false;
    const std::vector<unsigned char> got = self_in.read(&guards);
    EXPECT_TRUE(guards) << "round " << round << ", to self";
    EXPECT_EQ(wrong_bytes(got, mine, true), 0u) << "round " << round << ", to self";
  }
  MPI_Type_free(&strided);
}

// Whether the job streams messages of 1 MiB (the suite's ctest environment
// sets STRATA_DEVICE_STREAM_FROM=1M; the default, 8 MiB, does not).
bool streams_1mib() {
  const char* from = std::getenv("STRATA_DEVICE_STREAM_FROM");
  return from != nullptr && std::string(from) == "1M";
}

// A window of large strided MPI_Isends: one flush packs them in groups,
// each posted before the next is packed (one launch for all made the
// receiver of the first wait for the pack of the last: a window of 16
// vectors of 64 MiB reached 31% of the contiguous rate on 2 x H100, stop
// 41), and small ones behind them still share a group. Every byte arrives,
// in the order sent, gaps keeping their poison.
TEST_F(Direct, WindowOfLargeStridedIsendsIsPostedGroupByGroup) {
  ASSERT_GE(preload_counters()->version, 10u);
  constexpr int kLarge = 4;
  constexpr int kBlocks = 1 << 17;     // 1 MiB packed: a group of its own
  constexpr int kSmallBlocks = 16384;  // 128 KiB packed: the two share one
  MPI_Datatype large = MPI_DATATYPE_NULL, small = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &large);
  MPI_Type_vector(kSmallBlocks, 8, 64, MPI_BYTE, &small);
  MPI_Type_commit(&large);
  MPI_Type_commit(&small);
  const size_t large_span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  const size_t small_span = static_cast<size_t>(kSmallBlocks - 1) * 64 + 8;
  constexpr int kMessages = kLarge + 2;
  Messages ms;
  std::vector<MPI_Request> recvs(kMessages), sends(kMessages);
  for (int m = 0; m < kMessages; ++m) {
    ASSERT_NO_FATAL_FAILURE(add_message(&ms, m < kLarge ? large_span : small_span, 5600 + m));
    // One tag for all: the library's order must match the order of the calls.
    ASSERT_EQ(MPI_Irecv(ms.in.back()->data(), 1, m < kLarge ? large : small, partner(), 7, MPI_COMM_WORLD, &recvs[m]),
              MPI_SUCCESS);
  }
  const uint64_t flushes = deferred_flushes(), groups = pack_groups(), sent = sends_direct();
  const uint64_t ahead = ahead_of_pack();
  for (int m = 0; m < kMessages; ++m) {
    ASSERT_EQ(MPI_Isend(ms.out[m]->data(), 1, m < kLarge ? large : small, partner(), 7, MPI_COMM_WORLD, &sends[m]),
              MPI_SUCCESS);
  }
  std::vector<MPI_Request> all(sends);
  all.insert(all.end(), recvs.begin(), recvs.end());
  ASSERT_EQ(MPI_Waitall(static_cast<int>(all.size()), all.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(deferred_flushes(), flushes + 1) << "the sends were not flushed together";
  // Streaming: each large message alone, the small ones together; else one launch for all.
  EXPECT_EQ(pack_groups(), groups + (streams_1mib() ? kLarge + 1 : 1))
      << "a large message was not packed and posted on its own";
  EXPECT_EQ(sends_direct(), sent + kMessages);
  // A streamed message's pack is waited for; a group of direct ones is not.
  EXPECT_EQ(ahead_of_pack(), ahead + (streams_1mib() ? 2 : kMessages)) << "descriptors that left ahead of their pack";
  for (int m = 0; m < kMessages; ++m) expect_arrived(ms, m, true, "message " + std::to_string(m));
  MPI_Type_free(&large);
  MPI_Type_free(&small);
}

uint64_t finished_early() { return preload_counters() ? preload_counters()->recvs_finished_early : 0; }

// An MPI_Waitall over several large strided device receives finishes each
// as its request completes (its pull queued while the sender still packs
// the next), not after the last descriptor arrived: the counter says so,
// every byte arrives in place with the gaps poisoned, and the statuses are
// MPI_Waitall's, a null request's empty status and a host receive's among
// them.
TEST_F(Direct, WaitallFinishesLargeDeviceReceivesAsTheyArrive) {
  ASSERT_GE(preload_counters()->version, 10u);
  constexpr int kLarge = 3;
  constexpr int kBlocks = 1 << 17;  // 1 MiB packed
  MPI_Datatype large = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &large);
  MPI_Type_commit(&large);
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  Messages ms;
  for (int m = 0; m < kLarge; ++m) ASSERT_NO_FATAL_FAILURE(add_message(&ms, span, 5700 + m));
  int host_out = 1000 + rank(), host_in = -1;
  // Receives, a null request and a host receive between them, then the sends.
  std::vector<MPI_Request> all(kLarge + 2, MPI_REQUEST_NULL);
  for (int m = 0; m < kLarge; ++m) {
    ASSERT_EQ(MPI_Irecv(ms.in[m]->data(), 1, large, partner(), 20 + m, MPI_COMM_WORLD, &all[m]), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Irecv(&host_in, 1, MPI_INT, partner(), 30, MPI_COMM_WORLD, &all[kLarge + 1]), MPI_SUCCESS);
  std::vector<MPI_Request> sends(kLarge + 1);
  for (int m = 0; m < kLarge; ++m) {
    ASSERT_EQ(MPI_Isend(ms.out[m]->data(), 1, large, partner(), 20 + m, MPI_COMM_WORLD, &sends[m]), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Isend(&host_out, 1, MPI_INT, partner(), 30, MPI_COMM_WORLD, &sends[kLarge]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Waitall(kLarge + 1, sends.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  const uint64_t early = finished_early();
  std::vector<MPI_Status> statuses(kLarge + 2);
  for (MPI_Status& s : statuses) s.MPI_SOURCE = s.MPI_TAG = -7;  // poison
  ASSERT_EQ(MPI_Waitall(kLarge + 2, all.data(), statuses.data()), MPI_SUCCESS);
  EXPECT_EQ(finished_early(), early + (streams_1mib() ? kLarge : 0))
      << "the large receives were not finished as they arrived";
  for (int m = 0; m < kLarge + 2; ++m) EXPECT_EQ(all[m], MPI_REQUEST_NULL) << "request " << m;
  for (int m = 0; m < kLarge; ++m) {
    EXPECT_EQ(statuses[m].MPI_SOURCE, partner()) << "receive " << m;
    EXPECT_EQ(statuses[m].MPI_TAG, 20 + m) << "receive " << m;
    int elements = 0;
    MPI_Get_count(&statuses[m], large, &elements);
    EXPECT_EQ(elements, 1) << "receive " << m;
    expect_arrived(ms, m, true, "message " + std::to_string(m));
  }
  EXPECT_EQ(statuses[kLarge].MPI_SOURCE, MPI_ANY_SOURCE) << "a null request's status is empty";
  EXPECT_EQ(statuses[kLarge].MPI_TAG, MPI_ANY_TAG);
  int none = -1;
  MPI_Get_count(&statuses[kLarge], MPI_BYTE, &none);
  EXPECT_EQ(none, 0);
  EXPECT_EQ(statuses[kLarge + 1].MPI_TAG, 30);
  EXPECT_EQ(host_in, 1000 + partner());
  MPI_Type_free(&large);
}

// Every message of the job to rank 0 with MPI_ANY_SOURCE and MPI_ANY_TAG:
// the library's matching, the status of the message that matched.
TEST_F(Direct, AnySourceAnyTagMatchAsTheLibraryDoes) {
  constexpr size_t kBytes = 80 << 10;
  if (rank() != 0) {
    DeviceBuffer buf(kBytes);
    buf.fill(random_bytes(kBytes, seed(2000 + rank(), rank())));
    ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, 0, 40 + rank(), MPI_COMM_WORLD), MPI_SUCCESS);
    return;
  }
  std::vector<bool> seen(static_cast<size_t>(size()), false);
  for (int m = 1; m < size(); ++m) {
    DeviceBuffer buf(kBytes);
    MPI_Status status;
    ASSERT_EQ(
        MPI_Recv(buf.data(), static_cast<int>(kBytes), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status),
        MPI_SUCCESS);
    const int from = status.MPI_SOURCE;
    ASSERT_GT(from, 0);
    ASSERT_LT(from, size());
    EXPECT_FALSE(seen[static_cast<size_t>(from)]);
    seen[static_cast<size_t>(from)] = true;
    EXPECT_EQ(status.MPI_TAG, 40 + from);
    bool guards = false;
    EXPECT_EQ(buf.read(&guards), random_bytes(kBytes, seed(2000 + from, from))) << "from " << from;
    EXPECT_TRUE(guards);
  }
}

// A receiver that comes late: the send completes anyway (the bytes go to a
// bounce of the sender's), the sender reuses its buffer at once, and the
// receiver still gets what was sent.
TEST_F(Direct, LateReceiverGetsTheBytesFromTheBounce) {
  constexpr size_t kBytes = 256 << 10;
  const std::vector<unsigned char> expect = random_bytes(kBytes, seed(3000));
  DeviceBuffer buf(kBytes);
  if (sender()) {
    buf.fill(expect);
    const uint64_t before = rehomed();
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 3, MPI_COMM_WORLD), MPI_SUCCESS);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    buf.fill(random_bytes(kBytes, seed(3001)));  // the buffer is the program's again
    EXPECT_EQ(rehomed(), before + 1) << "the send waited " << ms << " ms for a receiver 300 ms late";
    EXPECT_LT(ms, 250.0) << "the send waited for the receiver";
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    MPI_Status status;
    ASSERT_EQ(MPI_Recv(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 3, MPI_COMM_WORLD, &status),
              MPI_SUCCESS);
    bool guards = false;
    EXPECT_EQ(buf.read(&guards), expect);
    EXPECT_TRUE(guards);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// The same with a strided MPI_Isend whose descriptor left ahead of its pack:
// the late receiver's bytes are the packed ones, moved to the bounce only
// once the sender waited for its own pack.
TEST_F(Direct, LateReceiverOfAStridedIsendLeftAheadOfItsPack) {
  ASSERT_GE(preload_counters()->version, 11u);
  constexpr int kBlocks = 16384;  // 128 KiB packed: over IPC, one group
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  const std::vector<unsigned char> sent = random_bytes(span, seed(3100));
  DeviceBuffer buf(span);
  if (sender()) {
    buf.fill(sent);
    const uint64_t before = rehomed(), ahead = ahead_of_pack();
    MPI_Request request = MPI_REQUEST_NULL;
    ASSERT_EQ(MPI_Isend(buf.data(), 1, strided, partner(), 31, MPI_COMM_WORLD, &request), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    buf.fill(random_bytes(span, seed(3101)));  // the buffer is the program's again
    EXPECT_EQ(ahead_of_pack(), ahead + 1) << "the descriptor did not leave ahead of its pack";
    EXPECT_EQ(rehomed(), before + 1) << "the send waited for a receiver 300 ms late";
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(MPI_Recv(buf.data(), 1, strided, partner(), 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    bool guards = false;
    const std::vector<unsigned char> got = buf.read(&guards);
    EXPECT_TRUE(guards);
    EXPECT_EQ(wrong_bytes(got, sent, true), 0u) << "the blocks as packed, the gaps poisoned";
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Type_free(&strided);
}

// A large strided message moves in chunks (STRATA_P2P_IPC_CHUNK, lowered
// in the test's environment): the sender packs chunk k+1 while the receiver
// unpacks chunk k, ordered on the GPU by one IPC event per chunk. The
// receiver's blocks (1 KiB) do not line up with the sender's chunks (8-byte
// blocks, 320000-byte chunks), so pieces straddle chunk boundaries; into a
// strided device buffer, a contiguous one, host memory, from MPI_Send and
// from a streamed MPI_Isend, and a receive too small for it. Every byte
// checked against the packed stream laid out by a naive loop, gaps and
// guards poisoned.
TEST_F(Direct, LargeStridedMessagesMoveInChunks) {
  ASSERT_GE(preload_counters()->version, 13u);
  constexpr int kBlocks = 160000;                        // 8-byte blocks at a 64-byte stride: 1.28 MB packed
  constexpr int kRecvBlocks = 1250, kRecvDoubles = 128;  // 1 KiB blocks at a 1.5 KiB stride
  constexpr size_t kPacked = static_cast<size_t>(kBlocks) * 8;
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  const size_t recv_span = static_cast<size_t>(kRecvBlocks - 1) * 1536 + 1024;
  const char* chunk_env = std::getenv("STRATA_P2P_IPC_CHUNK");
  const bool chunks_expected = chunk_env != nullptr && std::strtoll(chunk_env, nullptr, 10) * 2 <= 1280000;
  MPI_Datatype strided = MPI_DATATYPE_NULL, recv_strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 1, 8, MPI_DOUBLE, &strided);
  MPI_Type_vector(kRecvBlocks, kRecvDoubles, 192, MPI_DOUBLE, &recv_strided);
  MPI_Type_commit(&strided);
  MPI_Type_commit(&recv_strided);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  for (int shape = 0; shape < 5; ++shape) {  // receiver: strided, contiguous, host strided, strided (Isend), too small
    const std::vector<unsigned char> source = random_bytes(span, seed(3200 + shape));
    std::vector<unsigned char> packed(kPacked);
    for (size_t b = 0; b < static_cast<size_t>(kBlocks); ++b) std::memcpy(&packed[b * 8], &source[b * 64], 8);
    if (sender()) {
      DeviceBuffer buf(span);
      ASSERT_TRUE(buf);
      buf.fill(source);
      const uint64_t in_chunks = preload_counters()->sends_in_chunks, before = rehomed();
      if (shape == 3) {
        MPI_Request request = MPI_REQUEST_NULL;
        ASSERT_EQ(MPI_Isend(buf.data(), 1, strided, partner(), shape, comm, &request), MPI_SUCCESS);
        ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      } else {
        ASSERT_EQ(MPI_Send(buf.data(), 1, strided, partner(), shape, comm), MPI_SUCCESS);
      }
      buf.fill(random_bytes(span, seed(3300 + shape)));  // the buffer is the program's again
      EXPECT_EQ(preload_counters()->sends_in_chunks, in_chunks + (chunks_expected ? 1 : 0)) << "shape " << shape;
      const int moved = rehomed() != before ? 1 : 0;  // a late receiver reads the whole bytes from a bounce
      MPI_Send(&moved, 1, MPI_INT, partner(), 100 + shape, comm);
      MPI_Barrier(comm);
      continue;
    }
    const bool host = shape == 2, contiguous = shape == 1 || shape == 4;
    const size_t bytes = contiguous ? (shape == 4 ? kPacked / 2 : kPacked) : recv_span;
    std::vector<unsigned char> want(bytes, kPoison);
    if (contiguous) {
      std::memcpy(want.data(), packed.data(), bytes);
    } else {
      for (size_t b = 0; b < kRecvBlocks; ++b) std::memcpy(&want[b * 1536], &packed[b * 1024], 1024);
    }
    const uint64_t in_chunks = preload_counters()->recvs_in_chunks;
    std::vector<unsigned char> got;
    bool guards = false;
    int rc = MPI_SUCCESS;
    if (host) {
      std::vector<unsigned char> h(bytes + 2 * kGuard, kPoison);
      rc = MPI_Recv(h.data() + kGuard, 1, recv_strided, partner(), shape, comm, MPI_STATUS_IGNORE);
      guards = std::all_of(h.begin(), h.begin() + kGuard, [](unsigned char c) { return c == kPoison; }) &&
               std::all_of(h.end() - kGuard, h.end(), [](unsigned char c) { return c == kPoison; });
      got.assign(h.begin() + kGuard, h.end() - kGuard);
    } else {
      DeviceBuffer buf(bytes);
      ASSERT_TRUE(buf);
      rc = contiguous
               ? MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, partner(), shape, comm, MPI_STATUS_IGNORE)
               : MPI_Recv(buf.data(), 1, recv_strided, partner(), shape, comm, MPI_STATUS_IGNORE);
      got = buf.read(&guards);
    }
    int cls = -1;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, shape == 4 ? MPI_ERR_TRUNCATE : MPI_SUCCESS) << "shape " << shape;
    EXPECT_TRUE(guards) << "shape " << shape;
    if (shape != 4) {  // a truncated receive's buffer is not checked: MPI leaves it undefined
      size_t wrong = 0;
      for (size_t i = 0; i < bytes; ++i) wrong += got[i] != want[i] ? 1 : 0;
      EXPECT_EQ(wrong, 0u) << "shape " << shape;
    }
    int moved = 0;
    MPI_Recv(&moved, 1, MPI_INT, partner(), 100 + shape, comm, MPI_STATUS_IGNORE);
    EXPECT_EQ(preload_counters()->recvs_in_chunks, in_chunks + (chunks_expected && !host && moved == 0 ? 1 : 0))
        << "shape " << shape << (moved != 0 ? " (read from the sender's bounce)" : "");
    MPI_Barrier(comm);
  }
  MPI_Comm_free(&comm);
  MPI_Type_free(&strided);
  MPI_Type_free(&recv_strided);
}

// A buffer freed and allocated again (often at the same address) between two
// messages: the receiver must read the new allocation, not a stale mapping.
TEST_F(Direct, ReallocatedBufferIsNotReadThroughAStaleMapping) {
  constexpr size_t kBytes = 128 << 10;
  for (int round = 0; round < 4; ++round) {
    const std::vector<unsigned char> expect = random_bytes(kBytes, seed(4000 + round));
    DeviceBuffer buf(kBytes);
    if (sender()) {
      buf.fill(expect);
      ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), round, MPI_COMM_WORLD),
                MPI_SUCCESS);
    } else {
      ASSERT_EQ(
          MPI_Recv(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), round, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          MPI_SUCCESS);
      bool guards = false;
      EXPECT_EQ(buf.read(&guards), expect) << "round " << round;
      EXPECT_TRUE(guards);
    }
  }
}

// A device send received into host memory (contiguous and strided): the
// host receive finds the descriptor and pulls the bytes.
TEST_F(Direct, HostReceiveOfADeviceSend) {
  constexpr size_t kBytes = 72 << 10;
  const std::vector<unsigned char> expect = random_bytes(kBytes, seed(5000));
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(static_cast<int>(kBytes / 8), 8, 16, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  for (int shape = 0; shape < 2; ++shape) {
    if (sender()) {
      DeviceBuffer buf(kBytes);
      buf.fill(expect);
      ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), shape, MPI_COMM_WORLD),
                MPI_SUCCESS);
      continue;
    }
    const size_t span = shape == 0 ? kBytes : 2 * kBytes;
    std::vector<unsigned char> host(span + 2 * kGuard, kPoison);
    MPI_Status status;
    ASSERT_EQ(shape == 0 ? MPI_Recv(host.data() + kGuard, static_cast<int>(kBytes), MPI_BYTE, partner(), shape,
                                    MPI_COMM_WORLD, &status)
                         : MPI_Recv(host.data() + kGuard, 1, strided, partner(), shape, MPI_COMM_WORLD, &status),
              MPI_SUCCESS);
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    EXPECT_EQ(count, static_cast<int>(kBytes));
    size_t wrong = 0;
    for (size_t i = 0; i < kGuard; ++i) wrong += (host[i] != kPoison) + (host[kGuard + span + i] != kPoison);
    for (size_t i = 0; i < span; ++i) {
      const unsigned char want = shape == 0 ? expect[i] : (i % 16 < 8 ? expect[i / 16 * 8 + i % 8] : kPoison);
      wrong += host[kGuard + i] != want ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0u) << "shape " << shape;
  }
  MPI_Type_free(&strided);
}

// A receive buffer too small for the message: the library's error class
// (MPI_ERR_TRUNCATE), and the sender completes.
TEST_F(Direct, TooSmallAReceiveIsTruncated) {
  constexpr size_t kBytes = 64 << 10;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  DeviceBuffer buf(kBytes);
  if (sender()) {
    buf.fill(random_bytes(kBytes, seed(6000)));
    EXPECT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 1, comm), MPI_SUCCESS);
  } else {
    const int rc = MPI_Recv(buf.data(), static_cast<int>(kBytes / 2), MPI_BYTE, partner(), 1, comm, MPI_STATUS_IGNORE);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPI_ERR_TRUNCATE);
  }
  MPI_Comm_free(&comm);
}

// Below STRATA_P2P_IPC_MIN_BYTES a device message is staged as before.
TEST_F(Direct, SmallMessagesStayStaged) {
  constexpr size_t kBytes = 1024;
  const std::vector<unsigned char> expect = random_bytes(kBytes, seed(7000));
  DeviceBuffer buf(kBytes);
  const uint64_t sent = sends_direct();
  if (sender()) {
    buf.fill(expect);
    ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 2, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(sends_direct(), sent);
  } else {
    ASSERT_EQ(MPI_Recv(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    bool guards = false;
    EXPECT_EQ(buf.read(&guards), expect);
  }
}

// Probes report the size of the message a descriptor stands for, and the
// receive that follows gets it: MPI_Probe + MPI_Recv, MPI_Iprobe +
// MPI_Irecv, MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv. Then a
// program message of exactly a descriptor's size (host bytes, probed too)
// and a second message behind it: they arrive in order, whole.
TEST_F(Direct, ProbesReportTheMessagesSize) {
  constexpr size_t kBytes = 100 << 10;
  for (int how = 0; how < 4; ++how) {
    const std::vector<unsigned char> expect = random_bytes(kBytes, seed(8000 + how));
    if (sender()) {
      DeviceBuffer buf(kBytes);
      buf.fill(expect);
      ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 50 + how, MPI_COMM_WORLD),
                MPI_SUCCESS);
      continue;
    }
    MPI_Status status;
    MPI_Message message = MPI_MESSAGE_NULL;
    int flag = 0;
    if (how == 0) ASSERT_EQ(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    while (how == 1 && !flag)
      ASSERT_EQ(MPI_Iprobe(partner(), MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), MPI_SUCCESS);
    if (how == 2) ASSERT_EQ(MPI_Mprobe(partner(), 50 + how, MPI_COMM_WORLD, &message, &status), MPI_SUCCESS);
    while (how == 3 && !flag) {
      ASSERT_EQ(MPI_Improbe(MPI_ANY_SOURCE, 50 + how, MPI_COMM_WORLD, &flag, &message, &status), MPI_SUCCESS);
    }
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    ASSERT_EQ(count, static_cast<int>(kBytes)) << "probe " << how << " reported the descriptor's size";
    EXPECT_EQ(status.MPI_SOURCE, partner());
    EXPECT_EQ(status.MPI_TAG, 50 + how);
    DeviceBuffer buf(static_cast<size_t>(count));
    MPI_Status got;
    MPI_Request request = MPI_REQUEST_NULL;
    if (how == 0) {
      ASSERT_EQ(MPI_Recv(buf.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &got),
                MPI_SUCCESS);
    } else if (how == 1) {
      ASSERT_EQ(MPI_Irecv(buf.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &request),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, &got), MPI_SUCCESS);
    } else if (how == 2) {
      ASSERT_EQ(MPI_Mrecv(buf.data(), count, MPI_BYTE, &message, &got), MPI_SUCCESS);
      EXPECT_EQ(message, MPI_MESSAGE_NULL);
    } else {
      ASSERT_EQ(MPI_Imrecv(buf.data(), count, MPI_BYTE, &message, &request), MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, &got), MPI_SUCCESS);
    }
    MPI_Get_count(&got, MPI_BYTE, &count);
    EXPECT_EQ(count, static_cast<int>(kBytes)) << "receive " << how;
    EXPECT_EQ(got.MPI_SOURCE, partner());
    EXPECT_EQ(got.MPI_TAG, 50 + how);
    bool guards = false;
    EXPECT_EQ(buf.read(&guards), expect) << "probe and receive " << how;
    EXPECT_TRUE(guards);
  }
  // The program's own descriptor-sized bytes, then a second message with the same tag.
  constexpr int kOwn = static_cast<int>(kDescriptorBytes);
  const std::vector<unsigned char> first = random_bytes(kOwn, seed(8100)), second = random_bytes(2 * kOwn, seed(8101));
  if (sender()) {
    MPI_Send(first.data(), kOwn, MPI_BYTE, partner(), 60, MPI_COMM_WORLD);
    MPI_Send(second.data(), 2 * kOwn, MPI_BYTE, partner(), 60, MPI_COMM_WORLD);
    return;
  }
  MPI_Status status;
  ASSERT_EQ(MPI_Probe(partner(), 60, MPI_COMM_WORLD, &status), MPI_SUCCESS);
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  EXPECT_EQ(count, kOwn);
  std::vector<unsigned char> a(2 * kOwn, kPoison), b(2 * kOwn, kPoison);
  ASSERT_EQ(MPI_Recv(a.data(), 2 * kOwn, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status), MPI_SUCCESS);
  MPI_Get_count(&status, MPI_BYTE, &count);
  EXPECT_EQ(count, kOwn);
  ASSERT_EQ(MPI_Recv(b.data(), 2 * kOwn, MPI_BYTE, partner(), 60, MPI_COMM_WORLD, &status), MPI_SUCCESS);
  MPI_Get_count(&status, MPI_BYTE, &count);
  EXPECT_EQ(count, 2 * kOwn);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), a.begin())) << "the probed message, first";
  EXPECT_EQ(a[kOwn], kPoison);
  EXPECT_EQ(b, second) << "the one behind it, second";
}

}  // namespace

// Whether the job took the transport (STRATA_P2P_IPC=auto, also when
// nothing is set): the variants that run only this test set the machine
// (GPUs per node, an MPS control pipe), whether the program shows GPU use
// at MPI_Init (CUDA_VISIBLE_DEVICES, or device memory allocated before it)
// and STRATA_TEST_EXPECT_DIRECT (1: a 128 KiB device message goes through
// IPC; 0: staged). Every message arrives either way.
TEST(DirectPolicy, TheMachineDecidesUnderAuto) {
  const char* expect = std::getenv("STRATA_TEST_EXPECT_DIRECT");
  if (expect == nullptr) GTEST_SKIP() << "run by the policy variants";
  if (!strata_test::all_ranks_agree(strata_test::test_device_count() > 0)) GTEST_SKIP() << "no device";
  if (size() % 2 != 0) GTEST_SKIP() << "needs an even number of ranks";
  ASSERT_NE(preload_counters(), nullptr) << "run preloaded";
  strata_test::test_device_select(rank() % strata_test::test_device_count());
  constexpr size_t kBytes = 128 << 10;
  uint64_t seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  const std::vector<unsigned char> payload = random_bytes(kBytes, seed + static_cast<uint64_t>(rank() / 2));
  DeviceBuffer buf(kBytes);
  ASSERT_TRUE(buf);
  const uint64_t sent = sends_direct();
  if (sender()) {
    buf.fill(payload);
    ASSERT_EQ(MPI_Send(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 1, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(sends_direct() - sent, std::strcmp(expect, "1") == 0 ? 1u : 0u);
  } else {
    ASSERT_EQ(MPI_Recv(buf.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    bool guards = false;
    EXPECT_EQ(buf.read(&guards), payload);
    EXPECT_TRUE(guards);
  }
}

// A device message to self takes the transport without IPC (the receiver
// copies from its own memory on the device): contiguous and strided, with
// the receive posted first and after.
TEST_F(Direct, MessagesToSelfAreCopiedOnTheDevice) {
  constexpr int kBlocks = 8192;  // 64 KiB packed
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  for (int shape = 0; shape < 2; ++shape) {
    const bool strided_shape = shape == 1;
    const size_t bytes = strided_shape ? span : size_t{96} << 10;
    const int count = strided_shape ? 1 : static_cast<int>(bytes);
    const MPI_Datatype type = strided_shape ? strided : MPI_BYTE;
    const std::vector<unsigned char> source = random_bytes(bytes, seed(6000 + shape) ^ static_cast<uint64_t>(rank()));
    DeviceBuffer out(bytes), in(bytes);
    ASSERT_TRUE(out && in);
    out.fill(source);
    const uint64_t sent = sends_direct(), got = recvs_direct();
    MPI_Request requests[2];
    ASSERT_EQ(MPI_Irecv(in.data(), count, type, rank(), 9, MPI_COMM_WORLD, &requests[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(out.data(), count, type, rank(), 9, MPI_COMM_WORLD, &requests[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(sends_direct(), sent + 1) << "shape " << shape;
    EXPECT_EQ(recvs_direct(), got + 1) << "shape " << shape;
    bool guards = false;
    const std::vector<unsigned char> received = in.read(&guards);
    EXPECT_TRUE(guards);
    EXPECT_EQ(wrong_bytes(received, source, strided_shape), 0u) << "shape " << shape;
  }
  MPI_Type_free(&strided);
}

// More strided MPI_Isends in flight than the sender has completion slots
// (64): those past the slots are staged through host memory after the
// flush packed them on the device, and every message still arrives whole.
TEST_F(Direct, MoreSendsInFlightThanSlotsAreStaged) {
  constexpr int kMessages = 72;
  constexpr int kBlocks = 4096;  // 32 KiB packed
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(kBlocks, 8, 64, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  const size_t span = static_cast<size_t>(kBlocks - 1) * 64 + 8;
  Messages ms;
  std::vector<MPI_Request> requests(2 * kMessages);
  for (int m = 0; m < kMessages; ++m) {
    ASSERT_NO_FATAL_FAILURE(add_message(&ms, span, 7000 + m));
    ASSERT_EQ(MPI_Irecv(ms.in.back()->data(), 1, strided, partner(), m, MPI_COMM_WORLD, &requests[m]), MPI_SUCCESS);
  }
  const uint64_t sent = sends_direct();
  for (int m = 0; m < kMessages; ++m) {
    ASSERT_EQ(MPI_Isend(ms.out[m]->data(), 1, strided, partner(), m, MPI_COMM_WORLD, &requests[kMessages + m]),
              MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Waitall(2 * kMessages, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_GT(sends_direct(), sent);
  EXPECT_LT(sends_direct(), sent + kMessages) << "every send found a slot: the test staged none";
  for (int m = 0; m < kMessages; ++m) expect_arrived(ms, m, true, "message " + std::to_string(m));
  MPI_Type_free(&strided);
}

// osu_bw's pattern: one rank of each pair sends a window of large
// contiguous messages from one buffer (MPI_Isend, MPI_Waitall), its partner
// receives them (MPI_Irecv, MPI_Waitall) and replies with 4 bytes; three
// windows. Every message goes over IPC, arrives whole, and the time waiting
// for the receiver and pulling is counted (STRATA_SUMMARY's rows). Whether
// a sender moved some to bounces is not asserted: on a loaded machine a
// receiver not scheduled for 200 µs is late (SharedSlots tests the bound).
TEST_F(Direct, StreamedWindowOfLargeMessagesIsNotRehomed) {
  constexpr int kWindow = 16;
  constexpr size_t kBytes = 1 << 20;
  DeviceBuffer out(kBytes);
  std::vector<std::unique_ptr<DeviceBuffer>> in;
  ASSERT_TRUE(out);
  out.fill(random_bytes(kBytes, seed(8000) ^ static_cast<uint64_t>(rank())));
  for (int m = 0; m < kWindow; ++m) {
    in.push_back(std::make_unique<DeviceBuffer>(kBytes));
    ASSERT_TRUE(*in.back());
  }
  const uint64_t sent = sends_direct(), received = recvs_direct(), moved = rehomed();
  const uint64_t waited = preload_counters()->receiver_wait_ns, pulled = preload_counters()->direct_pull_ns;
  const uint64_t pinned = preload_counters()->pinned_allocated;
  std::vector<MPI_Request> requests(kWindow);
  for (int round = 0; round < 3; ++round) {
    int ack = 0;
    if (sender()) {
      for (int m = 0; m < kWindow; ++m) {
        ASSERT_EQ(MPI_Isend(out.data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 1, MPI_COMM_WORLD, &requests[m]),
                  MPI_SUCCESS);
      }
      ASSERT_EQ(MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
      ASSERT_EQ(MPI_Recv(&ack, 1, MPI_INT, partner(), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
      for (int m = 0; m < kWindow; ++m) {
        ASSERT_EQ(
            MPI_Irecv(in[m]->data(), static_cast<int>(kBytes), MPI_BYTE, partner(), 1, MPI_COMM_WORLD, &requests[m]),
            MPI_SUCCESS);
      }
      ASSERT_EQ(MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
      ASSERT_EQ(MPI_Send(&ack, 1, MPI_INT, partner(), 2, MPI_COMM_WORLD), MPI_SUCCESS);
    }
  }
  if (sender()) {
    EXPECT_EQ(sends_direct() - sent, 3u * kWindow) << "some messages were staged";
    if (rehomed() != moved)
      std::printf("[ note     ] %llu of the messages went to bounces\n",
                  static_cast<unsigned long long>(rehomed() - moved));
    EXPECT_GT(preload_counters()->receiver_wait_ns, waited) << "the time waiting for the receiver went uncounted";
  } else {
    EXPECT_EQ(recvs_direct() - received, 3u * kWindow);
    EXPECT_GT(preload_counters()->direct_pull_ns, pulled) << "the time pulling went uncounted";
    // Each receive got a descriptor and touched a few bytes of its staging:
    // pinning megabytes for it (milliseconds each on a GPU) made a window of
    // 64 x 16 MiB stream at 2 GB/s on 2 x H200 (stop 40).
    EXPECT_EQ(preload_counters()->pinned_allocated - pinned, 0u) << "receives of descriptors pinned host memory";
    const std::vector<unsigned char> expect = random_bytes(kBytes, seed(8000) ^ static_cast<uint64_t>(partner()));
    for (int m = 0; m < kWindow; ++m) {
      bool guards = false;
      EXPECT_EQ(in[m]->read(&guards), expect) << "message " << m;
      EXPECT_TRUE(guards) << "message " << m;
    }
  }
}

uint64_t requests_started() { return preload_counters() ? preload_counters()->requests_started : 0; }

// The sender's side of a watched-receive round: `big` from device memory
// (an IPC descriptor) with tag `round`, then `small` from host memory (a
// program message of a descriptor's size) with tag 100 + round.
void send_device_then_program(DeviceBuffer& device, const std::vector<unsigned char>& big,
                              const std::vector<unsigned char>& small, int round) {
  device.fill(big);
  ASSERT_EQ(MPI_Send(device.data(), static_cast<int>(big.size()), MPI_BYTE, partner(), round, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(small.data(), static_cast<int>(small.size()), MPI_BYTE, partner(), 100 + round, MPI_COMM_WORLD),
            MPI_SUCCESS);
}

// Host MPI_Irecvs while the transport is on are watched, not made Strata
// requests (interposer/transfer/watched_recvs.hpp): device sends (IPC
// descriptors) and program messages of exactly a descriptor's size
// (host bytes, which must arrive as sent) into host buffers, completed by
// every completion call in turn; one receive cancelled, one freed with
// MPI_Request_free before its message came.
TEST_F(Direct, HostNonBlockingReceivesAreWatchedThroughEveryCompletionCall) {
  constexpr int kRounds = 9;
  constexpr size_t kBig = 64 << 10;
  constexpr size_t kProgram = kDescriptorBytes;
  DeviceBuffer device(kBig);
  ASSERT_TRUE(device);
  for (int round = 0; round < kRounds; ++round) {
    const std::vector<unsigned char> big = random_bytes(kBig, seed(9000 + round));
    const std::vector<unsigned char> small = random_bytes(kProgram, seed(9100 + round));
    if (sender()) {
      ASSERT_NO_FATAL_FAILURE(send_device_then_program(device, big, small, round));
      continue;
    }
    std::vector<unsigned char> host_big(kBig + 2 * kGuard, kPoison), host_small(kProgram + 8 + 2 * kGuard, kPoison);
    MPI_Request r[2];
    const uint64_t started = requests_started();
    ASSERT_EQ(
        MPI_Irecv(host_big.data() + kGuard, static_cast<int>(kBig), MPI_BYTE, partner(), round, MPI_COMM_WORLD, &r[0]),
        MPI_SUCCESS);
    ASSERT_EQ(MPI_Irecv(host_small.data() + kGuard, static_cast<int>(kProgram + 8), MPI_BYTE, partner(), 100 + round,
                        MPI_COMM_WORLD, &r[1]),
              MPI_SUCCESS);
    EXPECT_EQ(requests_started(), started) << "host receives became Strata requests";
    MPI_Status st[2];
    int flag = 0, index = -1, outcount = 0, indices[2];
    switch (round % kRounds) {
      case 0: ASSERT_EQ(MPI_Waitall(2, r, st), MPI_SUCCESS); break;
      case 1:
        ASSERT_EQ(MPI_Wait(&r[0], &st[0]), MPI_SUCCESS);
        ASSERT_EQ(MPI_Wait(&r[1], &st[1]), MPI_SUCCESS);
        break;
      case 2:
        while (flag == 0) ASSERT_EQ(MPI_Testall(2, r, &flag, st), MPI_SUCCESS);
        break;
      case 3:
        for (int done = 0; done < 2; ++done) {
          MPI_Status one;
          ASSERT_EQ(MPI_Waitany(2, r, &index, &one), MPI_SUCCESS);
          st[index] = one;
        }
        break;
      case 4:
        for (int done = 0; done < 2;) {
          MPI_Status some[2];
          ASSERT_EQ(MPI_Testsome(2, r, &outcount, indices, some), MPI_SUCCESS);
          if (outcount == MPI_UNDEFINED) break;
          for (int k = 0; k < outcount; ++k) st[indices[k]] = some[k];  // statuses come in `indices` order
          done += outcount;
        }
        break;
      case 5:
        for (int i = 0; i < 2; ++i) {
          do {
            ASSERT_EQ(MPI_Request_get_status(r[i], &flag, &st[i]), MPI_SUCCESS);
          } while (flag == 0);
        }
        ASSERT_EQ(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        break;
      case 6:
        for (int i = 0; i < 2; ++i) {
          flag = 0;
          while (flag == 0) ASSERT_EQ(MPI_Test(&r[i], &flag, &st[i]), MPI_SUCCESS);
        }
        break;
      case 7: {
        MPI_Status some[2];
        ASSERT_EQ(MPI_Waitsome(2, r, &outcount, indices, some), MPI_SUCCESS);
        for (int k = 0; k < outcount; ++k) st[indices[k]] = some[k];
        if (outcount == 1) ASSERT_EQ(MPI_Wait(&r[1 - indices[0]], &st[1 - indices[0]]), MPI_SUCCESS);
        break;
      }
      default: {  // freed before completion: the bytes still land, found by later calls
        ASSERT_EQ(MPI_Request_free(&r[0]), MPI_SUCCESS);
        ASSERT_EQ(MPI_Wait(&r[1], &st[1]), MPI_SUCCESS);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!std::equal(big.begin(), big.end(), host_big.begin() + kGuard) &&
               std::chrono::steady_clock::now() < until) {
          MPI_Waitall(0, nullptr, MPI_STATUSES_IGNORE);  // a completion call: progresses freed requests
        }
        st[0] = st[1];
        MPI_Status_set_elements(&st[0], MPI_BYTE, static_cast<int>(kBig));
        break;
      }
    }
    int count = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    EXPECT_EQ(count, static_cast<int>(kBig)) << "round " << round;
    MPI_Get_count(&st[1], MPI_BYTE, &count);
    EXPECT_EQ(count, static_cast<int>(kProgram)) << "round " << round;
    if (!std::equal(big.begin(), big.end(), host_big.begin() + kGuard)) {
      size_t first = 0;
      while (first < kBig && big[first] == host_big[kGuard + first]) ++first;
      const std::vector<unsigned char> before = random_bytes(kBig, seed(9000 + round - 1));
      const std::vector<unsigned char> after = random_bytes(kBig, seed(9000 + round + 1));
      size_t poisoned = 0, as_before = 0, as_after = 0;
      for (size_t i = 0; i < kBig; ++i) {
        poisoned += host_big[kGuard + i] == kPoison;
        as_before += host_big[kGuard + i] == before[i];
        as_after += host_big[kGuard + i] == after[i];
      }
      ADD_FAILURE() << "round " << round << ": the device message's bytes differ from byte " << first << " ("
                    << poisoned << " poisoned, " << as_before << " as the round before, " << as_after
                    << " as the round after; rehomed so far " << rehomed() << ", pulled " << recvs_direct() << ")";
    }
    EXPECT_TRUE(std::equal(small.begin(), small.end(), host_small.begin() + kGuard)) << "round " << round;
    size_t guards = 0;
    for (size_t i = 0; i < kGuard; ++i) {
      guards += (host_big[i] != kPoison) + (host_big[kGuard + kBig + i] != kPoison);
      guards += (host_small[i] != kPoison) + (host_small[kGuard + kProgram + 8 + i] != kPoison);
    }
    for (size_t i = kProgram; i < kProgram + 8; ++i) guards += host_small[kGuard + i] != kPoison;
    EXPECT_EQ(guards, 0u) << "round " << round;
  }
  // A watched receive cancelled: the cancellation is the library's, the
  // buffer untouched.
  if (!sender()) {
    std::vector<unsigned char> host(kBig, kPoison);
    MPI_Request r;
    ASSERT_EQ(MPI_Irecv(host.data(), static_cast<int>(kBig), MPI_BYTE, partner(), 999, MPI_COMM_WORLD, &r),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Cancel(&r), MPI_SUCCESS);
    MPI_Status st;
    ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    EXPECT_EQ(cancelled, 1);
    EXPECT_EQ(std::count(host.begin(), host.end(), kPoison), static_cast<long>(kBig));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Device sends received into page-locked host memory (cudaMallocHost: what
// GPU programs receive into), blocking and not: the descriptor was taken for
// the program's bytes (pinned memory is not MemoryKind::host), so the
// receive got the descriptor's bytes instead of the message. And the
// non-blocking receives are watched, not Strata requests: the pointer hint
// never knows pinned memory as host (nor any host buffer sharing a 2 MiB
// granule with device memory, as under ASan's allocator), so only the
// plan's classification says it is host. Each round also a program message
// of exactly a descriptor's size.
TEST_F(Direct, HostReceivesIntoPinnedMemoryAreWatched) {
  constexpr int kRounds = 4;
  constexpr size_t kBig = 64 << 10;
  constexpr size_t kProgram = kDescriptorBytes;
  DeviceBuffer device(kBig);
  ASSERT_TRUE(device);
  const size_t bytes = kBig + kProgram + 3 * kGuard;
  auto* pinned = static_cast<unsigned char*>(sender() ? nullptr : strata_test::test_pinned_alloc(bytes));
  if (!sender()) ASSERT_NE(pinned, nullptr);
  unsigned char* big_at = sender() ? nullptr : pinned + kGuard;
  unsigned char* small_at = sender() ? nullptr : big_at + kBig + kGuard;
  const uint64_t pulled = recvs_direct();
  for (int round = 0; round < kRounds; ++round) {
    const std::vector<unsigned char> big = random_bytes(kBig, seed(9700 + round));
    const std::vector<unsigned char> small = random_bytes(kProgram, seed(9800 + round));
    if (sender()) {
      ASSERT_NO_FATAL_FAILURE(send_device_then_program(device, big, small, round));
      continue;
    }
    std::memset(pinned, kPoison, bytes);
    if (round % 2 == 1) {  // blocking
      ASSERT_EQ(MPI_Recv(big_at, static_cast<int>(kBig), MPI_BYTE, partner(), round, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Recv(small_at, static_cast<int>(kProgram), MPI_BYTE, partner(), 100 + round, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE),
                MPI_SUCCESS);
    } else {
      MPI_Request r[2];
      const uint64_t started = requests_started();
      ASSERT_EQ(MPI_Irecv(big_at, static_cast<int>(kBig), MPI_BYTE, partner(), round, MPI_COMM_WORLD, &r[0]),
                MPI_SUCCESS);
      ASSERT_EQ(
          MPI_Irecv(small_at, static_cast<int>(kProgram), MPI_BYTE, partner(), 100 + round, MPI_COMM_WORLD, &r[1]),
          MPI_SUCCESS);
      EXPECT_EQ(requests_started(), started) << "round " << round << ": pinned host receives became Strata requests";
      ASSERT_EQ(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    }
    EXPECT_TRUE(std::equal(big.begin(), big.end(), big_at)) << "round " << round;
    EXPECT_TRUE(std::equal(small.begin(), small.end(), small_at)) << "round " << round;
    size_t guards = 0;
    for (size_t i = 0; i < kGuard; ++i) {
      guards += (pinned[i] != kPoison) + (big_at[kBig + i] != kPoison) + (small_at[kProgram + i] != kPoison);
    }
    EXPECT_EQ(guards, 0u) << "round " << round;
  }
  if (!sender()) {
    EXPECT_EQ(recvs_direct(), pulled + kRounds) << "the device messages were not pulled";
    strata_test::test_pinned_free(pinned);
  }
}

// More host MPI_Irecvs in flight than the watch table holds (2048 slots):
// 5000 program messages of exactly a descriptor's size fill it (every
// slot's neighbourhood is then taken), so the receives of three device
// sends posted after them are refused by the table and become Strata
// requests; the descriptors are still recognised (the bytes arrive, pulled
// through IPC) and the program's descriptor-sized messages arrive as sent.
TEST_F(Direct, MoreHostReceivesInFlightThanTheWatchHolds) {
  constexpr int kMessages = 5000;
  constexpr int kDevice = 3;
  constexpr size_t kBytes = kDescriptorBytes;
  constexpr size_t kBig = 64 << 10;
  const std::vector<unsigned char> expect = random_bytes(kMessages * kBytes, seed(9500));
  std::vector<std::vector<unsigned char>> big, got_big;
  std::vector<std::unique_ptr<DeviceBuffer>> device;
  for (int d = 0; d < kDevice; ++d) {
    big.push_back(random_bytes(kBig, seed(9600 + d)));
    got_big.emplace_back(kBig + kGuard, kPoison);
    device.push_back(std::make_unique<DeviceBuffer>(kBig));
    ASSERT_TRUE(*device.back());
  }
  std::vector<unsigned char> got(kMessages * kBytes + kGuard, kPoison);
  std::vector<MPI_Request> r(kMessages + kDevice);
  const uint64_t started = requests_started(), pulled = recvs_direct();
  for (int m = 0; m < kMessages; ++m) {
    unsigned char* at = sender() ? const_cast<unsigned char*>(expect.data()) : got.data();
    ASSERT_EQ(sender()
                  ? MPI_Isend(at + m * kBytes, static_cast<int>(kBytes), MPI_BYTE, partner(), 5, MPI_COMM_WORLD, &r[m])
                  : MPI_Irecv(at + m * kBytes, static_cast<int>(kBytes), MPI_BYTE, partner(), 5, MPI_COMM_WORLD, &r[m]),
              MPI_SUCCESS);
  }
  for (int d = 0; d < kDevice; ++d) {
    if (sender()) device[d]->fill(big[d]);
    ASSERT_EQ(sender() ? MPI_Isend(device[d]->data(), static_cast<int>(kBig), MPI_BYTE, partner(), 6, MPI_COMM_WORLD,
                                   &r[kMessages + d])
                       : MPI_Irecv(got_big[d].data(), static_cast<int>(kBig), MPI_BYTE, partner(), 6, MPI_COMM_WORLD,
                                   &r[kMessages + d]),
              MPI_SUCCESS);
  }
  if (!sender()) EXPECT_GE(requests_started(), started + kDevice) << "the watch table never filled";
  ASSERT_EQ(MPI_Waitall(kMessages + kDevice, r.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  if (sender()) return;
  EXPECT_TRUE(std::equal(expect.begin(), expect.end(), got.begin()));
  EXPECT_EQ(std::count(got.end() - kGuard, got.end(), kPoison), static_cast<long>(kGuard));
  EXPECT_EQ(recvs_direct(), pulled + kDevice) << "descriptors not recognised";
  for (int d = 0; d < kDevice; ++d) {
    EXPECT_TRUE(std::equal(big[d].begin(), big[d].end(), got_big[d].begin())) << "device message " << d;
    EXPECT_EQ(std::count(got_big[d].end() - kGuard, got_big[d].end(), kPoison), static_cast<long>(kGuard));
  }
}
