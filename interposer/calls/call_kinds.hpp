// The handler families of the interception table (the `kind` column of
// mpi/calls/mpi_calls.hpp) and what each means for a call.
#pragma once

#include <cstdint>

namespace strata::calls {

enum class Kind : uint8_t {
  special,            // its own handler (interposer/shim/special_calls.hpp)
  special_local,      // its own handler, and nothing deferred is flushed first
  completion,         // a wait or test: its own handler, the library's call when no Strata request is pending
  routed,             // a collective routed alike on every rank (interposer/handlers/routed.hpp)
  packed,             // an all-to-all whose sides Strata packs per peer (interposer/handlers/packed.cpp)
  flush,              // posts deferred sends, then the library's call unchanged
  send,               // blocking send, any mode
  isend,              // non-blocking send, any mode
  send_init,          // persistent send, any mode
  recv,               // blocking receive
  irecv,              // non-blocking receive
  recv_init,          // persistent receive
  mrecv,              // receive of a matched message
  imrecv,             // non-blocking receive of a matched message
  sendrecv,           // send and receive
  sendrecv_replace,   // send and receive in one buffer
  isendrecv,          // non-blocking send and receive (MPI-4)
  isendrecv_replace,  // non-blocking send and receive in one buffer (MPI-4)
  coll,               // blocking collective, device buffers staged
  icoll,              // non-blocking collective, device buffers staged
  coll_init,          // persistent collective, device buffers staged
  local,              // local call on buffers (no communication), staged
  refused,            // device buffers refused with MPI_ERR_BUFFER
  file,               // blocking MPI-IO data access, staged
  ifile,              // non-blocking MPI-IO data access, staged
  file_begin,         // split collective MPI-IO: begin, staged until the end
  file_end,           // split collective MPI-IO: end
};

// Does the wrapper post deferred sends before the call? Every call that
// could wait for a message does; see deferred_sends.hpp.
constexpr bool flushes(Kind k) { return k != Kind::special_local && k != Kind::irecv && k != Kind::isend; }

// For the docs: what happens to device buffers, and when the call's work
// completes.
const char* device_handling(Kind k);
const char* completion(Kind k);
const char* to_string(Kind k);

}  // namespace strata::calls
