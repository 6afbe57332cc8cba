// strata::fused::AllreduceRmsnorm: argument checks, the path (peer,
// shared, fallback) and the algorithm of each call, sticky kernel errors.
#include <strata/fused.hpp>

#include "base/config.hpp"
#include "base/log.hpp"
#include "collectives/fused/exchange.hpp"
#include "fault/hooks.hpp"
#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>

namespace strata::fused {

using mpi::real;

namespace {

config::BoolParam g_enabled{"STRATA_FUSED", true,
                            "Fused AllReduce-RMSNorm over peer memory where it can be set up; 0: always the "
                            "fallback (the communicator's allreduce, then the residual + RMSNorm kernel)"};
config::ChoiceParam<Algorithm> g_algorithm{
    "STRATA_FUSED_ALGO",
    Algorithm::automatic,
    {{"auto", Algorithm::automatic},
     {"one_shot", Algorithm::one_shot},
     {"two_shot", Algorithm::two_shot},
     {"fallback", Algorithm::fallback},
     {"lamport", Algorithm::lamport}},
    "Algorithm of the fused AllReduce-RMSNorm where the caller asks for automatic: auto (Lamport where its sets "
    "hold a row, a message larger than STRATA_FUSED_LAMPORT_MAX in several calls; without them one-shot up to "
    "STRATA_FUSED_ONESHOT_MAX, two-shot above), lamport, one_shot, two_shot, fallback"};
config::IntParam g_blocks{
    "STRATA_FUSED_BLOCKS", 0,
    "The fused peer kernel's block budget in multiprocessors (rows of at most 512 vectors run two "
    "blocks on each); 0: every multiprocessor",
    0, proto::kMaxBlocks};
config::IntParam g_oneshot_max{"STRATA_FUSED_ONESHOT_MAX",
                               0,
                               "Largest message (tokens x hidden x element bytes) the automatic choice runs one-shot; "
                               "0: by rank count (2 ranks: always, 3-4: 1 MiB, 5-8: 256 KiB)",
                               0,
                               INT64_MAX,
                               true};

bool valid_type(DataType t) { return t == DataType::bfloat16 || t == DataType::float16 || t == DataType::float32; }

// The crossover from one-shot to two-shot. One-shot reads (n-1) times the
// message from the peers and two-shot 2(n-1)/n times with one more
// barrier: equal at 2 ranks, so there one-shot always; above, one-shot while
// the message is small enough that the barrier costs more than the bytes.
size_t oneshot_max(int ranks) {
  if (g_oneshot_max.get() > 0) return static_cast<size_t>(g_oneshot_max.get());
  if (ranks <= 2) return std::numeric_limits<size_t>::max();
  return ranks <= 4 ? size_t{1} << 20 : size_t{256} << 10;
}

bool is_device_memory(const void* p) {
  const ::strata::device::Pointer w = gpu::classify(p);
  return w.kind == ::strata::device::MemoryKind::device || w.kind == ::strata::device::MemoryKind::managed;
}

}  // namespace

struct AllreduceRmsnorm::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  Config config;
  std::unique_ptr<Exchange> exchange;
  Path path = Path::fallback;
  bool shared_tried = false;
  bool failed = false;
  std::string message;
  gpu::Event split_events[4] = {};  // run_split's, made on first use
  bool split_pending = false;       // a chained run_split left its fused calls running

  ~Impl() {
    for (gpu::Event e : split_events) {
      if (e != nullptr) gpu::event_destroy(e);
    }
    exchange.reset();  // collective: before the communicator goes
    if (comm != MPI_COMM_NULL && !mpi::finalized()) real().MPI_Comm_free(&comm);
  }

  size_t bytes(size_t tokens) const { return tokens * config.hidden * size_of(config.type); }

  Algorithm resolve(Algorithm wanted, size_t tokens) const {
    if (wanted == Algorithm::automatic) wanted = g_algorithm.get();
    if (!g_enabled.get()) return Algorithm::fallback;
    if (wanted == Algorithm::automatic) {
      if (path == Path::fallback && config.memory == Memory::device) return Algorithm::fallback;
      if (config.memory == Memory::host) return Algorithm::fallback;  // host: fused only when asked for
      if (lamport_rows() > 0) return Algorithm::lamport;  // in pieces where the message is larger (run_calls)
      return bytes(tokens) <= oneshot_max(size) || tokens < static_cast<size_t>(size) ? Algorithm::one_shot
                                                                                      : Algorithm::two_shot;
    }
    return wanted;
  }

  // Rows one Lamport call takes (0: no Lamport sets, or not one row).
  size_t lamport_rows() const { return exchange ? exchange->lamport_max() / bytes(1) : 0; }

  proto::Kind kind_of(Algorithm a) const {
    if (a == Algorithm::two_shot) return proto::Kind::two_shot;
    if (a == Algorithm::lamport && lamport_rows() > 0) return proto::Kind::lamport;
    if (a == Algorithm::lamport) {
      STRATA_LOG_ONCE(info, kColl,
                      "fused allreduce-rmsnorm: lamport asked for, but its sets (STRATA_FUSED_LAMPORT_MAX, %zu "
                      "bytes) hold no row: one-shot",
                      exchange ? exchange->lamport_max() : size_t{0});
    }
    return proto::Kind::one_shot;
  }

  // A Lamport message larger than the sets runs as consecutive calls of
  // whole rows that fit: rows are independent, and each piece is a whole
  // call of the protocol. Measured on 2 x H100 at 128 MiB (hidden 8192):
  // the Lamport kernel reached 98% of the peer rate where its sets held the
  // message, the one-shot 75% (docs/fused.md).
  Status run_calls(Call call) {
    const size_t rows = lamport_rows();
    if (call.kind != proto::Kind::lamport || call.tensors.tokens <= rows) return exchange->run(call);
    const Tensors whole = call.tensors;
    for (size_t first = 0; first < whole.tokens; first += rows) {
      call.tensors = rows_of(whole, first, std::min(rows, whole.tokens - first), bytes(1));
      STRATA_TRY(exchange->run(call));
    }
    return Status::ok;
  }

  Status check_error() {
    if (failed) return Status::timeout;
    const uint64_t w = exchange ? exchange->error_word() : 0;
    if (w == 0) return Status::ok;
    const proto::ErrorFields e = proto::unpack_error(w);
    failed = true;
    const std::string where = e.phase == proto::kData    ? "with its data (Lamport)"
                              : e.phase == proto::kStart ? "at the start barrier"
                                                         : "at the middle barrier";
    message = "fused allreduce-rmsnorm call #" + std::to_string(e.seq) + " on rank " + std::to_string(rank) +
              ": rank " + std::to_string(e.peer) + " did not arrive " + where + " (block " + std::to_string(e.block) +
              ") within " + std::to_string(timeout_ms()) + " ms; this object is unusable, make a new one";
    STRATA_LOG(error, kColl, "%s", message.c_str());
    return Status::timeout;
  }

  Status fail(Status s, std::string text) {
    message = std::move(text);
    STRATA_LOG(error, kColl, "%s", message.c_str());
    return s;
  }

  Status validate(const Tensors& t) {
    if (t.tokens > config.max_tokens) {
      return fail(Status::invalid_argument, "fused allreduce-rmsnorm: " + std::to_string(t.tokens) +
                                                " tokens, more than the " + std::to_string(config.max_tokens) +
                                                " it was created for");
    }
    if (t.tokens == 0) return Status::ok;
    if (t.x == nullptr || t.residual == nullptr || t.weight == nullptr || t.out == nullptr) {
      return fail(Status::invalid_argument, "fused allreduce-rmsnorm: a null buffer");
    }
    if (t.out == t.residual || t.x == t.residual) {
      return fail(Status::invalid_argument, "fused allreduce-rmsnorm: residual must not be x or out");
    }
    if (!(t.epsilon >= 0.0f)) return fail(Status::invalid_argument, "fused allreduce-rmsnorm: epsilon < 0 or NaN");
    const bool device = config.memory == Memory::device;
    for (const void* p : {t.x, static_cast<const void*>(t.residual), t.weight, static_cast<const void*>(t.out)}) {
      if (is_device_memory(p) != device) {
        return fail(Status::invalid_argument,
                    std::string("fused allreduce-rmsnorm: a ") + (device ? "host" : "device") +
                        " buffer passed to an object made for " + (device ? "device" : "host") + " memory");
      }
    }
    return Status::ok;
  }

  // The communicator's allreduce into out, then residual + RMSNorm.
  Status fallback(const Tensors& t, void* stream) {
    const size_t count = t.tokens * config.hidden;
    coll::Options o;
    o.stream = stream;
    const void* send = t.out == t.x ? MPI_IN_PLACE : t.x;
    STRATA_TRY(coll::allreduce(send, t.out, count, config.type, coll::ReduceOp::sum, comm, o));
    Tensors local = t;
    local.x = t.out;
    return residual_rmsnorm(local, config.hidden, config.type, config.memory, stream);
  }

  // Host buffers get the shared exchange on the first call that asks for it
  // (collective: every rank asks alike).
  void want_shared() {
    if (shared_tried || config.memory != Memory::host || !g_enabled.get()) return;
    shared_tried = true;
    std::string why;
    Result<std::unique_ptr<Exchange>> x = make_shared_exchange(comm, config, &why);
    if (x) {
      exchange = std::move(x).value();
      path = Path::shared;
    } else {
      STRATA_LOG_ONCE(info, kColl, "fused allreduce-rmsnorm on host buffers: fallback (%s)", why.c_str());
    }
  }
};

namespace detail {
bool& split_pending(AllreduceRmsnorm::Impl& impl) noexcept { return impl.split_pending; }
MPI_Comm comm_of(const AllreduceRmsnorm::Impl& impl) noexcept { return impl.comm; }
Status split_events(AllreduceRmsnorm::Impl& impl, void* (&events)[4]) noexcept {
  for (int i = 0; i < 4; ++i) {
    if (impl.split_events[i] == nullptr) STRATA_TRY(gpu::event_create(&impl.split_events[i], false));
    events[i] = impl.split_events[i];
  }
  return Status::ok;
}
}  // namespace detail

AllreduceRmsnorm::AllreduceRmsnorm(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
AllreduceRmsnorm::~AllreduceRmsnorm() = default;

Result<std::unique_ptr<AllreduceRmsnorm>> AllreduceRmsnorm::create(MPI_Comm comm, const Config& config) noexcept {
  if (comm == MPI_COMM_NULL || config.hidden == 0 || config.max_tokens == 0 || !valid_type(config.type) ||
      config.blocks < 0 || config.max_tokens > SIZE_MAX / config.hidden / 8) {
    STRATA_LOG(error, kColl,
               "fused allreduce-rmsnorm: bad configuration (max_tokens %zu, hidden %zu, type %s, "
               "blocks %d)",
               config.max_tokens, config.hidden, coll::to_string(config.type), config.blocks);
    return Status::invalid_argument;
  }
  if (config.memory == Memory::device && !gpu::available()) {
    STRATA_LOG(error, kColl, "fused allreduce-rmsnorm on device memory: no GPU visible (or a build without CUDA/HIP)");
    return Status::not_supported;
  }
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>();
  } catch (...) {
    return Status::out_of_memory;
  }
  impl->config = config;
  if (real().MPI_Comm_dup(comm, &impl->comm) != MPI_SUCCESS ||
      real().MPI_Comm_rank(impl->comm, &impl->rank) != MPI_SUCCESS ||
      real().MPI_Comm_size(impl->comm, &impl->size) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  if (config.memory == Memory::device && g_enabled.get() && g_algorithm.get() != Algorithm::fallback) {
    std::string why;
    Result<std::unique_ptr<Exchange>> x = make_peer_exchange(impl->comm, config, &why);
    if (x) {
      impl->exchange = std::move(x).value();
      impl->path = Path::peer;
    } else if (x.status() == Status::mpi_error) {
      return x.status();
    } else if (impl->rank == 0) {
      STRATA_LOG(info, kColl, "fused allreduce-rmsnorm over %d ranks: fallback to allreduce + RMSNorm (%s)", impl->size,
                 why.c_str());
    }
  }
  if (impl->path == Path::peer && impl->rank == 0) {
    const size_t most = oneshot_max(impl->size);
    const std::string crossover = most == std::numeric_limits<size_t>::max()
                                      ? "one-shot at every size"
                                      : "one-shot up to " + std::to_string(most) + " bytes";
    STRATA_LOG(info, kColl, "fused allreduce-rmsnorm over %d ranks: peer path, %d blocks, %s", impl->size,
               config.blocks > 0 ? config.blocks : impl->exchange->default_blocks(), crossover.c_str());
  }
  try {
    return std::unique_ptr<AllreduceRmsnorm>(new AllreduceRmsnorm(std::move(impl)));
  } catch (...) {
    return Status::out_of_memory;
  }
}

Status AllreduceRmsnorm::run(const Tensors& t, const RunOptions& options) noexcept {
  Impl& m = *impl_;
  fault::CollScope rec(fault::OpKind::fused_allreduce_rmsnorm, m.comm, m.bytes(t.tokens), -1, options.stream);
  STRATA_TRY(m.check_error());
  STRATA_TRY(m.validate(t));
  if (t.tokens == 0) return Status::ok;
  Algorithm a = m.resolve(options.algorithm, t.tokens);
  if (a != Algorithm::fallback) m.want_shared();
  if (a != Algorithm::fallback && !m.exchange) {
    STRATA_LOG_ONCE(info, kColl,
                    "fused allreduce-rmsnorm: %s asked for, but no peer or shared memory is set up: "
                    "fallback",
                    to_string(a));
    a = Algorithm::fallback;
  }
  STRATA_LOG(debug, kColl, "fused allreduce-rmsnorm: %zu tokens x %zu, %s", t.tokens, m.config.hidden, to_string(a));
  if (a == Algorithm::fallback) return m.fallback(t, options.stream);
  Call call;
  call.tensors = t;
  call.type = m.config.type;
  call.hidden = m.config.hidden;
  call.kind = m.kind_of(a);
  call.blocks = options.blocks > 0 ? options.blocks : (m.config.blocks > 0 ? m.config.blocks : 0);
  if (call.blocks <= 0)
    call.blocks = g_blocks.get() > 0 ? static_cast<int>(g_blocks.get()) : m.exchange->default_blocks();
  call.stream = options.stream;
  STRATA_TRY(m.run_calls(call));
  // The shared path has finished the call: a wait that timed out shows now.
  return m.path == Path::shared ? m.check_error() : Status::ok;
}

Algorithm AllreduceRmsnorm::chosen(size_t tokens) const noexcept {
  const Algorithm a = impl_->resolve(Algorithm::automatic, tokens);
  return impl_->exchange || impl_->config.memory == Memory::host ? a : Algorithm::fallback;
}
Path AllreduceRmsnorm::path() const noexcept { return impl_->path; }
size_t AllreduceRmsnorm::lamport_max() const noexcept { return impl_->exchange ? impl_->exchange->lamport_max() : 0; }
const Config& AllreduceRmsnorm::config() const noexcept { return impl_->config; }
int AllreduceRmsnorm::rank() const noexcept { return impl_->rank; }
int AllreduceRmsnorm::size() const noexcept { return impl_->size; }
const char* AllreduceRmsnorm::error_message() const noexcept { return impl_->message.c_str(); }
Status AllreduceRmsnorm::check() noexcept { return impl_->check_error(); }

const char* to_string(Algorithm a) noexcept {
  switch (a) {
    case Algorithm::automatic: return "auto";
    case Algorithm::one_shot: return "one_shot";
    case Algorithm::two_shot: return "two_shot";
    case Algorithm::fallback: return "fallback";
    case Algorithm::lamport: return "lamport";
  }
  return "?";
}

Result<Algorithm> parse_algorithm(const char* name) noexcept {
  if (name == nullptr) return Status::invalid_argument;
  for (Algorithm a :
       {Algorithm::automatic, Algorithm::one_shot, Algorithm::two_shot, Algorithm::fallback, Algorithm::lamport}) {
    if (config::equals_ignore_case(name, to_string(a))) return a;
  }
  return Status::invalid_argument;
}

const char* to_string(Path p) noexcept {
  switch (p) {
    case Path::peer: return "peer";
    case Path::shared: return "shared";
    case Path::fallback: return "fallback";
  }
  return "?";
}

}  // namespace strata::fused
