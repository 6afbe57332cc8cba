// strata::kokkos::isend / irecv of a View's packed bytes (strata/kokkos.hpp).
//
// Where the bytes MPI sees live:
//   contiguous View, MPI may read its memory  -> the View itself
//   contiguous View, device memory, MPI not GPU-aware -> a host staging copy
//   non-contiguous -> packed on the space into a temporary in the space's
//     memory; that temporary, or a host staging copy of it when MPI may not
//     read the space's memory.
// Host staging is the device data mover's (portability/mover/staging.hpp):
// pooled, pinned where a device runtime is there, shared with the
// interposer and the collectives.
// A send is packed (and staged) and the space fenced before MPI_Isend; a
// receive lands in the temporary and is copied in and unpacked on the space
// when the request completes, before wait() returns.
#include "portability/kokkos/compat.hpp"
#include "portability/kokkos/mpi_path.hpp"
#include "portability/kokkos/request_state.hpp"
#include "portability/kokkos/spaces.hpp"

#include "base/log.hpp"
#include "portability/mover/staging.hpp"

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

namespace strata::kokkos {
namespace detail {
namespace {

template <class ExecSpace>
using SpaceBytes = Kokkos::View<char*, typename ExecSpace::memory_space>;
template <class ExecSpace>
using UserBytes = Kokkos::View<char*, typename ExecSpace::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostBytes = Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class V>
V allocate(const char* label, int64_t bytes) {
  return V(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), static_cast<size_t>(bytes));
}

template <class V>
std::shared_ptr<const void> hold(const V& v) {
  return std::make_shared<const V>(v);
}

// `bytes` of host staging from the mover's pools, back to them when the
// last holder (the request) lets go. No memory: bad_alloc, as a failed
// Kokkos allocation (start() reports it).
std::shared_ptr<mover::Staging> host_staging(int64_t bytes) {
  auto staging = std::make_shared<mover::Staging>(mover::Staging::pinned_or_host(bytes));
  if (!*staging) throw std::bad_alloc();
  return staging;
}

HostBytes host_bytes(const mover::Staging& staging, int64_t bytes) {
  return HostBytes(staging.data(), static_cast<size_t>(bytes));
}

template <class ExecSpace>
Status send_impl(const ExecSpace& space, const Buffer& buffer, int dest, int tag, MPI_Comm comm,
                 const CommOptions& options, RequestState* st) {
  const StridedBlock& layout = buffer.layout;
  const int64_t bytes = layout.packed_bytes();
  char* user = static_cast<char*>(buffer.base);
  using Mem = typename ExecSpace::memory_space;
  char* wire = nullptr;
  if (bytes == 0) {
    // an empty message still matches the receive
  } else if (layout.contiguous()) {
    char* data = user + layout.offset;
    if (mpi_reads_in_place<ExecSpace>(buffer.host_accessible, options)) {
      space.fence();  // work queued on the space may still write the View
      wire = data;
    } else {
      std::shared_ptr<mover::Staging> staging = host_staging(bytes);
      Kokkos::deep_copy(space, host_bytes(*staging, bytes), UserBytes<ExecSpace>(data, static_cast<size_t>(bytes)));
      space.fence();
      st->keep.push_back(staging);
      wire = staging->data();
    }
  } else {
    SpaceBytes<ExecSpace> packed = allocate<SpaceBytes<ExecSpace>>("strata::kokkos::packed", bytes);
    STRATA_TRY(pack(space, layout, user, packed.data(), PackOptions{options.kernel}));
    if (mpi_reads_in_place<ExecSpace>(host_readable<Mem>(), options)) {
      space.fence();
      st->keep.push_back(hold(packed));
      wire = packed.data();
    } else {
      std::shared_ptr<mover::Staging> staging = host_staging(bytes);
      Kokkos::deep_copy(space, host_bytes(*staging, bytes), packed);
      space.fence();
      st->keep.push_back(staging);
      wire = staging->data();
    }
  }
  return post_pieces(true, wire, bytes, dest, tag, comm, st);
}

template <class ExecSpace>
Status recv_impl(const ExecSpace& space, const Buffer& buffer, int source, int tag, MPI_Comm comm,
                 const CommOptions& options, RequestState* st) {
  const StridedBlock layout = buffer.layout;
  const int64_t bytes = layout.packed_bytes();
  char* user = static_cast<char*>(buffer.base);
  using Mem = typename ExecSpace::memory_space;
  const Kernel kernel = options.kernel;
  char* wire = nullptr;
  if (bytes == 0) {
    // nothing to place
  } else if (layout.contiguous()) {
    char* data = user + layout.offset;
    if (mpi_reads_in_place<ExecSpace>(buffer.host_accessible, options)) {
      space.fence();  // nothing queued on the space may touch the View while MPI writes it
      wire = data;
    } else {
      std::shared_ptr<mover::Staging> staging = host_staging(bytes);
      wire = staging->data();
      st->finish = [space, staging, data, bytes]() -> Status {
        Kokkos::deep_copy(space, UserBytes<ExecSpace>(data, static_cast<size_t>(bytes)), host_bytes(*staging, bytes));
        space.fence();
        return Status::ok;
      };
    }
  } else {
    SpaceBytes<ExecSpace> packed = allocate<SpaceBytes<ExecSpace>>("strata::kokkos::packed", bytes);
    if (mpi_reads_in_place<ExecSpace>(host_readable<Mem>(), options)) {
      wire = packed.data();
      st->finish = [space, layout, packed, user, kernel]() -> Status {
        STRATA_TRY(unpack(space, layout, packed.data(), user, PackOptions{kernel}));
        space.fence();
        return Status::ok;
      };
    } else {
      std::shared_ptr<mover::Staging> staging = host_staging(bytes);
      wire = staging->data();
      st->finish = [space, layout, packed, staging, bytes, user, kernel]() -> Status {
        Kokkos::deep_copy(space, packed, host_bytes(*staging, bytes));
        STRATA_TRY(unpack(space, layout, packed.data(), user, PackOptions{kernel}));
        space.fence();
        return Status::ok;
      };
    }
  }
  return post_pieces(false, wire, bytes, source, tag, comm, st);
}

template <class ExecSpace>
Result<Request> start(bool send, const ExecSpace& space, Buffer buffer, int peer, int tag, MPI_Comm comm,
                      const CommOptions& options) noexcept {
  const char* what = send ? "isend" : "irecv";
  STRATA_TRY(require_mpi(what));
  try {
    auto st = std::make_shared<RequestState>();
    st->receive = !send;
    st->peer = peer;
    st->tag = tag;
    if (peer == MPI_PROC_NULL) {  // completes at once and touches nothing, as in MPI
      st->complete = true;
      return Request(std::move(st));
    }
    st->keep.push_back(buffer.keep);
    const Status s = send ? send_impl(space, buffer, peer, tag, comm, options, st.get())
                          : recv_impl(space, buffer, peer, tag, comm, options, st.get());
    if (s != Status::ok) return s;
    return Request(std::move(st));
  } catch (const std::bad_alloc&) {
    STRATA_LOG(error, kP2p, "kokkos %s: out of memory for %lld bytes", what,
               static_cast<long long>(buffer.layout.packed_bytes()));
    return Status::out_of_memory;
  } catch (const std::exception& e) {
    // Kokkos reports failed allocations and device errors by exception.
    STRATA_LOG(error, kP2p, "kokkos %s on %s failed: %s", what, ExecSpace::name(), e.what());
    return runs_on_host<ExecSpace>() ? Status::out_of_memory : Status::device_error;
  }
}

}  // namespace

template <class ExecSpace>
Result<Request> isend(const ExecSpace& space, Buffer buffer, int dest, int tag, MPI_Comm comm,
                      const CommOptions& options) noexcept {
  return start(true, space, std::move(buffer), dest, tag, comm, options);
}

template <class ExecSpace>
Result<Request> irecv(const ExecSpace& space, Buffer buffer, int source, int tag, MPI_Comm comm,
                      const CommOptions& options) noexcept {
  return start(false, space, std::move(buffer), source, tag, comm, options);
}

#define STRATA_KOKKOS_INSTANTIATE_TRANSFER(Space)                                            \
  template STRATA_API Result<Request> isend<Space>(const Space&, Buffer, int, int, MPI_Comm, \
                                                   const CommOptions&) noexcept;             \
  template STRATA_API Result<Request> irecv<Space>(const Space&, Buffer, int, int, MPI_Comm, \
                                                   const CommOptions&) noexcept;
STRATA_KOKKOS_FOR_EACH_SPACE(STRATA_KOKKOS_INSTANTIATE_TRANSFER)

}  // namespace detail
}  // namespace strata::kokkos
