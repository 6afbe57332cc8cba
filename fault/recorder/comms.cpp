#include "fault/recorder/comms.hpp"

#include "base/log.hpp"
#include "fault/hooks.hpp"
#include "mpi/real_mpi.hpp"

#include <cstdint>
#include <cstring>

namespace strata::fault {

using mpi::real;

namespace {

CommTable* g_table = nullptr;  // for the delete callback

int on_comm_delete(MPI_Comm, int, void* value, void*) {
  if (g_table != nullptr) g_table->on_freed(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(value) - 1));
  return MPI_SUCCESS;
}

uint64_t fnv1a(const int32_t* ranks, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) {
    uint32_t v = static_cast<uint32_t>(ranks[i]);
    for (int b = 0; b < 4; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

struct ThreadCache {
  MPI_Comm comm = MPI_COMM_NULL;
  uint64_t epoch = ~uint64_t{0};
  uint32_t index = kNoComm;
};
STRATA_FAULT_TLS thread_local ThreadCache t_cache;

}  // namespace

void CommTable::open(int world_rank, int world_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  g_table = this;
  if (count_.load() == 0) {
    CommEntry& w = entries_[0];
    w.id = 0;
    w.size = world_size;
    w.my_rank = world_rank;
    count_.store(1, std::memory_order_release);
  }
  if (keyval_ == MPI_KEYVAL_INVALID &&
      real().MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_comm_delete, &keyval_, nullptr) != MPI_SUCCESS) {
    keyval_ = MPI_KEYVAL_INVALID;
    STRATA_LOG(warn, kFault, "no communicator attribute key: only MPI_COMM_WORLD is recorded with its id");
  }
}

void CommTable::on_freed(uint32_t index) {
  if (index < count()) entries_[index].freed.store(true, std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_release);
}

uint32_t CommTable::index_of(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return 0;
  if (comm == MPI_COMM_NULL || keyval_ == MPI_KEYVAL_INVALID) return kNoComm;
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  if (t_cache.comm == comm && t_cache.epoch == epoch) return t_cache.index;
  void* value = nullptr;
  int flag = 0;
  uint32_t index = kNoComm;
  if (real().MPI_Comm_get_attr(comm, keyval_, &value, &flag) == MPI_SUCCESS && flag) {
    index = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(value) - 1);
  } else {
    index = register_comm(comm);
  }
  t_cache = {comm, epoch, index};
  return index;
}

uint32_t CommTable::register_comm(MPI_Comm comm) {
  int inter = 0;
  if (real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return kNoComm;
  int size = 0, rank = 0;
  if (real().MPI_Comm_size(comm, &size) != MPI_SUCCESS || real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
    return kNoComm;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t n = count_.load(std::memory_order_relaxed);
  if (n >= kMaxComms) {
    STRATA_LOG_ONCE(warn, kFault, "more than %u communicators: later ones are recorded without ids", kMaxComms);
    return kNoComm;
  }
  int32_t* world = new (std::nothrow) int32_t[static_cast<size_t>(size)];
  int32_t* local = new (std::nothrow) int32_t[static_cast<size_t>(size)];
  MPI_Group group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
  bool ok = world != nullptr && local != nullptr && real().MPI_Comm_group(comm, &group) == MPI_SUCCESS &&
            real().MPI_Comm_group(MPI_COMM_WORLD, &world_group) == MPI_SUCCESS;
  if (ok) {
    for (int i = 0; i < size; ++i) local[i] = i;
    ok = real().MPI_Group_translate_ranks(group, size, local, world_group, world) == MPI_SUCCESS;
  }
  if (group != MPI_GROUP_NULL) real().MPI_Group_free(&group);
  if (world_group != MPI_GROUP_NULL) real().MPI_Group_free(&world_group);
  delete[] local;
  if (!ok) {
    delete[] world;
    return kNoComm;
  }
  const uint64_t base = fnv1a(world, size) & ~uint64_t{0xff} & 0x0000ffffffffffffull;
  uint64_t ordinal = 0;
  for (uint32_t i = 1; i < n; ++i) {
    if ((entries_[i].id & ~uint64_t{0xff}) == base) ++ordinal;
  }
  CommEntry& e = entries_[n];
  e.id = base | (ordinal & 0xff);
  if (e.id == 0) e.id = 1;  // 0 is the world
  e.size = size;
  e.my_rank = rank;
  e.world_ranks = world;
  count_.store(n + 1, std::memory_order_release);
  if (real().MPI_Comm_set_attr(comm, keyval_, reinterpret_cast<void*>(static_cast<uintptr_t>(n) + 1)) != MPI_SUCCESS) {
    STRATA_LOG(debug, kFault, "could not cache the recorder's index on a communicator");
  }
  return n;
}

int32_t CommTable::world_peer(uint32_t index, int rank) const {
  if (rank == MPI_ANY_SOURCE) return kAnyPeer;
  if (rank == MPI_PROC_NULL) return kNullPeer;
  const CommEntry* e = entry(index);
  if (e == nullptr || rank < 0 || rank >= e->size) return kNoPeer;
  return e->to_world(rank);
}

}  // namespace strata::fault
