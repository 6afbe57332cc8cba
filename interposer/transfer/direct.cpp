#include "interposer/transfer/direct.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "collectives/job_facts.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/job_flags.hpp"
#include "interposer/transfer/stream_from.hpp"
#include "interposer/types/type_cache.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/ipc_cache.hpp"
#include "portability/mover/chunked_transfer.hpp"
#include "portability/mover/copies.hpp"
#include "portability/mover/device_transfer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace strata::interposer {

using mpi::real;

namespace device_direct {

std::atomic<bool> g_active{false};

namespace {

enum class Mode { off, on, automatic };
// auto by default: a host receive pays a few nanoseconds while the
// transport is on (watched_recvs.hpp), and a job that shows no GPU use at
// MPI_Init never turns it on (no context is made for it); see
// docs/device.md.
config::ChoiceParam<Mode> g_mode{
    "STRATA_P2P_IPC",
    Mode::automatic,
    {{"auto", Mode::automatic}, {"on", Mode::on}, {"off", Mode::off}},
    "Device point-to-point between ranks of one node: the receiver pulls a message from the sender's GPU through "
    "CUDA/HIP IPC (a message to self: copied on the device). auto (the default) = on where some rank is a GPU "
    "program (STRATA_GPU_PROGRAM; by default one that shows GPU use at MPI_Init) and no node has more ranks than GPUs "
    "without an MPS daemon (ranks sharing a GPU then time-slice it, and "
    "the transport's device work measured slower than staging, docs/device.md); on = wherever the GPUs reach each "
    "other; off = staged through pinned host memory. Every rank must ask for it (one rank's off turns it off)"};
config::IntParam g_min_bytes{"STRATA_P2P_IPC_MIN_BYTES",
                             1024,
                             "The smallest contiguous device message (bytes) that goes through IPC; smaller ones are "
                             "staged (measured on 2 x H100: IPC wins from 1 KiB, docs/device.md)",
                             2 * static_cast<int64_t>(kDirectDescriptorBytes),
                             INT64_MAX,
                             true};
config::IntParam g_min_strided_bytes{"STRATA_P2P_IPC_MIN_STRIDED_BYTES",
                                     int64_t{16} * 1024,
                                     "The smallest strided device message (packed bytes) that goes through IPC "
                                     "(at least STRATA_P2P_IPC_MIN_BYTES; measured on 2 x H100: IPC wins from 16 KiB, "
                                     "where its pack and unpack kernels cost what staging's do below)",
                                     2 * static_cast<int64_t>(kDirectDescriptorBytes),
                                     INT64_MAX,
                                     true};
config::IntParam g_chunk_bytes{
    "STRATA_P2P_IPC_CHUNK",
    int64_t{8} << 20,
    "A strided device message that goes through IPC (STRATA_P2P_IPC) with at least twice this many packed bytes is "
    "packed in chunks of at least this size (at most 8), its descriptor sent before the pack ends, and the receiver "
    "unpacks each chunk as soon as it is packed (ordered on the GPU by one IPC event per chunk), so that the two "
    "overlap: on 2 x H200 a single vector of 8-byte blocks at a 64-byte stride took 351-365 us at 64 MiB against "
    "376-379 packed whole, 111 against 127-144 at 16 MiB (4 MiB chunks were slower at 64 MiB, 2 MiB at 16 MiB). An "
    "MPI_Isend moves in chunks only when it is the one message of its flush (a window of them overlaps one's unpack "
    "with the next one's pack already: chunked it read 214 against 301 GB/s). 0: packed whole, then sent "
    "(docs/device.md, \"A large strided message in chunks\")",
    0,
    INT64_MAX,
    true};
config::IntParam g_bound_us{"STRATA_P2P_IPC_WAIT_US", 200,
                            "With the device-direct transport on (STRATA_P2P_IPC): how long a completing send waits "
                            "for its receiver to pull the bytes before it moves them to a bounce buffer of its own "
                            "and completes",
                            0, 10'000'000};

static_assert(sizeof(gpu::IpcExport) <= slots::kLocationBytes, "a slot's location holds an IPC export");
static_assert(mover::kPackChunks == kDescriptorMaxChunks, "a descriptor names every chunk event of a pack");
static_assert(sizeof(gpu::IpcEventHandle) == slots::kNoteBytes, "a note holds an IPC event handle");

// What a rehoming copies: the bytes the descriptor named, and the pack that
// fills them when it was left running.
struct Source {
  int device = -1;
  const char* bytes = nullptr;
  int64_t size = 0;
  mover::PackOrder order{};
};

// The bounce: device memory of the sender's, exported like any buffer.
Status copy_out(void*, void* message, slots::Location* where, void** bounce) {
  const auto* source = static_cast<const Source*>(message);
  STRATA_TRY(mover::wait_for_own_pack(source->order));
  auto held =
      std::make_unique<mover::Staging>(mover::Staging::acquire(mover::device_pool(source->device), source->size));
  if (!*held) return Status::out_of_memory;
  STRATA_TRY(mover::copy_bytes(held->data(), source->bytes, source->size));
  gpu::IpcExport e{};
  STRATA_TRY(gpu::ipc_export(held->data(), &e));
  std::memcpy(where->bytes, &e, sizeof e);
  *bounce = held.release();
  counters().direct_rehomed.fetch_add(1, std::memory_order_relaxed);
  return Status::ok;
}

void release_bounce(void*, void* bounce) { delete static_cast<mover::Staging*>(bounce); }

struct State {
  int world_rank = -1;
  int32_t pid = 0;
  uint64_t token = 0;
  std::vector<uint8_t> reads_me;  // by world rank: the rank proved it reads this rank's GPU memory
  std::unique_ptr<slots::SlotTable> table;
  slots::PeerTables peers;
};
State* g_state = nullptr;  // from setup to teardown

// One rank's part of the first-contact proof.
struct Probe {
  int32_t world_rank = -1;
  int32_t ok = 0;  // exported a probe buffer
  int32_t pid = 0;
  int32_t pad = 0;
  uint64_t pattern = 0;  // what the probe buffer holds
  gpu::IpcExport buffer{};
};

uint64_t pattern_of(uint64_t token, int world_rank) {
  return (token ^ 0x9e3779b97f4a7c15ULL) * (static_cast<uint64_t>(world_rank) + 1);
}

// Reads 8 bytes of `peer`'s probe buffer through IPC: is it the pattern?
bool reads(const Probe& peer) {
  char* base = nullptr;
  if (gpu::ipc_import(static_cast<uint64_t>(peer.pid), peer.buffer, &base) != Status::ok) return false;
  uint64_t got = 0;
  const bool ok = mover::copy_bytes(&got, base + peer.buffer.offset, sizeof got) == Status::ok && got == peer.pattern;
  (void)gpu::ipc_release(base);
  return ok;
}

// Can every GPU this rank sees address every other one? The probe below
// reads one buffer, on the device current at MPI_Init (often device 0 on
// every rank); the program's buffers may then be on any of them, so the
// transport needs all pairs (NVLink or PCIe peer access on the GPU
// machines of interest; where a pair lacks it, the rank stages).
bool all_devices_reach_each_other(int devices) {
  for (int a = 0; a < devices; ++a) {
    for (int b = 0; b < devices; ++b) {
      bool yes = false;
      if (a != b && (gpu::can_access_peer(a, b, &yes) != Status::ok || !yes)) return false;
    }
  }
  return true;
}

// This rank's probe buffer, filled and exported; null where it has no GPU.
void* make_probe(Probe* mine) {
  int devices = 0;
  if (!gpu::available() || gpu::device_count(&devices) != Status::ok || devices <= 0) return nullptr;
  if (!all_devices_reach_each_other(devices)) {
    STRATA_LOG_ONCE(info, kDevice,
                    "device-direct transport: not every pair of this rank's %d GPUs has peer access; its "
                    "device messages are staged",
                    devices);
    return nullptr;
  }
  void* buffer = nullptr;
  if (gpu::malloc_device(&buffer, 64) != Status::ok) return nullptr;
  if (mover::copy_bytes(buffer, &mine->pattern, sizeof mine->pattern) != Status::ok ||
      gpu::ipc_export(buffer, &mine->buffer) != Status::ok) {
    (void)gpu::free_device(buffer);
    return nullptr;
  }
  mine->ok = 1;
  return buffer;
}

// Which ranks of this node read this rank's GPU memory, proved by a real
// transfer each way (collective over `node`).
std::vector<uint8_t> prove_node_peers(MPI_Comm node, State& state, int world_size) {
  std::vector<uint8_t> reads_me(static_cast<size_t>(world_size), 0);
  int size = 0, me = 0;
  real().MPI_Comm_size(node, &size);
  real().MPI_Comm_rank(node, &me);
  Probe mine;
  mine.world_rank = state.world_rank;
  mine.pid = static_cast<int32_t>(getpid());
  mine.pattern = pattern_of(state.token, state.world_rank);
  void* buffer = make_probe(&mine);
  std::vector<Probe> all(static_cast<size_t>(size));
  std::vector<uint8_t> row(static_cast<size_t>(size), 0), rows(static_cast<size_t>(size) * size, 0);
  if (real().MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node) == MPI_SUCCESS) {
    for (int j = 0; j < size; ++j) {
      const Probe& p = all[static_cast<size_t>(j)];
      // Itself: a message to self is copied on the device (no IPC).
      row[static_cast<size_t>(j)] = mine.ok && p.ok && (j == me || reads(p)) ? 1 : 0;
    }
  }
  // Every rank has read what it could before any probe buffer goes.
  if (real().MPI_Allgather(row.data(), size, MPI_BYTE, rows.data(), size, MPI_BYTE, node) == MPI_SUCCESS) {
    for (int j = 0; j < size; ++j) {
      const int w = all[static_cast<size_t>(j)].world_rank;
      if (w >= 0 && w < world_size) {
        reads_me[static_cast<size_t>(w)] = rows[static_cast<size_t>(j) * size + me];
      }
    }
  }
  for (const Probe& p : all) {
    if (p.ok && p.pid != mine.pid) gpu::ipc_forget_peer(static_cast<uint64_t>(p.pid));
  }
  if (buffer != nullptr) (void)gpu::free_device(buffer);
  return reads_me;
}

}  // namespace

uint8_t job_flag() noexcept {
  switch (g_mode.get()) {
    case Mode::off: return 0;
    case Mode::on: return kDirectFlag | kDirectForcedFlag;
    default: return kDirectFlag;
  }
}

namespace {

// Is an MPS control daemon serving this node? Its clients find it through
// the control pipe in CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps).
bool mps_daemon_running() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp/nvidia-mps") + "/control";
  return access(control.c_str(), F_OK) == 0;
}

// STRATA_P2P_IPC=auto on this rank: does this node keep a GPU per rank (or
// share GPUs through MPS)? Collective over `node`.
// The node's physical GPUs that its ranks see, told apart by PCI address
// (ranks bound to one GPU each by CUDA_VISIBLE_DEVICES all see a device 0,
// each another one). Collective over `node`.
int node_gpus(MPI_Comm node, int devices) {
  constexpr int kMost = 16;
  int64_t mine[kMost];
  std::fill(mine, mine + kMost, int64_t{-1});
  for (int d = 0; d < std::min(devices, kMost); ++d) {
    gpu::DeviceProperties p;
    if (gpu::properties(d, &p) != Status::ok) continue;
    mine[d] = (int64_t{p.pci_domain} << 32) | (int64_t{p.pci_bus} << 8) | (p.pci_device & 0xff);
  }
  int node_size = 0;
  real().MPI_Comm_size(node, &node_size);
  std::vector<int64_t> all(static_cast<size_t>(node_size) * kMost, -1);
  if (real().MPI_Allgather(mine, kMost, MPI_INT64_T, all.data(), kMost, MPI_INT64_T, node) != MPI_SUCCESS) {
    return devices;
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return static_cast<int>(std::count_if(all.begin(), all.end(), [](int64_t k) { return k >= 0; }));
}

bool node_suits_direct(MPI_Comm node) {
  int node_size = 0, devices = 0;
  real().MPI_Comm_size(node, &node_size);
  if (!gpu::available() || gpu::device_count(&devices) != Status::ok) devices = 0;
  devices = node_gpus(node, devices);  // every rank takes part, whatever its mode
  if (g_mode.get() == Mode::on) return true;
  if (devices <= 0) return false;
  if (node_size <= devices || mps_daemon_running()) return true;
  STRATA_LOG_ONCE(info, kDevice,
                  "STRATA_P2P_IPC=auto: %d ranks share this node's %d GPU(s) without MPS; device messages are staged "
                  "(STRATA_P2P_IPC=on takes IPC anyway)",
                  node_size, devices);
  return false;
}

// This node's ranks of `world` in world order, as MPI_Comm_split_type
// (shared) gives them. Made with MPI_Comm_create_group where the job's
// facts name every rank's host: in Open MPI, split_type takes its context
// id with a non-blocking allreduce on `world`, after which the non-blocking
// collectives' progress function is polled in every wait of the job, a
// cost the plain program never pays; create_group takes it with
// point-to-point messages among the node's ranks (comms_at_init_job checks
// that no progress function is left behind).
MPI_Comm node_comm(MPI_Comm world, int world_rank, int world_size) {
  constexpr int kTag = 0x5354;  // 'ST'
  MPI_Comm node = MPI_COMM_NULL;
  if (!coll::member_on_my_host(world, world_rank)) {  // facts not known: the library's way
    if (real().MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
      return MPI_COMM_NULL;
    }
    return node;
  }
  std::vector<int> here;
  for (int r = 0; r < world_size; ++r) {
    if (coll::member_on_my_host(world, r)) here.push_back(r);
  }
  MPI_Group all = MPI_GROUP_NULL, mine = MPI_GROUP_NULL;
  if (real().MPI_Comm_group(world, &all) == MPI_SUCCESS &&
      real().MPI_Group_incl(all, static_cast<int>(here.size()), here.data(), &mine) == MPI_SUCCESS &&
      real().MPI_Comm_create_group(world, mine, kTag, &node) != MPI_SUCCESS) {
    node = MPI_COMM_NULL;
  }
  if (mine != MPI_GROUP_NULL) real().MPI_Group_free(&mine);
  if (all != MPI_GROUP_NULL) real().MPI_Group_free(&all);
  return node;
}

}  // namespace

void setup(MPI_Comm world) noexcept {
  if (!coll::caller_flag_everywhere(kDirectFlag) || coll::job_token() == 0) return;
  // A host job (no rank a GPU program with a device, none asking for the
  // transport): nothing to set up, and no communicator made. Making one
  // starts a non-blocking allreduce on `world` in Open MPI (its context id),
  // which leaves the non-blocking collectives' progress function polled in
  // every wait for the rest of the job: on 16 ranks of the GPU host, host
  // allreduces of 4-256 B paid 100-300 ns for it (overhead-h100x2-host.md).
  // The job facts say the same on every rank, so every rank returns here.
  const coll::JobCensus census = coll::job_census();
  if (census.ranks_with_gpu == 0 && ranks_with(census, kDirectForcedFlag) == 0) return;
  try {
    auto state = std::make_unique<State>();
    state->token = coll::job_token();
    int world_size = 0;
    real().MPI_Comm_rank(world, &state->world_rank);
    real().MPI_Comm_size(world, &world_size);
    state->pid = static_cast<int32_t>(getpid());
    MPI_Comm node = node_comm(world, state->world_rank, world_size);
    if (node == MPI_COMM_NULL) return;
    // Every rank takes part in what follows, then agrees (the transport is
    // on everywhere or nowhere: every receive must know to look for
    // descriptors): every node suits it, and under auto some rank is a GPU
    // program (the others may pick theirs after MPI_Init). A host program
    // run with the preload on a GPU node is not one (job_facts.hpp,
    // this_rank_uses_gpus), and then no context is made for the first
    // contact (measured on 2 x H200: +200 ms at MPI_Init and 520 MiB of GPU
    // memory per rank). A program that picks its GPU after MPI_Init carries
    // GPU code (measured on 2 x H200: strata-bench-pingpong, which sets its
    // device after MPI_Init, was staged at 17.8 µs for 1 KiB and 206 µs for
    // 1 MiB where IPC takes 12.6 and 17.0).
    const int mine[2] = {node_suits_direct(node) ? 1 : 0,
                         g_mode.get() == Mode::on || coll::this_rank_uses_gpus() ? 0 : 1};  // MIN: 0 where any is
    int agreed[2] = {0, 1};
    if (real().MPI_Allreduce(mine, agreed, 2, MPI_INT, MPI_MIN, world) != MPI_SUCCESS || agreed[0] == 0 ||
        agreed[1] != 0) {
      if (agreed[0] != 0 && agreed[1] != 0) {
        STRATA_LOG_ONCE(info, kDevice,
                        "STRATA_P2P_IPC=auto: no rank used a GPU before MPI_Init (no context, no *_VISIBLE_DEVICES); "
                        "device messages are staged (STRATA_P2P_IPC=on takes IPC anyway)");
      }
      real().MPI_Comm_free(&node);
      return;
    }
    state->reads_me = prove_node_peers(node, *state, world_size);
    int node_size = 0;
    real().MPI_Comm_size(node, &node_size);
    real().MPI_Comm_free(&node);
    const int readers = static_cast<int>(std::count(state->reads_me.begin(), state->reads_me.end(), 1)) -
                        state->reads_me[static_cast<size_t>(state->world_rank)];
    if (readers < node_size - 1) {  // the fallback, said once per rank
      STRATA_LOG_ONCE(
          info, kDevice,
          "device-direct transport: %d of the %d other ranks of this node read this rank's GPU memory through "
          "IPC; device messages to the others are staged",
          readers, node_size - 1);
    }
    slots::TableConfig config;
    config.bound = std::chrono::microseconds(g_bound_us.get());
    slots::BounceHooks hooks;
    hooks.copy_out = copy_out;
    hooks.release = release_bounce;
    Result<std::unique_ptr<slots::SlotTable>> table = slots::SlotTable::create(config, hooks);
    if (table) {
      state->table = std::move(table).value();
    } else {
      STRATA_LOG_ONCE(warn, kDevice,
                      "device-direct transport: no completion slots (%s); this rank's device sends are staged",
                      to_string(table.status()));
    }
    STRATA_LOG(debug, kDevice, "device-direct transport: %d node peer(s) read this rank's GPU memory", readers);
    g_state = state.release();
    // Descriptors may come from any rank now: every receive checks.
    g_active.store(true, std::memory_order_relaxed);
  } catch (...) {
    STRATA_LOG_ONCE(warn, kDevice, "device-direct transport: setup failed (out of memory); device sends are staged");
  }
}

void teardown() noexcept {
  if (!active()) return;
  // A completed send may still be unreceived (its bytes in a bounce): every
  // rank has received all it will before it reaches MPI_Finalize, so after
  // this barrier no slot will be claimed again (collective: active() is
  // the same on every rank).
  (void)real().MPI_Barrier(MPI_COMM_WORLD);
  g_active.store(false, std::memory_order_relaxed);
  delete g_state;  // closes the table: waits a bounded time for receivers
  g_state = nullptr;
}

bool takes(const Plan& plan, MPI_Comm comm, int dest) noexcept {
  if (g_state == nullptr || !g_state->table || plan.path != Path::device_pack || plan.method == Method::device) {
    return false;  // a GPU-aware library moves device buffers itself
  }
  const int64_t least =
      plan.layout.block().contiguous() ? g_min_bytes.get() : std::max(g_min_bytes.get(), g_min_strided_bytes.get());
  if (plan.bytes < least || dest < 0) return false;
  const int w = coll::world_rank_of(comm, dest);
  return w >= 0 && static_cast<size_t>(w) < g_state->reads_me.size() && g_state->reads_me[static_cast<size_t>(w)] != 0;
}

mover::ChunkPlan chunk_plan_for(const Plan& plan) {
  const int64_t least = g_chunk_bytes.get();
  const StridedBlock& block = plan.layout.block();
  if (least <= 0 || block.contiguous() || plan.bytes < 2 * least) return mover::ChunkPlan{};
  return mover::plan_chunks(plan.bytes, block.block, least);
}

namespace {

// The notes of this process's slot table that hold a set of a thread's
// chunk events (pack_order.hpp), published at the set's first message:
// by the address of its handles (stable while the thread lives). False
// where the table has no room left (1024 notes: 16 threads and devices).
bool chunk_notes(const gpu::IpcEventHandle* events, uint32_t* first) {
  static thread_local std::vector<std::pair<const gpu::IpcEventHandle*, uint32_t>> published;
  for (const auto& [handles, at] : published) {
    if (handles == events) {
      *first = at;
      return true;
    }
  }
  slots::Note notes[mover::kPackChunks];
  for (int k = 0; k < mover::kPackChunks; ++k) std::memcpy(notes[k].bytes, events[k].bytes, slots::kNoteBytes);
  if (g_state->table->publish_notes(notes, mover::kPackChunks, first) != slots::SlotStatus::ok) {
    STRATA_LOG_ONCE(info, kDevice,
                    "device-direct: no room for more chunk events in the slot table; large strided messages from "
                    "further threads are packed whole before they are sent");
    return false;
  }
  published.emplace_back(events, *first);
  return true;
}

}  // namespace

}  // namespace device_direct

DirectSend::DirectSend(DirectSend&& other) noexcept { *this = std::move(other); }

DirectSend& DirectSend::operator=(DirectSend&& other) noexcept {
  if (this != &other) {
    complete();
    posted_ = other.posted_;
    sent_ = other.sent_;
    ticket_ = other.ticket_;
    packed_ = std::move(other.packed_);
    descriptor_ = std::move(other.descriptor_);
    source_ = other.source_;
    other.posted_ = false;
    other.source_ = nullptr;
  }
  return *this;
}

Status DirectSend::post(const Plan& plan, const void* buf, mover::Staging* packed_already,
                        const mover::PackOrder* order) {
  device_direct::State* state = device_direct::g_state;
  if (state == nullptr || !state->table) return Status::not_supported;
  const StridedBlock& block = plan.layout.block();
  const char* bytes = static_cast<const char*>(buf) + block.offset;
  mover::PackOrder running{};                              // the batch's pack, where it was left running
  if (!block.contiguous() && packed_already != nullptr) {  // a deferred send's batch packed it
    packed_ = std::move(*packed_already);
    bytes = packed_.data();
    if (order != nullptr) running = *order;
  } else if (!block.contiguous()) {  // packed on the sender's GPU; the receiver unpacks from there
    mover::DeviceMessage packed(plan.device, Method::device);
    STRATA_TRY(packed.reserve(plan.bytes));
    const mover::DevicePart part{&block, static_cast<char*>(const_cast<void*>(buf)), 0};
    const mover::ChunkPlan chunks = device_direct::chunk_plan_for(plan);
    if (chunks.chunks > 1) {  // the receiver unpacks each chunk while the next is packed
      STRATA_TRY(mover::device_pack_chunked(packed, part, chunks, &running));
    } else {
      STRATA_TRY(mover::device_pack(packed, &part, 1));
    }
    packed_ = std::move(packed.device_staging);
    bytes = packed_.data();
  } else {
    // Exported where it lies, read by another process's copy that nothing
    // orders after this one's work: what the application queued on the
    // default stream must have landed first (a cudaMemcpy from pageable
    // memory returns before its DMA does; the receiver then read the
    // previous message's bytes, test_mpi_direct on 2 GPUs). Packing and
    // staging run on streams ordered after that stream already.
    gpu::ScopedDevice on(plan.device);
    STRATA_TRY(on.status());
    STRATA_TRY(gpu::stream_synchronize(nullptr));
  }
  // Where this message must go another way, packed bytes go back to the
  // caller that handed them over (it sends them staged).
  auto give_back = [&] {
    // A pack of ours still running must end before its staging goes back
    // to the pool (the caller's own waits before it reads handed-back bytes).
    if (packed_already == nullptr) (void)mover::wait_for_own_pack(running);
    if (packed_already != nullptr && packed_) *packed_already = std::move(packed_);
    packed_ = mover::Staging();
    return Status::not_supported;
  };
  uint32_t first_note = 0;  // in chunks: the note of chunk 0's event
  // No note for its events: the message is sent once it is all packed.
  if (running.chunks > 0 && !device_direct::chunk_notes(running.chunk_events, &first_note)) {
    if (const Status w = mover::wait_for_own_pack(running); w != Status::ok) {
      packed_.leak();  // the pack may still be writing it
      return w;
    }
    running = mover::PackOrder{};
  }
  gpu::IpcExport e{};
  if (gpu::ipc_export(bytes, &e) != Status::ok) return give_back();  // e.g. stream-ordered pool memory
  DirectFields fields;
  std::memcpy(fields.location.bytes, &e, sizeof e);
  auto source = std::make_unique<device_direct::Source>(device_direct::Source{plan.device, bytes, plan.bytes, running});
  const slots::SlotStatus s = state->table->acquire(fields.location, source.get(), &ticket_);
  if (s != slots::SlotStatus::ok) return give_back();  // no slot free: staged
  source_ = source.release();
  fields.bytes = static_cast<uint64_t>(plan.bytes);
  fields.slot = slots::SlotRef{state->table->ref(), ticket_};
  if (running.chunks > 0) {
    fields.chunks = static_cast<uint32_t>(running.chunks);
    fields.first_note = first_note;
    fields.chunk_bytes = static_cast<uint64_t>(running.chunk_bytes);
    counters().sends_in_chunks.fetch_add(1, std::memory_order_relaxed);
  } else if (running.pending()) {
    static_assert(sizeof(fields.event) == sizeof(running.event.bytes), "the descriptor carries an IPC event handle");
    std::memcpy(fields.event, running.event.bytes, sizeof fields.event);
    fields.event_sequence = running.sequence;
    counters().sends_ahead_of_pack.fetch_add(1, std::memory_order_relaxed);
  }
  descriptor_ = std::make_unique<DirectDescriptor>(encode_descriptor(fields, state->token));
  posted_ = true;
  sent_ = true;
  counters().sends_direct.fetch_add(1, std::memory_order_relaxed);
  return Status::ok;
}

void DirectSend::complete() {
  if (!posted_) return;
  posted_ = false;
  device_direct::State* state = device_direct::g_state;
  bool released = false;
  if (state != nullptr && state->table) {
    slots::SlotStatus s = sent_ ? slots::SlotStatus::claimed : state->table->withdraw(ticket_);
    if (s == slots::SlotStatus::claimed) {
      WaitTimer timed(counters().receiver_wait_ns);
      slots::Completion how = slots::Completion::delivered;
      s = state->table->wait(ticket_, &how);
    }
    released = s == slots::SlotStatus::ok;
    if (!released) {
      STRATA_LOG(error, kDevice, "device-direct send: its completion slot says %s; its bytes are kept",
                 slots::to_string(s));
    }
  }
  if (released) {
    auto* source = static_cast<device_direct::Source*>(source_);
    // Withdrawn (never received), or packed in chunks (a receiver whose
    // buffer was too small waited only for the chunks it read): the pack
    // may still be writing the bytes about to go back to the pool.
    const bool may_run = !sent_ || source->order.chunks > 0;
    if (may_run && mover::wait_for_own_pack(source->order) != Status::ok) packed_.leak();
    delete source;
  } else {
    packed_.leak();  // a receiver may still read them
  }
  source_ = nullptr;
  packed_ = mover::Staging();
}

namespace {

// The first kDirectDescriptorBytes bytes that (buffer, count, type) in host
// memory received, in packed order.
bool packed_head(const DirectTarget& target, char* head) {
  int size = 0;
  if (real().MPI_Type_size(target.type, &size) != MPI_SUCCESS || size <= 0) return false;
  const int64_t elements = std::min<int64_t>(target.count, (kDirectDescriptorBytes + size - 1) / size);
  int bound = 0;
  if (real().MPI_Pack_size(static_cast<int>(elements), target.type, MPI_COMM_WORLD, &bound) != MPI_SUCCESS)
    return false;
  std::vector<char> packed(static_cast<size_t>(bound));
  int position = 0;
  if (real().MPI_Pack(target.buffer, static_cast<int>(elements), target.type, packed.data(), bound, &position,
                      MPI_COMM_WORLD) != MPI_SUCCESS ||
      position < static_cast<int>(kDirectDescriptorBytes)) {
    return false;
  }
  std::memcpy(head, packed.data(), kDirectDescriptorBytes);
  return true;
}

// A pull whose copies are queued on the device (a completion call that
// finishes several receives waits for the device once): the sender's slot
// and the mapping stay held until finish_queued_pulls.
struct QueuedPull {
  slots::Claim claim;
  char* mapped_base;  // null: this process's own memory (a message to self)
};
std::vector<QueuedPull>& queued_pulls() {
  static thread_local std::vector<QueuedPull> pulls;
  return pulls;
}

// Moves `bytes` packed bytes at `peer` (mapped device memory) into the
// target; into a device target without waiting where `wait` is false.
Status pull(const DirectTarget& target, const char* peer, int64_t bytes, bool wait) {
  if (target.device_layout != nullptr) {
    mover::DeviceMessage message(target.device, Method::device);
    message.device_staging = mover::Staging::borrowed(const_cast<char*>(peer), const_cast<char*>(peer));
    const mover::DevicePart part{target.device_layout, static_cast<char*>(target.buffer), 0};
    const Status s = mover::device_unpack(message, &part, 1, bytes, wait, bytes >= stream_from());
    message.device_staging.leak();  // the peer's memory, not a pool's
    return s;
  }
  // Host memory laid out by (count, type): through a host copy of the bytes.
  mover::Staging host = mover::Staging::acquire(mover::pinned_pool(), bytes);
  if (!host) return Status::out_of_memory;
  STRATA_TRY(mover::copy_bytes(host.data(), peer, bytes));
  int size = 0;
  real().MPI_Type_size(target.type, &size);
  const int elements = size > 0 ? static_cast<int>(bytes / size) : 0;
  int position = 0;
  return real().MPI_Unpack(host.data(), static_cast<int>(bytes), &position, target.buffer, elements, target.type,
                           MPI_COMM_WORLD) == MPI_SUCCESS
             ? Status::ok
             : Status::mpi_error;
}

// The IPC events of a message's chunks, read from the sender's table's
// notes.
Status chunk_events_of(const DirectFields& fields, slots::PeerTables& peers, gpu::IpcEventHandle* events) {
  for (uint32_t k = 0; k < fields.chunks; ++k) {
    slots::Note note{};
    if (peers.read_note(fields.slot.table, fields.first_note + k, &note) != slots::SlotStatus::ok) {
      return Status::invalid_argument;  // a descriptor naming notes its sender never published
    }
    std::memcpy(events[k].bytes, note.bytes, sizeof events[k].bytes);
  }
  return Status::ok;
}

// A message packed in chunks, into a device target: each chunk unpacked (or
// copied) from the sender's staging once the sender's GPU has packed it;
// queued, or waited for where `wait`.
Status pull_in_chunks(const DirectTarget& target, const char* peer, int64_t bytes, const mover::ChunkedSource& source,
                      bool wait) {
  STRATA_TRY(mover::device_unpack_chunked(target.device, peer, *target.device_layout, static_cast<char*>(target.buffer),
                                          bytes, source));
  counters().recvs_in_chunks.fetch_add(1, std::memory_order_relaxed);
  return wait ? mover::wait_for_queued_unpacks() : Status::ok;
}

}  // namespace

bool receive_direct(const DirectTarget& target, const char* host_bytes, MPI_Status& status, int* rc, bool wait) {
  device_direct::State* state = device_direct::g_state;
  if (!device_direct::active() || state == nullptr) return false;
  int received = 0;
  if (real().MPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS ||
      received != static_cast<int>(kDirectDescriptorBytes)) {
    return false;
  }
  char head[kDirectDescriptorBytes];
  if (host_bytes != nullptr) {
    std::memcpy(head, host_bytes, sizeof head);
  } else if (!packed_head(target, head)) {
    return false;
  }
  DirectFields fields;
  const DescriptorCheck check = check_descriptor(head, sizeof head, state->token, &fields);
  if (check == DescriptorCheck::not_descriptor) return false;
  if (check != DescriptorCheck::descriptor) {
    STRATA_LOG(error, kDevice, "a device-direct descriptor arrived %s", to_string(check));
    *rc = MPI_ERR_OTHER;
    return true;
  }
  WaitTimer timed(counters().direct_pull_ns);
  slots::Claim claim;
  const slots::SlotStatus claimed = state->peers.claim(fields.slot, &claim);
  if (claimed != slots::SlotStatus::ok) {
    STRATA_LOG(error, kDevice, "device-direct receive: the sender's slot says %s", slots::to_string(claimed));
    *rc = MPI_ERR_OTHER;
    return true;
  }
  gpu::IpcExport e{};
  std::memcpy(&e, claim.location.bytes, sizeof e);
  const int64_t bytes = std::min<int64_t>(static_cast<int64_t>(fields.bytes), target.capacity);
  char* base = nullptr;
  gpu::ScopedDevice on(target.device);  // mapped into the receiving GPU's context (a host target: any)
  Status s = on.status();
  // A message to self: the sender's memory is this process's (CUDA refuses
  // to open a handle where it was exported).
  const bool own = fields.slot.table.pid == state->pid;
  if (own) {
    base = reinterpret_cast<char*>(static_cast<uintptr_t>(e.base));
  } else if (s == Status::ok) {
    s = gpu::ipc_import(static_cast<uint64_t>(fields.slot.table.pid), e, &base);
  }
  // Queued: the slot and the mapping stay held until finish_queued_pulls.
  bool queued = false;
  // In chunks, unless the sender moved the bytes to a bounce (all packed
  // then): the chunks' events, for the GPU (a device target) or the host
  // (a host target waits for the last) to wait on.
  const bool chunked = fields.in_chunks() && !claim.rehomed;
  gpu::IpcEventHandle chunk_events[kDescriptorMaxChunks] = {};
  mover::ChunkedSource source{chunk_events, static_cast<int>(fields.chunks), static_cast<int64_t>(fields.chunk_bytes),
                              fields.slot.table.pid};
  if (s == Status::ok && chunked) s = chunk_events_of(fields, state->peers, chunk_events);
  if (s == Status::ok && chunked && target.device_layout == nullptr) {
    s = mover::wait_for_pack(chunk_events[fields.chunks - 1], 1, fields.slot.table.pid);
  }
  if (s == Status::ok && fields.ordered()) {  // the sender's pack may still be running: wait for it
    gpu::IpcEventHandle event{};
    std::memcpy(event.bytes, fields.event, sizeof event.bytes);
    const int64_t pid = fields.slot.table.pid;
    s = target.device_layout != nullptr ? mover::order_reads_after(event, fields.event_sequence, pid, target.device)
                                        : mover::wait_for_pack(event, fields.event_sequence, pid);
    counters().reads_after_event.fetch_add(1, std::memory_order_relaxed);
  }
  if (s == Status::ok) {
    const bool queue = !wait && target.device_layout != nullptr;
    s = chunked && target.device_layout != nullptr ? pull_in_chunks(target, base + e.offset, bytes, source, !queue)
                                                   : pull(target, base + e.offset, bytes, !queue);
    if (s == Status::ok && queue) {
      try {
        queued_pulls().push_back(QueuedPull{claim, own ? nullptr : base});
        queued = true;
      } catch (...) {  // no room to remember it: wait for it now
        s = mover::wait_for_queued_unpacks();
      }
    }
    if (!queued && !own) (void)gpu::ipc_release(base);
  }
  if (!queued) (void)state->peers.finish(&claim);  // the sender may reuse its memory now
  if (s != Status::ok) {
    STRATA_LOG(error, kDevice, "device-direct receive: pulling %lld bytes from the sender's GPU failed (%s)",
               static_cast<long long>(bytes), to_string(s));
    *rc = MPI_ERR_OTHER;
    return true;
  }
  counters().recvs_direct.fetch_add(1, std::memory_order_relaxed);
  real().MPI_Status_set_elements(&status, MPI_BYTE, static_cast<int>(bytes));
  *rc = static_cast<int64_t>(fields.bytes) > target.capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  return true;
}

bool have_queued_pulls() noexcept { return !queued_pulls().empty(); }

void finish_queued_pulls() noexcept {
  device_direct::State* state = device_direct::g_state;
  for (QueuedPull& p : queued_pulls()) {
    if (p.mapped_base != nullptr) (void)gpu::ipc_release(p.mapped_base);
    if (state != nullptr) (void)state->peers.finish(&p.claim);  // the sender may reuse its memory now
  }
  queued_pulls().clear();
}

}  // namespace strata::interposer
