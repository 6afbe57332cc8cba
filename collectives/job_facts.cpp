#include "collectives/job_facts.hpp"

#include "base/handle_table.hpp"
#include "base/log.hpp"
#include "collectives/device_backend.hpp"
#include "collectives/settings.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/gpu_code.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace strata::coll {

using mpi::real;

// Communicators on which no Strata collective can run, without a lock
// (base/handle_table.hpp), cleared when the communicator is freed. Constant-
// initialised and trivially destroyed: usable at any time of the process.
HandleTable<1024> g_library_only;

namespace {

struct RankFacts {
  uint64_t host = 0;
  uint8_t gpu = 0;
  uint8_t nccl = 0;
  uint8_t caller_flags = 0;  // learn_job's flags (e.g. the interposer's STRATA_SUMMARY)
  uint8_t pad = 0;
  uint32_t settings = 0;  // routing_settings_digest()
  uint16_t devices = 0;   // GPUs this rank sees (job_census)
  uint8_t pad2[2] = {};
  uint32_t nonce = 0;  // random: the job token is made of every rank's (job_token)
};
static_assert(sizeof(RankFacts) == 24, "sent as bytes");

std::mutex g_mutex;
std::vector<RankFacts>* g_world = nullptr;  // by MPI_COMM_WORLD rank
int g_ranks_on_my_host = 0;
bool g_uses_gpus = false;      // know_program's gpu::uses_gpus
bool g_program_known = false;  // know_program ran (until forget_job)
std::atomic<bool> g_settings_differ{false};
std::atomic<uint8_t> g_flags_everywhere{0};  // the caller flags every rank set
std::atomic<uint64_t> g_job_token{0};
int g_keyval = MPI_KEYVAL_INVALID;

void set_library_only(MPI_Comm comm, bool value) { g_library_only.set(comm, value ? 1 : 0); }

// What is cached on a communicator: its facts, and which members share
// this rank's host (by communicator rank).
struct Stored {
  CommFacts facts;
  std::vector<bool> on_my_host;
  std::vector<int> world_ranks;  // by communicator rank
};

int free_facts(MPI_Comm comm, int, void* attribute, void*) {
  set_library_only(comm, false);
  delete static_cast<Stored*>(attribute);
  return MPI_SUCCESS;
}

Stored compute(MPI_Comm comm) {
  Stored stored;
  CommFacts& f = stored.facts;
  int inter = 0, size = 0;
  if (real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    return stored;
  }
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  std::vector<int> ranks(static_cast<size_t>(size)), in_world(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<size_t>(i)] = i;
  const bool translated =
      real().MPI_Comm_group(comm, &group) == MPI_SUCCESS &&
      real().MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
      real().MPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data()) == MPI_SUCCESS;
  if (group != MPI_GROUP_NULL) real().MPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) real().MPI_Group_free(&world);
  if (!translated) return stored;
  int me = 0;
  if (real().MPI_Comm_rank(MPI_COMM_WORLD, &me) != MPI_SUCCESS) return stored;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_world == nullptr || static_cast<size_t>(me) >= g_world->size()) return stored;
  const uint64_t my_host = (*g_world)[static_cast<size_t>(me)].host;
  f.known = true;
  f.gpus_everywhere = true;
  f.nccl_everywhere = true;
  stored.on_my_host.resize(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) {
    const int r = in_world[static_cast<size_t>(i)];
    if (r == MPI_UNDEFINED || r < 0 || static_cast<size_t>(r) >= g_world->size()) return Stored{};
    const RankFacts& m = (*g_world)[static_cast<size_t>(r)];
    f.gpus_everywhere = f.gpus_everywhere && m.gpu != 0;
    f.nccl_everywhere = f.nccl_everywhere && m.gpu != 0 && m.nccl != 0;
    f.multi_node = f.multi_node || m.host != (*g_world)[static_cast<size_t>(in_world[0])].host;
    stored.on_my_host[static_cast<size_t>(i)] = m.host == my_host;
  }
  stored.world_ranks = std::move(in_world);
  return stored;
}

// The communicator's cached facts (computed and attached on first use), or
// null where they cannot be.
const Stored* stored_of(MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_NULL || g_keyval == MPI_KEYVAL_INVALID) return nullptr;
  void* value = nullptr;
  int found = 0;
  if (real().MPI_Comm_get_attr(comm, g_keyval, &value, &found) == MPI_SUCCESS && found) {
    return static_cast<const Stored*>(value);
  }
  Stored* s = nullptr;
  try {
    s = new Stored(compute(comm));
  } catch (...) {
    return nullptr;
  }
  if (real().MPI_Comm_set_attr(comm, g_keyval, s) != MPI_SUCCESS) {
    delete s;
    return nullptr;
  }
  const CommFacts& f = s->facts;
  const bool library_only = f.known && !f.gpus_everywhere && !f.multi_node && !topology_emulated() &&
                            (forced_algorithm() == Algorithm::automatic || forced_algorithm() == Algorithm::library);
  set_library_only(comm, library_only);
  return s;
}

}  // namespace

void know_program() noexcept {
  if (g_program_known) return;
  std::string why;
  g_uses_gpus = gpu::uses_gpus(&why);
  STRATA_LOG(debug, kColl, "a GPU program: %s (%s)", g_uses_gpus ? "yes" : "no", why.c_str());
  if (!g_uses_gpus) gpu::defer_runtime_until_driver_loaded();  // as a plain run: no driver started
  g_program_known = true;
}

Status learn_job(MPI_Comm world, uint8_t caller_flags) noexcept {
  RankFacts mine;
  mine.caller_flags = caller_flags;
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  if (real().MPI_Get_processor_name(name, &length) != MPI_SUCCESS) return Status::mpi_error;
  mine.host = std::hash<std::string>{}(std::string(name, static_cast<size_t>(length)));
  // A host program on a GPU node counts none (gpu_code.hpp, uses_gpus): its
  // communicators are then left to the library, and its host collectives
  // pass from the exported function instead of taking the routed handler
  // on every call (measured on 2 x H100's host: +40 to +620 ns a small
  // allreduce at 8 and 32 ranks, bench/results/overhead-h100x2-host.md).
  know_program();
  int devices = 0;
  mine.gpu = g_uses_gpus && gpu::available() && gpu::device_count(&devices) == Status::ok && devices > 0 ? 1 : 0;
  mine.devices = mine.gpu != 0 ? static_cast<uint16_t>(std::min(devices, 0xffff)) : 0;
  mine.nccl = mine.gpu != 0 && device::nccl_available() ? 1 : 0;
  mine.settings = static_cast<uint32_t>(routing_settings_digest());
  mine.nonce = static_cast<uint32_t>(std::random_device{}());
  int size = 0;
  if (real().MPI_Comm_size(world, &size) != MPI_SUCCESS) return Status::mpi_error;
  auto* all = new (std::nothrow) std::vector<RankFacts>(static_cast<size_t>(size));
  if (all == nullptr) return Status::out_of_memory;
  if (real().MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all->data(), sizeof mine, MPI_BYTE, world) != MPI_SUCCESS) {
    delete all;
    return Status::mpi_error;
  }
  bool agree = true;
  for (const RankFacts& r : *all) agree = agree && r.settings == all->front().settings;
  if (!agree) {
    STRATA_LOG_ONCE(warn, kColl,
                    "STRATA_COLL_ALGO, STRATA_COLL_EXCHANGE, STRATA_COLL_AGREE_EVERY or STRATA_TOPOLOGY differ "
                    "between ranks: every collective is left to the MPI library; give every rank the same values "
                    "(mpirun -x, srun --export)");
  }
  g_settings_differ.store(!agree, std::memory_order_release);
  uint8_t everywhere = 0xff;
  for (const RankFacts& r : *all) everywhere &= r.caller_flags;
  g_flags_everywhere.store(everywhere, std::memory_order_release);
  uint64_t token = 0xcbf29ce484222325ULL;  // FNV-1a over every rank's nonce: the same on every rank
  for (const RankFacts& r : *all) token = (token ^ r.nonce) * 0x100000001b3ULL;
  g_job_token.store(token == 0 ? 1 : token, std::memory_order_release);
  int here = 0;
  for (const RankFacts& r : *all) here += r.host == mine.host ? 1 : 0;
  g_ranks_on_my_host = here;
  std::lock_guard<std::mutex> lock(g_mutex);
  delete g_world;
  g_world = all;
  if (g_keyval == MPI_KEYVAL_INVALID &&
      real().MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_facts, &g_keyval, nullptr) != MPI_SUCCESS) {
    g_keyval = MPI_KEYVAL_INVALID;
  }
  return Status::ok;
}

int ranks_on_my_host() noexcept { return g_ranks_on_my_host; }

bool this_rank_uses_gpus() noexcept { return g_uses_gpus; }

bool settings_agree() noexcept { return !g_settings_differ.load(std::memory_order_acquire); }

bool caller_flag_everywhere(uint8_t flag) noexcept {
  return (g_flags_everywhere.load(std::memory_order_acquire) & flag) == flag;
}

JobCensus job_census() noexcept {
  JobCensus c;
  std::vector<uint64_t> hosts;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_world == nullptr) return c;
  try {
    hosts.reserve(g_world->size());
  } catch (...) {
    return c;  // out of memory: nothing to count
  }
  for (const RankFacts& r : *g_world) {
    ++c.ranks;
    hosts.push_back(r.host);
    for (int bit = 0; bit < 8; ++bit) c.ranks_with_flag[bit] += (r.caller_flags >> bit) & 1;
    if (r.gpu == 0) continue;
    c.fewest_devices = c.ranks_with_gpu == 0 ? r.devices : std::min<int>(c.fewest_devices, r.devices);
    c.most_devices = std::max<int>(c.most_devices, r.devices);
    ++c.ranks_with_gpu;
    c.ranks_with_nccl += r.nccl != 0 ? 1 : 0;
  }
  std::sort(hosts.begin(), hosts.end());
  c.hosts = static_cast<int>(std::unique(hosts.begin(), hosts.end()) - hosts.begin());
  return c;
}

void forget_job() noexcept {
  g_uses_gpus = false;
  g_program_known = false;
  g_flags_everywhere.store(0, std::memory_order_release);
  g_job_token.store(0, std::memory_order_release);
  std::lock_guard<std::mutex> lock(g_mutex);
  delete g_world;
  g_world = nullptr;
}

CommFacts facts_of(MPI_Comm comm) noexcept {
  const Stored* s = stored_of(comm);
  return s != nullptr ? s->facts : CommFacts{};
}

bool member_on_my_host(MPI_Comm comm, int rank) noexcept {
  const Stored* s = stored_of(comm);
  return s != nullptr && rank >= 0 && static_cast<size_t>(rank) < s->on_my_host.size() &&
         s->on_my_host[static_cast<size_t>(rank)];
}

int world_rank_of(MPI_Comm comm, int rank) noexcept {
  const Stored* s = stored_of(comm);
  if (s == nullptr || rank < 0 || static_cast<size_t>(rank) >= s->world_ranks.size()) return -1;
  return s->world_ranks[static_cast<size_t>(rank)];
}

uint64_t job_token() noexcept { return g_job_token.load(std::memory_order_acquire); }

void mark_library_only(MPI_Comm comm) noexcept { set_library_only(comm, true); }

}  // namespace strata::coll
