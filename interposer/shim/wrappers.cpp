// libstrata_preload.so's MPI functions: one thin noexcept wrapper per call
// of the interception table (mpi/calls/mpi_calls.hpp), generated
// here. Each calls its kind's handler (interposer/handlers) with the call's
// real function over its own parameters, or the real function alone
// (STRATA_DISABLE=1, calls that only flush).
#include <strata/export.h>

#include "interposer/calls/roles.hpp"
#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/routed.hpp"
#include "interposer/handlers/special.hpp"
#include "interposer/shim/enter.hpp"
#include "collectives/job_facts.hpp"
#include "mpi/real_mpi.hpp"

namespace {
__attribute__((constructor)) void resolve_real_mpi() { strata::mpi::install_next_symbols(); }
}  // namespace

#define STRATA_UNPAREN(...) __VA_ARGS__

// The body of each kind's handler call; `library` is the wrapper's real call.
#define STRATA_HANDLER(kind, fn, arguments)                                                                    \
  using namespace ::strata::calls::roles;                                                                      \
  return ::strata::interposer::handlers::kind(::strata::calls::Id::fn, ::strata::interposer::Library(library), \
                                              STRATA_UNPAREN arguments);
#define STRATA_HANDLE_special(fn, args, arguments) return ::strata::interposer::special::fn args;
#define STRATA_HANDLE_special_local(fn, args, arguments) return ::strata::interposer::special::fn args;
#define STRATA_HANDLE_completion(fn, args, arguments) return ::strata::interposer::special::fn args;
#define STRATA_HANDLE_flush(fn, args, arguments) return library();
#define STRATA_HANDLE_packed(fn, args, arguments)                                                                   \
  using namespace ::strata::calls::roles;                                                                           \
  return ::strata::interposer::packed::fn(                                                                          \
      ::strata::interposer::handlers::LibraryRoute{::strata::calls::Id::fn, ::strata::interposer::Library(library), \
                                                   STRATA_UNPAREN arguments},                                       \
      STRATA_UNPAREN args);
#define STRATA_HANDLE_routed(fn, args, arguments)                                                                   \
  using namespace ::strata::calls::roles;                                                                           \
  return ::strata::interposer::routed::fn(                                                                          \
      ::strata::interposer::handlers::LibraryRoute{::strata::calls::Id::fn, ::strata::interposer::Library(library), \
                                                   STRATA_UNPAREN arguments},                                       \
      STRATA_UNPAREN args);
#define STRATA_HANDLE_send(fn, args, arguments) STRATA_HANDLER(send, fn, arguments)
#define STRATA_HANDLE_isend(fn, args, arguments) STRATA_HANDLER(isend, fn, arguments)
#define STRATA_HANDLE_send_init(fn, args, arguments) STRATA_HANDLER(send_init, fn, arguments)
#define STRATA_HANDLE_recv(fn, args, arguments) STRATA_HANDLER(recv, fn, arguments)
#define STRATA_HANDLE_irecv(fn, args, arguments) STRATA_HANDLER(irecv, fn, arguments)
#define STRATA_HANDLE_recv_init(fn, args, arguments) STRATA_HANDLER(recv_init, fn, arguments)
#define STRATA_HANDLE_mrecv(fn, args, arguments) STRATA_HANDLER(mrecv, fn, arguments)
#define STRATA_HANDLE_imrecv(fn, args, arguments) STRATA_HANDLER(imrecv, fn, arguments)
#define STRATA_HANDLE_sendrecv(fn, args, arguments) STRATA_HANDLER(sendrecv, fn, arguments)
#define STRATA_HANDLE_sendrecv_replace(fn, args, arguments) STRATA_HANDLER(sendrecv_replace, fn, arguments)
#define STRATA_HANDLE_isendrecv(fn, args, arguments) STRATA_HANDLER(isendrecv, fn, arguments)
#define STRATA_HANDLE_isendrecv_replace(fn, args, arguments) STRATA_HANDLER(isendrecv_replace, fn, arguments)
#define STRATA_HANDLE_coll(fn, args, arguments) STRATA_HANDLER(coll, fn, arguments)
#define STRATA_HANDLE_icoll(fn, args, arguments) STRATA_HANDLER(icoll, fn, arguments)
#define STRATA_HANDLE_coll_init(fn, args, arguments) STRATA_HANDLER(coll_init, fn, arguments)
#define STRATA_HANDLE_local(fn, args, arguments) STRATA_HANDLER(local, fn, arguments)
#define STRATA_HANDLE_refused(fn, args, arguments) STRATA_HANDLER(refused, fn, arguments)
#define STRATA_HANDLE_file(fn, args, arguments) STRATA_HANDLER(file, fn, arguments)
#define STRATA_HANDLE_ifile(fn, args, arguments) STRATA_HANDLER(ifile, fn, arguments)
#define STRATA_HANDLE_file_begin(fn, args, arguments) STRATA_HANDLER(file_begin, fn, arguments)
#define STRATA_HANDLE_file_end(fn, args, arguments) STRATA_HANDLER(file_end, fn, arguments)

// The pass-through of point-to-point calls, decided in the exported
// function before anything is built (enter.hpp, pass_through; the rest of
// the call is strata_handle_<fn>, kept out of line so that the parameters
// stay in registers on this path): the first role is in(buf, count, type)
// or out(...), whose buffer and datatype the test needs.
#define STRATA_PASTE(a, b) STRATA_PASTE_I(a, b)
#define STRATA_PASTE_I(a, b) a##b
#define STRATA_FIRST_ROLE(first, ...) first
#define STRATA_FAST_ARGS_in(buf, count, type) buf, type
#define STRATA_FAST_ARGS_out(buf, count, type) buf, type
#define STRATA_FAST_P2P(flush, fn, args, arguments)                                                                    \
  if (::strata::interposer::shim::pass_through<flush>(STRATA_PASTE(STRATA_FAST_ARGS_, STRATA_FIRST_ROLE arguments))) { \
    return ::strata::mpi::real().fn args;                                                                              \
  }
// Collectives: the buffer roles are the last element of the roles,
// bufs(role, ...); each role tests its pointer and datatype (v forms by
// their one datatype, w forms never).
#define STRATA_ROLE_1(a, ...) a
#define STRATA_ROLE_3(a, b, c, ...) c
#define STRATA_ROLE_4(a, b, c, d, ...) d
#define STRATA_FE_PICK(_1, _2, _3, name, ...) name
#define STRATA_FE1(m, a) m(a)
#define STRATA_FE2(m, a, b) m(a) m(b)
#define STRATA_FE3(m, a, b, c) m(a) m(b) m(c)
#define STRATA_FOR_EACH(m, ...) STRATA_FE_PICK(__VA_ARGS__, STRATA_FE3, STRATA_FE2, STRATA_FE1)(m, __VA_ARGS__)
#define STRATA_FAST_BUFS_bufs(...) STRATA_FOR_EACH(STRATA_FAST_BUF, __VA_ARGS__)
#define STRATA_PASTE_ROLE(a, b) STRATA_PASTE_ROLE_I(a, b)  // not STRATA_PASTE: that one is expanding already
#define STRATA_PASTE_ROLE_I(a, b) a##b
#define STRATA_FAST_BUF(role) &&STRATA_PASTE_ROLE(STRATA_FAST_BUF_, role)
#define STRATA_HOST(ptr, type) ::strata::interposer::shim::host_contiguous(ptr, type)
#define STRATA_FAST_BUF_one(dir, where, ptr, count, type) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_blocks(dir, where, ptr, count, type, peers) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_vbuf(dir, where, ptr, counts, displs, type, peers) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_wbuf(...) false
#define STRATA_FAST_BUF_sum_of(dir, ptr, counts, type) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_mine_of(ptr, counts, type) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_block_of(ptr, count, type) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_bytes(dir, ptr, n) ::strata::interposer::shim::host_bytes(ptr)
#define STRATA_FAST_BUF_in(ptr, count, type) STRATA_HOST(ptr, type)
#define STRATA_FAST_BUF_out(ptr, count, type) STRATA_HOST(ptr, type)
#define STRATA_FAST_COLL(fn, args, bufs_role, extra)                                                        \
  if (::strata::interposer::shim::collective_may_pass() extra STRATA_PASTE(STRATA_FAST_BUFS_, bufs_role) && \
      ::strata::interposer::shim::passed()) {                                                               \
    return ::strata::mpi::real().fn args;                                                                   \
  }

#define STRATA_FAST_send(fn, args, arguments) STRATA_FAST_P2P(true, fn, args, arguments)
#define STRATA_FAST_isend(fn, args, arguments) STRATA_FAST_P2P(true, fn, args, arguments)
// A receive passes straight where no device-direct descriptor can arrive;
// where one can, contiguous host data still goes to the library from here
// and is watched (enter.hpp, host_recv_route). The parameters' names are
// those of mpi/calls/mpi_calls.hpp.
#define STRATA_HOST_RECV(flush, fn, args, arguments)                                           \
  if (!::strata::interposer::device_direct::active()) {                                        \
    STRATA_FAST_P2P(flush, fn, args, arguments)                                                \
  } else if (const ::strata::interposer::shim::HostRecv strata_route =                         \
                 ::strata::interposer::shim::host_recv_route<flush>(buf, count, type, source); \
             strata_route == ::strata::interposer::shim::HostRecv::library) {                  \
    return ::strata::mpi::real().fn args;                                                      \
  } else if (strata_route == ::strata::interposer::shim::HostRecv::watched)
#define STRATA_FAST_recv(fn, args, arguments)                                                                 \
  STRATA_HOST_RECV(true, fn, args, arguments) {                                                               \
    MPI_Status strata_local;                                                                                  \
    MPI_Status* const strata_status = status == MPI_STATUS_IGNORE ? &strata_local : status;                   \
    return ::strata::interposer::shim::host_recv_done(                                                        \
        ::strata::mpi::real().fn(buf, count, type, source, tag, comm, strata_status), buf, count, type, comm, \
        strata_status);                                                                                       \
  }
#define STRATA_FAST_irecv(fn, args, arguments)                                                                   \
  STRATA_HOST_RECV(false, fn, args, arguments) {                                                                 \
    const int strata_rc = ::strata::mpi::real().fn args;                                                         \
    if (strata_rc == MPI_SUCCESS) ::strata::interposer::shim::watch_host_recv(*request, buf, count, type, comm); \
    return strata_rc;                                                                                            \
  }
#define STRATA_FAST_special(fn, args, arguments)
#define STRATA_FAST_completion(fn, args, arguments) \
  if (::strata::interposer::shim::nothing_to_complete()) return ::strata::mpi::real().fn args;
#define STRATA_FAST_special_local(fn, args, arguments)
// Routed ones: routed::Passes may count the call as a routing decision,
// so every other test comes first, and where it says yes the call passes.
// A communicator surely left to the library (a host job's) passes at once,
// inline (out of line, in Passes, it cost 15-20 ns a collective on 2 H200s'
// host, where a point-to-point pass costs 1-2); Passes is asked past it.
#define STRATA_FAST_routed(fn, args, arguments)                                                                     \
  if (::strata::interposer::shim::collective_may_pass() STRATA_PASTE(STRATA_FAST_BUFS_, STRATA_ROLE_3 arguments) && \
      ::strata::interposer::can_count_own_call() &&                                                                 \
      (::strata::coll::surely_library_only(STRATA_ROLE_1 arguments) ||                                              \
       ::strata::interposer::routed::Passes<::strata::calls::Id::fn>::test args)) {                                 \
    ::strata::interposer::shim::passed();                                                                           \
    return ::strata::mpi::real().fn args;                                                                           \
  }
// MPI_Alltoallv, the one packed call whose handler may decide a route (a
// collective over the communicator: collectives/routing.hpp), passes here
// only on a communicator surely left to the library, as the routed ones: the
// same answer on every rank. Host buffers alone would not do: a rank whose
// buffers passed while another's (a derived type, a new host granule) went
// on to decide would hang (test_mpi_divergence).
#define STRATA_FAST_packed(fn, args, arguments)                                        \
  STRATA_FAST_COLL(fn, args, STRATA_ROLE_3 arguments,                                  \
                   &&(::strata::calls::Id::fn != ::strata::calls::Id::MPI_Alltoallv || \
                      ::strata::coll::surely_library_only(STRATA_ROLE_1 arguments)))
#define STRATA_FAST_flush(fn, args, arguments)
#define STRATA_FAST_send_init(fn, args, arguments)
#define STRATA_FAST_recv_init(fn, args, arguments)
#define STRATA_FAST_mrecv(fn, args, arguments)
#define STRATA_FAST_imrecv(fn, args, arguments)
#define STRATA_FAST_sendrecv(fn, args, arguments)
#define STRATA_FAST_sendrecv_replace(fn, args, arguments)
#define STRATA_FAST_isendrecv(fn, args, arguments)
#define STRATA_FAST_isendrecv_replace(fn, args, arguments)
#define STRATA_FAST_coll(fn, args, arguments) STRATA_FAST_COLL(fn, args, STRATA_ROLE_3 arguments, )
#define STRATA_FAST_icoll(fn, args, arguments) STRATA_FAST_COLL(fn, args, STRATA_ROLE_4 arguments, )
#define STRATA_FAST_coll_init(fn, args, arguments) STRATA_FAST_COLL(fn, args, STRATA_ROLE_4 arguments, )
#define STRATA_FAST_local(fn, args, arguments)
#define STRATA_FAST_refused(fn, args, arguments)
#define STRATA_FAST_file(fn, args, arguments)
#define STRATA_FAST_ifile(fn, args, arguments)
#define STRATA_FAST_file_begin(fn, args, arguments)
#define STRATA_FAST_file_end(fn, args, arguments)

// NOLINTBEGIN(bugprone-macro-parentheses): parameter lists are pasted
#define STRATA_CALL(fn, kind, lc, params, args, roles)                                             \
  namespace {                                                                                      \
  __attribute__((noinline)) int strata_handle_##fn params {                                        \
    auto library = [&]() noexcept { return ::strata::mpi::real().fn args; };                       \
    return ::strata::interposer::shim::enter<::strata::calls::Kind::kind>(                         \
        ::strata::calls::Id::fn, library, [&]() -> int { STRATA_HANDLE_##kind(fn, args, roles) }); \
  }                                                                                                \
  }                                                                                                \
  extern "C" STRATA_API int fn params {                                                            \
    if (::strata::interposer::shim::switched_off()) return ::strata::mpi::real().fn args;          \
    STRATA_FAST_##kind(fn, args, roles) return strata_handle_##fn args;                            \
  }
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
// NOLINTEND(bugprone-macro-parentheses)
