// The shared exchange: the protocol of protocol.hpp on host memory, the
// regions being the segments of one MPI shared-memory window (every rank on
// one node). Each rank runs its call as one block on its own thread. This is
// the fused path of host buffers (asked for with Algorithm::one_shot or
// two_shot), and it runs the protocol the GPU kernels run across real
// processes in the CPU test suite.
#include "collectives/fused/exchange.hpp"
#include "collectives/fused/host_platform.hpp"
#include "collectives/fused/kernels.hpp"
#include "mpi/helpers.hpp"

#include <algorithm>
#include <vector>

namespace strata::fused {

using mpi::real;

namespace {

class SharedExchange final : public Exchange {
 public:
  SharedExchange(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  ~SharedExchange() override {
    if (window_ != MPI_WIN_NULL && !mpi::finalized()) real().MPI_Win_free(&window_);  // collective: no rank reads on
  }
  SharedExchange(const SharedExchange&) = delete;
  SharedExchange& operator=(const SharedExchange&) = delete;

  Status set_up(const Config& config, std::string* why) {
    STRATA_TRY(all_on_one_node(comm_, "shared memory reaches no further", why));
    layout_ = proto::Layout::of(config.max_tokens, config.hidden, size_of(config.type), size_, lamport_max_bytes());
    void* base = nullptr;
    const int rc = real().MPI_Win_allocate_shared(static_cast<MPI_Aint>(layout_.total), 256, MPI_INFO_NULL, comm_,
                                                  &base, &window_);
    if (!agree(comm_, rc == MPI_SUCCESS, std::to_string(layout_.total) + " bytes",
               "MPI_Win_allocate_shared of the exchange region", why)) {
      return Status::out_of_memory;
    }
    for (int q = 0; q < size_; ++q) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* peer = nullptr;
      if (real().MPI_Win_shared_query(window_, q, &bytes, &unit, &peer) != MPI_SUCCESS) return Status::mpi_error;
      regions_[q] = static_cast<char*>(peer);
    }
    // Flags and control start at zero on every rank before any rank's first call.
    std::fill(regions_[rank_], regions_[rank_] + layout_.data, char{0});
    // The Lamport sets start empty.
    auto* words = reinterpret_cast<uint32_t*>(regions_[rank_] + layout_.lamport);
    std::fill(words, words + (layout_.total - layout_.lamport) / 4, proto::empty_word(size_of(config.type)));
    if (real().MPI_Barrier(comm_) != MPI_SUCCESS) return Status::mpi_error;
    timeout_ns_ = static_cast<uint64_t>(timeout_ms()) * 1000000u;
    return Status::ok;
  }

  Status run(const Call& call) noexcept override {
    return with_element(call.type, [&](auto element) {
      using T = decltype(element);
      const proto::Args<T> a = args_of<T>(call, regions_, rank_, size_, layout_, timeout_ns_, &error_);
      HostPlatform p;
      if (vector_aligned(call.tensors, call.hidden, sizeof(T))) {
        execute<kernels::vector_of<T>()>(p, a, call.kind);
      } else {
        execute<1>(p, a, call.kind);
      }
      return Status::ok;
    });
  }

  uint64_t error_word() const noexcept override { return __atomic_load_n(&error_, __ATOMIC_ACQUIRE); }
  int default_blocks() const noexcept override { return 1; }
  size_t lamport_max() const noexcept override { return layout_.ranks > 0 ? layout_.slot_bytes : 0; }

 private:
  template <int V, class T>
  static void execute(HostPlatform& p, const proto::Args<T>& a, proto::Kind kind) {
    switch (kind) {
      case proto::Kind::two_shot: proto::two_shot<V>(p, a, 0, 1, nullptr); break;
      case proto::Kind::lamport: proto::lamport<V>(p, a, 0, 1, nullptr); break;
      case proto::Kind::one_shot: proto::one_shot<V>(p, a, 0, 1, nullptr); break;
    }
  }

  MPI_Comm comm_;
  int rank_;
  int size_;
  MPI_Win window_ = MPI_WIN_NULL;
  proto::Layout layout_;
  char* regions_[proto::kMaxRanks] = {};
  uint64_t timeout_ns_ = 0;
  uint64_t error_ = 0;
};

}  // namespace

Result<std::unique_ptr<Exchange>> make_shared_exchange(MPI_Comm comm, const Config& config, std::string* why) noexcept {
  int rank = 0, size = 0;
  if (real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || real().MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  if (size > proto::kMaxRanks) {
    *why = std::to_string(size) + " ranks (the shared path takes up to " + std::to_string(proto::kMaxRanks) + ")";
    return Status::not_supported;
  }
  if (config.hidden > static_cast<size_t>(proto::kMaxHidden)) {
    *why = "hidden " + std::to_string(config.hidden) + " > " + std::to_string(proto::kMaxHidden);
    return Status::not_supported;
  }
  std::unique_ptr<SharedExchange> x;
  try {
    x = std::make_unique<SharedExchange>(comm, rank, size);
  } catch (...) {
    return Status::out_of_memory;
  }
  const Status s = x->set_up(config, why);
  if (s != Status::ok) return s;
  return std::unique_ptr<Exchange>(std::move(x));
}

}  // namespace strata::fused
