#include "collectives/routing.hpp"

#include "base/log.hpp"
#include "collectives/device_backend.hpp"
#include "collectives/p2p_backend.hpp"
#include "collectives/job_facts.hpp"
#include "collectives/settings.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::coll {
namespace {

// Does the communicator need a context: could any of Strata's collectives
// run on it? Without the job's facts (a program that links Strata and
// calls its collectives itself) always.
bool needs_context(MPI_Comm comm, Algorithm wanted) {
  const CommFacts f = facts_of(comm);
  if (!f.known) return true;
  return f.gpus_everywhere || f.multi_node || topology_emulated() ||
         (wanted != Algorithm::automatic && wanted != Algorithm::library);
}

bool hierarchical(Algorithm a) { return a == Algorithm::hierarchical || a == Algorithm::two_level; }

// Do the communicator's ranks span several nodes (as the topology, emulated
// or discovered, says: the same on every rank)? Within one node the
// library's shared-memory collectives beat Strata's host algorithms
// (measured: 8 ranks on a 16-core host, allreduce 512 KiB 0.61x, 1 MiB
// 0.60x with the hierarchical algorithm), so those run only across nodes
// unless STRATA_COLL_ALGO forces them.
bool spans_nodes(const Context& c) {
  const topo::Topology& t = c.topology();
  for (int i = 0; i < t.num_levels(); ++i) {
    if (t.level(i).name == "node") return true;  // a node level exists only above several nodes
  }
  return false;
}

// Where a call whose buffers are not all on device runs: Strata's host
// algorithm where one was forced, or chosen for a communicator across
// nodes, else the library.
Route host_route(const Context& c, Algorithm wanted, Algorithm a) {
  if (hierarchical(a) && (wanted != Algorithm::automatic || (c.size() >= 4 && spans_nodes(c)))) return Route::host;
  if (wanted == Algorithm::ring || wanted == Algorithm::recursive) return Route::host;  // tests, comparisons
  return Route::library;
}

}  // namespace

const char* to_string(Exchange exchange) noexcept {
  switch (exchange) {
    case Exchange::all_to_all: return "all-to-all";
    case Exchange::gather: return "gather";
    case Exchange::scatter: return "scatter";
    case Exchange::allgather_v: return "allgatherv";
  }
  return "?";
}

const char* to_string(Route route) noexcept {
  switch (route) {
    case Route::library: return "library";
    case Route::host: return "Strata host algorithm";
    case Route::nccl: return "NCCL";
  }
  return "?";
}

Result<Decision> decide(Collective collective, MPI_Comm comm, size_t bytes, bool mappable, bool mine_on_device,
                        Algorithm algorithm, bool require_context) noexcept {
  if (comm == MPI_COMM_NULL) return Status::invalid_argument;
  Decision d;
  const Algorithm wanted = algorithm != Algorithm::automatic ? algorithm : forced_algorithm();
  // A communicator the routing has already made its context for, by its
  // facts alone: what follows is all there is to ask (every call of a job
  // whose ranks each have a GPU comes here, host buffers too).
  d.context = algorithm == Algorithm::automatic ? Context::routed(comm) : nullptr;
  if (d.context == nullptr) {
    int inter = 0;
    if (mpi::real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return Status::invalid_argument;
    if (inter) return require_context ? Result<Decision>(Status::not_supported) : Result<Decision>(d);
    const bool agreed = settings_agree();
    if (!require_context && !agreed) return d;  // the same on every rank (job_facts.hpp)
    // Unless the call names its algorithm, `wanted` is the forced one and
    // the facts' answer is the whole answer.
    const bool by_facts = agreed && needs_context(comm, forced_algorithm());
    if (!require_context && !by_facts && (algorithm == Algorithm::automatic || !needs_context(comm, wanted))) {
      return d;
    }
    Result<Context*> context = Context::of(comm);  // every rank, at this same call
    if (!context) return context.status();
    d.context = context.value();
    if (by_facts) d.context->mark_routed();
  }
  Context& c = *d.context;
  const bool chosen_by_strata = wanted == Algorithm::automatic || wanted == Algorithm::library;
  if (chosen_by_strata && c.never_nccl() && !spans_nodes(c)) {
    mark_library_only(comm);  // every later routed call with host buffers: the library at once
  }
  // On a communicator left to the library the ranks vote on nothing: a rank
  // whose buffers look like host memory at a glance passes it by without
  // coming here (quick_library), so a vote would have only some ranks in it.
  // A call that names its algorithm (the API; every rank names the same)
  // still gets it.
  if (!mappable || (chosen_by_strata && surely_library_only(comm))) return d;
  // The vote first: it may find that the ranks moved to GPUs of their own
  // since the context was made (Context::agree), which nccl_capable reads.
  const bool device = c.agree_on_device(collective, bytes, mine_on_device) && c.nccl_capable();
  Algorithm a = wanted != Algorithm::automatic ? wanted : c.choose(collective, bytes, device);
  if (device) {
    d.route = Route::nccl;
    d.algorithm = device::usable(a, c);
  } else if (host_route(c, wanted, a) == Route::host) {
    d.route = Route::host;
    d.algorithm = a;
  }
  STRATA_LOG(debug, kColl, "%s %zu bytes: %s (%s)", to_string(collective), bytes, to_string(d.route),
             to_string(d.algorithm));
  return d;
}

bool library_between_agreements(Collective collective, MPI_Comm comm, size_t bytes) noexcept {
  Context* c = Context::routed(comm);
  if (c == nullptr) return false;
  const Algorithm wanted = forced_algorithm();
  if (wanted != Algorithm::automatic && wanted != Algorithm::library) return false;
  const Algorithm a = wanted == Algorithm::library ? wanted : c->choose(collective, bytes, false);
  return host_route(*c, wanted, a) == Route::library && c->host_between_agreements(collective, bytes);
}

bool library_between_agreements(Exchange exchange, MPI_Comm comm) noexcept {
  Context* c = Context::routed(comm);  // routed: the settings agree and the facts ask for a context (decide)
  if (c == nullptr) return false;
  return !nccl_exchanges() || c->host_between_agreements(exchange);
}

Result<Decision> decide_exchange(Exchange exchange, MPI_Comm comm, bool mine_on_device) noexcept {
  if (comm == MPI_COMM_NULL) return Status::invalid_argument;
  int inter = 0;
  if (mpi::real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return Status::invalid_argument;
  Decision d;
  if (inter || !settings_agree() || !nccl_exchanges() || !needs_context(comm, forced_algorithm())) return d;
  Result<Context*> context = Context::of(comm);  // every rank, at this same call
  if (!context) return context.status();
  d.context = context.value();
  Context& c = *d.context;
  if (surely_library_only(comm)) return d;  // no vote there (see decide)
  // p2p_available() is part of the vote: an NCCL older than 2.7 anywhere
  // makes it the library's call everywhere. The vote first (see decide).
  if (c.agree_on_device(exchange, mine_on_device && device::p2p_available()) && c.nccl_capable()) {
    d.route = Route::nccl;
  }
  STRATA_LOG(debug, kColl, "%s: %s", to_string(exchange), to_string(d.route));
  return d;
}

bool on_current_device(std::initializer_list<const void*> buffers) noexcept {
  for (const void* b : buffers) {
    if (b != nullptr && b != MPI_IN_PLACE && !gpu::maybe_device(b)) return false;  // host memory, known as such
  }
  int current = -1;
  if (!gpu::available() || gpu::get_device(&current) != Status::ok) return false;
  bool any = false;
  for (const void* b : buffers) {
    if (b == nullptr || b == MPI_IN_PLACE) continue;
    const ::strata::device::Pointer w = gpu::classify(b);
    const bool device =
        w.kind == ::strata::device::MemoryKind::device || w.kind == ::strata::device::MemoryKind::managed;
    if (!device || w.device != current) return false;
    any = true;
  }
  return any;
}

}  // namespace strata::coll
