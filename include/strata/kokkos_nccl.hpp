// Kokkos Views through NCCL (RCCL in a HIP build): send and receive of any
// View of rank 0-8, any layout, on the caller's execution-space instance,
// with the requests of strata/kokkos.hpp (docs/kokkos.md).
//
// This header sits above the collectives in the layer order
// (docs/architecture.md): the Kokkos layer (portability/kokkos) packs and
// owns the temporaries, the collectives' point-to-point calls
// (strata/collectives.hpp: coll::send, coll::recv, groups) move the bytes.
// Include it in applications, tests and benchmarks that want it; link
// Strata::kokkos (which carries libstrata.so).
//
//   Device spaces (Kokkos::Cuda, Kokkos::HIP): the View is packed on the
//   space when it is not contiguous; the bytes go to ncclSend / ncclRecv on
//   the space's stream (space.cuda_stream() / space.hip_stream()) on the
//   NCCL communicator the collectives keep for `comm`. Stream-ordered: no
//   fence before a send, a receive's unpack queued after it. Where NCCL is
//   missing or two ranks share a GPU the collectives stage the bytes
//   through host memory and MPI instead (coll::send's rule).
//   Host spaces (Serial, OpenMP, Threads): the same calls on the MPI path of
//   coll::send (host memory), so that one program runs everywhere; the space
//   is fenced before the bytes are handed over.
//
// A message is the View's packed bytes in the order of strata/kokkos.hpp
// (Options::order); both ends must agree on its size. NCCL has no tags:
// messages between two ranks match in the order they are posted. A send
// and a receive that must progress together (a rank exchanging with a
// peer, or with itself) go in one group:
//
//   namespace skn = strata::kokkos::nccl;
//   skn::group_start();
//   auto r = skn::irecv(space, ghost, left, comm);   // Result<Request>
//   auto s = skn::isend(space, face, right, comm);
//   skn::group_end();                                 // posts both
//   Request reqs[] = {std::move(r).value(), std::move(s).value()};
//   strata::kokkos::wait_all(reqs, 2);                // unpacks the receive
//
// Outside a group each isend/irecv is posted at once (a host space's then
// also completes before returning, as coll::send does). A request posted
// in a group completes only after group_end(); wait() before then fails
// with invalid_argument and leaves it active. wait() fences the space
// (after the unpack of a receive); test() asks the space's stream without
// waiting (host spaces: done once posted). The first device transfer on a
// communicator creates its NCCL communicator: collective over `comm`.
#pragma once

#include <strata/collectives.hpp>
#include <strata/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace strata::kokkos::nccl {

struct Options {
  Kernel kernel = Kernel::automatic;  // the pack kernel
  Order order = Order::layout;        // the packed order (strata/kokkos.hpp)
};

// Posts the transfers made in between together (coll::group_start/_end).
inline Status group_start() noexcept { return coll::group_start(); }
inline Status group_end() noexcept { return coll::group_end(); }

template <class ExecSpace, class View>
Result<Request> isend(const ExecSpace& space, const View& view, int dest, MPI_Comm comm, const Options& options = {});
template <class ExecSpace, class View>
Result<Request> irecv(const ExecSpace& space, const View& view, int source, MPI_Comm comm, const Options& options = {});
// Blocking: post and wait. Not inside a group (invalid_argument: it could
// not complete there). A message to oneself needs a group.
template <class ExecSpace, class View>
Status send(const ExecSpace& space, const View& view, int dest, MPI_Comm comm, const Options& options = {});
template <class ExecSpace, class View>
Status recv(const ExecSpace& space, const View& view, int source, MPI_Comm comm, const Options& options = {});

// ===========================================================================
// Implementation.
namespace detail {

template <class ExecSpace>
constexpr bool is_cuda() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

template <class ExecSpace>
constexpr bool is_hip() {
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
  return std::is_same<ExecSpace, Kokkos::HIP>::value;
#elif defined(KOKKOS_ENABLE_HIP)
  return std::is_same<ExecSpace, Kokkos::Experimental::HIP>::value;
#else
  return false;
#endif
}

template <class ExecSpace>
constexpr bool runs_on_host() {
  return Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
}

template <class ExecSpace>
constexpr void check_space() {
  static_assert(runs_on_host<ExecSpace>() || is_cuda<ExecSpace>() || is_hip<ExecSpace>(),
                "strata::kokkos::nccl: host spaces, Kokkos::Cuda and Kokkos::HIP only");
}

// The space's CUDA or HIP stream; null for host spaces.
template <class ExecSpace>
void* stream_of(const ExecSpace& space) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (is_cuda<ExecSpace>()) return static_cast<void*>(space.cuda_stream());
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (is_hip<ExecSpace>()) return static_cast<void*>(space.hip_stream());
#endif
  (void)space;
  return nullptr;
}

// The message as coll sees it: the largest of 8, 4 or 2-byte units that
// divides the packed bytes; an odd byte count is padded by one byte (the
// View then goes through a temporary). Both ends compute the same.
struct Wire {
  coll::DataType type = coll::DataType::int64;
  size_t count = 0;
  int64_t bytes = 0;  // count * unit: the packed bytes, or one more
};

inline Wire wire_of(int64_t bytes) {
  if (bytes % 8 == 0) return {coll::DataType::int64, static_cast<size_t>(bytes / 8), bytes};
  if (bytes % 4 == 0) return {coll::DataType::int32, static_cast<size_t>(bytes / 4), bytes};
  const int64_t padded = bytes + (bytes & 1);
  return {coll::DataType::float16, static_cast<size_t>(padded / 2), padded};
}

template <class ExecSpace, class View>
Result<Request> start(bool sending, const ExecSpace& space, const View& view, int peer, MPI_Comm comm,
                      const Options& options) {
  using Mem = typename ExecSpace::memory_space;
  using Bytes = Kokkos::View<char*, Mem>;
  namespace sk = ::strata::kokkos;
  Result<sk::detail::Buffer> buffer = sk::detail::buffer_of(view, options.order);
  if (!buffer) return buffer.status();
  const StridedBlock layout = buffer->layout;
  const int64_t bytes = layout.packed_bytes();
  if (peer == MPI_PROC_NULL || bytes == 0) return Request();  // nothing moves (coll::send's rule)
  const Wire wire = wire_of(bytes);
  char* user = static_cast<char*>(buffer->base);
  const Kernel kernel = options.kernel;
  // Set once the transfer is posted: a request whose post failed completes
  // at once without unpacking anything.
  auto posted = std::make_shared<bool>(false);
  sk::detail::OnSpace completion;
  completion.keep.push_back(buffer->keep);
  char* data = nullptr;
  bool host_memory = false;
  if (layout.contiguous() && wire.bytes == bytes) {
    data = user + layout.offset;  // in place
    host_memory = buffer->host_accessible;
    completion.finish = [space, posted]() -> Status {
      if (*posted) space.fence();
      return Status::ok;
    };
  } else {
    // The packed temporary (zeroed where a pad byte goes on the wire).
    const std::string label = "strata::kokkos::nccl::packed";
    Bytes packed = wire.bytes == bytes
                       ? Bytes(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), static_cast<size_t>(wire.bytes))
                       : Bytes(label, static_cast<size_t>(wire.bytes));
    if (sending) STRATA_TRY(sk::pack(space, layout, user, packed.data(), PackOptions{kernel}));
    data = packed.data();
    host_memory = Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, Mem>::accessible;
    completion.keep.push_back(std::make_shared<const Bytes>(packed));
    if (sending) {
      completion.finish = [space, posted]() -> Status {
        if (*posted) space.fence();
        return Status::ok;
      };
    } else {
      completion.finish = [space, posted, layout, packed, user, kernel]() -> Status {
        if (!*posted) return Status::ok;
        STRATA_TRY(sk::unpack(space, layout, packed.data(), user, PackOptions{kernel}));
        space.fence();
        return Status::ok;
      };
    }
  }
  // Host memory goes to MPI, which does not follow the space: what is queued
  // on it (the pack; work still using a receive's View) finishes first.
  if (host_memory) space.fence();
  coll::Options co;
  co.stream = stream_of(space);
  const bool grouped = coll::in_group();
  const uint64_t epoch = coll::groups_ended();
  void* stream = co.stream;
  completion.poll = [posted, grouped, epoch, stream](bool blocking, bool* finished) -> Status {
    *finished = true;
    if (!*posted) return Status::ok;
    if (grouped && coll::groups_ended() == epoch) {  // its group is still open
      *finished = false;
      return blocking ? Status::invalid_argument : Status::ok;
    }
    if (stream == nullptr) return Status::ok;
    const Status s = coll::stream_done(stream, finished);
    if (s == Status::not_supported) *finished = true;  // no GPU runtime in Strata: wait() fences
    return s == Status::not_supported ? Status::ok : s;
  };
  // The request first, so that nothing can fail once the transfer is posted.
  Result<Request> request = Request::on_space(std::move(completion));
  if (!request) return request.status();
  const Status s = sending ? coll::send(data, wire.count, wire.type, peer, comm, co)
                           : coll::recv(data, wire.count, wire.type, peer, comm, co);
  if (s != Status::ok) return s;  // the request completes at once, releasing everything
  *posted = true;
  return request;
}

// Kokkos reports failed allocations and device errors by exception.
template <class ExecSpace, class View>
Result<Request> start_noexcept(bool sending, const ExecSpace& space, const View& view, int peer, MPI_Comm comm,
                               const Options& options) noexcept {
  try {
    return start(sending, space, view, peer, comm, options);
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  } catch (const std::exception&) {
    return runs_on_host<ExecSpace>() ? Status::out_of_memory : Status::device_error;
  }
}

}  // namespace detail

template <class ExecSpace, class View>
Result<Request> isend(const ExecSpace& space, const View& view, int dest, MPI_Comm comm, const Options& options) {
  detail::check_space<ExecSpace>();
  ::strata::kokkos::detail::check_access<ExecSpace, View>();
  return detail::start_noexcept(true, space, view, dest, comm, options);
}

template <class ExecSpace, class View>
Result<Request> irecv(const ExecSpace& space, const View& view, int source, MPI_Comm comm, const Options& options) {
  detail::check_space<ExecSpace>();
  ::strata::kokkos::detail::check_access<ExecSpace, View>();
  static_assert(!std::is_const<typename View::value_type>::value, "cannot receive into a View of const");
  return detail::start_noexcept(false, space, view, source, comm, options);
}

template <class ExecSpace, class View>
Status send(const ExecSpace& space, const View& view, int dest, MPI_Comm comm, const Options& options) {
  if (coll::in_group()) return Status::invalid_argument;
  Result<Request> r = isend(space, view, dest, comm, options);
  if (!r) return r.status();
  return r.value().wait();
}

template <class ExecSpace, class View>
Status recv(const ExecSpace& space, const View& view, int source, MPI_Comm comm, const Options& options) {
  if (coll::in_group()) return Status::invalid_argument;
  Result<Request> r = irecv(space, view, source, comm, options);
  if (!r) return r.status();
  return r.value().wait();
}

}  // namespace strata::kokkos::nccl
