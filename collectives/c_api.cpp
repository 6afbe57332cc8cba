// strata/collectives.h over strata/collectives.hpp.
#include <strata/collectives.h>
#include <strata/collectives.hpp>

#include "mpi/error_class.hpp"

namespace {

using namespace strata;
using namespace strata::coll;

// Out-of-range enum values stay out of range: the C++ API rejects them.
DataType type_of(strata_datatype_t t) { return static_cast<DataType>(static_cast<int>(t)); }
ReduceOp op_of(strata_op_t op) { return static_cast<ReduceOp>(static_cast<int>(op)); }
Options on(void* stream) {
  Options o;
  o.stream = stream;
  return o;
}

}  // namespace

extern "C" {

int strata_allreduce(const void* send, void* recv, size_t count, strata_datatype_t type, strata_op_t op, MPI_Comm comm,
                     void* stream) {
  return mpi::error_class(allreduce(send, recv, count, type_of(type), op_of(op), comm, on(stream)));
}

int strata_reduce_scatter(const void* send, void* recv, size_t recv_count, strata_datatype_t type, strata_op_t op,
                          MPI_Comm comm, void* stream) {
  return mpi::error_class(reduce_scatter(send, recv, recv_count, type_of(type), op_of(op), comm, on(stream)));
}

int strata_allgather(const void* send, void* recv, size_t send_count, strata_datatype_t type, MPI_Comm comm,
                     void* stream) {
  return mpi::error_class(allgather(send, recv, send_count, type_of(type), comm, on(stream)));
}

int strata_broadcast(void* buffer, size_t count, strata_datatype_t type, int root, MPI_Comm comm, void* stream) {
  return mpi::error_class(broadcast(buffer, count, type_of(type), root, comm, on(stream)));
}

int strata_reduce(const void* send, void* recv, size_t count, strata_datatype_t type, strata_op_t op, int root,
                  MPI_Comm comm, void* stream) {
  return mpi::error_class(reduce(send, recv, count, type_of(type), op_of(op), root, comm, on(stream)));
}

}  // extern "C"
