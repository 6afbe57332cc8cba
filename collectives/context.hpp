// What the collectives keep per MPI communicator: its topology, the level
// communicators of each algorithm, the cost model's machine and its cached
// choices, and the device state (NCCL communicators). Created collectively
// on a communicator's first collective, cached on it as an MPI attribute,
// freed with it (or at MPI_Finalize).
#pragma once

#include <strata/collectives.hpp>
#include <strata/topology.hpp>

#include "collectives/host/host_collectives.hpp"
#include "collectives/model/cost_model.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace strata::coll {

namespace device {
struct State;  // collectives/device_backend.hpp
void destroy(State* state) noexcept;
}  // namespace device

// The exchanges Strata runs as grouped sends and receives on the NCCL
// route (collectives/exchange.hpp); the v forms share their kind.
enum class Exchange : uint8_t { all_to_all, gather, scatter, allgather_v };
constexpr int kExchanges = 4;

class Context {
 public:
  // The context of `comm`; collective over `comm` the first time.
  static Result<Context*> of(MPI_Comm comm) noexcept;
  // Without a lock or a call: the context of `comm` where the routing made
  // it because the communicator's facts ask for one (mark_routed), else
  // null. The same answer on every rank of `comm`.
  static Context* routed(MPI_Comm comm) noexcept;
  void mark_routed() noexcept { routed_.store(true, std::memory_order_release); }
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const topo::Topology& topology() const noexcept { return *topology_; }
  MPI_Comm comm() const noexcept { return topology_->comm(); }
  int rank() const noexcept { return topology_->rank(); }
  int size() const noexcept { return topology_->size(); }

  // The levels an algorithm runs over: hierarchical, every level of the
  // topology; two_level, the levels within a node merged into one, then the
  // nodes; any other algorithm, none (flat on comm()).
  const host::Hierarchy& hierarchy(Algorithm algorithm) const noexcept;
  // The machine the cost model sees (link figures for host or device).
  const model::Machine& machine(bool device) const noexcept { return machine_[device ? 1 : 0]; }
  // Algorithm::automatic resolved for this call shape (cached per size class).
  Algorithm choose(Collective collective, size_t bytes, bool device) noexcept;
  // Do two ranks of one node use the same GPU? NCCL refuses such a
  // communicator, so device collectives then run on the host path.
  bool ranks_share_a_gpu() const noexcept { return shared_gpu_; }
  // Can NCCL run this communicator's device collectives: every rank has a
  // GPU of its own and loads NCCL (learnt when the context was made, from
  // every rank: the same answer everywhere).
  bool nccl_capable() const noexcept { return nccl_everywhere_ && !shared_gpu_; }
  // Can it never become so: a rank without a GPU or NCCL, or a node with
  // more ranks than any of them sees GPUs. Ranks that share a GPU only
  // because they have not picked theirs yet (all on device 0) may still.
  bool never_nccl() const noexcept { return !nccl_everywhere_ || (shared_gpu_ && shared_for_good_); }
  // Are every rank's buffers of this call in device memory? Agreed by all
  // ranks (an allreduce on the context's communicator) at the first call of
  // each collective and size class and again at calls spaced by doubling
  // periods up to STRATA_COLL_AGREE_EVERY; between agreements the last
  // answer holds, so a rank whose buffers changed kind stages them into the
  // kind agreed. Collective: every rank calls it for the same calls, in
  // order (the collectives of one communicator are).
  bool agree_on_device(Collective collective, size_t bytes, bool mine) noexcept;
  // The same for an exchange, one agreement per kind whatever the sizes
  // (the v forms' sizes differ between ranks).
  bool agree_on_device(Exchange exchange, bool mine) noexcept;
  // A call that agree_on_device would answer "not all on device" without a
  // vote (its collective and size class between two agreements, the last
  // of which found host memory on some rank): counted as that call and
  // true. False, nothing counted, where agree_on_device must be asked.
  bool host_between_agreements(Collective collective, size_t bytes) noexcept;
  bool host_between_agreements(Exchange exchange) noexcept;  // agree_on_device(exchange, false)'s

  // Owned; created by the device backend on first use.
  device::State* device_state = nullptr;

 private:
  Context() = default;
  static Result<std::unique_ptr<Context>> create(MPI_Comm comm) noexcept;
  Status build_two_level() noexcept;
  Status find_shared_gpus() noexcept;
  void build_machines() noexcept;

  std::shared_ptr<const topo::Topology> topology_;
  host::Hierarchy flat_;
  host::Hierarchy full_;
  host::Hierarchy two_level_;
  std::vector<MPI_Comm> owned_;  // communicators built here (two_level's), freed with the context
  model::Machine machine_[2];
  bool shared_gpu_ = false;
  bool nccl_everywhere_ = false;
  bool shared_for_good_ = false;
  std::atomic<bool> routed_{false};
  int device_seen_ = -1;  // this rank's current device when find_shared_gpus last looked
  struct Agreement {
    uint64_t calls = 0;
    uint64_t next = 1;    // the call that agrees next
    uint64_t period = 1;  // calls until the one after
    bool device = false;
  };
  bool agree(Agreement& a, bool mine) noexcept;
  bool host_between(Agreement& a) noexcept;
  // Per (collective, size class): no lock, since MPI forbids two
  // collectives on one communicator at once (threads must order them).
  static constexpr int kCollectives = 5;
  static constexpr int kSizeClasses = 66;
  Agreement agreements_[kCollectives][kSizeClasses];
  Agreement exchange_agreements_[kExchanges];
  // The model's choice per (collective, size class, device), plus one; 0:
  // not asked yet (the context is value-initialized).
  std::atomic<int8_t> choices_[kCollectives][kSizeClasses][2] = {};
};

}  // namespace strata::coll
