// A stand-in for a broken MPI library, preloaded into a benchmark
// (tests/tools/test_tool_command_lines.cpp): MPI_Allreduce with a separate
// send buffer returns the right result with its first byte flipped, so the
// benchmark's verification must fail and be counted. Calls in place (the
// benchmarks' own agreement on times and outcomes) are left alone.
#include <mpi.h>

extern "C" int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
  if (rc == MPI_SUCCESS && send != MPI_IN_PLACE && count > 0) static_cast<unsigned char*>(recv)[0] ^= 0xff;
  return rc;
}
