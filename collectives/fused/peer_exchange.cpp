// The peer exchange: one device region per rank (protocol.hpp's layout),
// its IPC handle sent to every rank once, the peers' regions opened, and
// peer access proven by a real transfer before the first call: each rank's
// probe kernel reads a word from every peer's region and writes one into
// it, and every rank checks what it read and what it received. A GPU pair
// that reports peer access but cannot move data (the reported hangs of
// custom allreduces) is found here, not in the first call. Every step is
// agreed on by all ranks (exchange.cpp), so all take the peer path or none.
//
// Conditions: 2 to 8 ranks, all on one node (the IPC handles' reach), each
// on its own GPU (PCI address) unless STRATA_FUSED_SHARED_GPU lets ranks
// share one (under MPS), hidden <= 16384, a device visible.
#include "collectives/fused/exchange.hpp"
#include "collectives/fused/kernels.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace strata::fused {

using mpi::real;

namespace {

config::BoolParam g_shared_gpu{
    "STRATA_FUSED_SHARED_GPU", false,
    "Let ranks that share a GPU take the fused peer path (IPC within one GPU, each rank's blocks a share of the "
    "GPU's multiprocessors). Only under MPS: without it the ranks' kernels cannot run at once, and every barrier "
    "waits for the GPU's time slices or ends in STRATA_FUSED_TIMEOUT_MS"};

config::BoolParam g_overlap_launch{
    "STRATA_FUSED_OVERLAP_LAUNCH", true,
    "Launch the fused peer kernel as a programmatic dependent launch where the GPU has it (CUDA, compute "
    "capability 9.0 and later): it is scheduled while the kernel before it on the stream runs and waits for that "
    "kernel's writes on the GPU, which hides the launch gap of back-to-back calls (measured on 2 x H100, "
    "docs/fused.md); 0: ordinary launches"};

config::IntParam g_cluster_row_bytes{
    "STRATA_FUSED_CLUSTER_ROW_BYTES", 4096,
    "Rows of the fused Lamport kernel too long for one block to hold in registers (over 1024 vectors) are shared "
    "by a cluster of 2, 4 or 8 blocks, each taking at most this many bytes of a row, while the clusters fit the "
    "block budget (CUDA, compute capability 9.0 and later on every rank's GPU; measured on 2 x H200: one row of "
    "16384 bf16 10.4 -> 7.2 us, docs/fused.md \"Small calls\"); 0: a block per row always",
    0, int64_t{1} << 24};

config::IntParam g_post_blocks{
    "STRATA_FUSED_POST_BLOCKS", 4,
    "Blocks that post each row of a fused Lamport call whose rows take a block of their own (513 to 1024 "
    "vectors: 8192 bf16), while they fit the block budget and the output is not the input: the first reduces the "
    "row, the others only send their share of it to the peers, so a row's NVLink stores leave from that many "
    "multiprocessors (measured on 2 x H100: 2 to 16 tokens x 8192 bf16 0.1-0.5 us faster, docs/fused.md "
    "\"Small calls\"); 1: the reducing block alone",
    1, 8};

class PeerExchange final : public Exchange {
 public:
  PeerExchange(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  ~PeerExchange() override { release(); }
  PeerExchange(const PeerExchange&) = delete;
  PeerExchange& operator=(const PeerExchange&) = delete;

  Status set_up(const Config& config, std::string* why);

  Status run(const Call& call) noexcept override {
    return with_element(call.type, [&](auto element) {
      using T = decltype(element);
      const bool vector = vector_aligned(call.tensors, call.hidden, sizeof(T));
      // Never more blocks than every GPU holds at once: a block waits for
      // the same-numbered block of every peer, which must not wait for a
      // free SM. The budget counts multiprocessors; two blocks of at most
      // half the threads fit on one (64 registers a thread), and rows that
      // short take two a multiprocessor (more rows in flight; docs/fused.md).
      const int elements = vector ? kernels::vector_of<T>() : 1;  // a thread's at once
      const int per_sm =
          kernels::threads_for(static_cast<int64_t>(call.hidden), elements) <= kernels::kMaxThreads / 2 ? 2 : 1;
      const int budget = (call.blocks < max_blocks_ ? call.blocks : max_blocks_) * per_sm;
      const int blocks = proto::blocks_for(call.kind, static_cast<int64_t>(call.tensors.tokens), size_, budget);
      // What one block holds in registers (take_row_held): a vector a thread.
      const int64_t held = int64_t{kernels::kMaxThreads} * elements * static_cast<int64_t>(sizeof(T));
      const int64_t row_bytes = static_cast<int64_t>(call.hidden * sizeof(T));
      const int cluster =
          proto::cluster_for(call.kind, row_bytes, blocks, budget, cluster_max_, held, g_cluster_row_bytes.get());
      proto::Args<T> a = args_of<T>(call, regions_, rank_, size_, layout_, timeout_ticks_, error_device_);
      // Rows of a block a multiprocessor only: shorter rows (two blocks a
      // multiprocessor) measured no faster with more posting blocks.
      const int posting = per_sm == 1 ? static_cast<int>(g_post_blocks.get()) : 1;
      a.post_slices = proto::post_slices_for(call.kind, row_bytes, held, cluster, blocks, budget, posting,
                                             call.tensors.out == call.tensors.x);
      return kernels::launch_peer<T>(a, call.kind, blocks, vector, call.stream, overlap_launch_, cluster);
    });
  }

  uint64_t error_word() const noexcept override {
    return error_host_ == nullptr ? 0 : *static_cast<const volatile uint64_t*>(error_host_);
  }
  int default_blocks() const noexcept override { return default_blocks_; }
  size_t lamport_max() const noexcept override { return layout_.ranks > 0 ? layout_.slot_bytes : 0; }

 private:
  // The steps of set_up, each agreed on by every rank (agree()).
  Status check_gpus(std::string* why, int* most_sharing);
  Status allocate_region(const Config& config, std::string* why);
  Status open_peers(std::string* why);
  Status size_blocks(int most_sharing);
  Status probe(std::string* why);
  void release() noexcept;

  MPI_Comm comm_;
  int rank_;
  int size_;
  proto::Layout layout_;
  char* regions_[proto::kMaxRanks] = {};
  bool opened_[proto::kMaxRanks] = {};
  uint64_t* error_host_ = nullptr;
  uint64_t* error_device_ = nullptr;
  uint64_t timeout_ticks_ = 0;
  int default_blocks_ = 1;
  bool overlap_launch_ = false;  // STRATA_FUSED_OVERLAP_LAUNCH where the device has it
  int max_blocks_ = 1;           // the fewest multiprocessors of any rank's GPU
  int cluster_max_ = 1;          // the largest cluster every rank's GPU takes (kernels::cluster_max)
  gpu::Stream stream_ = nullptr;
};

struct PciAddress {
  int domain, bus, device;
};

Status PeerExchange::set_up(const Config& config, std::string* why) {
  STRATA_TRY(all_on_one_node(comm_, "IPC reaches no further", why));
  int most_sharing = 1;
  STRATA_TRY(check_gpus(why, &most_sharing));
  STRATA_TRY(allocate_region(config, why));
  STRATA_TRY(open_peers(why));
  STRATA_TRY(probe(why));
  timeout_ticks_ = static_cast<uint64_t>(timeout_ms()) * kernels::ticks_per_ms();
  overlap_launch_ = g_overlap_launch.get() && kernels::overlap_launch_supported();
  return size_blocks(most_sharing);
}

// A GPU on every rank, one rank per GPU (or STRATA_FUSED_SHARED_GPU);
// `most_sharing`: the most ranks on one GPU.
Status PeerExchange::check_gpus(std::string* why, int* most_sharing) {
  int device = -1;
  gpu::DeviceProperties props;
  const bool have_device = gpu::get_device(&device) == Status::ok && gpu::properties(device, &props) == Status::ok;
  if (!agree(comm_, have_device, "no current GPU", "a GPU on every rank", why)) return Status::not_supported;
  PciAddress mine{props.pci_domain, props.pci_bus, props.pci_device};
  std::vector<PciAddress> all(static_cast<size_t>(size_));
  if (real().MPI_Allgather(&mine, 3, MPI_INT, all.data(), 3, MPI_INT, comm_) != MPI_SUCCESS) return Status::mpi_error;
  int sharing = 0;  // ranks on my GPU, me included
  for (int q = 0; q < size_; ++q) sharing += std::memcmp(&all[static_cast<size_t>(q)], &mine, sizeof mine) == 0 ? 1 : 0;
  if (!agree(comm_, sharing == 1 || g_shared_gpu.get(),
             "another rank uses the same GPU (STRATA_FUSED_SHARED_GPU=1 allows it, under MPS)", "one GPU per rank",
             why)) {
    return Status::not_supported;
  }
  if (real().MPI_Allreduce(&sharing, most_sharing, 1, MPI_INT, MPI_MAX, comm_) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  return Status::ok;
}

// This rank's region (flags and control zeroed, the Lamport sets empty) and
// the host-visible error word.
Status PeerExchange::allocate_region(const Config& config, std::string* why) {
  layout_ = proto::Layout::of(config.max_tokens, config.hidden, size_of(config.type), size_, lamport_max_bytes());
  void* region = nullptr;
  Status s = gpu::stream_create(&stream_);
  if (s == Status::ok) s = gpu::malloc_device(&region, layout_.total);
  regions_[rank_] = static_cast<char*>(region);
  if (s == Status::ok) s = gpu::memset_async(region, 0, layout_.lamport, stream_);
  if (s == Status::ok) {  // the Lamport sets start empty
    s = kernels::launch_fill(static_cast<char*>(region) + layout_.lamport, (layout_.total - layout_.lamport) / 4,
                             proto::empty_word(size_of(config.type)), stream_);
  }
  if (s == Status::ok) s = gpu::stream_synchronize(stream_);
  void* host_word = nullptr;
  if (s == Status::ok) s = gpu::malloc_pinned(&host_word, sizeof(uint64_t), true);
  error_host_ = static_cast<uint64_t*>(host_word);
  void* device_word = nullptr;
  if (s == Status::ok) s = gpu::mapped_device_pointer(host_word, &device_word);
  error_device_ = static_cast<uint64_t*>(device_word);
  if (error_host_ != nullptr) *error_host_ = 0;
  if (!agree(comm_, s == Status::ok,
             std::to_string(layout_.total) + " bytes of device memory: " + gpu::last_error_string(),
             "allocating the exchange region", why)) {
    return Status::out_of_memory;
  }
  return Status::ok;
}

// Every rank's region, opened through its IPC handle.
Status PeerExchange::open_peers(std::string* why) {
  gpu::IpcHandle handle{};
  const Status s = gpu::ipc_get_handle(regions_[rank_], &handle);
  if (!agree(comm_, s == Status::ok, gpu::last_error_string(), "exporting the region's IPC handle", why)) {
    return Status::not_supported;
  }
  std::vector<gpu::IpcHandle> handles(static_cast<size_t>(size_));
  if (real().MPI_Allgather(&handle, sizeof handle, MPI_BYTE, handles.data(), sizeof handle, MPI_BYTE, comm_) !=
      MPI_SUCCESS) {
    return Status::mpi_error;
  }
  std::string failed;
  for (int q = 0; q < size_ && failed.empty(); ++q) {
    if (q == rank_) continue;
    void* peer = nullptr;
    if (gpu::ipc_open(handles[static_cast<size_t>(q)], &peer) == Status::ok) {
      regions_[q] = static_cast<char*>(peer);
      opened_[q] = true;
    } else {
      failed = "opening rank " + std::to_string(q) + "'s handle: " + gpu::last_error_string();
    }
  }
  if (!agree(comm_, failed.empty(), failed, "opening the peers' regions", why)) return Status::not_supported;
  return Status::ok;
}

// One block of up to 1024 threads and 64 registers each fits on any
// multiprocessor, so the fewest multiprocessors of all ranks' GPUs is a
// budget every GPU holds at once (the same on every rank); ranks sharing a
// GPU share its multiprocessors.
Status PeerExchange::size_blocks(int most_sharing) {
  int multiprocessors = kernels::multiprocessors(), fewest = 0;
  if (real().MPI_Allreduce(&multiprocessors, &fewest, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  fewest = fewest / most_sharing > 1 ? fewest / most_sharing : 1;
  max_blocks_ = fewest < proto::kMaxBlocks ? fewest : proto::kMaxBlocks;
  default_blocks_ = max_blocks_;
  // The same cluster size on every rank: the sum's order, and so the bits
  // every rank gets, follows it.
  const int mine = kernels::cluster_max();
  if (real().MPI_Allreduce(&mine, &cluster_max_, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  return Status::ok;
}

Status PeerExchange::probe(std::string* why) {
  const uint32_t word0 = kernels::probe_word(rank_, 0);
  char* const probe_area = regions_[rank_] + layout_.probe;
  Status s = gpu::memcpy_async(probe_area, &word0, sizeof word0, stream_);
  if (s == Status::ok) s = gpu::stream_synchronize(stream_);
  if (!agree(comm_, s == Status::ok, gpu::last_error_string(), "writing the probe word", why)) {
    return Status::device_error;
  }
  // Mismatch counter: the first word past the written ones.
  auto* mismatches = reinterpret_cast<uint32_t*>(probe_area) + 1 + proto::kMaxRanks;
  s = gpu::memset_async(mismatches, 0, sizeof(uint32_t), stream_);
  if (s == Status::ok) s = gpu::stream_synchronize(stream_);
  if (s == Status::ok && real().MPI_Barrier(comm_) != MPI_SUCCESS) return Status::mpi_error;
  if (s == Status::ok) s = kernels::launch_probe(regions_, size_, rank_, layout_.probe, mismatches, stream_);
  gpu::Event done = nullptr;
  if (s == Status::ok) s = gpu::event_create(&done, false);
  if (s == Status::ok) s = gpu::event_record(done, stream_);
  // Bounded: a peer mapping that hangs the probe must not hang set-up.
  std::string reason;
  bool finished = false;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms());
  while (s == Status::ok && !finished) {
    s = gpu::event_query(done, &finished);
    if (!finished && std::chrono::steady_clock::now() > limit) {
      reason = "the probe kernel did not finish within " + std::to_string(timeout_ms()) + " ms";
      break;
    }
    if (!finished) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (done != nullptr && finished) gpu::event_destroy(done);
  if (s != Status::ok) reason = gpu::last_error_string();
  if (!agree(comm_, finished && s == Status::ok, reason, "the peer-access probe", why)) return Status::device_error;
  if (real().MPI_Barrier(comm_) != MPI_SUCCESS) return Status::mpi_error;  // every peer has written into my area

  uint32_t words[2 + proto::kMaxRanks] = {};
  s = gpu::memcpy_async(words, probe_area, sizeof words, stream_);
  if (s == Status::ok) s = gpu::stream_synchronize(stream_);
  std::string wrong;
  if (s != Status::ok) {
    wrong = gpu::last_error_string();
  } else if (words[1 + proto::kMaxRanks] != 0) {
    wrong = std::to_string(words[1 + proto::kMaxRanks]) + " peers' words read back wrong";
  } else {
    for (int q = 0; q < size_ && wrong.empty(); ++q) {
      if (q != rank_ && words[1 + q] != kernels::probe_word(q, 1)) {
        wrong = "the word rank " + std::to_string(q) + " wrote did not arrive";
      }
    }
  }
  if (!agree(comm_, wrong.empty(), wrong, "the peer-access probe's transfers", why)) return Status::device_error;
  return Status::ok;
}

void PeerExchange::release() noexcept {
  // Peers may still read this rank's region in a call that is running:
  // finish locally, then wait for every rank before unmapping and freeing.
  const bool finalized = mpi::finalized();
  if (stream_ != nullptr) gpu::device_synchronize();
  if (!finalized) real().MPI_Barrier(comm_);
  for (int q = 0; q < size_; ++q) {
    if (opened_[q]) gpu::ipc_close(regions_[q]);
  }
  if (regions_[rank_] != nullptr) gpu::free_device(regions_[rank_]);
  if (error_host_ != nullptr) gpu::free_pinned(error_host_);
  if (stream_ != nullptr) gpu::stream_destroy(stream_);
}

}  // namespace

Result<std::unique_ptr<Exchange>> make_peer_exchange(MPI_Comm comm, const Config& config, std::string* why) noexcept {
  int rank = 0, size = 0;
  if (real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  // Conditions every rank sees alike: no agreement needed.
  if (size < 2 || size > proto::kMaxRanks) {
    *why = std::to_string(size) + " ranks (the peer path takes 2 to " + std::to_string(proto::kMaxRanks) + ")";
    return Status::not_supported;
  }
  if (config.hidden > static_cast<size_t>(proto::kMaxHidden)) {
    *why = "hidden " + std::to_string(config.hidden) + " > " + std::to_string(proto::kMaxHidden);
    return Status::not_supported;
  }
  if (!agree(comm, gpu::available(), "no GPU visible (or a build without CUDA/HIP)", "finding a GPU", why)) {
    return Status::not_supported;
  }
  std::unique_ptr<PeerExchange> x;
  try {
    x = std::make_unique<PeerExchange>(comm, rank, size);
  } catch (...) {
    return Status::out_of_memory;
  }
  const Status s = x->set_up(config, why);
  if (s != Status::ok) return s;  // the destructor releases what was made, on every rank alike
  return std::unique_ptr<Exchange>(std::move(x));
}

}  // namespace strata::fused
