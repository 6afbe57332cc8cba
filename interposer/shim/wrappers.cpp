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

// NOLINTBEGIN(bugprone-macro-parentheses): parameter lists are pasted
#define STRATA_CALL(fn, kind, lc, params, args, roles)                                             \
  extern "C" STRATA_API int fn params {                                                            \
    auto library = [&]() noexcept { return ::strata::mpi::real().fn args; };                       \
    return ::strata::interposer::shim::enter<::strata::calls::Kind::kind>(                         \
        ::strata::calls::Id::fn, library, [&]() -> int { STRATA_HANDLE_##kind(fn, args, roles) }); \
  }
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
// NOLINTEND(bugprone-macro-parentheses)
