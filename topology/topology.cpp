// Topology::create and the accessors: the places (emulated or discovered),
// the level plan, and the level communicators built from it.
#include <strata/topology.hpp>

#include "base/log.hpp"
#include "mpi/helpers.hpp"
#include "topology/discover.hpp"
#include "topology/emulate.hpp"
#include "topology/hwloc/hwloc_probe.hpp"
#include "topology/impl.hpp"
#include "topology/mpi_check.hpp"

#include <new>

namespace strata::topo {

using mpi::real;

namespace {

Status find_places(Topology::Impl* impl, LinkClass* package_link) noexcept {
  Result<bool> emulated = detail::emulated_places(impl->comm, impl->rank, impl->size, &impl->places);
  STRATA_TRY(emulated.status());
  impl->emulated = emulated.value();
  if (impl->emulated) {
    *package_link = LinkClass::gpu;  // emulated machines are GPU machines
    return Status::ok;
  }
  bool all_gpus = false;
  STRATA_TRY(detail::discover_places(impl->comm, impl->rank, impl->size, &impl->places, &all_gpus));
  impl->hwloc = hw::available();
  // Peer access is not queried: GPUs of one node count as peer-linked
  // (NVLink, xGMI); pcie is reserved for when it is.
  *package_link = all_gpus ? LinkClass::gpu : LinkClass::shm;
  return Status::ok;
}

void log_summary(const Topology::Impl& impl) {
  if (impl.rank != 0 || !log::enabled(log::Level::info, log::kTopo)) return;
  std::string levels;
  for (const auto& p : impl.plans) {
    levels += (levels.empty() ? "" : ", ") + p.level.name + "/" + to_string(p.level.link);
  }
  STRATA_LOG(info, kTopo, "%d ranks, %zu levels (%s)%s", impl.size, impl.plans.size(),
             levels.empty() ? "flat" : levels.c_str(), impl.emulated ? ", emulated" : "");
}

Result<std::unique_ptr<Topology::Impl>> build(MPI_Comm comm) {
  if (!mpi::running()) {
    STRATA_LOG(error, kTopo, "Topology::create called outside MPI_Init..MPI_Finalize");
    return Status::invalid_argument;
  }
  if (comm == MPI_COMM_NULL) {
    STRATA_LOG(error, kTopo, "Topology::create called with MPI_COMM_NULL");
    return Status::invalid_argument;
  }
  auto impl = std::make_unique<Topology::Impl>();
  STRATA_TOPO_MPI(real().MPI_Comm_dup(comm, &impl->comm));
  // Strata checks every return code; the level communicators inherit this.
  STRATA_TOPO_MPI(real().MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN));
  STRATA_TOPO_MPI(real().MPI_Comm_rank(impl->comm, &impl->rank));
  STRATA_TOPO_MPI(real().MPI_Comm_size(impl->comm, &impl->size));
  LinkClass package_link = LinkClass::shm;
  STRATA_TRY(find_places(impl.get(), &package_link));
  impl->plans = detail::plan_levels(impl->places, package_link);
  for (const auto& plan : impl->plans) {
    impl->comms.emplace_back();
    STRATA_TRY(detail::build_level_comms(impl->comm, impl->rank, plan, &impl->comms.back()));
  }
  log_summary(*impl);
  return Result<std::unique_ptr<Topology::Impl>>(std::move(impl));
}

// Answers for a level index out of range.
const Level kNoLevel{};

}  // namespace

const char* to_string(LinkClass link) noexcept {
  switch (link) {
    case LinkClass::die: return "die";
    case LinkClass::gpu: return "gpu";
    case LinkClass::pcie: return "pcie";
    case LinkClass::shm: return "shm";
    case LinkClass::network: return "network";
  }
  return "?";
}

Topology::Impl::~Impl() {
  if (mpi::finalized()) {
    return;  // the library already freed everything
  }
  for (auto& c : comms) detail::free_level_comms(&c);
  if (comm != MPI_COMM_NULL) {
    (void)detail::mpi_check(real().MPI_Comm_free(&comm), "MPI_Comm_free(topology)");
  }
}

Result<std::shared_ptr<const Topology>> Topology::create(MPI_Comm comm) noexcept {
  try {
    Result<std::unique_ptr<Impl>> impl = build(comm);
    STRATA_TRY(impl.status());
    return std::shared_ptr<const Topology>(new Topology(std::move(impl).value()));
  } catch (const std::bad_alloc&) {
    STRATA_LOG(error, kTopo, "out of memory while building the topology");
    return Status::out_of_memory;
  }
}

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::~Topology() = default;

MPI_Comm Topology::comm() const noexcept { return impl_->comm; }
int Topology::rank() const noexcept { return impl_->rank; }
int Topology::size() const noexcept { return impl_->size; }
bool Topology::emulated() const noexcept { return impl_->emulated; }
const std::vector<Place>& Topology::places() const noexcept { return impl_->places; }
const Place& Topology::self() const noexcept { return impl_->places[static_cast<size_t>(impl_->rank)]; }
int Topology::num_levels() const noexcept { return static_cast<int>(impl_->plans.size()); }

const Level& Topology::level(int i) const noexcept {
  return i >= 0 && i < num_levels() ? impl_->plans[static_cast<size_t>(i)].level : kNoLevel;
}

MPI_Comm Topology::group(int i) const noexcept {
  return i >= 0 && i < num_levels() ? impl_->comms[static_cast<size_t>(i)].group : MPI_COMM_NULL;
}

MPI_Comm Topology::cross(int i) const noexcept {
  return i >= 0 && i < num_levels() ? impl_->comms[static_cast<size_t>(i)].cross : MPI_COMM_NULL;
}

MPI_Comm Topology::leaders(int i) const noexcept {
  return i >= 0 && i < num_levels() ? impl_->comms[static_cast<size_t>(i)].leaders : MPI_COMM_NULL;
}

bool Topology::is_leader(int i) const noexcept {
  return i >= 0 && i < num_levels() &&
         impl_->plans[static_cast<size_t>(i)].leader[static_cast<size_t>(impl_->rank)] != 0;
}

bool Topology::uniform() const noexcept {
  for (const auto& p : impl_->plans) {
    if (p.level.min_group_size != p.level.max_group_size) return false;
  }
  return true;
}

}  // namespace strata::topo
