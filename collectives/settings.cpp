#include "collectives/settings.hpp"

#include "base/config.hpp"
#include "topology/emulate.hpp"

namespace strata::coll {
namespace {

config::ChoiceParam<Algorithm> g_algorithm{
    "STRATA_COLL_ALGO",
    Algorithm::automatic,
    {{"auto", Algorithm::automatic},
     {"library", Algorithm::library},
     {"ring", Algorithm::ring},
     {"recursive", Algorithm::recursive},
     {"hierarchical", Algorithm::hierarchical},
     {"two_level", Algorithm::two_level}},
    "Collectives' algorithm where the caller asks for automatic: auto (the cost model), library (the MPI library on "
    "host, flat NCCL on device), ring, recursive (host only), hierarchical (every topology level), two_level (within "
    "nodes, then across)"};

}  // namespace

Algorithm forced_algorithm() noexcept { return g_algorithm.get(); }

bool topology_emulated() noexcept { return topo::detail::emulation_requested(); }

uint64_t routing_settings_digest() noexcept {
  return static_cast<uint64_t>(forced_algorithm()) * 2 + (topology_emulated() ? 1 : 0);
}

}  // namespace strata::coll
