// libstrata_preload.so's MPI functions: one thin noexcept wrapper per call
// of the interception table (interposer/calls/mpi_calls.hpp), generated
// here. Each calls its kind's handler (interposer/handlers) with the call's
// real function over its own parameters, or the real function alone
// (STRATA_DISABLE=1, calls that only flush).
#include <strata/export.h>

#include "interposer/calls/roles.hpp"
#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/special.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/shim/enter.hpp"

namespace {
__attribute__((constructor)) void resolve_real_mpi() { strata::mpi::install_next_symbols(); }
}  // namespace

#define STRATA_UNPAREN(...) __VA_ARGS__

// The body of each kind's handler call; `library` is the wrapper's real call.
#define STRATA_HANDLER(kind, fn, arguments)    \
  using namespace ::strata::calls::roles;      \
  return ::strata::interposer::handlers::kind( \
      ::strata::calls::Id::fn, ::strata::interposer::Library(library), STRATA_UNPAREN arguments);
#define STRATA_HANDLE_special(fn, args, roles) return ::strata::interposer::special::fn args;
#define STRATA_HANDLE_special_local(fn, args, roles) return ::strata::interposer::special::fn args;
#define STRATA_HANDLE_flush(fn, args, roles) return library();
#define STRATA_HANDLE_send(fn, args, roles) STRATA_HANDLER(send, fn, roles)
#define STRATA_HANDLE_isend(fn, args, roles) STRATA_HANDLER(isend, fn, roles)
#define STRATA_HANDLE_send_init(fn, args, roles) STRATA_HANDLER(send_init, fn, roles)
#define STRATA_HANDLE_recv(fn, args, roles) STRATA_HANDLER(recv, fn, roles)
#define STRATA_HANDLE_irecv(fn, args, roles) STRATA_HANDLER(irecv, fn, roles)
#define STRATA_HANDLE_recv_init(fn, args, roles) STRATA_HANDLER(recv_init, fn, roles)
#define STRATA_HANDLE_mrecv(fn, args, roles) STRATA_HANDLER(mrecv, fn, roles)
#define STRATA_HANDLE_imrecv(fn, args, roles) STRATA_HANDLER(imrecv, fn, roles)
#define STRATA_HANDLE_sendrecv(fn, args, roles) STRATA_HANDLER(sendrecv, fn, roles)
#define STRATA_HANDLE_sendrecv_replace(fn, args, roles) STRATA_HANDLER(sendrecv_replace, fn, roles)
#define STRATA_HANDLE_isendrecv(fn, args, roles) STRATA_HANDLER(isendrecv, fn, roles)
#define STRATA_HANDLE_isendrecv_replace(fn, args, roles) STRATA_HANDLER(isendrecv_replace, fn, roles)
#define STRATA_HANDLE_coll(fn, args, roles) STRATA_HANDLER(coll, fn, roles)
#define STRATA_HANDLE_icoll(fn, args, roles) STRATA_HANDLER(icoll, fn, roles)
#define STRATA_HANDLE_coll_init(fn, args, roles) STRATA_HANDLER(coll_init, fn, roles)
#define STRATA_HANDLE_local(fn, args, roles) STRATA_HANDLER(local, fn, roles)
#define STRATA_HANDLE_refused(fn, args, roles) STRATA_HANDLER(refused, fn, roles)
#define STRATA_HANDLE_file(fn, args, roles) STRATA_HANDLER(file, fn, roles)
#define STRATA_HANDLE_ifile(fn, args, roles) STRATA_HANDLER(ifile, fn, roles)
#define STRATA_HANDLE_file_begin(fn, args, roles) STRATA_HANDLER(file_begin, fn, roles)
#define STRATA_HANDLE_file_end(fn, args, roles) STRATA_HANDLER(file_end, fn, roles)

// NOLINTBEGIN(bugprone-macro-parentheses): parameter lists are pasted
#define STRATA_CALL(fn, kind, lc, params, args, roles)                                      \
  extern "C" STRATA_API int fn params {                                                      \
    auto library = [&]() noexcept { return ::strata::mpi::real().fn args; };                \
    return ::strata::interposer::shim::enter<::strata::calls::Kind::kind>(                   \
        ::strata::calls::Id::fn, library, [&]() -> int { STRATA_HANDLE_##kind(fn, args, roles) }); \
  }
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
// NOLINTEND(bugprone-macro-parentheses)
