// Device buffers through the preloaded interposer, with an MPI that knows
// nothing of GPUs. A plain MPI program: it allocates device memory
// (support/test_device_memory.hpp: CUDA, or in the CPU build the device
// stand-in of the preloaded interposer, STRATA_FAKE_DEVICE) and hands it to
// MPI; only the interposer makes that work, so ctest runs it preloaded only
// (once per method). Under the stand-in a device pointer that reaches the
// library faults at once (SIGSEGV). Oracles: hand-written type maps for
// point-to-point and all-to-all, and the library's own PMPI_Pack/PMPI_Unpack
// on host copies for the random datatype corpus. Skips without a device.
//
// STRATA_TEST_GPUS=n restricts the ranks to the first n devices (several
// ranks per GPU); by default rank i uses device i % count.
#include "mpi_type_cases.hpp"
#include "random_datatype.hpp"
#include "support/device_per_rank.hpp"
#include "support/mpi_test.hpp"
#include "support/test_device_memory.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using strata_test::TypeCase;

namespace {

#define REQUIRE_GPU()                                                                                             \
  do {                                                                                                            \
    if (!strata_test::all_ranks_agree(strata_test::test_gpu_count() > 0)) GTEST_SKIP() << "no GPU on every rank"; \
  } while (0)

// A device buffer with a host mirror.
struct DeviceInts {
  explicit DeviceInts(const std::vector<int>& host)
      : ptr(static_cast<int*>(strata_test::test_device_alloc(host.size() * sizeof(int)))), n(host.size()) {
    strata_test::test_device_to(ptr, host.data(), n * sizeof(int));
  }
  ~DeviceInts() { strata_test::test_device_free(ptr); }
  DeviceInts(const DeviceInts&) = delete;
  DeviceInts& operator=(const DeviceInts&) = delete;
  std::vector<int> to_host() const {
    std::vector<int> h(n);
    strata_test::test_device_from(h.data(), ptr, n * sizeof(int));
    return h;
  }
  int* ptr = nullptr;
  size_t n;
};

enum class How { send_recv, sendrecv, wait, waitall, waitany, waitsome, test, testall, testany, testsome };

const char* name_of(How h) {
  static const char* const names[] = {"send_recv", "sendrecv", "wait",    "waitall", "waitany",
                                      "waitsome",  "test",     "testall", "testany", "testsome"};
  return names[static_cast<int>(h)];
}

// Completes two requests (receive first) with one family of calls.
void complete(How how, MPI_Request* reqs) {
  int flag = 0, index = 0, outcount = 0, indices[2];
  MPI_Status st[2];
  auto left = [&] { return (reqs[0] != MPI_REQUEST_NULL) + (reqs[1] != MPI_REQUEST_NULL); };
  switch (how) {
    case How::wait:
      MPI_Wait(&reqs[0], &st[0]);
      MPI_Wait(&reqs[1], &st[1]);
      break;
    case How::waitall: MPI_Waitall(2, reqs, st); break;
    case How::waitany:
      while (left()) MPI_Waitany(2, reqs, &index, &st[0]);
      break;
    case How::waitsome:
      while (left()) MPI_Waitsome(2, reqs, &outcount, indices, st);
      break;
    case How::test:
      while (left())
        for (int i = 0; i < 2; ++i)
          if (reqs[i] != MPI_REQUEST_NULL) MPI_Test(&reqs[i], &flag, &st[i]);
      break;
    case How::testall:
      while (!flag) MPI_Testall(2, reqs, &flag, st);
      break;
    case How::testany:
      while (left()) MPI_Testany(2, reqs, &index, &flag, &st[0]);
      break;
    case How::testsome:
      while (left()) MPI_Testsome(2, reqs, &outcount, indices, st);
      break;
    default: break;
  }
}

class DeviceP2P : public testing::TestWithParam<std::tuple<int, How>> {};

// A ring exchange of derived types between device buffers.
TEST_P(DeviceP2P, RingExchange) {
  REQUIRE_GPU();
  const TypeCase& c = strata_test::type_cases()[static_cast<size_t>(std::get<0>(GetParam()))];
  const How how = std::get<1>(GetParam());
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  MPI_Datatype type = c.build();
  for (int count : {1, 3}) {
    DeviceInts send(strata_test::filled_buffer(c, count, rank));
    DeviceInts recv(strata_test::poisoned_buffer(c, count));
    MPI_Status status{};
    if (how == How::send_recv) {
      if (rank % 2 == 0) {
        ASSERT_EQ(MPI_Send(send.ptr, count, type, dest, 1, MPI_COMM_WORLD), MPI_SUCCESS);
        ASSERT_EQ(MPI_Recv(recv.ptr, count, type, source, 1, MPI_COMM_WORLD, &status), MPI_SUCCESS);
      } else {
        ASSERT_EQ(MPI_Recv(recv.ptr, count, type, source, 1, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        ASSERT_EQ(MPI_Send(send.ptr, count, type, dest, 1, MPI_COMM_WORLD), MPI_SUCCESS);
      }
    } else if (how == How::sendrecv) {
      ASSERT_EQ(MPI_Sendrecv(send.ptr, count, type, dest, 1, recv.ptr, count, type, source, 1, MPI_COMM_WORLD, &status),
                MPI_SUCCESS);
    } else {
      MPI_Request reqs[2];
      ASSERT_EQ(MPI_Irecv(recv.ptr, count, type, source, 1, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
      ASSERT_EQ(MPI_Isend(send.ptr, count, type, dest, 1, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
      complete(how, reqs);
      EXPECT_EQ(reqs[0], MPI_REQUEST_NULL);
      EXPECT_EQ(reqs[1], MPI_REQUEST_NULL);
      status.MPI_SOURCE = source;
      status.MPI_TAG = 1;
    }
    EXPECT_EQ(status.MPI_SOURCE, source);
    EXPECT_EQ(strata_test::check_received(c, recv.to_host(), count, source), "")
        << c.name << " " << name_of(how) << " count " << count;
  }
  MPI_Type_free(&type);
}

std::string p2p_name(const testing::TestParamInfo<std::tuple<int, How>>& info) {
  return strata_test::type_cases()[static_cast<size_t>(std::get<0>(info.param))].name + "_" +
         name_of(std::get<1>(info.param));
}

// The reducible cases (the last one, irregular_indexed, is tested below:
// Strata refuses to write it into GPU memory).
int reducible_cases() {
  int n = 0;
  for (const TypeCase& c : strata_test::type_cases()) n += c.reducible ? 1 : 0;
  return n;
}

INSTANTIATE_TEST_SUITE_P(AllTypesAllCompletions, DeviceP2P,
                         testing::Combine(testing::Range(0, reducible_cases()),
                                          testing::Values(How::send_recv, How::sendrecv, How::wait, How::waitall,
                                                          How::waitany, How::waitsome, How::test, How::testall,
                                                          How::testany, How::testsome)),
                         p2p_name);

// A datatype Strata cannot reduce (irregular_indexed): sent from GPU memory
// through a host copy of its span; received into GPU memory through a host
// copy too, of which exactly the datatype's bytes are written back (the
// poisoned gaps must survive).
TEST(DeviceP2PSemantics, IrreducibleTypes) {
  REQUIRE_GPU();
  const TypeCase& c = strata_test::type_cases().back();
  ASSERT_FALSE(c.reducible);
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  MPI_Datatype type = c.build();
  DeviceInts send(strata_test::filled_buffer(c, 2, rank));
  std::vector<int> host_recv = strata_test::poisoned_buffer(c, 2);
  ASSERT_EQ(
      MPI_Sendrecv(send.ptr, 2, type, dest, 3, host_recv.data(), 2, type, source, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
      MPI_SUCCESS);
  EXPECT_EQ(strata_test::check_received(c, host_recv, 2, source), "");
  DeviceInts device_recv(strata_test::poisoned_buffer(c, 2));
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  ASSERT_EQ(MPI_Irecv(device_recv.ptr, 2, type, source, 4, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Isend(send.ptr, 2, type, dest, 4, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(strata_test::check_received(c, device_recv.to_host(), 2, source), "");
  MPI_Type_free(&type);
}

// Two receives in flight into one device buffer, each datatype covering the
// other's gaps (a halo exchange receives every face of a field at once):
// the one completing last must not write its gaps back over the bytes the
// other one already delivered.
TEST(DeviceP2PSemantics, ReceivesIntoOneBufferKeepEachOthersBytes) {
  REQUIRE_GPU();
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  // Per element of 4 ints: `a` covers ints 0, 1 and 3 (irregular: Strata
  // cannot reduce it), `b` covers int 2.
  MPI_Datatype a, b, a_raw, b_raw;
  const int a_lengths[2] = {2, 1}, a_displs[2] = {0, 3};
  MPI_Type_indexed(2, a_lengths, a_displs, MPI_INT, &a_raw);
  MPI_Type_create_resized(a_raw, 0, 4 * sizeof(int), &a);
  const int b_lengths[1] = {1}, b_displs[1] = {2};
  MPI_Type_indexed(1, b_lengths, b_displs, MPI_INT, &b_raw);
  MPI_Type_create_resized(b_raw, 0, 4 * sizeof(int), &b);
  MPI_Type_commit(&a);
  MPI_Type_commit(&b);
  constexpr int kElements = 64;
  std::vector<int> values(4 * kElements);
  for (size_t i = 0; i < values.size(); ++i) values[i] = rank * 100000 + static_cast<int>(i);
  DeviceInts send(values);
  DeviceInts recv(std::vector<int>(4 * kElements, strata_test::kPoison));
  MPI_Request r[2];
  ASSERT_EQ(MPI_Irecv(recv.ptr, kElements, a, source, 8, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Irecv(recv.ptr, kElements, b, source, 9, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
  // b's message first; b completes first, then a.
  ASSERT_EQ(MPI_Send(send.ptr, kElements, b, dest, 9, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(send.ptr, kElements, a, dest, 8, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
  const std::vector<int> got = recv.to_host();
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], source * 100000 + static_cast<int>(i)) << "int " << i << " (element " << i / 4 << ")";
  }
  MPI_Type_free(&a);
  MPI_Type_free(&b);
  MPI_Type_free(&a_raw);
  MPI_Type_free(&b_raw);
}

// Contiguous device data (a predefined type) and a short message.
TEST(DeviceP2PSemantics, ContiguousAndShortMessages) {
  REQUIRE_GPU();
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  std::vector<int> values(1000);
  for (int i = 0; i < 1000; ++i) values[static_cast<size_t>(i)] = rank * 100000 + i;
  DeviceInts send(values);
  DeviceInts recv(std::vector<int>(1000, strata_test::kPoison));
  MPI_Status status;
  ASSERT_EQ(MPI_Sendrecv(send.ptr, 600, MPI_INT, (rank + 1) % size, 2, recv.ptr, 1000, MPI_INT,
                         (rank + size - 1) % size, 2, MPI_COMM_WORLD, &status),
            MPI_SUCCESS);
  int count = 0;
  MPI_Get_count(&status, MPI_INT, &count);
  EXPECT_EQ(count, 600);
  std::vector<int> got = recv.to_host();
  const int source = (rank + size - 1) % size;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(got[static_cast<size_t>(i)], i < 600 ? source * 100000 + i : strata_test::kPoison) << "int " << i;
  }
}

// A window of small contiguous MPI_Isends (osu_bw's pattern) whose size
// the reference model gives the span copy when sent alone (4-512 B): each
// is packed and deferred instead, and the flush moves them in one kernel
// launch (interposer/transfer/plan.hpp, isend_plan; the mover's queued
// copies). Ints in distinct slices with a poisoned int between them.
TEST(DeviceP2PSemantics, AWindowOfSmallContiguousIsendsIsPacked) {
  REQUIRE_GPU();
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  constexpr int kWindow = 16, kInts = 16, kSlot = kInts + 1;
  std::vector<int> values(kWindow * kSlot);
  for (size_t i = 0; i < values.size(); ++i) values[i] = rank * 100000 + static_cast<int>(i);
  DeviceInts send(values);
  DeviceInts recv(std::vector<int>(values.size(), strata_test::kPoison));
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  ASSERT_NE(c, nullptr);
  const uint64_t spans = c->spans_copied;
  std::vector<MPI_Request> requests;
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  for (int m = 0; m < kWindow; ++m) {
    requests.emplace_back();
    ASSERT_EQ(MPI_Irecv(recv.ptr + m * kSlot, kInts, MPI_INT, from, 7, MPI_COMM_WORLD, &requests.back()), MPI_SUCCESS);
  }
  for (int m = 0; m < kWindow; ++m) {
    requests.emplace_back();
    ASSERT_EQ(MPI_Isend(send.ptr + m * kSlot, kInts, MPI_INT, to, 7, MPI_COMM_WORLD, &requests.back()), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  const std::vector<int> got = recv.to_host();
  for (int i = 0; i < kWindow * kSlot; ++i) {
    const bool data = i % kSlot < kInts;
    ASSERT_EQ(got[static_cast<size_t>(i)], data ? from * 100000 + i : strata_test::kPoison) << "int " << i;
  }
  c = strata_test::preload_counters();
  // Whatever the model (the reference one, or a measured one in the cache
  // directory), no Isend of contiguous data copies its span.
  if (std::getenv("STRATA_METHOD") == nullptr) {
    EXPECT_EQ(c->spans_copied - spans, 0u) << "a send of the window took the span copy";
  }
}

// All-to-all of a derived type between device buffers.
TEST(DeviceAllToAll, AlltoallvVector) {
  REQUIRE_GPU();
  const TypeCase& c = strata_test::type_cases()[0];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build();
  // I send 1 + (peer % 2) elements to each peer, so every peer sends me
  // 1 + (rank % 2).
  std::vector<int> counts(static_cast<size_t>(size)), rcounts(static_cast<size_t>(size), 1 + (rank % 2)),
      displs(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) {
    counts[static_cast<size_t>(i)] = 1 + (i % 2);
    displs[static_cast<size_t>(i)] = 3 * i;
  }
  DeviceInts send(strata_test::filled_buffer(c, 3 * size, rank));
  DeviceInts recv(strata_test::poisoned_buffer(c, 3 * size));
  ASSERT_EQ(MPI_Alltoallv(send.ptr, counts.data(), displs.data(), type, recv.ptr, rcounts.data(), displs.data(), type,
                          MPI_COMM_WORLD),
            MPI_SUCCESS);
  // Peer j sent me (rank) 1 + (rank % 2) elements from its displacement 3*rank.
  std::vector<int> got = recv.to_host();
  for (int j = 0; j < size; ++j) {
    for (int e = 0; e < rcounts[static_cast<size_t>(j)]; ++e) {
      for (long off : c.offsets) {
        const long pos = (3 * j + e) * c.extent_ints + off;
        const long spos = (3 * rank + e) * c.extent_ints + off;
        ASSERT_EQ(got[static_cast<size_t>(pos)], strata_test::value_at(j, spos)) << "from " << j;
      }
    }
  }
  MPI_Type_free(&type);
}

// Sends the bytes `packed` (`host_base`, `count` x `type` packed by the
// library) to `rank`. MPICH 4.0 (4.0.2 here), the library alone: a message
// sent as MPI_PACKED and received into a type built on MPI_DOUBLE_INT or
// MPI_LONG_INT (pairs with padding) fails MPI_ERR_TRUNCATE between ranks
// of a job of two or more; there the same bytes go typed from the host copy.
int send_packed_bytes(const unsigned char* packed, int bytes, const char* host_base, int count, MPI_Datatype type,
                      int rank, int tag, MPI_Request* request) {
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000
  (void)packed;
  (void)bytes;
  return MPI_Isend(host_base, count, type, rank, tag, MPI_COMM_WORLD, request);
#else
  (void)host_base;
  (void)count;
  (void)type;
  return MPI_Isend(packed, bytes, MPI_PACKED, rank, tag, MPI_COMM_WORLD, request);
#endif
}

// The random datatype corpus: MPI_Pack of device data, and messages from
// device data to packed host buffers and back, must equal the library's
// PMPI_Pack / PMPI_Unpack of host copies, byte for byte.
TEST(DevicePackRandom, MatchesTheLibraryOnHostCopies) {
  REQUIRE_GPU();
  constexpr int64_t kGuard = 64;
  const int rank = strata_test::world_rank();
  const uint64_t seed = strata_test::env_u64("STRATA_TEST_SEED", 0xDE7ull) + static_cast<uint64_t>(rank);
  const int iterations = static_cast<int>(strata_test::env_u64("STRATA_TEST_ITERATIONS", 600));
  strata_test::RandomDatatypeGenerator gen(seed);
  for (int i = 0; i < iterations; ++i) {
    strata_test::RandomType rt = gen.next();
    MPI_Datatype type = rt.type.get();
    const int count = 1 + static_cast<int>(gen.rng()() % 3);
    const strata_test::Footprint fp = strata_test::footprint(type, count);
    const size_t span = static_cast<size_t>(fp.hi - fp.lo + 2 * kGuard);
    std::vector<unsigned char> host(span);
    for (auto& b : host) b = static_cast<unsigned char>(gen.rng()());
    auto* dev = static_cast<unsigned char*>(strata_test::test_device_alloc(span));
    ASSERT_NE(dev, nullptr) << "cannot allocate " << span << " bytes of device memory";
    strata_test::test_device_to(dev, host.data(), span);
    char* dev_base = reinterpret_cast<char*>(dev) + kGuard - fp.lo;
    char* host_base = reinterpret_cast<char*>(host.data()) + kGuard - fp.lo;
    int bound = 0;
    PMPI_Pack_size(count, type, MPI_COMM_WORLD, &bound);
    // Both outputs poisoned alike: the bytes past the packed ones must stay so.
    std::vector<unsigned char> expected(static_cast<size_t>(bound) + 1, 0xEE),
        got(static_cast<size_t>(bound) + 1, 0xEE);
    int expected_pos = 0, got_pos = 0;
    ASSERT_EQ(PMPI_Pack(host_base, count, type, expected.data(), bound, &expected_pos, MPI_COMM_WORLD), MPI_SUCCESS);
    // MPI_Pack of device data into host memory.
    ASSERT_EQ(MPI_Pack(dev_base, count, type, got.data(), bound, &got_pos, MPI_COMM_WORLD), MPI_SUCCESS)
        << rt.description;
    ASSERT_EQ(got_pos, expected_pos) << rt.description;
    ASSERT_EQ(got, expected) << "MPI_Pack of device data differs: " << rt.description << " (seed " << seed << ", case "
                             << i << ")";
    // A message from device data, received packed on the host.
    std::vector<unsigned char> inbox(static_cast<size_t>(bound) + 1, 0xEE);
    MPI_Request reqs[2];
    ASSERT_EQ(MPI_Irecv(inbox.data(), bound, MPI_PACKED, rank, i, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(dev_base, count, type, rank, i, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    inbox.resize(static_cast<size_t>(expected_pos));
    std::vector<unsigned char> want(expected.begin(), expected.begin() + expected_pos);
    ASSERT_EQ(inbox, want) << "sent bytes differ: " << rt.description << " (case " << i << ")";
    // Packed bytes received into device data (a poisoned copy), against
    // PMPI_Unpack into the same poison on the host. A datatype Strata cannot
    // reduce is refused for data written in GPU memory (MPI_ERR_TYPE, the
    // buffer untouched): never for one regular by construction.
    std::vector<unsigned char> poison(span, 0x3C);
    const std::vector<unsigned char> untouched = poison;
    strata_test::test_device_to(dev, poison.data(), span);
    int in = 0;
    ASSERT_EQ(PMPI_Unpack(expected.data(), expected_pos, &in, reinterpret_cast<char*>(poison.data()) + kGuard - fp.lo,
                          count, type, MPI_COMM_WORLD),
              MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = MPI_Irecv(dev_base, count, type, rank, i, MPI_COMM_WORLD, &reqs[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    std::vector<unsigned char> back(span);
    if (rc != MPI_SUCCESS) {
      int cls = 0;
      MPI_Error_class(rc, &cls);
      ASSERT_EQ(cls, MPI_ERR_TYPE) << rt.description;
      ASSERT_NE(rt.expect, strata_test::Expect::reducible) << "a regular type was refused: " << rt.description;
      strata_test::test_device_from(back.data(), dev, span);
      ASSERT_EQ(back, untouched) << "a refused receive wrote device memory: " << rt.description;
      strata_test::test_device_free(dev);
      continue;
    }
    ASSERT_EQ(send_packed_bytes(expected.data(), expected_pos, host_base, count, type, rank, i, &reqs[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    strata_test::test_device_from(back.data(), dev, span);
    ASSERT_EQ(back, poison) << "received device bytes differ: " << rt.description << " (case " << i << ")";
    strata_test::test_device_free(dev);
  }
}

// A strided message of several pipeline chunks (the staged method moves
// STRATA_PIPELINE_CHUNK bytes, 2 MiB by default, at a time): every chunk
// must land in its own place on both sides, also when the message is
// shorter than the receive and ends inside a block.
TEST(DeviceP2PSemantics, StridedMessageOfSeveralChunks) {
  REQUIRE_GPU();
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  constexpr int kBlocks = 400000;  // 3 ints of every 4: 4.8 MB packed
  MPI_Datatype type;
  MPI_Type_vector(kBlocks, 3, 4, MPI_INT, &type);
  MPI_Type_commit(&type);
  auto value = [](int r, int i) { return r * 10000000 + i; };
  std::vector<int> values(4 * kBlocks);
  for (int i = 0; i < 4 * kBlocks; ++i) values[static_cast<size_t>(i)] = value(rank, i);
  DeviceInts send(values);
  DeviceInts recv(std::vector<int>(4 * kBlocks, strata_test::kPoison));
  ASSERT_EQ(MPI_Sendrecv(send.ptr, 1, type, dest, 5, recv.ptr, 1, type, source, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  std::vector<int> got = recv.to_host();
  for (int i = 0; i < 4 * kBlocks; ++i) {
    ASSERT_EQ(got[static_cast<size_t>(i)], i % 4 != 3 ? value(source, i) : strata_test::kPoison) << "int " << i;
  }
  // A contiguous message of half the packed ints and one more into the same
  // strided receive: packed int j lands at (j / 3) * 4 + j % 3.
  constexpr int kShort = 3 * kBlocks / 2 + 1;
  DeviceInts packed(std::vector<int>(values.begin(), values.begin() + kShort));
  DeviceInts short_recv(std::vector<int>(4 * kBlocks, strata_test::kPoison));
  ASSERT_EQ(MPI_Sendrecv(packed.ptr, kShort, MPI_INT, dest, 6, short_recv.ptr, 1, type, source, 6, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  std::vector<int> want(4 * kBlocks, strata_test::kPoison);
  for (int j = 0; j < kShort; ++j) want[static_cast<size_t>((j / 3) * 4 + j % 3)] = value(source, j);
  got = short_recv.to_host();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "int " << i << " of the short message";
  MPI_Type_free(&type);
}

// Two receives into interleaved parts of one device buffer, outstanding at
// once: each may write only its own bytes (a receive that copied its whole
// span back would undo the other one).
TEST(DeviceP2PSemantics, ConcurrentReceivesIntoOneBuffer) {
  REQUIRE_GPU();
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size;
  // Even and odd columns of a 64 x 8 int matrix.
  MPI_Datatype column_pair, even, odd;
  MPI_Type_vector(64, 1, 8, MPI_INT, &column_pair);
  MPI_Type_create_resized(column_pair, 0, 2 * sizeof(int), &even);
  MPI_Type_commit(&even);
  MPI_Type_dup(even, &odd);
  std::vector<int> values(64 * 8);
  for (size_t i = 0; i < values.size(); ++i) values[i] = rank * 100000 + static_cast<int>(i);
  DeviceInts send(values);
  DeviceInts recv(std::vector<int>(64 * 8, strata_test::kPoison));
  MPI_Request reqs[4];
  ASSERT_EQ(MPI_Irecv(recv.ptr, 4, even, source, 1, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);     // columns 0,2,4,6
  ASSERT_EQ(MPI_Irecv(recv.ptr + 1, 4, odd, source, 2, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);  // columns 1,3,5,7
  ASSERT_EQ(MPI_Isend(send.ptr + 1, 4, odd, dest, 2, MPI_COMM_WORLD, &reqs[2]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Isend(send.ptr, 4, even, dest, 1, MPI_COMM_WORLD, &reqs[3]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE), MPI_SUCCESS);  // the odd columns first
  ASSERT_EQ(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  std::vector<int> got = recv.to_host();
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], source * 100000 + static_cast<int>(i)) << "int " << i;
  }
  MPI_Type_free(&column_pair);
  MPI_Type_free(&even);
  MPI_Type_free(&odd);
}

TEST(DeviceCounters, TheInterposerMovedDeviceData) {
  REQUIRE_GPU();
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  ASSERT_NE(c, nullptr) << "run preloaded: the library alone cannot take device buffers";
  // Packed by Strata's kernels, or (the span method, irreducible types)
  // moved through a host copy of the span.
  EXPECT_GT(c->sends_packed + c->spans_copied, 0u);
  EXPECT_GT(c->recvs_unpacked + c->spans_copied, 0u);
  // Isends of packed device data are deferred unless turned off or staged.
  const char* defer = std::getenv("STRATA_DEFER_SENDS");
  const char* method = std::getenv("STRATA_METHOD");
  const bool off = defer != nullptr && std::strcmp(defer, "off") == 0;
  const bool staged = method != nullptr && std::strcmp(method, "staged") == 0;
  const bool span = method != nullptr && std::strcmp(method, "span") == 0;
  ASSERT_GE(c->version, 4u);
  ASSERT_GE(c->version, 7u);
  if (off) {
    EXPECT_EQ(c->sends_deferred, 0u);
  } else if (staged) {  // only device-direct sends (descriptors) are deferred then
    EXPECT_LE(c->sends_deferred, c->sends_direct);
  } else if (!span) {
    EXPECT_GT(c->sends_deferred, 0u);
    EXPECT_GT(c->deferred_flushes, 0u);
  }
  // Strided parts go to the copy engines only where asked for (or chosen).
  const char* engine = std::getenv("STRATA_DEVICE_ENGINE");
  ASSERT_GE(c->version, 5u);
  if (engine != nullptr && std::strcmp(engine, "copies") == 0 && !span) {
    EXPECT_GT(c->parts_by_copy_engine, 0u);
  } else if (engine != nullptr && std::strcmp(engine, "kernels") == 0) {
    EXPECT_EQ(c->parts_by_copy_engine, 0u);
  }
}

}  // namespace
