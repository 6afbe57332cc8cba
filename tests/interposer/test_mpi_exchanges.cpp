// MPI_Alltoall, MPI_Alltoallv, MPI_Gather(v), MPI_Scatter(v) and
// MPI_Allgatherv as a plain MPI program sees them, in host memory or (with
// STRATA_TEST_DEVICE_MEMORY, preloaded) device memory, where Strata runs
// them as grouped NCCL sends and receives once every rank's buffers are on
// its GPU (or the stand-in NCCL of the CPU build). The oracle needs no
// communication: the int rank r sends to rank p at position i is a known
// function of (r, p, i) and a salt rank 0 draws fresh each run. Outputs are
// poisoned and fenced by guards; with the sparse type (one int every two)
// the gaps between elements and between blocks must keep their poison.
// STRATA_TEST_EXPECT_EXCHANGES=nccl: the contiguous device cases must have
// been run by Strata (its counters), and the mixed-memory test checks the
// route a rank with host buffers joins between two agreements.
#include "test_memory.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace test_memory;

constexpr int kPoisonInt = static_cast<int>(0xA5A5A5A5u);

int rank_in(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

// The salt of this run, the same on every rank.
int salt() {
  static const int s = [] {
    int v = static_cast<int>(std::random_device{}() & 0xFFFF);
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
  }();
  return s;
}

// What rank r sends to rank p at position i.
int value(int r, int p, int i) { return salt() * 7 + r * 1000003 + p * 7919 + i * 31 + 1; }

// How many elements rank r sends to rank p in the v forms (0 to 3 times `n`).
int vcount(int r, int p, int n) { return ((r + 2 * p + salt()) % 4) * n; }

// An element type: MPI_INT, or the sparse one (an int, then a gap of one).
struct Shape {
  MPI_Datatype type;
  int stride;  // ints per element's extent
  const char* name;
};

class Types {
 public:
  Types() {
    MPI_Datatype one;
    MPI_Type_vector(1, 1, 2, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 2 * static_cast<MPI_Aint>(sizeof(int)), &sparse_);
    MPI_Type_commit(&sparse_);
    MPI_Type_free(&one);
  }
  ~Types() { MPI_Type_free(&sparse_); }
  std::vector<Shape> all() const { return {{MPI_INT, 1, "int"}, {sparse_, 2, "sparse"}}; }

 private:
  MPI_Datatype sparse_ = MPI_DATATYPE_NULL;
};

// A buffer of `elements` elements of a shape, its ints as the host sees them.
struct Layout {
  Shape shape;
  std::vector<int> ints;
  explicit Layout(const Shape& s, int elements)
      : shape(s), ints(static_cast<size_t>(elements) * static_cast<size_t>(s.stride), kPoisonInt) {}
  void set(int element, int v) { ints[static_cast<size_t>(element) * static_cast<size_t>(shape.stride)] = v; }
  std::vector<char> bytes() const {
    std::vector<char> b(ints.size() * sizeof(int));
    if (!b.empty()) std::memcpy(b.data(), ints.data(), b.size());
    return b;
  }
};

// The memory under test holding a layout (at least one int, so that a
// zero-count buffer is still a valid pointer).
struct Placed {
  Buffer buffer;
  explicit Placed(const Layout& l) : buffer(std::max<size_t>(l.ints.size(), 1) * sizeof(int)) { buffer.put(l.bytes()); }
  void* data() const { return buffer.data(); }
  std::vector<char> got(const Layout& l) const {
    std::vector<char> all = buffer.get();
    all.resize(l.ints.size() * sizeof(int));
    return all;
  }
};

// Blocks one after another with one element of gap between them.
std::vector<int> displs_of(const std::vector<int>& counts) {
  std::vector<int> d(counts.size());
  int at = 0;
  for (size_t p = 0; p < counts.size(); ++p) {
    d[p] = at;
    at += counts[p] + 1;
  }
  return d;
}
int extent_of(const std::vector<int>& counts) {
  int e = 0;
  for (int c : counts) e += c + 1;
  return e;
}

const std::vector<int>& sizes() {
  static const std::vector<int> s{0, 1, 5, 1000};
  return s;
}

uint64_t by_strata() {
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  return c != nullptr ? c->collectives_by_strata : 0;
}
bool expect_nccl() {
  const char* e = std::getenv("STRATA_TEST_EXPECT_EXCHANGES");
  return e != nullptr && std::strcmp(e, "nccl") == 0;
}

// After a call of every rank on contiguous device memory: Strata ran it;
// `library` for a call left to the library by design (MPI_Gather's small
// blocks, STRATA_COLL_GATHER_NCCL_MIN): Strata did not.
void expect_by_strata(uint64_t before, const Shape& s, const std::string& what, bool library = false) {
  if (!expect_nccl() || s.stride != 1) return;
  if (library) {
    EXPECT_EQ(by_strata(), before) << what << ": run by Strata below STRATA_COLL_GATHER_NCCL_MIN";
  } else {
    EXPECT_GT(by_strata(), before) << what << ": not run by Strata";
  }
}

// MPI_Gather's blocks below this go to the library (collectives/settings.cpp).
int64_t gather_nccl_min() {
  const char* e = std::getenv("STRATA_COLL_GATHER_NCCL_MIN");
  return e != nullptr ? std::atoll(e) : 512;
}

// --- the calls ----------------------------------------------------------------

void alltoall(MPI_Comm comm, const Shape& s, int n, bool in_place) {
  const int me = rank_in(comm), np = size_of(comm);
  const std::string what =
      std::string("alltoall ") + s.name + " n=" + std::to_string(n) + (in_place ? " in place" : "");
  Layout send(s, n * np), want(s, n * np), start(s, n * np);
  for (int p = 0; p < np; ++p) {
    for (int i = 0; i < n; ++i) {
      send.set(p * n + i, value(me, p, i));
      want.set(p * n + i, value(p, me, i));
    }
  }
  Placed sbuf(send), rbuf(in_place ? send : start);
  const uint64_t before = by_strata();
  ASSERT_EQ(MPI_Alltoall(in_place ? MPI_IN_PLACE : sbuf.data(), n, s.type, rbuf.data(), n, s.type, comm), MPI_SUCCESS)
      << what;
  EXPECT_BYTES_EQ(rbuf.got(want), want.bytes(), what);
  EXPECT_TRUE(rbuf.buffer.guards_intact() && sbuf.buffer.guards_intact()) << what;
  if (!in_place) expect_by_strata(before, s, what);
}

void alltoallv(MPI_Comm comm, const Shape& s, int n, bool in_place) {
  const int me = rank_in(comm), np = size_of(comm);
  const std::string what =
      std::string("alltoallv ") + s.name + " n=" + std::to_string(n) + (in_place ? " in place" : "");
  // MPI_IN_PLACE sends what it receives, laid out alike: counts symmetric
  // between every pair of ranks.
  auto count = [&](int from, int to) { return in_place ? ((from + to + salt()) % 4) * n : vcount(from, to, n); };
  std::vector<int> scounts(np), rcounts(np);
  for (int p = 0; p < np; ++p) {
    scounts[p] = count(me, p);
    rcounts[p] = count(p, me);
  }
  const std::vector<int> sd = displs_of(scounts), rd = displs_of(rcounts);
  Layout send(s, extent_of(scounts)), want(s, extent_of(rcounts));
  for (int p = 0; p < np; ++p) {
    for (int i = 0; i < rcounts[p]; ++i) want.set(rd[p] + i, value(p, me, i));
    for (int i = 0; i < scounts[p]; ++i) send.set(sd[p] + i, value(me, p, i));
  }
  Placed sbuf(send), rbuf(in_place ? send : Layout(s, extent_of(rcounts)));
  ASSERT_EQ(MPI_Alltoallv(in_place ? MPI_IN_PLACE : sbuf.data(), scounts.data(), sd.data(), s.type, rbuf.data(),
                          rcounts.data(), rd.data(), s.type, comm),
            MPI_SUCCESS)
      << what;
  EXPECT_BYTES_EQ(rbuf.got(want), want.bytes(), what);
  EXPECT_TRUE(rbuf.buffer.guards_intact() && sbuf.buffer.guards_intact()) << what;
}

void gather(MPI_Comm comm, const Shape& s, int n, int root, bool v, bool in_place) {
  const int me = rank_in(comm), np = size_of(comm);
  const std::string what = std::string(v ? "gatherv " : "gather ") + s.name + " n=" + std::to_string(n) +
                           " root=" + std::to_string(root) + (in_place ? " in place" : "");
  std::vector<int> counts(np);
  for (int p = 0; p < np; ++p) counts[p] = v ? vcount(p, root, n) : n;
  const std::vector<int> displs = v ? displs_of(counts) : std::vector<int>();
  auto at = [&](int p) { return v ? displs[p] : p * n; };
  const int extent = v ? extent_of(counts) : n * np;
  Layout send(s, counts[me]), want(s, me == root ? extent : 0), start(s, me == root ? extent : 0);
  for (int i = 0; i < counts[me]; ++i) send.set(i, value(me, root, i));
  if (me == root) {
    for (int p = 0; p < np; ++p) {
      for (int i = 0; i < counts[p]; ++i) want.set(at(p) + i, value(p, root, i));
    }
    if (in_place) {
      for (int i = 0; i < counts[me]; ++i) start.set(at(me) + i, value(me, root, i));
    }
  }
  const bool here_in_place = in_place && me == root;
  Placed sbuf(send), rbuf(start);
  const uint64_t before = by_strata();
  const void* sendbuf = here_in_place ? MPI_IN_PLACE : sbuf.data();
  const int rc =
      v ? MPI_Gatherv(sendbuf, counts[me], s.type, rbuf.data(), counts.data(), displs.data(), s.type, root, comm)
        : MPI_Gather(sendbuf, n, s.type, rbuf.data(), n, s.type, root, comm);
  ASSERT_EQ(rc, MPI_SUCCESS) << what;
  if (me == root) EXPECT_BYTES_EQ(rbuf.got(want), want.bytes(), what);
  EXPECT_TRUE(rbuf.buffer.guards_intact() && sbuf.buffer.guards_intact()) << what;
  int type_size = 0;
  MPI_Type_size(s.type, &type_size);
  expect_by_strata(before, s, what, !v && int64_t{n} * type_size < gather_nccl_min());
}

void scatter(MPI_Comm comm, const Shape& s, int n, int root, bool v, bool in_place) {
  const int me = rank_in(comm), np = size_of(comm);
  const std::string what = std::string(v ? "scatterv " : "scatter ") + s.name + " n=" + std::to_string(n) +
                           " root=" + std::to_string(root) + (in_place ? " in place" : "");
  std::vector<int> counts(np);
  for (int p = 0; p < np; ++p) counts[p] = v ? vcount(root, p, n) : n;
  const std::vector<int> displs = v ? displs_of(counts) : std::vector<int>();
  auto at = [&](int p) { return v ? displs[p] : p * n; };
  const int extent = v ? extent_of(counts) : n * np;
  Layout send(s, me == root ? extent : 0), want(s, counts[me]), start(s, counts[me]);
  if (me == root) {
    for (int p = 0; p < np; ++p) {
      for (int i = 0; i < counts[p]; ++i) send.set(at(p) + i, value(root, p, i));
    }
  }
  for (int i = 0; i < counts[me]; ++i) want.set(i, value(root, me, i));
  const bool here_in_place = in_place && me == root;
  Placed sbuf(send), rbuf(start);
  const uint64_t before = by_strata();
  void* recvbuf = here_in_place ? MPI_IN_PLACE : rbuf.data();
  const int rc =
      v ? MPI_Scatterv(sbuf.data(), counts.data(), displs.data(), s.type, recvbuf, counts[me], s.type, root, comm)
        : MPI_Scatter(sbuf.data(), n, s.type, recvbuf, n, s.type, root, comm);
  ASSERT_EQ(rc, MPI_SUCCESS) << what;
  if (here_in_place) {
    EXPECT_BYTES_EQ(sbuf.got(send), send.bytes(), what + " (the root's own block stays)");
  } else {
    EXPECT_BYTES_EQ(rbuf.got(want), want.bytes(), what);
  }
  EXPECT_TRUE(rbuf.buffer.guards_intact() && sbuf.buffer.guards_intact()) << what;
  expect_by_strata(before, s, what);
}

void allgatherv(MPI_Comm comm, const Shape& s, int n, bool in_place) {
  const int me = rank_in(comm), np = size_of(comm);
  const std::string what =
      std::string("allgatherv ") + s.name + " n=" + std::to_string(n) + (in_place ? " in place" : "");
  std::vector<int> counts(np);
  for (int p = 0; p < np; ++p) counts[p] = vcount(p, 0, n);
  const std::vector<int> displs = displs_of(counts);
  Layout send(s, counts[me]), want(s, extent_of(counts)), start(s, extent_of(counts));
  for (int i = 0; i < counts[me]; ++i) send.set(i, value(me, 0, i));
  for (int p = 0; p < np; ++p) {
    for (int i = 0; i < counts[p]; ++i) want.set(displs[p] + i, value(p, 0, i));
  }
  if (in_place) {
    for (int i = 0; i < counts[me]; ++i) start.set(displs[me] + i, value(me, 0, i));
  }
  Placed sbuf(send), rbuf(start);
  const uint64_t before = by_strata();
  ASSERT_EQ(MPI_Allgatherv(in_place ? MPI_IN_PLACE : sbuf.data(), counts[me], s.type, rbuf.data(), counts.data(),
                           displs.data(), s.type, comm),
            MPI_SUCCESS)
      << what;
  EXPECT_BYTES_EQ(rbuf.got(want), want.bytes(), what);
  EXPECT_TRUE(rbuf.buffer.guards_intact() && sbuf.buffer.guards_intact()) << what;
  expect_by_strata(before, s, what);
}

// --- the tests ----------------------------------------------------------------

TEST(Exchanges, Alltoall) {
  REQUIRE_MEMORY();
  Types types;
  for (const Shape& s : types.all()) {
    for (int n : sizes()) {
      for (bool in_place : {false, true}) alltoall(MPI_COMM_WORLD, s, n, in_place);
    }
  }
}

TEST(Exchanges, Alltoallv) {
  REQUIRE_MEMORY();
  Types types;
  for (const Shape& s : types.all()) {
    for (int n : sizes()) {
      for (bool in_place : {false, true}) alltoallv(MPI_COMM_WORLD, s, n, in_place);
    }
  }
}

TEST(Exchanges, GatherAndGatherv) {
  REQUIRE_MEMORY();
  Types types;
  const int last = size_of(MPI_COMM_WORLD) - 1;
  for (const Shape& s : types.all()) {
    for (int n : sizes()) {
      for (int root : {0, last}) {
        for (bool v : {false, true}) {
          for (bool in_place : {false, true}) gather(MPI_COMM_WORLD, s, n, root, v, in_place);
        }
      }
    }
  }
}

TEST(Exchanges, ScatterAndScatterv) {
  REQUIRE_MEMORY();
  Types types;
  const int last = size_of(MPI_COMM_WORLD) - 1;
  for (const Shape& s : types.all()) {
    for (int n : sizes()) {
      for (int root : {0, last}) {
        for (bool v : {false, true}) {
          for (bool in_place : {false, true}) scatter(MPI_COMM_WORLD, s, n, root, v, in_place);
        }
      }
    }
  }
}

TEST(Exchanges, Allgatherv) {
  REQUIRE_MEMORY();
  Types types;
  for (const Shape& s : types.all()) {
    for (int n : sizes()) {
      for (bool in_place : {false, true}) allgatherv(MPI_COMM_WORLD, s, n, in_place);
    }
  }
}

// A routed collective on MPI_COMM_NULL is the library's error, whatever
// memory its buffers are in: the same class as the library alone gives for
// host buffers (before, device buffers got Strata's MPI_ERR_ARG from the
// routing decision).
#if defined(STRATA_TEST_DEVICE_MEMORY)
// A program that calls a collective before it picks each rank's GPU (every
// rank still on device 0 then, so the GPUs looked shared when Strata first
// saw the communicator), then moves data on its own GPUs: the device call
// still takes the NCCL route (the ranks look at their GPUs again).
TEST(Exchanges, RanksThatPickTheirGpuAfterTheFirstCollective) {
  REQUIRE_MEMORY();
  const int devices = strata_test::test_device_count();
  if (!expect_nccl() || !strata_test::all_ranks_agree(devices >= size_of(MPI_COMM_WORLD))) {
    GTEST_SKIP() << "needs the NCCL route and a GPU per rank";
  }
  MPI_Comm comm = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
  strata_test::test_device_select(0);
  int one = 1, all = 0;
  ASSERT_EQ(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
  EXPECT_EQ(all, size_of(comm));
  strata_test::test_device_select(rank_in(MPI_COMM_WORLD) % devices);
  Types types;
  alltoall(comm, types.all().front(), 1000, false);  // contiguous: expects Strata's (NCCL) route
  MPI_Comm_free(&comm);
}
#endif

TEST(Exchanges, NullCommunicatorIsTheLibrarysError) {
  REQUIRE_MEMORY();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int np = size_of(MPI_COMM_WORLD);
  Layout l(Types().all()[0], 4 * np);
  Placed a(l), b(l);
  std::vector<int> ha(static_cast<size_t>(4 * np)), hb(ha.size()), counts(static_cast<size_t>(np), 1),
      displs(static_cast<size_t>(np));
  for (int p = 0; p < np; ++p) displs[p] = p;
  auto cls = [](int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
  };
  const MPI_Comm null = MPI_COMM_NULL;
  EXPECT_EQ(cls(MPI_Allreduce(a.data(), b.data(), 1, MPI_INT, MPI_SUM, null)),
            cls(PMPI_Allreduce(ha.data(), hb.data(), 1, MPI_INT, MPI_SUM, null)));
  EXPECT_EQ(cls(MPI_Bcast(a.data(), 1, MPI_INT, 0, null)), cls(PMPI_Bcast(ha.data(), 1, MPI_INT, 0, null)));
  EXPECT_EQ(cls(MPI_Alltoall(a.data(), 1, MPI_INT, b.data(), 1, MPI_INT, null)),
            cls(PMPI_Alltoall(ha.data(), 1, MPI_INT, hb.data(), 1, MPI_INT, null)));
  EXPECT_EQ(cls(MPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_INT, b.data(), counts.data(), displs.data(),
                              MPI_INT, null)),
            cls(PMPI_Alltoallv(ha.data(), counts.data(), displs.data(), MPI_INT, hb.data(), counts.data(),
                               displs.data(), MPI_INT, null)));
  EXPECT_EQ(cls(MPI_Gather(a.data(), 1, MPI_INT, b.data(), 1, MPI_INT, 0, null)),
            cls(PMPI_Gather(ha.data(), 1, MPI_INT, hb.data(), 1, MPI_INT, 0, null)));
  EXPECT_EQ(cls(MPI_Allgatherv(a.data(), 1, MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT, null)),
            cls(PMPI_Allgatherv(ha.data(), 1, MPI_INT, hb.data(), counts.data(), displs.data(), MPI_INT, null)));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

#if defined(STRATA_TEST_DEVICE_MEMORY)
// The ranks agree on the NCCL route at the first all-to-all of a fresh
// communicator, and next at its third: at the second, rank 1 passes host
// memory (then, at the fourth and fifth, the sparse type in device memory)
// and must join the NCCL group with its blocks staged, not take the
// library's call alone (which would hang). Every result is checked.
TEST(Exchanges, ARankWhoseBuffersChangeKindBetweenAgreements) {
  REQUIRE_MEMORY();
  if (size_of(MPI_COMM_WORLD) < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  Types types;
  const Shape ints = types.all()[0], sparse = types.all()[1];
  const int me = rank_in(comm), np = size_of(comm), n = 33;
  alltoall(comm, ints, n, false);  // agreed: every rank on its GPU
  {
    // Rank 1 in host memory: the same call with malloc'ed buffers.
    const std::string what = "alltoall, rank 1 in host memory";
    std::vector<int> send(static_cast<size_t>(n * np)), got(static_cast<size_t>(n * np), kPoisonInt),
        want(static_cast<size_t>(n * np));
    for (int p = 0; p < np; ++p) {
      for (int i = 0; i < n; ++i) {
        send[static_cast<size_t>(p * n + i)] = value(me, p, i);
        want[static_cast<size_t>(p * n + i)] = value(p, me, i);
      }
    }
    const uint64_t before = by_strata();
    if (me == 1) {
      ASSERT_EQ(MPI_Alltoall(send.data(), n, MPI_INT, got.data(), n, MPI_INT, comm), MPI_SUCCESS) << what;
      EXPECT_EQ(got, want) << what;
    } else {
      alltoall(comm, ints, n, false);
    }
    if (expect_nccl()) EXPECT_GT(by_strata(), before) << what << ": the rank left the NCCL route";
  }
  alltoall(comm, ints, n, false);  // the third: agreed again, every rank on its GPU
  for (int k = 0; k < 2; ++k) alltoall(comm, me == 1 ? sparse : ints, n, false);
  MPI_Comm_free(&comm);
}
#endif

}  // namespace
