#include "collectives/context.hpp"
#include "collectives/settings.hpp"
#include "collectives/device_timer.hpp"

#include "base/config.hpp"
#include "base/handle_table.hpp"
#include "base/log.hpp"
#include "collectives/device_backend.hpp"
#include "collectives/routing.hpp"
#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace strata::coll {

using mpi::real;

namespace {

// Contexts hang on their communicators as attributes; MPI_COMM_SELF's
// attribute (deleted first thing in MPI_Finalize) releases those still
// alive, while MPI can still free their communicators.
std::atomic<uint64_t> g_decisions{0};  // decisions_taken() (routing.hpp)
std::mutex g_registry_mutex;
int g_keyval = MPI_KEYVAL_INVALID;
std::vector<std::pair<MPI_Comm, Context*>>* g_registry = new std::vector<std::pair<MPI_Comm, Context*>>();

// The contexts by communicator, read without a lock on every call.
HandleTable<1024>& contexts() {
  static auto* t = new HandleTable<1024>();  // never destroyed
  return *t;
}

int delete_context(MPI_Comm comm, int, void* attribute, void*) {
  contexts().forget(comm);
  auto* context = static_cast<Context*>(attribute);
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    auto& r = *g_registry;
    r.erase(std::remove_if(r.begin(), r.end(), [&](const auto& e) { return e.second == context; }), r.end());
  }
  delete context;
  return MPI_SUCCESS;
}

int release_at_finalize(MPI_Comm, int, void*, void*) {
  std::vector<std::pair<MPI_Comm, Context*>> alive;
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    alive = *g_registry;
  }
  for (const auto& [comm, context] : alive) real().MPI_Comm_delete_attr(comm, g_keyval);  // runs delete_context
  return MPI_SUCCESS;
}

Status keyval() {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  if (g_keyval != MPI_KEYVAL_INVALID) return Status::ok;
  int kv = MPI_KEYVAL_INVALID;
  if (real().MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &kv, nullptr) != MPI_SUCCESS) {
    STRATA_LOG(error, kColl, "MPI_Comm_create_keyval failed");
    return Status::mpi_error;
  }
  int self_kv = MPI_KEYVAL_INVALID;
  if (real().MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_at_finalize, &self_kv, nullptr) != MPI_SUCCESS ||
      real().MPI_Comm_set_attr(MPI_COMM_SELF, self_kv, nullptr) != MPI_SUCCESS) {
    STRATA_LOG(error, kColl, "cannot hook MPI_Finalize (MPI_COMM_SELF attribute)");
    return Status::mpi_error;
  }
  g_keyval = kv;
  return Status::ok;
}

// 0 for 0 bytes, else 1 + floor(log2(bytes)): the bit width, by one
// instruction (a call of log2 was a tenth of a routed host call's cost).
int bucket_of(size_t bytes) { return bytes == 0 ? 0 : 64 - __builtin_clzll(static_cast<unsigned long long>(bytes)); }

}  // namespace

Result<Context*> Context::of(MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_NULL) return Status::invalid_argument;
  if (const uint64_t known = contexts().find(comm)) return reinterpret_cast<Context*>(known);
  int inter = 0;
  if (real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return Status::invalid_argument;
  if (inter) return Status::not_supported;
  STRATA_TRY(keyval());
  void* value = nullptr;
  int found = 0;
  if (real().MPI_Comm_get_attr(comm, g_keyval, &value, &found) != MPI_SUCCESS) return Status::mpi_error;
  if (found) return static_cast<Context*>(value);
  Result<std::unique_ptr<Context>> made = create(comm);
  if (!made) return made.status();
  Context* context = made.value().release();
  if (real().MPI_Comm_set_attr(comm, g_keyval, context) != MPI_SUCCESS) {
    delete context;
    return Status::mpi_error;
  }
  contexts().set(comm, reinterpret_cast<uint64_t>(context));
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  g_registry->emplace_back(comm, context);
  return context;
}

Context* Context::routed(MPI_Comm comm) noexcept {
  auto* c = reinterpret_cast<Context*>(contexts().find(comm));
  return c != nullptr && c->routed_.load(std::memory_order_acquire) ? c : nullptr;
}

uint64_t decisions_taken() noexcept { return g_decisions.load(std::memory_order_relaxed); }

Result<std::unique_ptr<Context>> Context::create(MPI_Comm comm) noexcept {
  g_decisions.fetch_add(1, std::memory_order_relaxed);
  Result<std::shared_ptr<const topo::Topology>> topology = topo::Topology::create(comm);
  if (!topology) return topology.status();
  std::unique_ptr<Context> c(new (std::nothrow) Context());
  if (!c) return Status::out_of_memory;
  c->topology_ = std::move(topology).value();
  const topo::Topology& t = *c->topology_;
  c->flat_.comm = t.comm();
  c->full_.comm = t.comm();
  c->full_.uniform = t.uniform();
  for (int i = 0; i < t.num_levels(); ++i) c->full_.levels.push_back({t.group(i), t.cross(i), t.leaders(i)});
  STRATA_TRY(c->build_two_level());
  c->build_machines();
  STRATA_TRY(c->find_shared_gpus());
  install_device_timer();  // device times of recorded collectives on streams (STRATA_FAULT)
  return c;
}

// two_level: the levels below "node" merged into one (the node group), then
// the nodes. Without a node level, or with nothing below it, it is the full
// hierarchy or flat.
Status Context::build_two_level() noexcept {
  const topo::Topology& t = *topology_;
  const int levels = t.num_levels();
  const bool has_node_level = levels > 0 && t.level(levels - 1).name == "node";
  two_level_.comm = t.comm();
  if (!has_node_level) return Status::ok;  // one node: two_level is flat
  if (levels <= 2) {
    two_level_ = full_;
    return Status::ok;
  }
  const int node_group = levels - 2;  // the group below the top: one node
  int index = 0;
  if (real().MPI_Comm_rank(t.group(node_group), &index) != MPI_SUCCESS) return Status::mpi_error;
  MPI_Comm same_index = MPI_COMM_NULL;
  if (real().MPI_Comm_split(t.comm(), index, t.rank(), &same_index) != MPI_SUCCESS) {
    STRATA_LOG(error, kColl, "MPI_Comm_split (two-level cross communicator) failed");
    return Status::mpi_error;
  }
  owned_.push_back(same_index);
  two_level_.levels.push_back({t.group(node_group), same_index, t.leaders(node_group)});
  two_level_.levels.push_back({t.group(levels - 1), t.cross(levels - 1), t.leaders(levels - 1)});
  const topo::Level& node_level = t.level(node_group);
  two_level_.uniform = node_level.min_group_size == node_level.max_group_size;
  return Status::ok;
}

// From the real hosts and devices, not the (possibly emulated) topology.
// A GPU is known by its PCI address, not its ordinal: ranks each given one
// GPU through CUDA_VISIBLE_DEVICES all see device 0, on different GPUs.
Status Context::find_shared_gpus() noexcept {
  struct Where {
    uint64_t host;
    int64_t gpu;  // PCI address, -1: none
    int devices;  // visible to the rank
    int nccl;
  } me{0, -1, 0, 0};
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  if (real().MPI_Get_processor_name(name, &length) != MPI_SUCCESS) return Status::mpi_error;
  me.host = std::hash<std::string>{}(std::string(name, static_cast<size_t>(length)));
  int device = -1;
  gpu::DeviceProperties props;
  if (gpu::available() && gpu::get_device(&device) == Status::ok && gpu::properties(device, &props) == Status::ok &&
      gpu::device_count(&me.devices) == Status::ok) {
    me.gpu = (int64_t{props.pci_domain} << 32) | (int64_t{props.pci_bus} << 8) | (props.pci_device & 0xff);
  } else {
    device = -1;
  }
  me.nccl = me.gpu >= 0 && device::nccl_available() ? 1 : 0;
  std::vector<Where> all(static_cast<size_t>(size()));
  if (real().MPI_Allgather(&me, sizeof me, MPI_BYTE, all.data(), sizeof me, MPI_BYTE, comm()) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  std::set<std::pair<uint64_t, int64_t>> used;
  std::map<uint64_t, std::pair<int, int>> per_host;  // ranks with a GPU, most GPUs one of them sees
  device_seen_ = device;
  shared_gpu_ = false;
  nccl_everywhere_ = true;
  for (const Where& w : all) {
    if (w.gpu >= 0 && !used.emplace(w.host, w.gpu).second) shared_gpu_ = true;
    nccl_everywhere_ = nccl_everywhere_ && w.gpu >= 0 && w.nccl != 0;
    if (w.gpu < 0) continue;
    std::pair<int, int>& h = per_host[w.host];
    ++h.first;
    h.second = std::max(h.second, w.devices);
  }
  shared_for_good_ = false;
  for (const auto& [host, h] : per_host) shared_for_good_ = shared_for_good_ || h.first > h.second;
  return Status::ok;
}

void Context::build_machines() noexcept {
  const topo::Topology& t = *topology_;
  for (int device = 0; device < 2; ++device) {
    model::Machine& m = machine_[device];
    m.levels.clear();
    m.device = device != 0;
    int below = 1;
    for (int i = 0; i < t.num_levels(); ++i) {
      const topo::Level& level = t.level(i);
      model::LevelShape shape;
      shape.name = level.name;
      shape.fanout = std::max(1, level.max_group_size / std::max(1, below));
      shape.link = model::link_figures(level.name, topo::to_string(level.link), device != 0);
      below = std::max(1, level.max_group_size);
      m.levels.push_back(shape);
    }
  }
}

const host::Hierarchy& Context::hierarchy(Algorithm algorithm) const noexcept {
  switch (algorithm) {
    case Algorithm::hierarchical: return full_;
    case Algorithm::two_level: return two_level_;
    default: return flat_;
  }
}

Algorithm Context::choose(Collective collective, size_t bytes, bool device) noexcept {
  const int c = static_cast<int>(collective);
  const int size_class = std::min(bucket_of(bytes), kSizeClasses - 1);
  if (c < 0 || c >= kCollectives) return model::choose(collective, static_cast<double>(bytes), device, machine(device));
  std::atomic<int8_t>& slot = choices_[c][size_class][device ? 1 : 0];
  const int8_t known = slot.load(std::memory_order_acquire);  // the algorithm + 1; 0: not asked yet
  if (known > 0) return static_cast<Algorithm>(known - 1);
  const Algorithm a = model::choose(collective, static_cast<double>(bytes), device, machine(device));
  slot.store(static_cast<int8_t>(static_cast<int>(a) + 1), std::memory_order_release);
  return a;
}

bool Context::agree_on_device(Collective collective, size_t bytes, bool mine) noexcept {
  const int c = static_cast<int>(collective);
  if (c < 0 || c >= kCollectives) return false;
  return agree(agreements_[c][std::min(bucket_of(bytes), kSizeClasses - 1)], mine);
}

bool Context::agree_on_device(Exchange exchange, bool mine) noexcept {
  const int e = static_cast<int>(exchange);
  if (e < 0 || e >= kExchanges) return false;
  return agree(exchange_agreements_[e], mine);
}

bool Context::host_between_agreements(Collective collective, size_t bytes) noexcept {
  const int c = static_cast<int>(collective);
  if (c < 0 || c >= kCollectives) return false;
  return host_between(agreements_[c][std::min(bucket_of(bytes), kSizeClasses - 1)]);
}

bool Context::host_between_agreements(Exchange exchange) noexcept {
  const int e = static_cast<int>(exchange);
  return e >= 0 && e < kExchanges && host_between(exchange_agreements_[e]);
}

bool Context::host_between(Agreement& a) noexcept {
  if (a.device || a.calls + 1 >= a.next) return false;
  ++a.calls;  // what agree() counts for this call
  g_decisions.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Context::agree(Agreement& a, bool mine) noexcept {
  g_decisions.fetch_add(1, std::memory_order_relaxed);
  if (++a.calls < a.next) return a.device;
  // A rank whose current device is not the one the context saw (a program
  // that calls a collective before cudaSetDevice: every rank was on device
  // 0 then, so the GPUs looked shared) has the ranks look again, together.
  int current = -1;
  if (gpu::available() && gpu::get_device(&current) != Status::ok) current = -1;
  constexpr int kOnDevice = 1, kSameDevice = 2;
  int vote = (mine ? kOnDevice : 0) | (current == device_seen_ ? kSameDevice : 0);
  int all = 0;
  if (real().MPI_Allreduce(&vote, &all, 1, MPI_INT, MPI_BAND, comm()) != MPI_SUCCESS) all = kSameDevice;
  if ((all & kSameDevice) == 0 && find_shared_gpus() != Status::ok) all = kSameDevice;  // keeps the old view
  all &= kOnDevice;
  const bool changed = a.calls > 1 && (all != 0) != a.device;
  a.device = all != 0;
  a.period = changed ? 1 : std::min<uint64_t>(a.period * 2, static_cast<uint64_t>(agreement_period_limit()));
  a.next = a.calls + std::max<uint64_t>(a.period, 1);
  return a.device;
}

Context::~Context() {
  if (device_state != nullptr) device::destroy(device_state);
  if (!mpi::finalized()) {
    for (MPI_Comm& c : owned_) real().MPI_Comm_free(&c);
  }
}

}  // namespace strata::coll
