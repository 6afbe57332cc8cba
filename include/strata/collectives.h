/* The collectives of strata/collectives.hpp for C (and Fortran through
 * ISO_C_BINDING). Every function returns an MPI error class: MPI_SUCCESS,
 * MPI_ERR_ARG (a bad argument), MPI_ERR_UNSUPPORTED_OPERATION (not handled
 * by this build), MPI_ERR_NO_MEM, MPI_ERR_OTHER (MPI or the device
 * runtime/NCCL failed; the log says which), MPI_ERR_INTERN. Errors are
 * returned, never raised through the communicator's error handler.
 *
 * Device buffers: the work is ordered on `stream` (a cudaStream_t or
 * hipStream_t; NULL: the default stream) and the call returns once it is
 * queued, as NCCL's. Host buffers: the call returns with the result. */
#ifndef STRATA_COLLECTIVES_H
#define STRATA_COLLECTIVES_H

#include <strata/export.h>

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stddef.h>  // NOLINT(modernize-deprecated-headers): a C header

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  STRATA_INT32 = 0,
  STRATA_INT64 = 1,
  STRATA_FLOAT32 = 2,
  STRATA_FLOAT64 = 3,
  STRATA_FLOAT16 = 4,
  STRATA_BFLOAT16 = 5
} strata_datatype_t;

typedef enum { STRATA_SUM = 0, STRATA_PROD = 1, STRATA_MIN = 2, STRATA_MAX = 3 } strata_op_t;

STRATA_API int strata_allreduce(const void* send, void* recv, size_t count, strata_datatype_t type, strata_op_t op,
                                MPI_Comm comm, void* stream);
STRATA_API int strata_reduce_scatter(const void* send, void* recv, size_t recv_count, strata_datatype_t type,
                                     strata_op_t op, MPI_Comm comm, void* stream);
STRATA_API int strata_allgather(const void* send, void* recv, size_t send_count, strata_datatype_t type, MPI_Comm comm,
                                void* stream);
STRATA_API int strata_broadcast(void* buffer, size_t count, strata_datatype_t type, int root, MPI_Comm comm,
                                void* stream);
STRATA_API int strata_reduce(const void* send, void* recv, size_t count, strata_datatype_t type, strata_op_t op,
                             int root, MPI_Comm comm, void* stream);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_COLLECTIVES_H */
