#include "interposer/transfer/collective_calls.hpp"

#include <strata/collectives.hpp>
#include <strata/datatype.hpp>

#include "base/log.hpp"
#include "fault/hooks.hpp"
#include "interposer/mpi/gpu_awareness.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/sides.hpp"
#include "portability/gpu/host_mirror.hpp"

#include <cstdint>

namespace strata::interposer {
namespace {

using coll::Collective;
using coll::DataType;
using coll::ReduceOp;
using mpi::real;

bool on_device(const void* p) { return p != MPI_IN_PLACE && gpu::is_device_memory(p); }

// Predefined types Strata's collectives reduce.
bool reduction_type(MPI_Datatype t, DataType* out) {
  int size = 0;
  if (t == MPI_FLOAT) {
    *out = DataType::float32;
  } else if (t == MPI_DOUBLE) {
    *out = DataType::float64;
  } else if (t == MPI_INT32_T || t == MPI_INT || t == MPI_INT64_T || t == MPI_LONG || t == MPI_LONG_LONG) {
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || (size != 4 && size != 8)) return false;
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

// Contiguous data moved without being looked at (broadcast, allgather): as
// its own type when Strata knows it, else as 4- or 2-byte words.
bool moved_as(MPI_Datatype t, int count, DataType* type, size_t* elements) {
  if (count < 0) return false;
  if (reduction_type(t, type)) {
    *elements = static_cast<size_t>(count);
    return true;
  }
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS) {
    return false;
  }
  if (lb != 0 || true_lb != 0 || extent != size || true_extent != size) return false;  // holes
  const size_t bytes = static_cast<size_t>(size) * static_cast<size_t>(count);
  if (bytes % 4 == 0) {
    *type = DataType::int32;
    *elements = bytes / 4;
  } else if (bytes % 2 == 0) {
    *type = DataType::float16;  // only moved, never reduced
    *elements = bytes / 2;
  } else {
    return false;
  }
  return true;
}

int mpi_class(Status s) { return s == Status::out_of_memory ? MPI_ERR_NO_MEM : MPI_ERR_OTHER; }

// Host buffers: Strata's algorithms only where a hierarchical one is chosen
// (the cost model, or STRATA_COLL_ALGO); flat host collectives are the
// library's business. Communicators under 4 ranks have no hierarchy worth
// the context.
bool host_prefers_strata(Collective c, size_t bytes, MPI_Comm comm) {
  int size = 0;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 4) return false;
  Result<coll::Algorithm> a = coll::chosen_algorithm(c, bytes, false, comm);
  return a && (a.value() == coll::Algorithm::hierarchical || a.value() == coll::Algorithm::two_level);
}

// The library on host copies of the spans of a call's device buffers.
class SpanMirror {
 public:
  Status open(const void* buf, int64_t count, MPI_Datatype type, bool read) {
    if (buf == MPI_IN_PLACE || buf == nullptr || count <= 0) {
      host_ = const_cast<void*>(buf);
      return Status::ok;
    }
    Result<TypeLayout> layout = measure_datatype(type);
    if (!layout) return layout.status();
    const Span span = span_of(layout.value(), count);
    char* first = static_cast<char*>(const_cast<void*>(buf)) + span.lo;
    STRATA_TRY(mirror_.open(first, static_cast<size_t>(span.hi - span.lo), read, nullptr));
    host_ = mirror_.data() - span.lo;
    return Status::ok;
  }
  void* host() const { return host_; }
  Status flush() { return mirror_.flush(nullptr); }

 private:
  gpu::HostMirror mirror_;
  void* host_ = nullptr;
};

// One routed call: Strata's collective where it applies, else the library
// (device buffers on host copies when it takes no GPU memory).
template <class StrataCall, class LibraryCall, class StagedCall>
int route(const char* name, MPI_Comm comm, Collective c, bool device, bool mapped, size_t bytes, StrataCall strata,
          LibraryCall library, StagedCall staged) {
  if (mapped && comm != MPI_COMM_NULL && (device || host_prefers_strata(c, bytes, comm))) {
    Status s = strata();
    if (s == Status::ok && device) s = gpu::stream_synchronize(nullptr);
    if (s == Status::ok) {
      counters().collectives_by_strata.fetch_add(1, std::memory_order_relaxed);
      return MPI_SUCCESS;
    }
    if (s != Status::not_supported) return raise_error(comm, mpi_class(s), name);
  }
  if (!device || mpi::library_is_gpu_aware()) return library();
  counters().collectives_staged.fetch_add(1, std::memory_order_relaxed);
  return staged();
}

size_t type_bytes(MPI_Datatype t, int count) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<size_t>(size) * static_cast<size_t>(count);
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_size(comm, &size) == MPI_SUCCESS ? size : 0;
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS ? rank : -1;
}

// The library on the mirrors, then `out` written back to the device.
template <class Call>
int staged_call(MPI_Comm comm, const char* name, SpanMirror& out, bool write_back, Call call) {
  const int rc = call();
  if (rc != MPI_SUCCESS || !write_back) return rc;
  const Status s = out.flush();
  return s == Status::ok ? MPI_SUCCESS : raise_error(comm, mpi_class(s), name);
}

}  // namespace

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::allreduce, comm, count, type);
  DataType t{};
  ReduceOp o{};
  const bool mapped = count >= 0 && reduction_type(type, &t) && reduction_op(op, &o);
  const bool device = on_device(sendbuf) || on_device(recvbuf);
  return route(
      "MPI_Allreduce", comm, Collective::allreduce, device, mapped, type_bytes(type, count),
      [&] { return coll::allreduce(sendbuf, recvbuf, static_cast<size_t>(count), t, o, comm); },
      [&] { return real().MPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); },
      [&] {
        SpanMirror in, out;
        Status s = in.open(sendbuf, count, type, true);
        if (s == Status::ok) s = out.open(recvbuf, count, type, true);
        if (s != Status::ok) return raise_error(comm, mpi_class(s), "MPI_Allreduce");
        return staged_call(comm, "MPI_Allreduce", out, true,
                           [&] { return real().MPI_Allreduce(in.host(), out.host(), count, type, op, comm); });
      });
}

int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::reduce_scatter, comm, recvcount, type);
  DataType t{};
  ReduceOp o{};
  const bool mapped = recvcount >= 0 && reduction_type(type, &t) && reduction_op(op, &o);
  const bool device = on_device(sendbuf) || on_device(recvbuf);
  const int size = comm_size(comm);
  const int64_t full = static_cast<int64_t>(recvcount) * size;
  return route(
      "MPI_Reduce_scatter_block", comm, Collective::reduce_scatter, device, mapped,
      type_bytes(type, recvcount) * static_cast<size_t>(size),
      [&] { return coll::reduce_scatter(sendbuf, recvbuf, static_cast<size_t>(recvcount), t, o, comm); },
      [&] { return real().MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); },
      [&] {
        SpanMirror in, out;
        Status s = in.open(sendbuf, full, type, true);
        if (s == Status::ok) s = out.open(recvbuf, sendbuf == MPI_IN_PLACE ? full : recvcount, type, true);
        if (s != Status::ok) return raise_error(comm, mpi_class(s), "MPI_Reduce_scatter_block");
        return staged_call(comm, "MPI_Reduce_scatter_block", out, true, [&] {
          return real().MPI_Reduce_scatter_block(in.host(), out.host(), recvcount, type, op, comm);
        });
      });
}

int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::allgather, comm, sendcount, sendtype);
  DataType t{};
  size_t elements = 0;
  bool mapped = recvcount >= 0 && moved_as(recvtype, recvcount, &t, &elements);
  if (mapped && sendbuf != MPI_IN_PLACE) {
    DataType send_t{};
    size_t send_elements = 0;
    mapped = moved_as(sendtype, sendcount, &send_t, &send_elements) && send_t == t && send_elements == elements;
  }
  const bool device = on_device(sendbuf) || on_device(recvbuf);
  const int size = comm_size(comm);
  return route(
      "MPI_Allgather", comm, Collective::allgather, device, mapped,
      type_bytes(recvtype, recvcount) * static_cast<size_t>(size),
      [&] { return coll::allgather(sendbuf, recvbuf, elements, t, comm); },
      [&] { return real().MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); },
      [&] {
        SpanMirror in, out;
        Status s = in.open(sendbuf, sendcount, sendtype, true);
        if (s == Status::ok) s = out.open(recvbuf, static_cast<int64_t>(recvcount) * size, recvtype, true);
        if (s != Status::ok) return raise_error(comm, mpi_class(s), "MPI_Allgather");
        return staged_call(comm, "MPI_Allgather", out, true, [&] {
          return real().MPI_Allgather(in.host(), sendcount, sendtype, out.host(), recvcount, recvtype, comm);
        });
      });
}

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::bcast, comm, count, type, root);
  DataType t{};
  size_t elements = 0;
  const bool mapped = moved_as(type, count, &t, &elements);
  const bool device = on_device(buffer);
  return route(
      "MPI_Bcast", comm, Collective::broadcast, device, mapped, type_bytes(type, count),
      [&] { return coll::broadcast(buffer, elements, t, root, comm); },
      [&] { return real().MPI_Bcast(buffer, count, type, root, comm); },
      [&] {
        SpanMirror data;
        const Status s = data.open(buffer, count, type, true);  // every rank: the gaps go back too
        if (s != Status::ok) return raise_error(comm, mpi_class(s), "MPI_Bcast");
        return staged_call(comm, "MPI_Bcast", data, comm_rank(comm) != root,
                           [&] { return real().MPI_Bcast(data.host(), count, type, root, comm); });
      });
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::reduce, comm, count, type, root);
  DataType t{};
  ReduceOp o{};
  const bool mapped = count >= 0 && reduction_type(type, &t) && reduction_op(op, &o);
  const bool is_root = comm_rank(comm) == root;
  const bool device = on_device(sendbuf) || (is_root && on_device(recvbuf));
  return route(
      "MPI_Reduce", comm, Collective::reduce, device, mapped, type_bytes(type, count),
      [&] { return coll::reduce(sendbuf, recvbuf, static_cast<size_t>(count), t, o, root, comm); },
      [&] { return real().MPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); },
      [&] {
        SpanMirror in, out;
        Status s = in.open(sendbuf, count, type, true);
        if (s == Status::ok && is_root) s = out.open(recvbuf, count, type, true);
        if (s != Status::ok) return raise_error(comm, mpi_class(s), "MPI_Reduce");
        return staged_call(comm, "MPI_Reduce", out, is_root, [&] {
          return real().MPI_Reduce(in.host(), is_root ? out.host() : recvbuf, count, type, op, root, comm);
        });
      });
}

}  // namespace strata::interposer
