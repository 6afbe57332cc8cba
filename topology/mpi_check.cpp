#include "topology/mpi_check.hpp"

#include "base/log.hpp"
#include "mpi/check.hpp"

namespace strata::topo::detail {

Status mpi_check(int rc, const char* what) noexcept { return mpi::check(rc, log::kTopo, what); }

}  // namespace strata::topo::detail
