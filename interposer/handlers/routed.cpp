#include "interposer/handlers/routed.hpp"

#include <strata/collectives.hpp>

#include "collectives/job_facts.hpp"
#include "collectives/routing.hpp"
#include "collectives/run.hpp"
#include "fault/hooks.hpp"
#include "interposer/transfer/contiguous_view.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/staged_call.hpp"
#include "interposer/types/fast_types.hpp"
#include "mpi/error_class.hpp"
#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <cstdint>

namespace strata::interposer::routed {

using mpi::real;

namespace {

using coll::Collective;
using coll::DataType;
using coll::Decision;
using coll::ReduceOp;
using coll::Route;

// Predefined types Strata's collectives reduce.
bool reduction_type(MPI_Datatype t, DataType* out) {
  int size = 0;
  if (t == MPI_FLOAT) {
    *out = DataType::float32;
  } else if (t == MPI_DOUBLE) {
    *out = DataType::float64;
  } else if (t == MPI_INT32_T || t == MPI_INT || t == MPI_INT64_T || t == MPI_LONG || t == MPI_LONG_LONG) {
    if (real().MPI_Type_size(t, &size) != MPI_SUCCESS || (size != 4 && size != 8)) return false;
    *out = size == 4 ? DataType::int32 : DataType::int64;
#ifdef MPIX_C_FLOAT16
  } else if (t == MPIX_C_FLOAT16) {
    *out = DataType::float16;
#endif
  } else {
    return false;
  }
  return true;
}

bool reduction_op(MPI_Op op, ReduceOp* out) {
  if (op == MPI_SUM) {
    *out = ReduceOp::sum;
  } else if (op == MPI_PROD) {
    *out = ReduceOp::prod;
  } else if (op == MPI_MIN) {
    *out = ReduceOp::min;
  } else if (op == MPI_MAX) {
    *out = ReduceOp::max;
  } else {
    return false;
  }
  return true;
}

// Bytes moved as they are (broadcast, allgather): in 4- or 2-byte words by
// the size of the type signature alone, which every rank shares.
bool words_of(int64_t bytes, DataType* type, size_t* words) {
  if (bytes < 0) return false;
  if (bytes % 4 == 0) {
    *type = DataType::int32;
    *words = static_cast<size_t>(bytes / 4);
  } else if (bytes % 2 == 0) {
    *type = DataType::float16;  // only moved, never reduced
    *words = static_cast<size_t>(bytes / 2);
  } else {
    return false;
  }
  return true;
}

// Host buffers on a communicator where no Strata collective can run: the
// library's call with nothing asked (the same answer decide() gives, from
// the same facts, without a lock). MPI_COMM_NULL too, whatever the
// buffers: the library reports its own error (it checks the communicator
// before it reads a buffer).
bool quick_library(const LibraryRoute& library, MPI_Comm comm) {
  return comm == MPI_COMM_NULL || (coll::surely_library_only(comm) && StagedCall::all_host_at_a_glance(library.bufs));
}

// What decide() is asked about a call: from what MPI requires alike on
// every rank (the type signature's size; for reductions the datatype and
// op, the same everywhere).
struct Shape {
  Collective collective;
  int64_t bytes = 0;
  bool mappable = false;
  DataType type{};
  ReduceOp op{};
  size_t words = 0;  // broadcast, allgather: words of `type` moved (a block's)
};

Shape reduction(Collective c, int count, MPI_Datatype type, MPI_Op op, int64_t bytes) {
  Shape s{c, bytes};
  s.mappable = count >= 0 && reduction_type(type, &s.type) && reduction_op(op, &s.op);
  return s;
}
Shape allreduce_shape(int count, MPI_Datatype type, MPI_Op op) {
  return reduction(Collective::allreduce, count, type, op, signature_bytes(type, count));
}
Shape reduce_scatter_shape(int recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return reduction(Collective::reduce_scatter, recvcount, type, op, signature_bytes(type, recvcount) * mpi::size(comm));
}
Shape reduce_shape(int count, MPI_Datatype type, MPI_Op op) {
  return reduction(Collective::reduce, count, type, op, signature_bytes(type, count));
}
Shape bcast_shape(int count, MPI_Datatype type) {
  Shape s{Collective::broadcast, signature_bytes(type, count)};
  s.mappable = words_of(s.bytes, &s.type, &s.words);
  return s;
}
Shape allgather_shape(int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const int64_t block = signature_bytes(recvtype, recvcount);  // every rank's block, as its receive type says
  Shape s{Collective::allgather, block * mpi::size(comm)};
  s.mappable = words_of(block, &s.type, &s.words);
  return s;
}

// A call on host buffers (the caller knows), on a communicator not left to
// the library, that goes to the library without decide(): a GPU job's
// between two agreements (routing.hpp, library_between_agreements), and
// MPI_COMM_NULL (the library reports it). `shape_of` is asked only past
// that (it may ask the library for the communicator's size).
template <class ShapeOf>
bool between_agreements(MPI_Comm comm, const ShapeOf& shape_of) {
  if (comm == MPI_COMM_NULL) return true;
  const Shape s = shape_of();
  return s.mappable && coll::library_between_agreements(s.collective, comm, static_cast<size_t>(s.bytes));
}

// The decision, or the library route when it could not be made.
Result<Decision> route_of(const LibraryRoute& library, const Shape& s, MPI_Comm comm,
                          std::initializer_list<const void*> buffers) {
  if (StagedCall::all_host_at_a_glance(library.bufs) &&
      (coll::surely_library_only(comm) || between_agreements(comm, [&] { return s; }))) {
    return Decision{};
  }
  return coll::decide(s.collective, comm, static_cast<size_t>(s.bytes), s.mappable, coll::on_current_device(buffers));
}

// After a Strata route ran: device work complete (MPI's blocking semantics).
int finished(const Decision& d, Status s, MPI_Comm comm, const char* name) {
  if (s == Status::ok && d.route == Route::nccl) s = gpu::stream_synchronize(nullptr);
  if (s != Status::ok) return raise_error(comm, mpi::error_class(s), name);
  counters().collectives_by_strata.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

}  // namespace

int64_t signature_bytes(MPI_Datatype t, int64_t count) noexcept {
  if (count <= 0) return 0;
  const ShapeAndSize known = fast_shape_and_size(t);  // the type table first: no library call
  if (known.size != 0) return static_cast<int64_t>(known.size) * count;
  int size = 0;
  if (real().MPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<int64_t>(size) * count;
}

int MPI_Allreduce(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                  MPI_Op op, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::allreduce, comm, count, type);
  if (quick_library(library, comm)) return library.library();
  const Shape s = allreduce_shape(count, type, op);
  Result<Decision> d = route_of(library, s, comm, {sendbuf, recvbuf});
  if (!d) return raise_error(comm, mpi::error_class(d.status()), "MPI_Allreduce");
  if (d.value().route == Route::library) return library();
  return finished(d.value(),
                  coll::run_allreduce(d.value(), sendbuf, recvbuf, static_cast<size_t>(count), s.type, s.op, nullptr),
                  comm, "MPI_Allreduce");
}

int MPI_Reduce_scatter_block(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::reduce_scatter, comm, recvcount, type);
  if (quick_library(library, comm)) return library.library();
  const Shape s = reduce_scatter_shape(recvcount, type, op, comm);
  Result<Decision> d = route_of(library, s, comm, {sendbuf, recvbuf});
  if (!d) return raise_error(comm, mpi::error_class(d.status()), "MPI_Reduce_scatter_block");
  if (d.value().route == Route::library) return library();
  return finished(
      d.value(),
      coll::run_reduce_scatter(d.value(), sendbuf, recvbuf, static_cast<size_t>(recvcount), s.type, s.op, nullptr),
      comm, "MPI_Reduce_scatter_block");
}

int MPI_Reduce(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::reduce, comm, count, type, root);
  if (quick_library(library, comm)) return library.library();
  const Shape s = reduce_shape(count, type, op);
  const bool is_root = mpi::rank(comm) == root;
  Result<Decision> d = route_of(library, s, comm, {sendbuf, is_root ? recvbuf : nullptr});
  if (!d) return raise_error(comm, mpi::error_class(d.status()), "MPI_Reduce");
  if (d.value().route == Route::library) return library();
  return finished(
      d.value(), coll::run_reduce(d.value(), sendbuf, recvbuf, static_cast<size_t>(count), s.type, s.op, root, nullptr),
      comm, "MPI_Reduce");
}

int MPI_Bcast(const LibraryRoute& library, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::bcast, comm, count, type, root);
  if (quick_library(library, comm)) return library.library();
  const Shape s = bcast_shape(count, type);
  Result<Decision> d = route_of(library, s, comm, {buffer});
  if (!d) return raise_error(comm, mpi::error_class(d.status()), "MPI_Bcast");
  if (d.value().route == Route::library) return library();
  const bool is_root = mpi::rank(comm) == root;
  ContiguousView data;
  if (int rc = data.open(buffer, count, type, is_root); rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Bcast");
  const int rc = finished(d.value(), coll::run_broadcast(d.value(), data.data(), s.words, s.type, root, nullptr), comm,
                          "MPI_Bcast");
  if (rc != MPI_SUCCESS || is_root) return rc;
  const int out = data.flush();
  return out == MPI_SUCCESS ? MPI_SUCCESS : raise_error(comm, out, "MPI_Bcast");
}

int MPI_Allgather(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::allgather, comm, sendcount, sendtype);
  if (quick_library(library, comm)) return library.library();
  const int size = mpi::size(comm);
  const Shape s = allgather_shape(recvcount, recvtype, comm);
  Result<Decision> d = route_of(library, s, comm, {sendbuf, recvbuf});
  if (!d) return raise_error(comm, mpi::error_class(d.status()), "MPI_Allgather");
  if (d.value().route == Route::library) return library();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  ContiguousView in, out;
  int rc = MPI_SUCCESS;
  if (!in_place) rc = in.open(const_cast<void*>(sendbuf), sendcount, sendtype, true);
  if (rc == MPI_SUCCESS) rc = out.open(recvbuf, static_cast<int64_t>(recvcount) * size, recvtype, in_place);
  if (rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Allgather");
  rc = finished(
      d.value(),
      coll::run_allgather(d.value(), in_place ? MPI_IN_PLACE : in.data(), out.data(), s.words, s.type, nullptr), comm,
      "MPI_Allgather");
  if (rc != MPI_SUCCESS) return rc;
  const int flushed = out.flush();
  return flushed == MPI_SUCCESS ? MPI_SUCCESS : raise_error(comm, flushed, "MPI_Allgather");
}

bool Passes<calls::Id::MPI_Allreduce>::test(const void*, void*, int count, MPI_Datatype type, MPI_Op op,
                                            MPI_Comm comm) noexcept {
  return between_agreements(comm, [&] { return allreduce_shape(count, type, op); });
}
bool Passes<calls::Id::MPI_Reduce_scatter_block>::test(const void*, void*, int recvcount, MPI_Datatype type, MPI_Op op,
                                                       MPI_Comm comm) noexcept {
  return between_agreements(comm, [&] { return reduce_scatter_shape(recvcount, type, op, comm); });
}
bool Passes<calls::Id::MPI_Reduce>::test(const void*, void*, int count, MPI_Datatype type, MPI_Op op, int,
                                         MPI_Comm comm) noexcept {
  return between_agreements(comm, [&] { return reduce_shape(count, type, op); });
}
bool Passes<calls::Id::MPI_Bcast>::test(void*, int count, MPI_Datatype type, int, MPI_Comm comm) noexcept {
  return between_agreements(comm, [&] { return bcast_shape(count, type); });
}
bool Passes<calls::Id::MPI_Allgather>::test(const void*, int, MPI_Datatype, void*, int recvcount, MPI_Datatype recvtype,
                                            MPI_Comm comm) noexcept {
  return between_agreements(comm, [&] { return allgather_shape(recvcount, recvtype, comm); });
}

}  // namespace strata::interposer::routed
