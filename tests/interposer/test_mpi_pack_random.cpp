// The random datatype corpus through the MPI interface: MPI_Pack, MPI_Unpack
// and self-messages with derived types must produce exactly what the
// library's own PMPI_Pack / PMPI_Unpack produce, byte for byte, guards and
// holes included. A plain MPI program: run preloaded, this is the
// interposer's property test (STRATA_HOST_PACK=always sends every reducible
// type through Strata's engine); run plain, it checks the test itself.
#include "random_datatype.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <random>
#include <vector>

namespace {

constexpr int64_t kGuard = 64;

using Bytes = std::vector<unsigned char>;

// A buffer covering a footprint plus guards; base() is the buffer pointer.
struct Guarded {
  Guarded(const strata_test::Footprint& fp, unsigned char fill)
      : bytes(static_cast<size_t>(fp.hi - fp.lo + 2 * kGuard), fill), lo(fp.lo) {}
  char* base() { return reinterpret_cast<char*>(bytes.data()) + kGuard - lo; }
  Bytes bytes;
  int64_t lo;
};

class PackRandom : public testing::Test {
 protected:
  uint64_t seed() const {
    return strata_test::env_u64("STRATA_TEST_SEED", 0xC0FFEEull) + static_cast<uint64_t>(strata_test::world_rank());
  }
  int iterations() const { return static_cast<int>(strata_test::env_u64("STRATA_TEST_ITERATIONS", 4000)); }
};

TEST_F(PackRandom, PackAndUnpackMatchTheLibrary) {
  strata_test::RandomDatatypeGenerator gen(seed());
  for (int i = 0; i < iterations(); ++i) {
    strata_test::RandomType rt = gen.next();
    MPI_Datatype type = rt.type.get();
    const int count = static_cast<int>(gen.rng()() % 5);
    Guarded src(strata_test::footprint(type, count), 0);
    for (auto& b : src.bytes) b = static_cast<unsigned char>(gen.rng()());
    int bound = 0;
    ASSERT_EQ(PMPI_Pack_size(count, type, MPI_COMM_WORLD, &bound), MPI_SUCCESS);
    const int start = static_cast<int>(gen.rng()() % 8);
    Bytes ours(static_cast<size_t>(start + bound + 2 * kGuard), 0xA5), theirs = ours;
    int pos_ours = start, pos_theirs = start;
    const int rc_ours =
        MPI_Pack(src.base(), count, type, ours.data() + kGuard, start + bound, &pos_ours, MPI_COMM_WORLD);
    const int rc_theirs =
        PMPI_Pack(src.base(), count, type, theirs.data() + kGuard, start + bound, &pos_theirs, MPI_COMM_WORLD);
    ASSERT_EQ(rc_ours, rc_theirs) << rt.description;
    ASSERT_EQ(pos_ours, pos_theirs) << rt.description;
    ASSERT_EQ(ours, theirs) << "MPI_Pack differs: " << rt.description << " count " << count << " (seed " << seed()
                            << ", case " << i << ")";
    // Unpack the same bytes into two identically poisoned destinations.
    Guarded dst_ours(strata_test::footprint(type, count), 0x5A), dst_theirs = dst_ours;
    int in_ours = start, in_theirs = start;
    ASSERT_EQ(
        MPI_Unpack(ours.data() + kGuard, pos_ours, &in_ours, dst_ours.base(), count, type, MPI_COMM_WORLD),
        PMPI_Unpack(theirs.data() + kGuard, pos_theirs, &in_theirs, dst_theirs.base(), count, type, MPI_COMM_WORLD));
    ASSERT_EQ(in_ours, in_theirs);
    ASSERT_EQ(dst_ours.bytes, dst_theirs.bytes) << "MPI_Unpack differs: " << rt.description << " count " << count
                                                << " (seed " << seed() << ", case " << i << ")";
  }
}

// Whether the library alone receives `packed` bytes sent as MPI_PACKED into
// `count` elements of `type` (the oracle's own limits; see the test below).
bool library_receives_packed(const Bytes& packed_bytes, int packed, const strata_test::Footprint& fp, int count,
                             MPI_Datatype type, int rank, int tag) {
  Guarded dst(fp, 0);
  MPI_Request reqs[2];
  MPI_Status statuses[2];
  if (PMPI_Irecv(dst.base(), count, type, rank, tag, MPI_COMM_WORLD, &reqs[0]) != MPI_SUCCESS) return false;
  if (PMPI_Isend(packed_bytes.data(), packed, MPI_PACKED, rank, tag, MPI_COMM_WORLD, &reqs[1]) != MPI_SUCCESS) {
    PMPI_Cancel(&reqs[0]);
    PMPI_Request_free(&reqs[0]);
    return false;
  }
  return PMPI_Waitall(2, reqs, statuses) == MPI_SUCCESS;
}

// Messages to self: typed out, packed in (must equal PMPI_Pack), and packed
// out, typed in (must equal PMPI_Unpack), through Isend/Irecv/Waitall.
TEST_F(PackRandom, MessagesMatchTheLibrary) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  strata_test::RandomDatatypeGenerator gen(seed() ^ 0x5EEDull);
  const int rank = strata_test::world_rank();
  int library_refused = 0;
  for (int i = 0; i < iterations(); ++i) {
    strata_test::RandomType rt = gen.next();
    MPI_Datatype type = rt.type.get();
    const int count = 1 + static_cast<int>(gen.rng()() % 3);
    const strata_test::Footprint fp = strata_test::footprint(type, count);
    Guarded src(fp, 0);
    for (auto& b : src.bytes) b = static_cast<unsigned char>(gen.rng()());
    int bound = 0;
    ASSERT_EQ(PMPI_Pack_size(count, type, MPI_COMM_WORLD, &bound), MPI_SUCCESS);
    // One spare byte: a zero-size type still needs a valid buffer pointer.
    Bytes expected(static_cast<size_t>(bound) + 1), received(static_cast<size_t>(bound) + 1, 0xEE);
    int packed = 0;
    ASSERT_EQ(PMPI_Pack(src.base(), count, type, expected.data(), bound, &packed, MPI_COMM_WORLD), MPI_SUCCESS);
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    ASSERT_EQ(MPI_Irecv(received.data(), bound, MPI_PACKED, rank, i, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(src.base(), count, type, rank, i, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, reqs, statuses), MPI_SUCCESS)
        << rt.description << " count " << count << " bound " << bound;
    int got = -1;
    MPI_Get_count(&statuses[0], MPI_PACKED, &got);
    ASSERT_EQ(got, packed) << rt.description;
    received.resize(static_cast<size_t>(packed));
    expected.resize(static_cast<size_t>(packed));
    ASSERT_EQ(received, expected) << "sent bytes differ: " << rt.description << " (seed, case " << i << ")";

    Guarded dst_ours(fp, 0x3C), dst_theirs = dst_ours;
    int in = 0;
    ASSERT_EQ(PMPI_Unpack(expected.data(), packed, &in, dst_theirs.base(), count, type, MPI_COMM_WORLD), MPI_SUCCESS);
    if (!library_receives_packed(expected, packed, fp, count, type, rank, i)) {
      ++library_refused;  // nothing to compare Strata with
      continue;
    }
    ASSERT_EQ(MPI_Irecv(dst_ours.base(), count, type, rank, i, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(expected.data(), packed, MPI_PACKED, rank, i, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, reqs, statuses), MPI_SUCCESS)
        << rt.description << " count " << count << " packed " << packed << " receive error " << statuses[0].MPI_ERROR
        << " send error " << statuses[1].MPI_ERROR;
    int elements = -1;
    MPI_Get_count(&statuses[0], type, &elements);
    if (packed > 0) EXPECT_EQ(elements, count) << rt.description;
    ASSERT_EQ(dst_ours.bytes, dst_theirs.bytes) << "received bytes differ: " << rt.description << " (case " << i << ")";
  }
  // Open MPI receives every case; MPICH 4.0 fails a few packed messages of
  // pair types (MPI_DOUBLE_INT, ...) under hindexed with MPI_ERR_TRUNCATE.
  if (library_refused > 0) std::printf("the library alone could not receive %d packed messages\n", library_refused);
  EXPECT_LT(library_refused, iterations() / 20) << "too few cases compared";
}

TEST_F(PackRandom, InterposerDidTheWorkWhenAsked) {
  const char* expect = std::getenv("STRATA_TEST_EXPECT_PACKING");
  if (expect == nullptr || std::string(expect) != "1") GTEST_SKIP() << "not the _preload_always variant";
  const strata_test::StrataCounters* c = strata_test::preload_counters();
  ASSERT_NE(c, nullptr);
  EXPECT_GT(c->packs_by_strata, 100u);
  EXPECT_GT(c->sends_packed, 100u);
  EXPECT_GT(c->recvs_unpacked, 100u);
  EXPECT_GT(c->types_reducible, 100u);
  EXPECT_GT(c->types_irreducible, 100u);
}

}  // namespace
