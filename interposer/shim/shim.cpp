// libstrata_preload.so: one thin noexcept wrapper per intercepted MPI symbol.
// Each forwards to strata::interposer (or straight to the library when
// STRATA_DISABLE=1); no exception crosses the C boundary, and the library is
// never aborted or finalized on the user's behalf.
#include "interposer/shim/strata_preload.h"

#include <strata/export.h>

#include "base/log.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/all_to_all.hpp"
#include "interposer/transfer/collective_calls.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "interposer/transfer/pack_calls.hpp"
#include "interposer/transfer/plan.hpp"
#include "interposer/transfer/point_to_point.hpp"

namespace {

using strata::interposer::counters;
using strata::mpi::real;

__attribute__((constructor)) void resolve_real_mpi() { strata::mpi::install_next_symbols(); }

// `flush`: the call could depend on a deferred send (deferred_sends.hpp).
template <class Impl, class Library>
int intercept(const char* name, bool flush, Impl impl, Library library) noexcept {
  counters().calls_intercepted.fetch_add(1, std::memory_order_relaxed);
  if (strata::interposer::disabled()) {
    counters().calls_passed_through.fetch_add(1, std::memory_order_relaxed);
    return library();
  }
  if (flush) strata::interposer::flush_deferred_sends();
  try {
    return impl();
  } catch (...) {
    STRATA_LOG(error, kShim, "%s: internal failure (out of memory?); returning MPI_ERR_INTERN", name);
    return MPI_ERR_INTERN;
  }
}

// After the library's own init succeeded: never fails the user's MPI_Init.
void initialize() noexcept {
  if (strata::interposer::disabled()) return;
  try {
    strata::interposer::on_init();
  } catch (...) {
    STRATA_LOG(error, kShim, "initialisation failed (out of memory?); continuing as a pass-through where needed");
  }
}

}  // namespace

namespace si = strata::interposer;

// Each wrapper: STRATA_SHIM(name, impl call, library call). Calls that no
// deferred send can hold up (datatype and pack calls, MPI_Irecv; MPI_Isend
// flushes by itself when it does not defer) use STRATA_SHIM_NO_FLUSH.
#define STRATA_SHIM(name, impl, library) \
  return intercept(                      \
      #name, true, [&] { return impl; }, [&] { return library; })
#define STRATA_SHIM_NO_FLUSH(name, impl, library) \
  return intercept(                               \
      #name, false, [&] { return impl; }, [&] { return library; })

extern "C" {

STRATA_API int MPI_Init(int* argc, char*** argv) {
  int rc = real().Init(argc, argv);
  if (rc == MPI_SUCCESS) initialize();
  return rc;
}

STRATA_API int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = real().Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) initialize();
  return rc;
}

STRATA_API int MPI_Finalize(void) { STRATA_SHIM(MPI_Finalize, si::finalize(), real().Finalize()); }

STRATA_API int MPI_Type_commit(MPI_Datatype* type) {
  STRATA_SHIM_NO_FLUSH(MPI_Type_commit, si::type_commit(type), real().Type_commit(type));
}

STRATA_API int MPI_Type_free(MPI_Datatype* type) {
  STRATA_SHIM_NO_FLUSH(MPI_Type_free, si::type_free(type), real().Type_free(type));
}

STRATA_API int MPI_Type_dup(MPI_Datatype type, MPI_Datatype* newtype) {
  STRATA_SHIM_NO_FLUSH(MPI_Type_dup, si::type_dup(type, newtype), real().Type_dup(type, newtype));
}

STRATA_API int MPI_Pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
                        MPI_Comm comm) {
  STRATA_SHIM_NO_FLUSH(MPI_Pack, si::pack(inbuf, incount, type, outbuf, outsize, position, comm),
                       real().Pack(inbuf, incount, type, outbuf, outsize, position, comm));
}

STRATA_API int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
                          MPI_Comm comm) {
  STRATA_SHIM_NO_FLUSH(MPI_Unpack, si::unpack(inbuf, insize, position, outbuf, outcount, type, comm),
                       real().Unpack(inbuf, insize, position, outbuf, outcount, type, comm));
}

STRATA_API int MPI_Pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int* size) {
  STRATA_SHIM_NO_FLUSH(MPI_Pack_size, si::pack_size(incount, type, comm, size),
                       real().Pack_size(incount, type, comm, size));
}

STRATA_API int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  STRATA_SHIM(MPI_Send, si::send(buf, count, type, dest, tag, comm), real().Send(buf, count, type, dest, tag, comm));
}

STRATA_API int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Status* status) {
  STRATA_SHIM(MPI_Recv, si::recv(buf, count, type, source, tag, comm, status),
              real().Recv(buf, count, type, source, tag, comm, status));
}

STRATA_API int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  STRATA_SHIM_NO_FLUSH(MPI_Isend, si::isend(buf, count, type, dest, tag, comm, request),
                       real().Isend(buf, count, type, dest, tag, comm, request));
}

STRATA_API int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  STRATA_SHIM_NO_FLUSH(MPI_Irecv, si::irecv(buf, count, type, source, tag, comm, request),
                       real().Irecv(buf, count, type, source, tag, comm, request));
}

STRATA_API int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Status* status) {
  STRATA_SHIM(MPI_Sendrecv,
              si::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status),
              real().Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                              recvtag, comm, status));
}

STRATA_API int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  STRATA_SHIM(MPI_Wait, si::wait(request, status), real().Wait(request, status));
}

STRATA_API int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  STRATA_SHIM(MPI_Test, si::test(request, flag, status), real().Test(request, flag, status));
}

STRATA_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  STRATA_SHIM(MPI_Waitall, si::waitall(count, requests, statuses), real().Waitall(count, requests, statuses));
}

STRATA_API int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  STRATA_SHIM(MPI_Testall, si::testall(count, requests, flag, statuses),
              real().Testall(count, requests, flag, statuses));
}

STRATA_API int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  STRATA_SHIM(MPI_Waitany, si::waitany(count, requests, index, status), real().Waitany(count, requests, index, status));
}

STRATA_API int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  STRATA_SHIM(MPI_Testany, si::testany(count, requests, index, flag, status),
              real().Testany(count, requests, index, flag, status));
}

STRATA_API int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  STRATA_SHIM(MPI_Waitsome, si::waitsome(incount, requests, outcount, indices, statuses),
              real().Waitsome(incount, requests, outcount, indices, statuses));
}

STRATA_API int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  STRATA_SHIM(MPI_Testsome, si::testsome(incount, requests, outcount, indices, statuses),
              real().Testsome(incount, requests, outcount, indices, statuses));
}

STRATA_API int MPI_Request_free(MPI_Request* request) {
  STRATA_SHIM(MPI_Request_free, si::request_free(request), real().Request_free(request));
}

STRATA_API int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  STRATA_SHIM(MPI_Request_get_status, si::request_get_status(request, flag, status),
              PMPI_Request_get_status(request, flag, status));
}

STRATA_API int MPI_Cancel(MPI_Request* request) {
  STRATA_SHIM(MPI_Cancel, si::cancel(request), real().Cancel(request));
}

STRATA_API int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  STRATA_SHIM(MPI_Alltoallv,
              si::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
              real().Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm));
}

STRATA_API int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, MPI_Comm comm) {
  STRATA_SHIM(
      MPI_Neighbor_alltoallv,
      si::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
      real().Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm));
}

STRATA_API int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                      const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  STRATA_SHIM(
      MPI_Neighbor_alltoallw,
      si::neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm),
      real().Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                comm));
}

STRATA_API int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  STRATA_SHIM(MPI_Allreduce, si::allreduce(sendbuf, recvbuf, count, type, op, comm),
              real().Allreduce(sendbuf, recvbuf, count, type, op, comm));
}

STRATA_API int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                                        MPI_Comm comm) {
  STRATA_SHIM(MPI_Reduce_scatter_block, si::reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm),
              real().Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm));
}

STRATA_API int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  STRATA_SHIM(MPI_Allgather, si::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              real().Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

STRATA_API int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  STRATA_SHIM(MPI_Bcast, si::bcast(buffer, count, type, root, comm), real().Bcast(buffer, count, type, root, comm));
}

STRATA_API int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm) {
  STRATA_SHIM(MPI_Reduce, si::reduce(sendbuf, recvbuf, count, type, op, root, comm),
              real().Reduce(sendbuf, recvbuf, count, type, op, root, comm));
}

STRATA_API const strata_preload_counters_t* strata_preload_counters(void) {
  static thread_local strata_preload_counters_t snapshot;
  const auto& c = counters();
  snapshot.version = 5;
  snapshot.calls_intercepted = c.calls_intercepted.load();
  snapshot.calls_passed_through = c.calls_passed_through.load();
  snapshot.packs_by_strata = c.packs_by_strata.load();
  snapshot.sends_packed = c.sends_packed.load();
  snapshot.recvs_unpacked = c.recvs_unpacked.load();
  snapshot.requests_completed = c.requests_completed.load();
  snapshot.types_reducible = c.types_reducible.load();
  snapshot.types_irreducible = c.types_irreducible.load();
  snapshot.requests_started = c.requests_started.load();
  snapshot.spans_copied = c.spans_copied.load();
  snapshot.collectives_by_strata = c.collectives_by_strata.load();
  snapshot.collectives_staged = c.collectives_staged.load();
  snapshot.sends_deferred = c.sends_deferred.load();
  snapshot.deferred_flushes = c.deferred_flushes.load();
  snapshot.parts_by_copy_engine = c.parts_by_copy_engine.load();
  return &snapshot;
}

}  // extern "C"
