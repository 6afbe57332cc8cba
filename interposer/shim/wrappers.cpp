// libstrata_preload.so's MPI functions: one thin noexcept wrapper per call
// of the interception table (interposer/calls/mpi_calls.hpp), generated
// here. Each calls its kind's handler (interposer/handlers) with the call's
// real function over its own parameters, or the real function alone
// (STRATA_DISABLE=1, calls that only flush).
#include <strata/export.h>

#include "interposer/calls/roles.hpp"
#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/routed.hpp"
#include "interposer/handlers/special.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/shim/enter.hpp"

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
#define STRATA_FAST_send(fn, args, arguments) STRATA_FAST_P2P(true, fn, args, arguments)
#define STRATA_FAST_isend(fn, args, arguments) STRATA_FAST_P2P(true, fn, args, arguments)
#define STRATA_FAST_recv(fn, args, arguments) STRATA_FAST_P2P(true, fn, args, arguments)
#define STRATA_FAST_irecv(fn, args, arguments) STRATA_FAST_P2P(false, fn, args, arguments)
#define STRATA_FAST_special(fn, args, arguments)
#define STRATA_FAST_completion(fn, args, arguments) \
  if (::strata::interposer::shim::nothing_to_complete()) return ::strata::mpi::real().fn args;
#define STRATA_FAST_special_local(fn, args, arguments)
#define STRATA_FAST_routed(fn, args, arguments)
#define STRATA_FAST_packed(fn, args, arguments)
#define STRATA_FAST_flush(fn, args, arguments)
#define STRATA_FAST_send_init(fn, args, arguments)
#define STRATA_FAST_recv_init(fn, args, arguments)
#define STRATA_FAST_mrecv(fn, args, arguments)
#define STRATA_FAST_imrecv(fn, args, arguments)
#define STRATA_FAST_sendrecv(fn, args, arguments)
#define STRATA_FAST_sendrecv_replace(fn, args, arguments)
#define STRATA_FAST_isendrecv(fn, args, arguments)
#define STRATA_FAST_isendrecv_replace(fn, args, arguments)
#define STRATA_FAST_coll(fn, args, arguments)
#define STRATA_FAST_icoll(fn, args, arguments)
#define STRATA_FAST_coll_init(fn, args, arguments)
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
  extern "C" STRATA_API int fn params { STRATA_FAST_##kind(fn, args, roles) return strata_handle_##fn args; }
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
// NOLINTEND(bugprone-macro-parentheses)
