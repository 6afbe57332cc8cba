#include <strata/status.hpp>

namespace strata {

const char* to_string(Status status) noexcept {
  switch (status) {
    case Status::ok: return "ok";
    case Status::invalid_argument: return "invalid argument";
    case Status::not_supported: return "not supported";
    case Status::irreducible: return "irreducible datatype";
    case Status::out_of_memory: return "out of memory";
    case Status::mpi_error: return "MPI error";
    case Status::device_error: return "device error";
    case Status::timeout: return "timeout";
    case Status::internal: return "internal error";
  }
  return "unknown status";
}

}  // namespace strata
