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

config::IntParam g_agree_every{"STRATA_COLL_AGREE_EVERY", 256,
                               "Device collectives: the longest period, in calls of one collective and size class, "
                               "between two agreements of the ranks on whether all their buffers are in device memory "
                               "(the periods double from 1 up to it)",
                               1, 1 << 30};

enum class ExchangeRoute { nccl, library };
config::ChoiceParam<ExchangeRoute> g_exchange{
    "STRATA_COLL_EXCHANGE",
    ExchangeRoute::nccl,
    {{"nccl", ExchangeRoute::nccl}, {"library", ExchangeRoute::library}},
    "MPI_Alltoall(v), MPI_Gather(v), MPI_Scatter(v) and MPI_Allgatherv where every rank's buffers are in device "
    "memory: nccl (grouped ncclSend/ncclRecv, where every rank has NCCL and a GPU of its own), library (the library's "
    "call, device buffers staged through host memory)"};

}  // namespace

int agreement_period_limit() noexcept { return static_cast<int>(g_agree_every.get()); }

bool nccl_exchanges() noexcept { return g_exchange.get() == ExchangeRoute::nccl; }

Algorithm forced_algorithm() noexcept { return g_algorithm.get(); }

bool topology_emulated() noexcept { return topo::detail::emulation_requested(); }

uint64_t routing_settings_digest() noexcept {
  uint64_t d = static_cast<uint64_t>(forced_algorithm());
  d = d * 2 + (topology_emulated() ? 1 : 0);
  d = d * 2 + (nccl_exchanges() ? 1 : 0);
  return d * 1000003 + static_cast<uint64_t>(agreement_period_limit());
}

}  // namespace strata::coll
