#include "interposer/calls/call_ids.hpp"

#include <cstring>

namespace strata::calls {

const char* name_of(Id id) {
  static const char* const names[] = {
#define STRATA_CALL(fn, kind, lc, params, args, roles) #fn,
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
  };
  const auto i = static_cast<size_t>(id);
  return i < kCallCount ? names[i] : "?";
}

bool is_large_count(Id id) {
  const char* n = name_of(id);
  const size_t length = std::strlen(n);
  return length > 2 && std::strcmp(n + length - 2, "_c") == 0;
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::special: return "special";
    case Kind::special_local: return "special_local";
    case Kind::flush: return "flush";
    case Kind::send: return "send";
    case Kind::isend: return "isend";
    case Kind::send_init: return "send_init";
    case Kind::recv: return "recv";
    case Kind::irecv: return "irecv";
    case Kind::recv_init: return "recv_init";
    case Kind::mrecv: return "mrecv";
    case Kind::imrecv: return "imrecv";
    case Kind::sendrecv: return "sendrecv";
    case Kind::sendrecv_replace: return "sendrecv_replace";
    case Kind::isendrecv: return "isendrecv";
    case Kind::isendrecv_replace: return "isendrecv_replace";
    case Kind::coll: return "coll";
    case Kind::icoll: return "icoll";
    case Kind::coll_init: return "coll_init";
    case Kind::local: return "local";
    case Kind::refused: return "refused";
    case Kind::file: return "file";
    case Kind::ifile: return "ifile";
    case Kind::file_begin: return "file_begin";
    case Kind::file_end: return "file_end";
  }
  return "?";
}

const char* device_handling(Kind k) {
  switch (k) {
    case Kind::special:
    case Kind::special_local: return "its own handler (see below)";
    case Kind::flush: return "no buffer: deferred sends posted, then the library";
    case Kind::send:
    case Kind::isend:
    case Kind::send_init:
    case Kind::recv:
    case Kind::irecv:
    case Kind::recv_init:
    case Kind::mrecv:
    case Kind::imrecv:
    case Kind::sendrecv:
    case Kind::isendrecv:
      return "packed: Strata's kernels and a measured method (host derived types: host pack where it wins)";
    case Kind::sendrecv_replace:
    case Kind::isendrecv_replace: return "staged: the span copied to host memory and back";
    case Kind::coll:
    case Kind::icoll:
    case Kind::coll_init:
    case Kind::local:
    case Kind::file:
    case Kind::ifile:
    case Kind::file_begin:
    case Kind::file_end: return "staged: each device buffer's span through pinned host memory";
    case Kind::refused: return "refused: MPI_ERR_BUFFER";
  }
  return "?";
}

const char* completion(Kind k) {
  switch (k) {
    case Kind::special:
    case Kind::special_local:
    case Kind::flush:
    case Kind::send:
    case Kind::recv:
    case Kind::mrecv:
    case Kind::sendrecv:
    case Kind::sendrecv_replace:
    case Kind::coll:
    case Kind::local:
    case Kind::file:
    case Kind::refused: return "blocking";
    case Kind::isend:
    case Kind::irecv:
    case Kind::imrecv:
    case Kind::isendrecv:
    case Kind::isendrecv_replace:
    case Kind::icoll:
    case Kind::ifile: return "request";
    case Kind::send_init:
    case Kind::recv_init:
    case Kind::coll_init: return "persistent request";
    case Kind::file_begin: return "split: until the matching _end";
    case Kind::file_end: return "split: ends the _begin";
  }
  return "?";
}

}  // namespace strata::calls
