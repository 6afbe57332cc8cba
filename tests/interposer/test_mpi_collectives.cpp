// MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast and
// MPI_Reduce as a plain MPI program sees them: host memory (this file as
// is) or GPU memory (compiled with STRATA_TEST_DEVICE_MEMORY and run only
// preloaded: an MPI that is not GPU-aware cannot take device pointers
// alone; the memory is support/test_device_memory.hpp's: CUDA, or in the
// CPU build the interposer's device stand-in, STRATA_FAKE_DEVICE). The
// oracle needs no communication: every rank's input is a known function of
// (rank, index), so each rank computes the exact expected result with a
// naive loop. Inputs are +-1 and +-2 (sums and products exact in every
// type and order); outputs are poisoned; guard bytes around every buffer.
// Routing is checked through the interposer's counters
// (STRATA_TEST_EXPECT_COLLECTIVES=1: Strata ran some of them).
#include "test_memory.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace test_memory;

// --- types, values, oracle -----------------------------------------------------

struct TypeInfo {
  MPI_Datatype type;
  const char* name;
  size_t size;
};
std::vector<TypeInfo> types() {
  return {{MPI_INT, "int", sizeof(int)},
          {MPI_LONG, "long", sizeof(long)},
          {MPI_FLOAT, "float", sizeof(float)},
          {MPI_DOUBLE, "double", sizeof(double)}};
}

struct OpInfo {
  MPI_Op op;
  const char* name;
};
std::vector<OpInfo> ops() { return {{MPI_SUM, "sum"}, {MPI_PROD, "prod"}, {MPI_MIN, "min"}, {MPI_MAX, "max"}}; }

double value(int rank, size_t i) {
  static const double kValues[] = {1, -1, 2, -2, 1, 2, -1, 1};
  const uint64_t h = (static_cast<uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull ^ (i + 3) * 0xBF58476D1CE4E5B9ull;
  return kValues[(h >> 33) % 8];
}

double apply(MPI_Op op, double a, double b) {
  if (op == MPI_SUM) return a + b;
  if (op == MPI_PROD) return a * b;
  if (op == MPI_MIN) return std::min(a, b);
  return std::max(a, b);
}

double reduced(MPI_Op op, size_t i, int ranks) {
  double acc = value(0, i);
  for (int r = 1; r < ranks; ++r) acc = apply(op, acc, value(r, i));
  return acc;
}

void store(std::vector<char>& out, size_t i, const TypeInfo& t, double v) {
  char* p = out.data() + i * t.size;
  if (t.type == MPI_INT) {
    const int x = static_cast<int>(v);
    std::memcpy(p, &x, sizeof x);
  } else if (t.type == MPI_LONG) {
    const long x = static_cast<long>(v);
    std::memcpy(p, &x, sizeof x);
  } else if (t.type == MPI_FLOAT) {
    const float x = static_cast<float>(v);
    std::memcpy(p, &x, sizeof x);
  } else {
    std::memcpy(p, &v, sizeof v);
  }
}

// Rank r's input: `count` elements starting at index `first`.
std::vector<char> input(const TypeInfo& t, int rank, size_t count, size_t first = 0) {
  std::vector<char> v(count * t.size);
  for (size_t i = 0; i < count; ++i) store(v, i, t, value(rank, first + i));
  return v;
}

std::vector<char> expected_reduction(const TypeInfo& t, MPI_Op op, size_t count, int ranks, size_t first = 0) {
  std::vector<char> v(count * t.size);
  for (size_t i = 0; i < count; ++i) store(v, i, t, reduced(op, first + i, ranks));
  return v;
}

const std::vector<size_t>& counts() {
  static const std::vector<size_t> c{0, 1, 7, 1000, 40003};
  return c;
}

int rank() { return strata_test::world_rank(); }
int ranks() { return strata_test::world_size(); }

// MPICH 4.0 to 4.1.1 (the library alone, no Strata) crash in MPI_Reduce with
// MPI_IN_PLACE at a root other than 0 once the message is over
// MPIR_CVAR_REDUCE_SHORT_MSG_SIZE (2048 bytes): the ch4 reduce composition
// passes MPI_IN_PLACE, (void*)-1, to the node-local reduce as the root's send
// buffer, which copies from it (pmodels/mpich#6540, fixed in 4.1.2 by #6543).
// Those cases are left out there; every rank decides alike (root, count).
bool library_crashes_in_place_reduce(int root, size_t bytes) {
#if defined(MPICH_NUMVERSION)
  return MPICH_NUMVERSION >= 40000000 && MPICH_NUMVERSION < 40102000 && root != 0 && bytes > 2048;
#else
  (void)root;
  (void)bytes;
  return false;
#endif
}

// --- the collectives ----------------------------------------------------------

TEST(Collectives, Allreduce) {
  REQUIRE_MEMORY();
  for (const TypeInfo& t : types()) {
    for (const OpInfo& o : ops()) {
      for (size_t n : counts()) {
        for (bool in_place : {false, true}) {
          const std::string what =
              std::string(t.name) + " " + o.name + " n=" + std::to_string(n) + (in_place ? " in place" : "");
          Buffer send(n * t.size), recv(n * t.size);
          ASSERT_TRUE(send.ok() && recv.ok());
          (in_place ? recv : send).put(input(t, rank(), n));
          ASSERT_EQ(MPI_Allreduce(in_place ? MPI_IN_PLACE : send.data(), recv.data(), static_cast<int>(n), t.type, o.op,
                                  MPI_COMM_WORLD),
                    MPI_SUCCESS)
              << what;
          EXPECT_BYTES_EQ(recv.get(), expected_reduction(t, o.op, n, ranks()), what);
          EXPECT_TRUE(recv.guards_intact() && send.guards_intact()) << what;
        }
      }
    }
  }
}

TEST(Collectives, ReduceScatterBlock) {
  REQUIRE_MEMORY();
  const size_t n_ranks = static_cast<size_t>(ranks());
  for (const TypeInfo& t : types()) {
    for (const OpInfo& o : ops()) {
      for (size_t n : counts()) {
        for (bool in_place : {false, true}) {
          const std::string what =
              std::string(t.name) + " " + o.name + " n=" + std::to_string(n) + (in_place ? " in place" : "");
          Buffer send(n * n_ranks * t.size), recv((in_place ? n * n_ranks : n) * t.size);
          ASSERT_TRUE(send.ok() && recv.ok());
          (in_place ? recv : send).put(input(t, rank(), n * n_ranks));
          ASSERT_EQ(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send.data(), recv.data(), static_cast<int>(n),
                                             t.type, o.op, MPI_COMM_WORLD),
                    MPI_SUCCESS)
              << what;
          std::vector<char> got = recv.get();
          got.resize(n * t.size);  // in place: only the first block is defined
          EXPECT_BYTES_EQ(got, expected_reduction(t, o.op, n, ranks(), static_cast<size_t>(rank()) * n), what);
          EXPECT_TRUE(recv.guards_intact() && send.guards_intact()) << what;
        }
      }
    }
  }
}

// Predefined, contiguous derived and odd-sized types: moved as they are.
TEST(Collectives, Allgather) {
  REQUIRE_MEMORY();
  MPI_Datatype three_ints;
  MPI_Type_contiguous(3, MPI_INT, &three_ints);
  MPI_Type_commit(&three_ints);
  struct Moved {
    MPI_Datatype type;
    size_t size;
    const char* name;
  };
  const std::vector<Moved> moved{{MPI_DOUBLE, 8, "double"}, {MPI_CHAR, 1, "char"}, {three_ints, 12, "3 ints"}};
  const size_t n_ranks = static_cast<size_t>(ranks());
  for (const Moved& m : moved) {
    for (size_t n : counts()) {
      for (bool in_place : {false, true}) {
        const std::string what = std::string(m.name) + " n=" + std::to_string(n) + (in_place ? " in place" : "");
        const size_t block = n * m.size;
        auto bytes_of = [&](int r) {
          std::vector<char> b(block);
          for (size_t i = 0; i < block; ++i) b[i] = static_cast<char>(value(r, i) * 3 + r + i);
          return b;
        };
        Buffer send(block), recv(block * n_ranks);
        ASSERT_TRUE(send.ok() && recv.ok());
        std::vector<char> want(block * n_ranks);
        for (int r = 0; r < ranks(); ++r) {
          const std::vector<char> b = bytes_of(r);
          std::copy(b.begin(), b.end(), want.begin() + static_cast<std::ptrdiff_t>(block * static_cast<size_t>(r)));
        }
        if (in_place) {
          std::vector<char> mine(block * n_ranks, static_cast<char>(kPoison));
          const std::vector<char> b = bytes_of(rank());
          std::copy(b.begin(), b.end(),
                    mine.begin() + static_cast<std::ptrdiff_t>(block * static_cast<size_t>(rank())));
          recv.put(mine);
        } else {
          send.put(bytes_of(rank()));
        }
        ASSERT_EQ(MPI_Allgather(in_place ? MPI_IN_PLACE : send.data(), static_cast<int>(n), m.type, recv.data(),
                                static_cast<int>(n), m.type, MPI_COMM_WORLD),
                  MPI_SUCCESS)
            << what;
        EXPECT_BYTES_EQ(recv.get(), want, what);
        EXPECT_TRUE(recv.guards_intact() && send.guards_intact()) << what;
      }
    }
  }
  MPI_Type_free(&three_ints);
}

// A strided type: not Strata's collective; the library (on host copies of
// the span for device memory) must still leave the gaps untouched.
TEST(Collectives, BcastStridedTypeKeepsGaps) {
  REQUIRE_MEMORY();
  MPI_Datatype every_other;
  MPI_Type_vector(50, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  const int root = ranks() - 1;
  std::vector<int> host(100);
  for (int i = 0; i < 100; ++i) host[i] = rank() == root ? 1000 + i : -(rank() * 1000 + i);
  Buffer buf(100 * sizeof(int));
  ASSERT_TRUE(buf.ok());
  std::vector<char> bytes(100 * sizeof(int));
  std::memcpy(bytes.data(), host.data(), bytes.size());
  buf.put(bytes);
  ASSERT_EQ(MPI_Bcast(buf.data(), 1, every_other, root, MPI_COMM_WORLD), MPI_SUCCESS);
  const std::vector<char> got = buf.get();
  std::vector<int> out(100);
  std::memcpy(out.data(), got.data(), got.size());
  for (int i = 0; i < 100; ++i) {
    const int want = i % 2 == 0 ? 1000 + i : host[static_cast<size_t>(i)];  // gaps keep this rank's values
    ASSERT_EQ(out[static_cast<size_t>(i)], want) << "element " << i;
  }
  EXPECT_TRUE(buf.guards_intact());
  MPI_Type_free(&every_other);
}

TEST(Collectives, Bcast) {
  REQUIRE_MEMORY();
  for (const TypeInfo& t : types()) {
    for (int root : {0, ranks() - 1}) {
      for (size_t n : counts()) {
        const std::string what = std::string(t.name) + " root " + std::to_string(root) + " n=" + std::to_string(n);
        Buffer buf(n * t.size);
        ASSERT_TRUE(buf.ok());
        if (rank() == root) buf.put(input(t, root, n));
        ASSERT_EQ(MPI_Bcast(buf.data(), static_cast<int>(n), t.type, root, MPI_COMM_WORLD), MPI_SUCCESS) << what;
        EXPECT_BYTES_EQ(buf.get(), input(t, root, n), what);
        EXPECT_TRUE(buf.guards_intact()) << what;
      }
    }
  }
}

TEST(Collectives, Reduce) {
  REQUIRE_MEMORY();
  int left_out = 0;
  for (const TypeInfo& t : types()) {
    for (const OpInfo& o : ops()) {
      for (int root : {0, ranks() - 1}) {
        for (size_t n : counts()) {
          for (bool in_place : {false, true}) {
            if (in_place && library_crashes_in_place_reduce(root, n * t.size)) {
              ++left_out;
              continue;
            }
            const bool is_root = rank() == root;
            const std::string what = std::string(t.name) + " " + o.name + " root " + std::to_string(root) +
                                     " n=" + std::to_string(n) + (in_place ? " in place" : "");
            Buffer send(n * t.size), recv(n * t.size);
            ASSERT_TRUE(send.ok() && recv.ok());
            const bool root_in_place = in_place && is_root;
            (root_in_place ? recv : send).put(input(t, rank(), n));
            ASSERT_EQ(MPI_Reduce(root_in_place ? MPI_IN_PLACE : send.data(), recv.data(), static_cast<int>(n), t.type,
                                 o.op, root, MPI_COMM_WORLD),
                      MPI_SUCCESS)
                << what;
            if (is_root) {
              EXPECT_BYTES_EQ(recv.get(), expected_reduction(t, o.op, n, ranks()), what);
            } else {
              EXPECT_BYTES_EQ(recv.get(), std::vector<char>(n * t.size, static_cast<char>(kPoison)), what);
            }
            EXPECT_TRUE(recv.guards_intact() && send.guards_intact()) << what;
          }
        }
      }
    }
  }
  if (left_out > 0 && rank() == 0) {
    std::printf("left out %d in-place reductions at root %d over 2048 bytes (MPICH 4.0-4.1.1 crashes in them)\n",
                left_out, ranks() - 1);
  }
}

// A user-defined op is the library's business, on any memory.
void absmax(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = std::max(std::abs(a[i]), std::abs(b[i]));
}

TEST(Collectives, UserOpGoesToTheLibrary) {
  REQUIRE_MEMORY();
  MPI_Op op;
  MPI_Op_create(absmax, 1, &op);
  const size_t n = 1000;
  std::vector<int> mine(n), want(n);
  for (size_t i = 0; i < n; ++i) {
    mine[i] = (rank() % 2 ? -1 : 1) * static_cast<int>((rank() * 31 + i * 7) % 97);
    want[i] = 0;
    for (int r = 0; r < ranks(); ++r) want[i] = std::max(want[i], static_cast<int>((r * 31 + i * 7) % 97));
  }
  Buffer send(n * sizeof(int)), recv(n * sizeof(int));
  std::vector<char> bytes(n * sizeof(int));
  std::memcpy(bytes.data(), mine.data(), bytes.size());
  send.put(bytes);
  ASSERT_EQ(MPI_Allreduce(send.data(), recv.data(), static_cast<int>(n), MPI_INT, op, MPI_COMM_WORLD), MPI_SUCCESS);
  const std::vector<char> got = recv.get();
  std::vector<int> out(n);
  std::memcpy(out.data(), got.data(), got.size());
  EXPECT_EQ(out, want);
  MPI_Op_free(&op);
}

// Last (gtest runs tests in order): did Strata run any of the above?
TEST(Collectives, CountersShowWhoRanThem) {
  REQUIRE_MEMORY();  // the tests above ran nothing without it
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  if (!strata_test::expect_preload()) {
    EXPECT_EQ(c, nullptr) << "the plain variant must run without the interposer";
    return;
  }
  ASSERT_NE(c, nullptr);
  ASSERT_GE(c->version, 3u);
  const char* expect = std::getenv("STRATA_TEST_EXPECT_COLLECTIVES");
  if (expect != nullptr && std::strcmp(expect, "1") == 0) {
    // Strata's collectives ran them, or (ranks sharing a GPU, no NCCL) the
    // library on host copies, every rank alike.
    EXPECT_GT(c->collectives_by_strata + c->collectives_staged, 0u);
  } else if (expect != nullptr && std::strcmp(expect, "0") == 0) {
    EXPECT_EQ(c->collectives_by_strata, 0u);
  } else if (expect != nullptr && std::strcmp(expect, "nccl") == 0) {
    // Every rank on a GPU of its own: NCCL (the stand-in's) ran some.
    EXPECT_GT(c->collectives_by_strata, 0u);
  } else if (expect != nullptr && std::strcmp(expect, "staged") == 0) {
    // Ranks that share a GPU, or no NCCL: the library's collectives on host
    // copies of the device buffers, every rank alike.
    EXPECT_GT(c->collectives_staged, 0u);
  }
  // Routing decisions (collectives/routing.cpp): none where every call
  // passed from the exported function, some where the handler voted.
  const char* decisions = std::getenv("STRATA_TEST_EXPECT_DECISIONS");
  if (decisions != nullptr && std::strcmp(decisions, "0") == 0) {
    EXPECT_EQ(c->collective_decisions, 0u) << "host collectives took the routed handler";
  } else if (decisions != nullptr && std::strcmp(decisions, "some") == 0) {
    EXPECT_GT(c->collective_decisions, 0u);
  }
}

}  // namespace
