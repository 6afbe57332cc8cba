// Point-to-point of strata/collectives.hpp (coll::send, recv, exchange,
// groups) on host buffers, run with 2 and 4 ranks; the Device cases (device
// buffers: NCCL, or staged through host memory where NCCL is missing) skip
// without a GPU and run in the _gpu variants.
//
// Oracle: every byte of a message is a hash of (seed, case, sender,
// receiver, index), so a receiver knows what each sender sent without
// being told. Receive buffers are poisoned and framed by guard bytes;
// after the transfer the payload must be the sender's bytes and every
// guard byte untouched. Seeds are fresh per run and printed;
// STRATA_TEST_SEED=<seed> replays (every rank uses rank 0's).
#include <strata/collectives.hpp>

#include "collectives/host/internal.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace strata;
using strata_test::world_rank;
using strata_test::world_size;
namespace coll = strata::coll;

constexpr size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;
constexpr unsigned char kPoisonByte = 0x5A;

uint64_t seed() {
  static const uint64_t s = [] {
    unsigned long long v = 0;
    if (const char* e = std::getenv("STRATA_TEST_SEED"); e != nullptr && *e != '\0') {
      v = std::strtoull(e, nullptr, 0);
    } else {
      std::random_device rd;
      v = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
    }
    MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (world_rank() == 0) std::printf("test_coll_p2p seed %llu (replay: STRATA_TEST_SEED=%llu)\n", v, v);
    return static_cast<uint64_t>(v);
  }();
  return s;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The bytes `from` sends to `to` in case `k`.
std::vector<unsigned char> message(int k, int from, int to, size_t bytes) {
  std::vector<unsigned char> m(bytes);
  const uint64_t base = mix(seed() ^ mix(static_cast<uint64_t>(k) * 1000003u + static_cast<uint64_t>(from) * 1009u +
                                         static_cast<uint64_t>(to)));
  for (size_t i = 0; i < bytes; ++i) m[i] = static_cast<unsigned char>(mix(base + i) >> 24);
  return m;
}

// Where a buffer lives.
struct Host {
  static constexpr const char* name = "Host";
  static constexpr bool device = false;
};
struct Device {
  static constexpr const char* name = "Device";
  static constexpr bool device = true;
};
struct SpaceNames {
  template <class S>
  static std::string GetName(int) {
    return S::name;
  }
};

// A receive buffer (guard, poisoned payload, guard) or a send buffer (the
// message), in host or device memory.
class Buffer {
 public:
  Buffer(bool device, size_t payload, const unsigned char* contents) : device_(device), payload_(payload) {
    std::vector<unsigned char> image(payload + 2 * kGuard, kGuardByte);
    if (contents != nullptr) {
      std::memcpy(image.data() + kGuard, contents, payload);
    } else {
      std::memset(image.data() + kGuard, kPoisonByte, payload);
    }
    if (device_) {
      void* p = nullptr;
      if (gpu::malloc_device(&p, image.size()) != Status::ok) return;
      base_ = static_cast<unsigned char*>(p);
      if (gpu::memcpy_async(base_, image.data(), image.size(), nullptr) != Status::ok ||
          gpu::stream_synchronize(nullptr) != Status::ok) {
        return;
      }
    } else {
      host_ = image;
      base_ = host_.data();
    }
    ok_ = true;
  }
  ~Buffer() {
    if (device_ && base_ != nullptr) gpu::free_device(base_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  bool ok() const { return ok_; }
  unsigned char* data() const { return base_ + kGuard; }

  // "" when the payload is `want` and the guards are intact.
  std::string check(const std::vector<unsigned char>& want) const {
    std::vector<unsigned char> image(payload_ + 2 * kGuard);
    if (device_) {
      if (gpu::stream_synchronize(nullptr) != Status::ok ||
          gpu::memcpy_async(image.data(), base_, image.size(), nullptr) != Status::ok ||
          gpu::stream_synchronize(nullptr) != Status::ok) {
        return "cannot read the device buffer back";
      }
    } else {
      image = host_;
    }
    for (size_t i = 0; i < kGuard; ++i) {
      if (image[i] != kGuardByte) return "guard byte " + std::to_string(i) + " before the payload overwritten";
      if (image[kGuard + payload_ + i] != kGuardByte)
        return "guard byte " + std::to_string(i) + " after the payload overwritten";
    }
    for (size_t i = 0; i < payload_; ++i) {
      if (image[kGuard + i] != want[i]) {
        return "payload byte " + std::to_string(i) + " of " + std::to_string(payload_) + ": want " +
               std::to_string(want[i]) + ", got " + std::to_string(image[kGuard + i]);
      }
    }
    return "";
  }

 private:
  bool device_ = false;
  size_t payload_ = 0;
  std::vector<unsigned char> host_;
  unsigned char* base_ = nullptr;
  bool ok_ = false;
};

const coll::DataType kTypes[] = {coll::DataType::int32,   coll::DataType::int64,   coll::DataType::float32,
                                 coll::DataType::float64, coll::DataType::float16, coll::DataType::bfloat16};
const size_t kCounts[] = {1, 3, 64, 1001, (size_t{1} << 16) + 7};

template <class Where>
class CollP2p : public testing::Test {
 protected:
  void SetUp() override {
    if (Where::device && !gpu::available()) GTEST_SKIP() << "no GPU visible to this process";
    STRATA_REQUIRE_RANKS(2);
  }
};
using Places = testing::Types<Host, Device>;
TYPED_TEST_SUITE(CollP2p, Places, SpaceNames);

// A ring shift with exchange(): every type, counts of 1 B to ~512 KiB.
TYPED_TEST(CollP2p, ExchangeRingShift) {
  const int me = world_rank(), n = world_size();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  int k = 0;
  for (coll::DataType type : kTypes) {
    for (size_t count : kCounts) {
      ++k;
      const size_t bytes = count * coll::size_of(type);
      SCOPED_TRACE(std::string(coll::to_string(type)) + " x " + std::to_string(count) +
                   ", replay: STRATA_TEST_SEED=" + std::to_string(seed()));
      const std::vector<unsigned char> out = message(k, me, right, bytes);
      Buffer send(TypeParam::device, bytes, out.data());
      Buffer recv(TypeParam::device, bytes, nullptr);
      ASSERT_TRUE(send.ok() && recv.ok());
      ASSERT_EQ(coll::exchange(send.data(), count, right, recv.data(), count, left, type, MPI_COMM_WORLD), Status::ok);
      ASSERT_EQ(recv.check(message(k, left, me, bytes)), "");
      ASSERT_EQ(send.check(out), "") << "the send buffer changed";
    }
  }
}

// Blocking send and recv between pairs (0,1), (2,3): the even rank sends
// first, then receives the answer.
TYPED_TEST(CollP2p, BlockingPairs) {
  const int me = world_rank(), n = world_size();
  const int partner = me % 2 == 0 ? me + 1 : me - 1;
  if (partner >= n) GTEST_SKIP() << "no partner for the last of an odd number of ranks";
  int k = 100;
  for (coll::DataType type : {coll::DataType::float64, coll::DataType::float16}) {
    for (size_t count : kCounts) {
      ++k;
      const size_t bytes = count * coll::size_of(type);
      const std::vector<unsigned char> out = message(k, me, partner, bytes);
      Buffer send(TypeParam::device, bytes, out.data());
      Buffer recv(TypeParam::device, bytes, nullptr);
      ASSERT_TRUE(send.ok() && recv.ok());
      if (me % 2 == 0) {
        ASSERT_EQ(coll::send(send.data(), count, type, partner, MPI_COMM_WORLD), Status::ok);
        ASSERT_EQ(coll::recv(recv.data(), count, type, partner, MPI_COMM_WORLD), Status::ok);
      } else {
        ASSERT_EQ(coll::recv(recv.data(), count, type, partner, MPI_COMM_WORLD), Status::ok);
        ASSERT_EQ(coll::send(send.data(), count, type, partner, MPI_COMM_WORLD), Status::ok);
      }
      ASSERT_EQ(recv.check(message(k, partner, me, bytes)), "") << count << " " << coll::to_string(type);
    }
  }
}

// One group per round: every rank sends to and receives from every rank,
// itself included, sends posted before receives, sizes differing per pair.
TYPED_TEST(CollP2p, GroupAllToAll) {
  const int me = world_rank(), n = world_size();
  for (int round = 0; round < 3; ++round) {
    const int k = 200 + round;
    auto size_of_pair = [&](int from, int to) {
      return static_cast<size_t>(1 + mix(seed() + static_cast<uint64_t>(k * 64 + from * 8 + to)) % 5000);
    };
    std::vector<std::unique_ptr<Buffer>> sends, recvs;
    ASSERT_FALSE(coll::in_group());
    const uint64_t ended = coll::groups_ended();
    ASSERT_EQ(coll::group_start(), Status::ok);
    EXPECT_TRUE(coll::in_group());
    for (int to = 0; to < n; ++to) {
      const size_t count = size_of_pair(me, to);
      const std::vector<unsigned char> out = message(k, me, to, count * 4);
      sends.push_back(std::make_unique<Buffer>(TypeParam::device, count * 4, out.data()));
      ASSERT_TRUE(sends.back()->ok());
      ASSERT_EQ(coll::send(sends.back()->data(), count, coll::DataType::float32, to, MPI_COMM_WORLD), Status::ok);
    }
    for (int from = n - 1; from >= 0; --from) {
      const size_t count = size_of_pair(from, me);
      recvs.push_back(std::make_unique<Buffer>(TypeParam::device, count * 4, nullptr));
      ASSERT_TRUE(recvs.back()->ok());
      ASSERT_EQ(coll::recv(recvs.back()->data(), count, coll::DataType::float32, from, MPI_COMM_WORLD), Status::ok);
    }
    ASSERT_EQ(coll::group_end(), Status::ok);
    EXPECT_FALSE(coll::in_group());
    EXPECT_EQ(coll::groups_ended(), ended + 1);
    for (int from = n - 1, i = 0; from >= 0; --from, ++i) {
      ASSERT_EQ(recvs[static_cast<size_t>(i)]->check(message(k, from, me, size_of_pair(from, me) * 4)), "")
          << "round " << round << " from rank " << from;
    }
  }
}

// Nested groups post at the outermost end; exchange() inside a group joins
// it. Messages between two ranks match in the order they were posted.
TYPED_TEST(CollP2p, NestedGroups) {
  const int me = world_rank(), n = world_size();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  const size_t count = 777;
  const std::vector<unsigned char> a = message(300, me, right, count * 8), b = message(301, me, left, count * 8);
  Buffer sa(TypeParam::device, count * 8, a.data()), sb(TypeParam::device, count * 8, b.data());
  Buffer ra(TypeParam::device, count * 8, nullptr), rb(TypeParam::device, count * 8, nullptr);
  ASSERT_TRUE(sa.ok() && sb.ok() && ra.ok() && rb.ok());
  const uint64_t ended = coll::groups_ended();
  ASSERT_EQ(coll::group_start(), Status::ok);
  ASSERT_EQ(coll::group_start(), Status::ok);
  ASSERT_EQ(coll::send(sa.data(), count, coll::DataType::int64, right, MPI_COMM_WORLD), Status::ok);
  ASSERT_EQ(coll::group_end(), Status::ok);
  EXPECT_TRUE(coll::in_group());
  EXPECT_EQ(coll::groups_ended(), ended);
  ASSERT_EQ(coll::exchange(sb.data(), count, left, rb.data(), count, right, coll::DataType::int64, MPI_COMM_WORLD),
            Status::ok);
  EXPECT_EQ(coll::groups_ended(), ended);
  ASSERT_EQ(coll::recv(ra.data(), count, coll::DataType::int64, left, MPI_COMM_WORLD), Status::ok);
  ASSERT_EQ(coll::group_end(), Status::ok);
  EXPECT_EQ(coll::groups_ended(), ended + 1);
  if (n > 2) {
    EXPECT_EQ(ra.check(message(300, left, me, count * 8)), "");
    EXPECT_EQ(rb.check(message(301, right, me, count * 8)), "");
  } else {
    // One peer: its two messages match my receives in the order posted
    // (rb inside the exchange first), whatever the buffers' roles.
    EXPECT_EQ(rb.check(message(300, left, me, count * 8)), "");
    EXPECT_EQ(ra.check(message(301, right, me, count * 8)), "");
  }
}

// Messages in many pieces (the 1 GiB piece limit lowered to 100 bytes):
// both ends split alike, pieces of one message arrive in order.
TEST(CollP2pHost, SmallPieces) {
  STRATA_REQUIRE_RANKS(2);
  const int me = world_rank(), n = world_size();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  coll::host::detail::set_max_message_bytes(100);
  for (size_t count : {size_t{1}, size_t{25}, size_t{26}, size_t{999}}) {
    const int k = 400 + static_cast<int>(count);
    const std::vector<unsigned char> out = message(k, me, right, count * 4);
    Buffer send(false, count * 4, out.data()), recv(false, count * 4, nullptr);
    EXPECT_EQ(
        coll::exchange(send.data(), count, right, recv.data(), count, left, coll::DataType::int32, MPI_COMM_WORLD),
        Status::ok);
    EXPECT_EQ(recv.check(message(k, left, me, count * 4)), "") << count;
  }
  coll::host::detail::set_max_message_bytes(0);
}

// The application's own messages on the same communicator (another tag)
// are not taken by Strata's and keep their order.
TEST(CollP2pHost, OwnTrafficUntouched) {
  STRATA_REQUIRE_RANKS(2);
  const int me = world_rank(), n = world_size();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  int mine[3] = {me * 10 + 1, me * 10 + 2, me * 10 + 3}, theirs[3] = {-1, -1, -1};
  MPI_Request r[2];
  MPI_Irecv(theirs, 3, MPI_INT, left, 5, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(mine, 3, MPI_INT, right, 5, MPI_COMM_WORLD, &r[1]);
  const std::vector<unsigned char> out = message(500, me, right, 4000);
  Buffer send(false, 4000, out.data()), recv(false, 4000, nullptr);
  EXPECT_EQ(coll::exchange(send.data(), 1000, right, recv.data(), 1000, left, coll::DataType::float32, MPI_COMM_WORLD),
            Status::ok);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  EXPECT_EQ(recv.check(message(500, left, me, 4000)), "");
  EXPECT_EQ(theirs[0], left * 10 + 1);
  EXPECT_EQ(theirs[2], left * 10 + 3);
}

// A sub-communicator: pairs of ranks, peers numbered in it.
TEST(CollP2pHost, SplitCommunicator) {
  STRATA_REQUIRE_RANKS(2);
  const int me = world_rank(), n = world_size();
  if (n % 2 != 0) GTEST_SKIP() << "pairs need an even number of ranks";
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &pair);
  int pr = 0;
  MPI_Comm_rank(pair, &pr);
  const int other = 1 - pr;
  const int other_world = me / 2 * 2 + other;
  const std::vector<unsigned char> out = message(600, me, other_world, 3000);
  Buffer send(false, 3000, out.data()), recv(false, 3000, nullptr);
  EXPECT_EQ(coll::exchange(send.data(), 1500, other, recv.data(), 1500, other, coll::DataType::bfloat16, pair),
            Status::ok);
  EXPECT_EQ(recv.check(message(600, other_world, me, 3000)), "");
  MPI_Comm_free(&pair);
}

// Nothing moves for MPI_PROC_NULL or zero elements, even with null buffers.
TEST(CollP2pHost, ProcNullAndEmpty) {
  Buffer recv(false, 16, nullptr);
  EXPECT_EQ(coll::recv(recv.data(), 4, coll::DataType::int32, MPI_PROC_NULL, MPI_COMM_WORLD), Status::ok);
  EXPECT_EQ(coll::send(recv.data(), 4, coll::DataType::int32, MPI_PROC_NULL, MPI_COMM_WORLD), Status::ok);
  EXPECT_EQ(recv.check(std::vector<unsigned char>(16, kPoisonByte)), "");
  const int right = (world_rank() + 1) % world_size(), left = (world_rank() + world_size() - 1) % world_size();
  EXPECT_EQ(coll::exchange(nullptr, 0, right, nullptr, 0, left, coll::DataType::float64, MPI_COMM_WORLD), Status::ok);
  EXPECT_EQ(
      coll::exchange(nullptr, 0, MPI_PROC_NULL, recv.data(), 4, MPI_PROC_NULL, coll::DataType::int32, MPI_COMM_WORLD),
      Status::ok);
  EXPECT_EQ(recv.check(std::vector<unsigned char>(16, kPoisonByte)), "");
}

TEST(CollP2pHost, RejectsBadArguments) {
  int x[4] = {};
  const int me = world_rank();
  const int other = (me + 1) % world_size();
  EXPECT_EQ(coll::send(x, 4, static_cast<coll::DataType>(42), other, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::send(nullptr, 4, coll::DataType::int32, other, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::recv(nullptr, 4, coll::DataType::int32, other, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::send(x, 4, coll::DataType::int32, world_size(), MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::recv(x, 4, coll::DataType::int32, -3, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::send(x, 4, coll::DataType::int32, other, MPI_COMM_NULL), Status::invalid_argument);
  EXPECT_EQ(coll::exchange(x, 4, other, nullptr, 4, other, coll::DataType::int32, MPI_COMM_WORLD),
            Status::invalid_argument);
  // To oneself only within a group.
  EXPECT_EQ(coll::send(x, 4, coll::DataType::int32, me, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::recv(x, 4, coll::DataType::int32, me, MPI_COMM_WORLD), Status::invalid_argument);
  EXPECT_EQ(coll::group_end(), Status::invalid_argument);
  EXPECT_FALSE(coll::in_group());
  // A failed half of an exchange leaves nothing posted: the next one matches.
  const int right = (me + 1) % world_size(), left = (me + world_size() - 1) % world_size();
  EXPECT_EQ(coll::exchange(x, 4, right, x, 4, world_size() + 1, coll::DataType::int32, MPI_COMM_WORLD),
            Status::invalid_argument);
  const std::vector<unsigned char> out = message(700, me, right, 16);
  Buffer send(false, 16, out.data()), recv(false, 16, nullptr);
  EXPECT_EQ(coll::exchange(send.data(), 4, right, recv.data(), 4, left, coll::DataType::int32, MPI_COMM_WORLD),
            Status::ok);
  EXPECT_EQ(recv.check(message(700, left, me, 16)), "");
  bool done = false;
  EXPECT_EQ(coll::stream_done(nullptr, nullptr), Status::invalid_argument);
  if (!gpu::available()) {
    EXPECT_EQ(coll::stream_done(nullptr, &done), Status::not_supported);
  }
}

// A message shorter than the receive is the receive's error.
TEST(CollP2pHost, ShortMessage) {
  STRATA_REQUIRE_RANKS(2);
  const int me = world_rank();
  if (me < 2) {
    const int peer = 1 - me;
    const std::vector<unsigned char> out = message(800, me, peer, 36);
    Buffer send(false, 36, out.data()), recv(false, 48, nullptr);
    if (me == 0) {
      EXPECT_EQ(coll::send(send.data(), 9, coll::DataType::float32, peer, MPI_COMM_WORLD), Status::ok);
    } else {
      EXPECT_EQ(coll::recv(recv.data(), 12, coll::DataType::float32, peer, MPI_COMM_WORLD), Status::invalid_argument);
    }
  }
}

}  // namespace
