// strata/collectives.h over strata/collectives.hpp.
#include <strata/collectives.h>
#include <strata/collectives.hpp>

namespace {

using namespace strata;
using namespace strata::coll;

int mpi_class(Status s) {
  switch (s) {
    case Status::ok: return MPI_SUCCESS;
    case Status::invalid_argument: return MPI_ERR_ARG;
    case Status::not_supported:
    case Status::irreducible: return MPI_ERR_UNSUPPORTED_OPERATION;
    case Status::out_of_memory: return MPI_ERR_NO_MEM;
    case Status::mpi_error:
    case Status::device_error:
    case Status::timeout: return MPI_ERR_OTHER;
    case Status::internal: return MPI_ERR_INTERN;
  }
  return MPI_ERR_INTERN;
}

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
  return mpi_class(allreduce(send, recv, count, type_of(type), op_of(op), comm, on(stream)));
}

int strata_reduce_scatter(const void* send, void* recv, size_t recv_count, strata_datatype_t type, strata_op_t op,
                          MPI_Comm comm, void* stream) {
  return mpi_class(reduce_scatter(send, recv, recv_count, type_of(type), op_of(op), comm, on(stream)));
}

int strata_allgather(const void* send, void* recv, size_t send_count, strata_datatype_t type, MPI_Comm comm,
                     void* stream) {
  return mpi_class(allgather(send, recv, send_count, type_of(type), comm, on(stream)));
}

int strata_broadcast(void* buffer, size_t count, strata_datatype_t type, int root, MPI_Comm comm, void* stream) {
  return mpi_class(broadcast(buffer, count, type_of(type), root, comm, on(stream)));
}

int strata_reduce(const void* send, void* recv, size_t count, strata_datatype_t type, strata_op_t op, int root,
                  MPI_Comm comm, void* stream) {
  return mpi_class(reduce(send, recv, count, type_of(type), op_of(op), root, comm, on(stream)));
}

}  // extern "C"
