// The interception table: every MPI function libstrata_preload.so defines,
// once. The C wrappers (interposer/shim/wrappers.cpp), the pointers to the
// real functions (mpi/real_mpi.hpp), the deferred-send flush, the per-call
// counters, STRATA_DISABLE's pass-through, the table in docs/interposer.md
// (`strata-config --calls`) and the coverage check of the generated device
// test (tests/interposer/test_mpi_every_call.cpp) all come from here. Adding
// a call is one line. The calls Strata makes without intercepting them are
// the second list, mpi/calls/library_calls.hpp.
//
// It lives in mpi/, the lowest layer that knows MPI, because real() is
// generated from it; the `kind` and `roles` columns are the interposer's,
// and only interposer/calls interprets them.
//
// X(fn, kind, lc, params, args, roles)
//   fn      the MPI function
//   kind    how Strata treats it (interposer/calls/call_kinds.hpp): the
//           handler family its wrapper calls
//   lc      LC when MPI-4 defines a large-count fn_c whose parameters are
//           these with CNT = MPI_Count and DSP = MPI_Aint (generated from
//           this line where the library is MPI-4); NO otherwise
//   params  the C parameters, with CNT for counts and DSP for displacements
//           in elements (int here, MPI_Count and MPI_Aint in fn_c)
//   args    the parameter names in order
//   roles   what the arguments are to the handler (interposer/calls/
//           roles.hpp): buffers with their direction, shape and ranks where
//           they matter, the communicator, root, peers, request, status
//
// This header needs only <mpi.h>: plain MPI test programs include it to
// enumerate the calls. It must be the same list under every MPI; calls a
// library lacks sit in the guarded lists at the end.
#pragma once

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

// clang-format off

// --- setup, datatypes, packing -------------------------------------------------
#define STRATA_CALLS_SETUP(X) \
  X(MPI_Init, special_local, NO, (int* argc, char*** argv), (argc, argv), ()) \
  X(MPI_Init_thread, special_local, NO, (int* argc, char*** argv, int required, int* provided), (argc, argv, required, provided), ()) \
  X(MPI_Finalize, special, NO, (void), (), ()) \
  X(MPI_Type_commit, special_local, NO, (MPI_Datatype* type), (type), ()) \
  X(MPI_Type_free, special_local, NO, (MPI_Datatype* type), (type), ()) \
  X(MPI_Type_dup, special_local, NO, (MPI_Datatype type, MPI_Datatype* newtype), (type, newtype), ()) \
  X(MPI_Pack, special_local, NO, (const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position, MPI_Comm comm), (inbuf, incount, type, outbuf, outsize, position, comm), ()) \
  X(MPI_Unpack, special_local, NO, (const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type, MPI_Comm comm), (inbuf, insize, position, outbuf, outcount, type, comm), ()) \
  X(MPI_Pack_size, special_local, NO, (int incount, MPI_Datatype type, MPI_Comm comm, int* size), (incount, type, comm, size), ()) \
  X(MPI_Pack_external, local, NO, (const char* datarep, const void* inbuf, int incount, MPI_Datatype type, void* outbuf, MPI_Aint outsize, MPI_Aint* position), (datarep, inbuf, incount, type, outbuf, outsize, position), (no_comm, bufs(in(inbuf, incount, type), bytes(INOUT, outbuf, outsize)))) \
  X(MPI_Unpack_external, local, NO, (const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype type), (datarep, inbuf, insize, position, outbuf, outcount, type), (no_comm, bufs(bytes(IN, inbuf, insize), out(outbuf, outcount, type)))) \
  X(MPI_Buffer_attach, refused, NO, (void* buffer, int size), (buffer, size), (no_comm, bufs(bytes(INOUT, buffer, size))))

// --- point to point ---------------------------------------------------------------
#define STRATA_CALLS_P2P(X) \
  X(MPI_Send, send, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm), (in(buf, count, type), peer(dest), tag, comm)) \
  X(MPI_Bsend, send, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm), (in(buf, count, type), peer(dest), tag, comm)) \
  X(MPI_Ssend, send, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm), (in(buf, count, type), peer(dest), tag, comm)) \
  X(MPI_Rsend, send, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm), (in(buf, count, type), peer(dest), tag, comm)) \
  X(MPI_Isend, isend, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), tag, comm, request)) \
  X(MPI_Ibsend, isend, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), tag, comm, request)) \
  X(MPI_Issend, isend, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), tag, comm, request)) \
  X(MPI_Irsend, isend, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), tag, comm, request)) \
  X(MPI_Send_init, send_init, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), comm, request)) \
  X(MPI_Bsend_init, send_init, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), comm, request)) \
  X(MPI_Ssend_init, send_init, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), comm, request)) \
  X(MPI_Rsend_init, send_init, LC, (const void* buf, CNT count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, tag, comm, request), (in(buf, count, type), peer(dest), comm, request)) \
  X(MPI_Recv, recv, LC, (void* buf, CNT count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status), (buf, count, type, source, tag, comm, status), (out(buf, count, type), peer(source), tag, comm, status)) \
  X(MPI_Irecv, irecv, LC, (void* buf, CNT count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, source, tag, comm, request), (out(buf, count, type), peer(source), tag, comm, request)) \
  X(MPI_Recv_init, recv_init, LC, (void* buf, CNT count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request), (buf, count, type, source, tag, comm, request), (out(buf, count, type), peer(source), comm, request)) \
  X(MPI_Mrecv, mrecv, LC, (void* buf, CNT count, MPI_Datatype type, MPI_Message* message, MPI_Status* status), (buf, count, type, message, status), (out(buf, count, type), message, status)) \
  X(MPI_Imrecv, imrecv, LC, (void* buf, CNT count, MPI_Datatype type, MPI_Message* message, MPI_Request* request), (buf, count, type, message, request), (out(buf, count, type), message, request)) \
  X(MPI_Sendrecv, sendrecv, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status), (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status), (in(sendbuf, sendcount, sendtype), peer(dest), out(recvbuf, recvcount, recvtype), peer(source), comm, status)) \
  X(MPI_Sendrecv_replace, sendrecv_replace, LC, (void* buf, CNT count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status), (buf, count, type, dest, sendtag, source, recvtag, comm, status), (inout(buf, count, type), peer(dest), peer(source), comm, status)) \
  X(MPI_Probe, special, NO, (int source, int tag, MPI_Comm comm, MPI_Status* status), (source, tag, comm, status), ()) \
  X(MPI_Iprobe, special, NO, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status), (source, tag, comm, flag, status), ()) \
  X(MPI_Mprobe, special, NO, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status), (source, tag, comm, message, status), ()) \
  X(MPI_Improbe, special, NO, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status), (source, tag, comm, flag, message, status), ())

// --- completion ---------------------------------------------------------------------
#define STRATA_CALLS_COMPLETION(X) \
  X(MPI_Wait, completion, NO, (MPI_Request* request, MPI_Status* status), (request, status), ()) \
  X(MPI_Test, completion, NO, (MPI_Request* request, int* flag, MPI_Status* status), (request, flag, status), ()) \
  X(MPI_Waitall, completion, NO, (int count, MPI_Request requests[], MPI_Status statuses[]), (count, requests, statuses), ()) \
  X(MPI_Testall, completion, NO, (int count, MPI_Request requests[], int* flag, MPI_Status statuses[]), (count, requests, flag, statuses), ()) \
  X(MPI_Waitany, completion, NO, (int count, MPI_Request requests[], int* index, MPI_Status* status), (count, requests, index, status), ()) \
  X(MPI_Testany, completion, NO, (int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status), (count, requests, index, flag, status), ()) \
  X(MPI_Waitsome, completion, NO, (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]), (incount, requests, outcount, indices, statuses), ()) \
  X(MPI_Testsome, completion, NO, (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]), (incount, requests, outcount, indices, statuses), ()) \
  X(MPI_Request_free, special, NO, (MPI_Request* request), (request), ()) \
  X(MPI_Request_get_status, special, NO, (MPI_Request request, int* flag, MPI_Status* status), (request, flag, status), ()) \
  X(MPI_Cancel, special, NO, (MPI_Request* request), (request), ()) \
  X(MPI_Start, special, NO, (MPI_Request* request), (request), ()) \
  X(MPI_Startall, special, NO, (int count, MPI_Request requests[]), (count, requests), ())

// --- blocking collectives -------------------------------------------------------------
// `routed` collectives go to NCCL, Strata's algorithms or the library,
// decided alike on every rank (docs/collectives.md); `packed` ones have each
// side packed per peer by Strata where that wins. Their large-count forms
// are staged like the `coll` ones, with the roles given here.
#define STRATA_CALLS_COLL(X) \
  X(MPI_Barrier, flush, NO, (MPI_Comm comm), (comm), ()) \
  X(MPI_Bcast, routed, LC, (void* buffer, CNT count, MPI_Datatype type, int root, MPI_Comm comm), (buffer, count, type, root, comm), (comm, root, bufs(one(BCAST, ALL, buffer, count, type)))) \
  X(MPI_Gather, routed, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), (comm, root, bufs(one(IN, CONTRIB, sendbuf, sendcount, sendtype), blocks(OUT, ROOT, recvbuf, recvcount, recvtype, GROUP)))) \
  X(MPI_Gatherv, routed, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm), (comm, root, bufs(one(IN, CONTRIB, sendbuf, sendcount, sendtype), vbuf(OUT, ROOT, recvbuf, recvcounts, displs, recvtype, GROUP)))) \
  X(MPI_Scatter, routed, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), (comm, root, bufs(blocks(IN, ROOT, sendbuf, sendcount, sendtype, GROUP), one(OUT, CONTRIB, recvbuf, recvcount, recvtype)))) \
  X(MPI_Scatterv, routed, LC, (const void* sendbuf, const CNT sendcounts[], const DSP displs[], MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm), (comm, root, bufs(vbuf(IN, ROOT, sendbuf, sendcounts, displs, sendtype, GROUP), one(OUT, CONTRIB, recvbuf, recvcount, recvtype)))) \
  X(MPI_Allgather, routed, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), blocks(OUT, ALL, recvbuf, recvcount, recvtype, GROUP)))) \
  X(MPI_Allgatherv, routed, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), vbuf(OUT, ALL, recvbuf, recvcounts, displs, recvtype, GROUP)))) \
  X(MPI_Alltoall, routed, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), (comm, no_root, bufs(blocks(IN, ALL, sendbuf, sendcount, sendtype, GROUP), blocks(OUT, ALL, recvbuf, recvcount, recvtype, GROUP)))) \
  X(MPI_Alltoallv, packed, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), (comm, no_root, bufs(vbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtype, GROUP), vbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtype, GROUP)))) \
  X(MPI_Alltoallw, coll, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const CNT recvcounts[], const DSP rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), (comm, no_root, bufs(wbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtypes, GROUP), wbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtypes, GROUP)))) \
  X(MPI_Reduce, routed, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, root, comm), (comm, root, bufs(one(IN, CONTRIB, sendbuf, count, type), one(OUT, ROOT, recvbuf, count, type)))) \
  X(MPI_Allreduce, routed, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(MPI_Reduce_scatter, coll, LC, (const void* sendbuf, void* recvbuf, const CNT recvcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, recvcounts, type, op, comm), (comm, no_root, bufs(sum_of(IN, sendbuf, recvcounts, type), mine_of(recvbuf, recvcounts, type)))) \
  X(MPI_Reduce_scatter_block, routed, LC, (const void* sendbuf, void* recvbuf, CNT recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, recvcount, type, op, comm), (comm, no_root, bufs(blocks(IN, ALL, sendbuf, recvcount, type, GROUP), block_of(recvbuf, recvcount, type)))) \
  X(MPI_Scan, coll, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(MPI_Exscan, coll, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(MPI_Reduce_local, local, LC, (const void* inbuf, void* inoutbuf, CNT count, MPI_Datatype type, MPI_Op op), (inbuf, inoutbuf, count, type, op), (no_comm, bufs(in(inbuf, count, type), inout(inoutbuf, count, type)))) \
  X(MPI_Neighbor_allgather, coll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), blocks(OUT, ALL, recvbuf, recvcount, recvtype, SOURCES)))) \
  X(MPI_Neighbor_allgatherv, coll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), (comm, no_root, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), vbuf(OUT, ALL, recvbuf, recvcounts, displs, recvtype, SOURCES)))) \
  X(MPI_Neighbor_alltoall, coll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), (comm, no_root, bufs(blocks(IN, ALL, sendbuf, sendcount, sendtype, DESTINATIONS), blocks(OUT, ALL, recvbuf, recvcount, recvtype, SOURCES)))) \
  X(MPI_Neighbor_alltoallv, packed, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), (comm, no_root, bufs(vbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtype, DESTINATIONS), vbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtype, SOURCES)))) \
  X(MPI_Neighbor_alltoallw, packed, LC, (const void* sendbuf, const CNT sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const CNT recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), (comm, no_root, bufs(wbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtypes, DESTINATIONS), wbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtypes, SOURCES))))

// --- non-blocking collectives ------------------------------------------------------------
#define STRATA_CALLS_ICOLL(X) \
  X(MPI_Ibarrier, flush, NO, (MPI_Comm comm, MPI_Request* request), (comm, request), ()) \
  X(MPI_Ibcast, icoll, LC, (void* buffer, CNT count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request), (buffer, count, type, root, comm, request), (comm, root, request, bufs(one(BCAST, ALL, buffer, count, type)))) \
  X(MPI_Igather, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request), (comm, root, request, bufs(one(IN, CONTRIB, sendbuf, sendcount, sendtype), blocks(OUT, ROOT, recvbuf, recvcount, recvtype, GROUP)))) \
  X(MPI_Igatherv, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request), (comm, root, request, bufs(one(IN, CONTRIB, sendbuf, sendcount, sendtype), vbuf(OUT, ROOT, recvbuf, recvcounts, displs, recvtype, GROUP)))) \
  X(MPI_Iscatter, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request), (comm, root, request, bufs(blocks(IN, ROOT, sendbuf, sendcount, sendtype, GROUP), one(OUT, CONTRIB, recvbuf, recvcount, recvtype)))) \
  X(MPI_Iscatterv, icoll, LC, (const void* sendbuf, const CNT sendcounts[], const DSP displs[], MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request), (comm, root, request, bufs(vbuf(IN, ROOT, sendbuf, sendcounts, displs, sendtype, GROUP), one(OUT, CONTRIB, recvbuf, recvcount, recvtype)))) \
  X(MPI_Iallgather, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), blocks(OUT, ALL, recvbuf, recvcount, recvtype, GROUP)))) \
  X(MPI_Iallgatherv, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), vbuf(OUT, ALL, recvbuf, recvcounts, displs, recvtype, GROUP)))) \
  X(MPI_Ialltoall, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), (comm, no_root, request, bufs(blocks(IN, ALL, sendbuf, sendcount, sendtype, GROUP), blocks(OUT, ALL, recvbuf, recvcount, recvtype, GROUP)))) \
  X(MPI_Ialltoallv, icoll, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request), (comm, no_root, request, bufs(vbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtype, GROUP), vbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtype, GROUP)))) \
  X(MPI_Ialltoallw, icoll, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const CNT recvcounts[], const DSP rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request), (comm, no_root, request, bufs(wbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtypes, GROUP), wbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtypes, GROUP)))) \
  X(MPI_Ireduce, icoll, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request), (sendbuf, recvbuf, count, type, op, root, comm, request), (comm, root, request, bufs(one(IN, CONTRIB, sendbuf, count, type), one(OUT, ROOT, recvbuf, count, type)))) \
  X(MPI_Iallreduce, icoll, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request), (sendbuf, recvbuf, count, type, op, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(MPI_Ireduce_scatter, icoll, LC, (const void* sendbuf, void* recvbuf, const CNT recvcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request), (sendbuf, recvbuf, recvcounts, type, op, comm, request), (comm, no_root, request, bufs(sum_of(IN, sendbuf, recvcounts, type), mine_of(recvbuf, recvcounts, type)))) \
  X(MPI_Ireduce_scatter_block, icoll, LC, (const void* sendbuf, void* recvbuf, CNT recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request), (sendbuf, recvbuf, recvcount, type, op, comm, request), (comm, no_root, request, bufs(blocks(IN, ALL, sendbuf, recvcount, type, GROUP), block_of(recvbuf, recvcount, type)))) \
  X(MPI_Iscan, icoll, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request), (sendbuf, recvbuf, count, type, op, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(MPI_Iexscan, icoll, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request), (sendbuf, recvbuf, count, type, op, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(MPI_Ineighbor_allgather, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), blocks(OUT, ALL, recvbuf, recvcount, recvtype, SOURCES)))) \
  X(MPI_Ineighbor_allgatherv, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), vbuf(OUT, ALL, recvbuf, recvcounts, displs, recvtype, SOURCES)))) \
  X(MPI_Ineighbor_alltoall, icoll, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), (comm, no_root, request, bufs(blocks(IN, ALL, sendbuf, sendcount, sendtype, DESTINATIONS), blocks(OUT, ALL, recvbuf, recvcount, recvtype, SOURCES)))) \
  X(MPI_Ineighbor_alltoallv, icoll, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request), (comm, no_root, request, bufs(vbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtype, DESTINATIONS), vbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtype, SOURCES)))) \
  X(MPI_Ineighbor_alltoallw, icoll, LC, (const void* sendbuf, const CNT sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const CNT recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request), (comm, no_root, request, bufs(wbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtypes, DESTINATIONS), wbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtypes, SOURCES))))

// --- communicators, windows, files: calls that only flush --------------------------------
#define STRATA_CALLS_FLUSH(X) \
  X(MPI_Comm_dup, flush, NO, (MPI_Comm comm, MPI_Comm* newcomm), (comm, newcomm), ()) \
  X(MPI_Comm_dup_with_info, flush, NO, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm), (comm, info, newcomm), ()) \
  X(MPI_Comm_idup, flush, NO, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request), (comm, newcomm, request), ()) \
  X(MPI_Comm_split, flush, NO, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm), (comm, color, key, newcomm), ()) \
  X(MPI_Comm_split_type, flush, NO, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm), (comm, split_type, key, info, newcomm), ()) \
  X(MPI_Comm_create, flush, NO, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm), (comm, group, newcomm), ()) \
  X(MPI_Comm_create_group, flush, NO, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm), (comm, group, tag, newcomm), ()) \
  X(MPI_Intercomm_create, flush, NO, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm* newintercomm), (local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm), ()) \
  X(MPI_Intercomm_merge, flush, NO, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm), (intercomm, high, newintracomm), ()) \
  X(MPI_Cart_create, flush, NO, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* newcomm), (comm, ndims, dims, periods, reorder, newcomm), ()) \
  X(MPI_Cart_sub, flush, NO, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm), (comm, remain_dims, newcomm), ()) \
  X(MPI_Graph_create, flush, NO, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* newcomm), (comm, nnodes, index, edges, reorder, newcomm), ()) \
  X(MPI_Dist_graph_create, flush, NO, (MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[], const int weights[], MPI_Info info, int reorder, MPI_Comm* newcomm), (comm, n, sources, degrees, destinations, weights, info, reorder, newcomm), ()) \
  X(MPI_Dist_graph_create_adjacent, flush, NO, (MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm* newcomm), (comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder, newcomm), ()) \
  X(MPI_Win_allocate, flush, NO, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win), (size, disp_unit, info, comm, baseptr, win), ()) \
  X(MPI_Win_allocate_shared, flush, NO, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win), (size, disp_unit, info, comm, baseptr, win), ()) \
  X(MPI_Win_create_dynamic, flush, NO, (MPI_Info info, MPI_Comm comm, MPI_Win* win), (info, comm, win), ()) \
  X(MPI_Win_free, flush, NO, (MPI_Win* win), (win), ()) \
  X(MPI_Win_fence, flush, NO, (int assert, MPI_Win win), (assert, win), ()) \
  X(MPI_Win_start, flush, NO, (MPI_Group group, int assert, MPI_Win win), (group, assert, win), ()) \
  X(MPI_Win_complete, flush, NO, (MPI_Win win), (win), ()) \
  X(MPI_Win_post, flush, NO, (MPI_Group group, int assert, MPI_Win win), (group, assert, win), ()) \
  X(MPI_Win_wait, flush, NO, (MPI_Win win), (win), ()) \
  X(MPI_Win_test, flush, NO, (MPI_Win win, int* flag), (win, flag), ()) \
  X(MPI_Win_lock, flush, NO, (int lock_type, int rank, int assert, MPI_Win win), (lock_type, rank, assert, win), ()) \
  X(MPI_Win_unlock, flush, NO, (int rank, MPI_Win win), (rank, win), ()) \
  X(MPI_Win_lock_all, flush, NO, (int assert, MPI_Win win), (assert, win), ()) \
  X(MPI_Win_unlock_all, flush, NO, (MPI_Win win), (win), ()) \
  X(MPI_Win_flush, flush, NO, (int rank, MPI_Win win), (rank, win), ()) \
  X(MPI_Win_flush_all, flush, NO, (MPI_Win win), (win), ()) \
  X(MPI_Win_flush_local, flush, NO, (int rank, MPI_Win win), (rank, win), ()) \
  X(MPI_Win_flush_local_all, flush, NO, (MPI_Win win), (win), ()) \
  X(MPI_Win_sync, flush, NO, (MPI_Win win), (win), ()) \
  X(MPI_File_open, flush, NO, (MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh), (comm, filename, amode, info, fh), ()) \
  X(MPI_File_close, flush, NO, (MPI_File* fh), (fh), ()) \
  X(MPI_File_sync, flush, NO, (MPI_File fh), (fh), ()) \
  X(MPI_File_set_view, flush, NO, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep, MPI_Info info), (fh, disp, etype, filetype, datarep, info), ()) \
  X(MPI_File_set_size, flush, NO, (MPI_File fh, MPI_Offset size), (fh, size), ()) \
  X(MPI_File_preallocate, flush, NO, (MPI_File fh, MPI_Offset size), (fh, size), ())

// --- one-sided ----------------------------------------------------------------------------
// Windows in GPU memory and GPU origin buffers are refused (MPI_ERR_BUFFER):
// nothing reaches the library with a device pointer.
#define STRATA_CALLS_RMA(X) \
  X(MPI_Win_create, refused, NO, (void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win), (base, size, disp_unit, info, comm, win), (on_comm(comm), bufs(bytes(INOUT, base, size)))) \
  X(MPI_Win_attach, refused, NO, (MPI_Win win, void* base, MPI_Aint size), (win, base, size), (on_win(win), bufs(bytes(INOUT, base, size)))) \
  X(MPI_Put, refused, LC, (const void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win), (on_win(win), bufs(in(origin_addr, origin_count, origin_datatype)))) \
  X(MPI_Get, refused, LC, (void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win), (on_win(win), bufs(out(origin_addr, origin_count, origin_datatype)))) \
  X(MPI_Accumulate, refused, LC, (const void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win), (on_win(win), bufs(in(origin_addr, origin_count, origin_datatype)))) \
  X(MPI_Get_accumulate, refused, LC, (const void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, void* result_addr, CNT result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win), (on_win(win), bufs(in(origin_addr, origin_count, origin_datatype), out(result_addr, result_count, result_datatype)))) \
  X(MPI_Fetch_and_op, refused, NO, (const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win), (origin_addr, result_addr, datatype, target_rank, target_disp, op, win), (on_win(win), bufs(one(IN, ALL, origin_addr, 1, datatype), one(OUT, ALL, result_addr, 1, datatype)))) \
  X(MPI_Compare_and_swap, refused, NO, (const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win), (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win), (on_win(win), bufs(one(IN, ALL, origin_addr, 1, datatype), one(IN, ALL, compare_addr, 1, datatype), one(OUT, ALL, result_addr, 1, datatype)))) \
  X(MPI_Rput, refused, LC, (const void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request), (on_win(win), bufs(in(origin_addr, origin_count, origin_datatype)))) \
  X(MPI_Rget, refused, LC, (void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request), (on_win(win), bufs(out(origin_addr, origin_count, origin_datatype)))) \
  X(MPI_Raccumulate, refused, LC, (const void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request), (on_win(win), bufs(in(origin_addr, origin_count, origin_datatype)))) \
  X(MPI_Rget_accumulate, refused, LC, (const void* origin_addr, CNT origin_count, MPI_Datatype origin_datatype, void* result_addr, CNT result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, CNT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request), (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request), (on_win(win), bufs(in(origin_addr, origin_count, origin_datatype), out(result_addr, result_count, result_datatype))))

// --- MPI-IO: the memory side of every data access is staged --------------------------------
#define STRATA_CALLS_FILE(X) \
  X(MPI_File_read, file, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_all, file, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_at, file, LC, (MPI_File fh, MPI_Offset offset, void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, offset, buf, count, type, status), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_at_all, file, LC, (MPI_File fh, MPI_Offset offset, void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, offset, buf, count, type, status), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_shared, file, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_ordered, file, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_write, file, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_all, file, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_at, file, LC, (MPI_File fh, MPI_Offset offset, const void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, offset, buf, count, type, status), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_at_all, file, LC, (MPI_File fh, MPI_Offset offset, const void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, offset, buf, count, type, status), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_shared, file, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_ordered, file, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Status* status), (fh, buf, count, type, status), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_iread, ifile, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, buf, count, type, request), (on_file(fh), request, bufs(out(buf, count, type)))) \
  X(MPI_File_iread_all, ifile, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, buf, count, type, request), (on_file(fh), request, bufs(out(buf, count, type)))) \
  X(MPI_File_iread_at, ifile, LC, (MPI_File fh, MPI_Offset offset, void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, offset, buf, count, type, request), (on_file(fh), request, bufs(out(buf, count, type)))) \
  X(MPI_File_iread_at_all, ifile, LC, (MPI_File fh, MPI_Offset offset, void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, offset, buf, count, type, request), (on_file(fh), request, bufs(out(buf, count, type)))) \
  X(MPI_File_iread_shared, ifile, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, buf, count, type, request), (on_file(fh), request, bufs(out(buf, count, type)))) \
  X(MPI_File_iwrite, ifile, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, buf, count, type, request), (on_file(fh), request, bufs(in(buf, count, type)))) \
  X(MPI_File_iwrite_all, ifile, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, buf, count, type, request), (on_file(fh), request, bufs(in(buf, count, type)))) \
  X(MPI_File_iwrite_at, ifile, LC, (MPI_File fh, MPI_Offset offset, const void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, offset, buf, count, type, request), (on_file(fh), request, bufs(in(buf, count, type)))) \
  X(MPI_File_iwrite_at_all, ifile, LC, (MPI_File fh, MPI_Offset offset, const void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, offset, buf, count, type, request), (on_file(fh), request, bufs(in(buf, count, type)))) \
  X(MPI_File_iwrite_shared, ifile, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type, MPI_Request* request), (fh, buf, count, type, request), (on_file(fh), request, bufs(in(buf, count, type)))) \
  X(MPI_File_read_all_begin, file_begin, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type), (fh, buf, count, type), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_at_all_begin, file_begin, LC, (MPI_File fh, MPI_Offset offset, void* buf, CNT count, MPI_Datatype type), (fh, offset, buf, count, type), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_read_ordered_begin, file_begin, LC, (MPI_File fh, void* buf, CNT count, MPI_Datatype type), (fh, buf, count, type), (on_file(fh), bufs(out(buf, count, type)))) \
  X(MPI_File_write_all_begin, file_begin, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type), (fh, buf, count, type), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_at_all_begin, file_begin, LC, (MPI_File fh, MPI_Offset offset, const void* buf, CNT count, MPI_Datatype type), (fh, offset, buf, count, type), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_write_ordered_begin, file_begin, LC, (MPI_File fh, const void* buf, CNT count, MPI_Datatype type), (fh, buf, count, type), (on_file(fh), bufs(in(buf, count, type)))) \
  X(MPI_File_read_all_end, file_end, NO, (MPI_File fh, void* buf, MPI_Status* status), (fh, buf, status), (on_file(fh), ref(buf))) \
  X(MPI_File_read_at_all_end, file_end, NO, (MPI_File fh, void* buf, MPI_Status* status), (fh, buf, status), (on_file(fh), ref(buf))) \
  X(MPI_File_read_ordered_end, file_end, NO, (MPI_File fh, void* buf, MPI_Status* status), (fh, buf, status), (on_file(fh), ref(buf))) \
  X(MPI_File_write_all_end, file_end, NO, (MPI_File fh, const void* buf, MPI_Status* status), (fh, buf, status), (on_file(fh), ref(buf))) \
  X(MPI_File_write_at_all_end, file_end, NO, (MPI_File fh, const void* buf, MPI_Status* status), (fh, buf, status), (on_file(fh), ref(buf))) \
  X(MPI_File_write_ordered_end, file_end, NO, (MPI_File fh, const void* buf, MPI_Status* status), (fh, buf, status), (on_file(fh), ref(buf)))

// --- MPI-4.0 (MPICH 4, Open MPI 5) ----------------------------------------------------------
#define STRATA_CALLS_MPI4_LIST(X) \
  X(MPI_Isendrecv, isendrecv, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request), (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request), (in(sendbuf, sendcount, sendtype), peer(dest), out(recvbuf, recvcount, recvtype), peer(source), comm, request)) \
  X(MPI_Isendrecv_replace, isendrecv_replace, LC, (void* buf, CNT count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request* request), (buf, count, type, dest, sendtag, source, recvtag, comm, request), (inout(buf, count, type), peer(dest), peer(source), comm, request)) \
  X(MPI_Psend_init, refused, NO, (const void* buf, int partitions, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request), (buf, partitions, count, type, dest, tag, comm, info, request), (on_comm(comm), bufs(one(IN, ALL, buf, static_cast<MPI_Count>(partitions) * count, type)))) \
  X(MPI_Precv_init, refused, NO, (void* buf, int partitions, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request), (buf, partitions, count, type, source, tag, comm, info, request), (on_comm(comm), bufs(one(OUT, ALL, buf, static_cast<MPI_Count>(partitions) * count, type)))) \
  X(MPI_Comm_idup_with_info, flush, NO, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request), (comm, info, newcomm, request), ()) \
  STRATA_CALLS_COLL_INIT(MPI, X)
#if MPI_VERSION >= 4
#define STRATA_CALLS_MPI4(X) STRATA_CALLS_MPI4_LIST(X)
#else
#define STRATA_CALLS_MPI4(X)
#endif

// Persistent collectives: MPI-4's MPI_*_init, and the same calls as
// MPIX_*_init in Open MPI 4.1's pcollreq extension. `P` is the prefix.
#define STRATA_CALLS_COLL_INIT(P, X) \
  X(P##_Barrier_init, flush, NO, (MPI_Comm comm, MPI_Info info, MPI_Request* request), (comm, info, request), ()) \
  X(P##_Bcast_init, coll_init, LC, (void* buffer, CNT count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request), (buffer, count, type, root, comm, info, request), (comm, root, request, bufs(one(BCAST, ALL, buffer, count, type)))) \
  X(P##_Gather_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request), (comm, root, request, bufs(one(IN, CONTRIB, sendbuf, sendcount, sendtype), blocks(OUT, ROOT, recvbuf, recvcount, recvtype, GROUP)))) \
  X(P##_Gatherv_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info, request), (comm, root, request, bufs(one(IN, CONTRIB, sendbuf, sendcount, sendtype), vbuf(OUT, ROOT, recvbuf, recvcounts, displs, recvtype, GROUP)))) \
  X(P##_Scatter_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request), (comm, root, request, bufs(blocks(IN, ROOT, sendbuf, sendcount, sendtype, GROUP), one(OUT, CONTRIB, recvbuf, recvcount, recvtype)))) \
  X(P##_Scatterv_init, coll_init, LC, (const void* sendbuf, const CNT sendcounts[], const DSP displs[], MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request), (comm, root, request, bufs(vbuf(IN, ROOT, sendbuf, sendcounts, displs, sendtype, GROUP), one(OUT, CONTRIB, recvbuf, recvcount, recvtype)))) \
  X(P##_Allgather_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), blocks(OUT, ALL, recvbuf, recvcount, recvtype, GROUP)))) \
  X(P##_Allgatherv_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), vbuf(OUT, ALL, recvbuf, recvcounts, displs, recvtype, GROUP)))) \
  X(P##_Alltoall_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request), (comm, no_root, request, bufs(blocks(IN, ALL, sendbuf, sendcount, sendtype, GROUP), blocks(OUT, ALL, recvbuf, recvcount, recvtype, GROUP)))) \
  X(P##_Alltoallv_init, coll_init, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request), (comm, no_root, request, bufs(vbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtype, GROUP), vbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtype, GROUP)))) \
  X(P##_Alltoallw_init, coll_init, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const CNT recvcounts[], const DSP rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request), (comm, no_root, request, bufs(wbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtypes, GROUP), wbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtypes, GROUP)))) \
  X(P##_Reduce_init, coll_init, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, recvbuf, count, type, op, root, comm, info, request), (comm, root, request, bufs(one(IN, CONTRIB, sendbuf, count, type), one(OUT, ROOT, recvbuf, count, type)))) \
  X(P##_Allreduce_init, coll_init, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, recvbuf, count, type, op, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(P##_Reduce_scatter_init, coll_init, LC, (const void* sendbuf, void* recvbuf, const CNT recvcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, recvbuf, recvcounts, type, op, comm, info, request), (comm, no_root, request, bufs(sum_of(IN, sendbuf, recvcounts, type), mine_of(recvbuf, recvcounts, type)))) \
  X(P##_Reduce_scatter_block_init, coll_init, LC, (const void* sendbuf, void* recvbuf, CNT recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, recvbuf, recvcount, type, op, comm, info, request), (comm, no_root, request, bufs(blocks(IN, ALL, sendbuf, recvcount, type, GROUP), block_of(recvbuf, recvcount, type)))) \
  X(P##_Scan_init, coll_init, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, recvbuf, count, type, op, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(P##_Exscan_init, coll_init, LC, (const void* sendbuf, void* recvbuf, CNT count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, recvbuf, count, type, op, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type)))) \
  X(P##_Neighbor_allgather_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), blocks(OUT, ALL, recvbuf, recvcount, recvtype, SOURCES)))) \
  X(P##_Neighbor_allgatherv_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request), (comm, no_root, request, bufs(one(IN, ALL, sendbuf, sendcount, sendtype), vbuf(OUT, ALL, recvbuf, recvcounts, displs, recvtype, SOURCES)))) \
  X(P##_Neighbor_alltoall_init, coll_init, LC, (const void* sendbuf, CNT sendcount, MPI_Datatype sendtype, void* recvbuf, CNT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request), (comm, no_root, request, bufs(blocks(IN, ALL, sendbuf, sendcount, sendtype, DESTINATIONS), blocks(OUT, ALL, recvbuf, recvcount, recvtype, SOURCES)))) \
  X(P##_Neighbor_alltoallv_init, coll_init, LC, (const void* sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, void* recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request), (comm, no_root, request, bufs(vbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtype, DESTINATIONS), vbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtype, SOURCES)))) \
  X(P##_Neighbor_alltoallw_init, coll_init, LC, (const void* sendbuf, const CNT sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const CNT recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request), (comm, no_root, request, bufs(wbuf(IN, ALL, sendbuf, sendcounts, sdispls, sendtypes, DESTINATIONS), wbuf(OUT, ALL, recvbuf, recvcounts, rdispls, recvtypes, SOURCES))))

// Open MPI 4.1's persistent collectives (the pcollreq extension).
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ && MPI_VERSION < 4
#define STRATA_CALLS_MPIX_PCOLL(X) STRATA_CALLS_COLL_INIT(MPIX, X)
#else
#define STRATA_CALLS_MPIX_PCOLL(X)
#endif

// Every call, in the order of the sections above.
#define STRATA_MPI_CALLS(X) \
  STRATA_CALLS_SETUP(X) \
  STRATA_CALLS_P2P(X) \
  STRATA_CALLS_COMPLETION(X) \
  STRATA_CALLS_COLL(X) \
  STRATA_CALLS_ICOLL(X) \
  STRATA_CALLS_FLUSH(X) \
  STRATA_CALLS_RMA(X) \
  STRATA_CALLS_FILE(X) \
  STRATA_CALLS_MPI4(X) \
  STRATA_CALLS_MPIX_PCOLL(X)

// Every call of every MPI the table serves, for the documentation:
// D(section, fn, kind, lc) with section 0 for every MPI, 1 for MPI-4 only,
// 2 for Open MPI 4.1's MPIX extension.
#define STRATA_DOC_ALL(fn, kind, lc, params, args, roles) STRATA_DOC(0, fn, kind, lc)
#define STRATA_DOC_MPI4(fn, kind, lc, params, args, roles) STRATA_DOC(1, fn, kind, lc)
#define STRATA_DOC_MPIX(fn, kind, lc, params, args, roles) STRATA_DOC(2, fn, kind, lc)
#define STRATA_DOCUMENTED_CALLS \
  STRATA_CALLS_SETUP(STRATA_DOC_ALL) \
  STRATA_CALLS_P2P(STRATA_DOC_ALL) \
  STRATA_CALLS_COMPLETION(STRATA_DOC_ALL) \
  STRATA_CALLS_COLL(STRATA_DOC_ALL) \
  STRATA_CALLS_ICOLL(STRATA_DOC_ALL) \
  STRATA_CALLS_FLUSH(STRATA_DOC_ALL) \
  STRATA_CALLS_RMA(STRATA_DOC_ALL) \
  STRATA_CALLS_FILE(STRATA_DOC_ALL) \
  STRATA_CALLS_MPI4_LIST(STRATA_DOC_MPI4) \
  STRATA_CALLS_COLL_INIT(MPIX, STRATA_DOC_MPIX)

// clang-format on

// Large-count forms: with an MPI-4 library every LC line also stands for
// fn_c, whose kind is the same but for the `routed` and `special`
// collectives, which are staged (`coll`) in their large-count form. Consumers expand the
// table through mpi/calls/each_call.inc, which defines CNT and DSP.
#if MPI_VERSION >= 4
#define STRATA_LARGE_COUNT_LC(X, fn, kind, params, args, roles) \
  STRATA_CALL_APPLY(X, fn##_c, STRATA_LARGE_COUNT_KIND_##kind, NO, params, args, roles)
#else
#define STRATA_LARGE_COUNT_LC(X, fn, kind, params, args, roles)
#endif
#define STRATA_LARGE_COUNT_NO(X, fn, kind, params, args, roles)
#define STRATA_CALL_APPLY(X, ...) X(__VA_ARGS__)  // expands the kind before X pastes it
#define STRATA_LARGE_COUNT_KIND_special coll
#define STRATA_LARGE_COUNT_KIND_routed coll
#define STRATA_LARGE_COUNT_KIND_packed coll
#define STRATA_LARGE_COUNT_KIND_send send
#define STRATA_LARGE_COUNT_KIND_isend isend
#define STRATA_LARGE_COUNT_KIND_send_init send_init
#define STRATA_LARGE_COUNT_KIND_recv recv
#define STRATA_LARGE_COUNT_KIND_irecv irecv
#define STRATA_LARGE_COUNT_KIND_recv_init recv_init
#define STRATA_LARGE_COUNT_KIND_mrecv mrecv
#define STRATA_LARGE_COUNT_KIND_imrecv imrecv
#define STRATA_LARGE_COUNT_KIND_sendrecv sendrecv
#define STRATA_LARGE_COUNT_KIND_sendrecv_replace sendrecv_replace
#define STRATA_LARGE_COUNT_KIND_isendrecv isendrecv
#define STRATA_LARGE_COUNT_KIND_isendrecv_replace isendrecv_replace
#define STRATA_LARGE_COUNT_KIND_coll coll
#define STRATA_LARGE_COUNT_KIND_icoll icoll
#define STRATA_LARGE_COUNT_KIND_coll_init coll_init
#define STRATA_LARGE_COUNT_KIND_local local
#define STRATA_LARGE_COUNT_KIND_refused refused
#define STRATA_LARGE_COUNT_KIND_file file
#define STRATA_LARGE_COUNT_KIND_ifile ifile
#define STRATA_LARGE_COUNT_KIND_file_begin file_begin
#define STRATA_EACH_LARGE_COUNT(fn, kind, lc, params, args, roles) \
  STRATA_LARGE_COUNT_##lc(STRATA_CALL, fn, kind, params, args, roles)
