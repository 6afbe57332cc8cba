#include "collectives/nccl/device_state.hpp"

#include "base/log.hpp"
#include "fault/terminate_hooks.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace strata::coll::device {

using mpi::real;

namespace {

// Every live NCCL communicator of the process, for the fault policy's end
// (fault/terminate_hooks.hpp): a rank ended while its kernel waits for a
// peer aborts them first, so nothing is left spinning on the GPU.
std::mutex g_live_mutex;
std::vector<ncclComm_t>* g_live = new std::vector<ncclComm_t>();  // never destroyed: read at the end

// On the fault agent's thread, other threads anywhere (perhaps in
// ncclCommInitRank, holding no lock of ours but possibly about to take
// this one): try_lock only. ncclCommAbort is NCCL's way to end a
// communicator another thread may be blocked on.
void abort_live_comms() noexcept {
  std::unique_lock<std::mutex> lock(g_live_mutex, std::try_to_lock);
  const nccl::Library* lib = nccl::library();
  if (!lock.owns_lock() || lib == nullptr || lib->CommAbort == nullptr) return;
  for (ncclComm_t c : *g_live) lib->CommAbort(c);
  STRATA_LOG(warn, kColl, "fault policy: %zu NCCL communicator(s) aborted", g_live->size());
  g_live->clear();
}

void remember_live(ncclComm_t comm) noexcept {
  static const bool hooked = fault::add_terminate_hook(abort_live_comms);
  (void)hooked;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  try {
    g_live->push_back(comm);
  } catch (...) {  // out of memory: this one is not aborted at a fault policy's end, only freed with the process
  }
}

void forget_live(ncclComm_t comm) noexcept {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  g_live->erase(std::remove(g_live->begin(), g_live->end(), comm), g_live->end());
}

State& state_of(Context& context) {
  if (context.device_state == nullptr) context.device_state = new State();
  return *context.device_state;
}

// Rank 0 makes the unique id and broadcasts it with a success flag, so a
// failure there fails every rank instead of hanging them in CommInitRank.
Result<ncclComm_t> create_comm(MPI_Comm mpi_comm) {
  const nccl::Library* lib = nccl::library();
  if (lib == nullptr) return Status::not_supported;
  int rank = 0, size = 0;
  if (real().MPI_Comm_rank(mpi_comm, &rank) != MPI_SUCCESS || real().MPI_Comm_size(mpi_comm, &size) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  struct {
    int ok;
    ncclUniqueId id;
  } message{};
  if (rank == 0) message.ok = lib->GetUniqueId(&message.id) == ncclSuccess ? 1 : 0;
  if (real().MPI_Bcast(&message, sizeof message, MPI_BYTE, 0, mpi_comm) != MPI_SUCCESS) return Status::mpi_error;
  if (!message.ok) {
    STRATA_LOG(error, kColl, "ncclGetUniqueId failed on the first rank of a level communicator");
    return Status::device_error;
  }
  ncclComm_t comm = nullptr;
  STRATA_TRY(nccl::check(lib->CommInitRank(&comm, size, message.id, rank), "ncclCommInitRank"));
  return comm;
}

}  // namespace

Result<ncclComm_t> comm_for(Context& context, MPI_Comm mpi_comm) noexcept {
  int device = 0;
  STRATA_TRY(gpu::get_device(&device));
  State& s = state_of(context);
  const auto key = std::make_pair(device, mpi_comm);
  auto it = s.comms.find(key);
  if (it != s.comms.end()) return it->second;
  Result<ncclComm_t> made = create_comm(mpi_comm);
  if (!made) return made.status();
  s.comms.emplace(key, made.value());
  remember_live(made.value());
  return made.value();
}

Result<const StepLayout*> layout_for(Context& context, Algorithm algorithm) noexcept {
  State& s = state_of(context);
  auto it = s.layouts.find(algorithm);
  if (it != s.layouts.end()) return &it->second;
  const host::Hierarchy& h = context.hierarchy(algorithm);
  if (!h.uniform || h.levels.empty()) return Status::not_supported;
  StepLayout layout;
  std::vector<int> position;
  for (size_t k = 0; k < h.levels.size(); ++k) {
    const MPI_Comm step = k == 0 ? h.levels[0].group : h.levels[k - 1].cross;
    int rank = 0, size = 0;
    if (real().MPI_Comm_rank(step, &rank) != MPI_SUCCESS || real().MPI_Comm_size(step, &size) != MPI_SUCCESS) {
      return Status::mpi_error;
    }
    layout.steps.push_back(step);
    layout.fanout.push_back(size);
    position.push_back(rank);
  }
  // Mixed radix, step 0 most significant: the order in which the steps'
  // reduce-scatters leave the chunks.
  int index = 0;
  for (size_t k = 0; k < position.size(); ++k) index = index * layout.fanout[k] + position[k];
  layout.my_index = index;
  std::vector<int> indices(static_cast<size_t>(context.size()));
  if (real().MPI_Allgather(&index, 1, MPI_INT, indices.data(), 1, MPI_INT, context.comm()) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  layout.order.assign(indices.size(), -1);
  for (size_t r = 0; r < indices.size(); ++r) {
    const int d = indices[r];
    if (d < 0 || static_cast<size_t>(d) >= indices.size() || layout.order[static_cast<size_t>(d)] != -1) {
      STRATA_LOG(error, kColl, "hierarchical layout: position index %d of rank %zu is not a permutation", d, r);
      return Status::internal;
    }
    layout.order[static_cast<size_t>(d)] = static_cast<int>(r);
  }
  return &s.layouts.emplace(algorithm, std::move(layout)).first->second;
}

Result<void*> scratch(Context& context, size_t bytes) noexcept {
  State& s = state_of(context);
  int device = 0;
  STRATA_TRY(gpu::get_device(&device));
  if (s.scratch != nullptr && s.scratch_bytes >= bytes && s.scratch_device == device) return s.scratch;
  if (s.scratch != nullptr) {
    // Work queued earlier may still read the old buffer.
    STRATA_TRY(gpu::device_synchronize());
    gpu::free_device(s.scratch);
    s.scratch = nullptr;
  }
  void* p = nullptr;
  STRATA_TRY(gpu::malloc_device(&p, bytes));
  s.scratch = p;
  s.scratch_bytes = bytes;
  s.scratch_device = device;
  return p;
}

void destroy(State* state) noexcept {
  if (state == nullptr) return;
  const nccl::Library* lib = nccl::library();
  for (auto& [key, comm] : state->comms) {
    forget_live(comm);
    if (lib != nullptr) lib->CommDestroy(comm);
  }
  if (state->scratch != nullptr) gpu::free_device(state->scratch);
  delete state;
}

}  // namespace strata::coll::device
