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

// Measured on 2 x H100 (bench/results/exchange-device-h100x2.md): below 512 B
// a block, the library's gather of staged device buffers (19 us) beats NCCL's
// grouped sends (20.5 us); from 512 B NCCL wins, 10x at 1 MiB.
config::IntParam g_gather_nccl_min{"STRATA_COLL_GATHER_NCCL_MIN",
                                   512,
                                   "MPI_Gather on device buffers: blocks (one rank's part) of fewer bytes go to the "
                                   "library's call, device buffers staged; blocks of this many bytes or more to NCCL "
                                   "(STRATA_COLL_EXCHANGE=nccl). The same on every rank",
                                   0,
                                   int64_t{1} << 40,
                                   true};

}  // namespace

int64_t gather_nccl_min_bytes() noexcept { return g_gather_nccl_min.get(); }

int agreement_period_limit() noexcept { return static_cast<int>(g_agree_every.get()); }

bool nccl_exchanges() noexcept { return g_exchange.get() == ExchangeRoute::nccl; }

Algorithm forced_algorithm() noexcept { return g_algorithm.get(); }

bool topology_emulated() noexcept { return topo::detail::emulation_requested(); }

uint64_t routing_settings_digest() noexcept {
  uint64_t d = static_cast<uint64_t>(forced_algorithm());
  d = d * 2 + (topology_emulated() ? 1 : 0);
  d = d * 2 + (nccl_exchanges() ? 1 : 0);
  d = d * 1000003 + static_cast<uint64_t>(agreement_period_limit());
  return d * 1000003 + static_cast<uint64_t>(gather_nccl_min_bytes());
}

}  // namespace strata::coll
