// Bad input gets the error class the library gives it. Each case calls the
// MPI_ entry (Strata's, when preloaded) and the PMPI_ entry (the library's,
// never intercepted) with the same arguments under MPI_ERRORS_RETURN and
// compares the classes; buffers must not be written outside their bounds.
#include "mpi_type_cases.hpp"
#include "support/mpi_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// Does Strata's interposer handle calls in this run (preloaded, not disabled)?
bool strata_active() {
  const char* disabled = std::getenv("STRATA_DISABLE");
  return strata_test::expect_preload() && !(disabled != nullptr && std::strcmp(disabled, "1") == 0);
}

int error_class(int code) {
  int cls = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
  return cls;
}

class Errors : public testing::Test {
 protected:
  void SetUp() override { MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); }
  void TearDown() override { MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL); }
};

TEST_F(Errors, PackIntoTooSmallBufferIsTruncate) {
  const auto& c = strata_test::type_cases()[0];
  MPI_Datatype type = c.build();
  std::vector<int> src = strata_test::filled_buffer(c, 2, 0);
  int size = 0;
  MPI_Pack_size(2, type, MPI_COMM_WORLD, &size);
  // Guards after the declared size must stay intact.
  std::vector<char> ours(static_cast<size_t>(size) + 64, 'g'), theirs(static_cast<size_t>(size) + 64, 'g');
  int pos_ours = 1, pos_theirs = 1;
  int rc_ours = MPI_Pack(src.data(), 2, type, ours.data(), size - 1, &pos_ours, MPI_COMM_WORLD);
  int rc_theirs = PMPI_Pack(src.data(), 2, type, theirs.data(), size - 1, &pos_theirs, MPI_COMM_WORLD);
  if (strata_active() || rc_theirs != MPI_SUCCESS) {
    // Strata always refuses; a library that checks (Open MPI) agrees. MPICH
    // built without error checking returns success and writes past the end.
    EXPECT_EQ(error_class(rc_ours), MPI_ERR_TRUNCATE);
    if (rc_theirs != MPI_SUCCESS) EXPECT_EQ(error_class(rc_theirs), MPI_ERR_TRUNCATE);
    for (size_t i = static_cast<size_t>(size); i < ours.size(); ++i) EXPECT_EQ(ours[i], 'g') << "byte " << i;
  } else {
    EXPECT_EQ(rc_ours, rc_theirs);
  }
  MPI_Type_free(&type);
}

TEST_F(Errors, UnpackFromTooShortBufferIsTruncate) {
  const auto& c = strata_test::type_cases()[2];
  MPI_Datatype type = c.build();
  std::vector<char> packed(4096, 1);
  std::vector<int> a = strata_test::poisoned_buffer(c, 2), b = strata_test::poisoned_buffer(c, 2);
  int pos_a = 0, pos_b = 0;
  int rc_ours = MPI_Unpack(packed.data(), 10, &pos_a, a.data(), 2, type, MPI_COMM_WORLD);
  int rc_theirs = PMPI_Unpack(packed.data(), 10, &pos_b, b.data(), 2, type, MPI_COMM_WORLD);
  if (strata_active() || rc_theirs != MPI_SUCCESS) {
    EXPECT_EQ(error_class(rc_ours), MPI_ERR_TRUNCATE);
    if (rc_theirs != MPI_SUCCESS) EXPECT_EQ(error_class(rc_theirs), MPI_ERR_TRUNCATE);
    EXPECT_EQ(pos_a, 0);  // output parameters untouched on error
  } else {
    EXPECT_EQ(rc_ours, rc_theirs);
  }
  MPI_Type_free(&type);
}

TEST_F(Errors, NegativeCount) {
  const auto& c = strata_test::type_cases()[0];
  MPI_Datatype type = c.build();
  std::vector<int> buf = strata_test::filled_buffer(c, 1, 0);
  const int rank = strata_test::world_rank();
  EXPECT_EQ(error_class(MPI_Send(buf.data(), -1, type, rank, 0, MPI_COMM_WORLD)),
            error_class(PMPI_Send(buf.data(), -1, type, rank, 0, MPI_COMM_WORLD)));
  MPI_Request r1 = MPI_REQUEST_NULL, r2 = MPI_REQUEST_NULL;
  EXPECT_EQ(error_class(MPI_Irecv(buf.data(), -1, type, rank, 0, MPI_COMM_WORLD, &r1)),
            error_class(PMPI_Irecv(buf.data(), -1, type, rank, 0, MPI_COMM_WORLD, &r2)));
  std::vector<char> out(1024);
  int p1 = 0, p2 = 0;
  EXPECT_EQ(error_class(MPI_Pack(buf.data(), -1, type, out.data(), 1024, &p1, MPI_COMM_WORLD)),
            error_class(PMPI_Pack(buf.data(), -1, type, out.data(), 1024, &p2, MPI_COMM_WORLD)));
  MPI_Type_free(&type);
}

TEST_F(Errors, InvalidRank) {
  const auto& c = strata_test::type_cases()[0];
  MPI_Datatype type = c.build();
  std::vector<int> buf = strata_test::filled_buffer(c, 1, 0);
  const int size = strata_test::world_size();
  int ours = MPI_Send(buf.data(), 1, type, size + 3, 0, MPI_COMM_WORLD);
  int theirs = PMPI_Send(buf.data(), 1, type, size + 3, 0, MPI_COMM_WORLD);
  EXPECT_EQ(error_class(ours), error_class(theirs));
  EXPECT_EQ(error_class(ours), MPI_ERR_RANK);
  MPI_Request r = MPI_REQUEST_NULL;
  EXPECT_EQ(error_class(MPI_Irecv(buf.data(), 1, type, size + 3, 0, MPI_COMM_WORLD, &r)), MPI_ERR_RANK);
  MPI_Type_free(&type);
}

TEST_F(Errors, UncommittedType) {
  MPI_Datatype type;
  MPI_Type_vector(3, 1, 4, MPI_INT, &type);  // never committed
  std::vector<int> buf(64, 1);
  std::vector<char> out(1024);
  int p1 = 0, p2 = 0;
  EXPECT_EQ(error_class(MPI_Pack(buf.data(), 1, type, out.data(), 1024, &p1, MPI_COMM_WORLD)),
            error_class(PMPI_Pack(buf.data(), 1, type, out.data(), 1024, &p2, MPI_COMM_WORLD)));
  const int rank = strata_test::world_rank();
  EXPECT_EQ(error_class(MPI_Send(buf.data(), 1, type, rank, 0, MPI_COMM_WORLD)),
            error_class(PMPI_Send(buf.data(), 1, type, rank, 0, MPI_COMM_WORLD)));
  MPI_Type_free(&type);
}

TEST_F(Errors, NullDatatypeAndCommunicator) {
  std::vector<int> buf(64, 1);
  std::vector<char> out(1024);
  int p1 = 0, p2 = 0;
  EXPECT_EQ(error_class(MPI_Pack(buf.data(), 1, MPI_DATATYPE_NULL, out.data(), 1024, &p1, MPI_COMM_WORLD)),
            error_class(PMPI_Pack(buf.data(), 1, MPI_DATATYPE_NULL, out.data(), 1024, &p2, MPI_COMM_WORLD)));
  const auto& c = strata_test::type_cases()[0];
  MPI_Datatype type = c.build();
  std::vector<int> src = strata_test::filled_buffer(c, 1, 0);
  p1 = p2 = 0;
  EXPECT_EQ(error_class(MPI_Pack(src.data(), 1, type, out.data(), 1024, &p1, MPI_COMM_NULL)),
            error_class(PMPI_Pack(src.data(), 1, type, out.data(), 1024, &p2, MPI_COMM_NULL)));
  MPI_Type_free(&type);
}

// A message larger than the posted receive: truncation, not corruption of
// the receive buffer's neighbourhood.
TEST_F(Errors, ReceiveTruncation) {
  const auto& c = strata_test::type_cases()[0];
  const int rank = strata_test::world_rank(), size = strata_test::world_size();
  MPI_Datatype type = c.build();
  std::vector<int> sendbuf = strata_test::filled_buffer(c, 3, rank);
  std::vector<int> recvbuf = strata_test::poisoned_buffer(c, 3);
  MPI_Request req;
  ASSERT_EQ(MPI_Irecv(recvbuf.data(), 1, type, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &req), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(sendbuf.data(), 3, type, (rank + 1) % size, 9, MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Status status;
  int rc = MPI_Wait(&req, &status);
  EXPECT_EQ(error_class(rc), MPI_ERR_TRUNCATE);
  // Beyond the one posted element nothing may change.
  for (size_t i = static_cast<size_t>(c.extent_ints); i < recvbuf.size(); ++i) {
    EXPECT_EQ(recvbuf[i], strata_test::kPoison) << "int " << i;
  }
  MPI_Type_free(&type);
}

}  // namespace
