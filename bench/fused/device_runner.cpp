// Device buffers: NCCL's allreduce called directly, then Strata's residual +
// RMSNorm kernel (the peer: two stream-ordered launches, no host
// synchronisation between them) against Strata's fused call, on one
// stream, timed with events after warm-up, the slowest rank's time. Also
// measures how fast a rank can read from all its peers at once (copy
// engines over the IPC mappings), the floor of the fused kernels' transfer.
#include "bench/fused/bench_fused.hpp"

#if defined(STRATA_BENCH_NCCL)
#include "bench/common/nccl_world.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

namespace strata_bench::fused {
namespace {

using strata::fused::Algorithm;

ncclDataType_t nccl_type(strata::coll::DataType t) {
  switch (t) {
    case strata::coll::DataType::float32: return ncclFloat32;
    case strata::coll::DataType::float16: return ncclFloat16;
    case strata::coll::DataType::bfloat16: return ncclBfloat16;
    default: return ncclInt8;
  }
}

class DeviceRunner : public Runner {
 public:
  explicit DeviceRunner(const Options& o)
      : options_(o), objects_(o, strata::fused::Memory::device), rank_(world_.rank), size_(world_.size) {}
  ~DeviceRunner() override { objects_.clear(); }  // collective, while NCCL and the streams still exist

  Timing peer(const Case& c) override {
    if (!world_.ok) return failed("ncclCommInitRank failed");
    Buffers b(c, rank_, world_.stream);
    if (!b.ok) return failed("cudaMalloc failed");
    auto call = [&] { return peer_call(c, b); };
    return measure(
        options_, [&](int iters) { return world_.time_calls(iters, call); }, call);
  }

  Timing ours(const Case& c, Algorithm a) override {
    strata::fused::AllreduceRmsnorm* f = objects_.get(c);
    if (f == nullptr) return failed("create failed");
    if (a == Algorithm::lamport && c.bytes() / c.tokens > f->lamport_max()) return failed("no Lamport sets");
    Buffers b(c, rank_, world_.stream);
    if (!b.ok) return failed("cudaMalloc failed");
    strata::fused::RunOptions o;
    o.algorithm = a;
    o.blocks = options_.blocks;
    o.stream = world_.stream;
    auto call = [&] { return f->run(b.tensors(), o) == strata::Status::ok; };
    auto verify = [&] {
      b.reset();
      if (!peer_call(c, b)) return false;
      const std::vector<unsigned char> want = b.output();
      b.reset();
      if (!call()) return false;
      const std::vector<unsigned char> got = b.output();
      return f->check() == strata::Status::ok &&
             relative_difference(got.data(), want.data(), c.tokens * c.hidden, c.type) < 2e-2;
    };
    Timing t = measure(
        options_, [&](int iters) { return world_.time_calls(iters, call); }, verify);
    if (f->check() != strata::Status::ok) return failed(f->error_message());
    return t;
  }

  // kPerGraph calls captured once; each timed "call" replays the graph.
  Timing graphed(const Case& c, bool ours) override {
    constexpr int kPerGraph = 16;
    Buffers b(c, rank_, world_.stream);
    if (!b.ok) return failed("cudaMalloc failed");
    strata::fused::AllreduceRmsnorm* f = ours ? objects_.get(c) : nullptr;
    if (ours && f == nullptr) return failed("create failed");
    strata::fused::RunOptions o;
    o.blocks = options_.blocks;
    o.stream = world_.stream;
    auto call = [&] { return ours ? f->run(b.tensors(), o) == strata::Status::ok : peer_call(c, b); };
    if (!call() || cudaStreamSynchronize(world_.stream) != cudaSuccess) return failed("call failed");  // set-up outside
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool ok = cudaStreamBeginCapture(world_.stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    for (int i = 0; i < kPerGraph && ok; ++i) ok = call();
    ok = cudaStreamEndCapture(world_.stream, &graph) == cudaSuccess && ok;
    ok = ok && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    int all = 0, mine = ok ? 1 : 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    Timing t;
    if (all == 1) {
      auto replay = [&] { return cudaGraphLaunch(exec, world_.stream) == cudaSuccess; };
      t = measure(
          options_, [&](int iters) { return world_.time_calls(iters, replay) / kPerGraph; }, [] { return true; });
    } else {
      cudaGetLastError();
      t.note = "capture failed";
    }
    cudaStreamSynchronize(world_.stream);
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (ours && f->check() != strata::Status::ok) return failed(f->error_message());
    return t;
  }

  Algorithm chosen(const Case& c) override {
    strata::fused::AllreduceRmsnorm* f = objects_.get(c);
    return f != nullptr ? f->chosen(c.tokens) : Algorithm::fallback;
  }
  std::string path(const Case& c) override {
    strata::fused::AllreduceRmsnorm* f = objects_.get(c);
    return f != nullptr ? strata::fused::to_string(f->path()) : "none";
  }

  double peer_read_bandwidth() override;

  std::string peer_name() const override { return "NCCL allreduce + RMSNorm"; }
  std::string describe() const override { return "device buffers, " + world_.describe(); }

 private:
  static Timing failed(const std::string& why) {
    Timing t;
    t.note = why;
    return t;
  }

  struct Buffers {
    const Case& c;
    cudaStream_t stream;
    size_t bytes;
    void *x = nullptr, *residual = nullptr, *weight = nullptr, *out = nullptr;
    std::vector<unsigned char> x0, residual0;
    bool ok = false;
    Buffers(const Case& cs, int rank, cudaStream_t s) : c(cs), stream(s), bytes(cs.bytes()) {
      const size_t n = c.tokens * c.hidden, e = strata::coll::size_of(c.type);
      ok = cudaMalloc(&x, bytes) == cudaSuccess && cudaMalloc(&residual, bytes) == cudaSuccess &&
           cudaMalloc(&weight, c.hidden * e) == cudaSuccess && cudaMalloc(&out, bytes) == cudaSuccess;
      if (!ok) return;
      x0.resize(bytes);
      residual0.resize(bytes);
      std::vector<unsigned char> w(c.hidden * e);
      fill_random(x0.data(), n, c.type, 1000 + static_cast<uint64_t>(rank));
      fill_random(residual0.data(), n, c.type, 7);
      fill_random(w.data(), c.hidden, c.type, 11);
      cudaMemcpy(weight, w.data(), w.size(), cudaMemcpyHostToDevice);
      reset();
    }
    ~Buffers() {
      cudaFree(x);
      cudaFree(residual);
      cudaFree(weight);
      cudaFree(out);
    }
    void reset() {
      cudaMemcpyAsync(x, x0.data(), bytes, cudaMemcpyHostToDevice, stream);
      cudaMemcpyAsync(residual, residual0.data(), bytes, cudaMemcpyHostToDevice, stream);
      cudaMemsetAsync(out, 0xff, bytes, stream);  // NaN patterns
      cudaStreamSynchronize(stream);
    }
    std::vector<unsigned char> output() {
      std::vector<unsigned char> h(bytes);
      cudaStreamSynchronize(stream);
      cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost);
      return h;
    }
    strata::fused::Tensors tensors() {
      strata::fused::Tensors t;
      t.x = x;
      t.residual = residual;
      t.weight = weight;
      t.out = out;
      t.tokens = c.tokens;
      return t;
    }
  };

  bool peer_call(const Case& c, Buffers& b) {
    if (ncclAllReduce(b.x, b.out, c.tokens * c.hidden, nccl_type(c.type), ncclSum, world_.comm, world_.stream) !=
        ncclSuccess) {
      return false;
    }
    strata::fused::Tensors t = b.tensors();
    t.x = b.out;
    return strata::fused::residual_rmsnorm(t, c.hidden, c.type, strata::fused::Memory::device, world_.stream) ==
           strata::Status::ok;
  }

  NcclWorld world_;
  Options options_;
  Objects objects_;
  int rank_;
  int size_;
};

// Every peer's buffer read at once by the copy engines, one stream per
// peer; the slowest rank's rate, median of 5.
double DeviceRunner::peer_read_bandwidth() {
  if (size_ < 2) return 0;
  const size_t chunk = size_t{64} << 20;
  void* mine = nullptr;
  std::vector<void*> local(static_cast<size_t>(size_), nullptr), remote(static_cast<size_t>(size_), nullptr);
  std::vector<cudaStream_t> streams(static_cast<size_t>(size_), nullptr);
  std::vector<cudaEvent_t> done(static_cast<size_t>(size_), nullptr);
  bool ok = cudaMalloc(&mine, chunk) == cudaSuccess && cudaMemset(mine, 1, chunk) == cudaSuccess;
  cudaIpcMemHandle_t handle{};
  if (ok) ok = cudaIpcGetMemHandle(&handle, mine) == cudaSuccess;
  std::vector<cudaIpcMemHandle_t> all(static_cast<size_t>(size_));
  MPI_Allgather(&handle, sizeof handle, MPI_BYTE, all.data(), sizeof handle, MPI_BYTE, MPI_COMM_WORLD);
  for (int q = 0; q < size_ && ok; ++q) {
    if (q == rank_) continue;
    const auto i = static_cast<size_t>(q);
    ok = cudaIpcOpenMemHandle(&remote[i], all[i], cudaIpcMemLazyEnablePeerAccess) == cudaSuccess &&
         cudaMalloc(&local[i], chunk) == cudaSuccess &&
         cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking) == cudaSuccess &&
         cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming) == cudaSuccess;
  }
  int all_ok = 0, mine_ok = ok ? 1 : 0;
  MPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::vector<double> rates;
  for (int s = 0; s < 6 && all_ok; ++s) {
    cudaDeviceSynchronize();
    MPI_Barrier(MPI_COMM_WORLD);
    cudaEventRecord(world_.start, world_.stream);
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      const auto i = static_cast<size_t>(q);
      cudaStreamWaitEvent(streams[i], world_.start, 0);
      cudaMemcpyAsync(local[i], remote[i], chunk, cudaMemcpyDeviceToDevice, streams[i]);
      cudaEventRecord(done[i], streams[i]);
      cudaStreamWaitEvent(world_.stream, done[i], 0);
    }
    cudaEventRecord(world_.stop, world_.stream);
    cudaEventSynchronize(world_.stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, world_.start, world_.stop);
    double rate = static_cast<double>(chunk) * (size_ - 1) / (ms * 1e-3), slowest = 0;
    MPI_Allreduce(&rate, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    if (s > 0) rates.push_back(slowest);  // the first is the warm-up
  }
  cudaDeviceSynchronize();
  MPI_Barrier(MPI_COMM_WORLD);  // every peer done reading before the unmapping
  for (int q = 0; q < size_; ++q) {
    const auto i = static_cast<size_t>(q);
    if (remote[i] != nullptr) cudaIpcCloseMemHandle(remote[i]);
    if (local[i] != nullptr) cudaFree(local[i]);
    if (streams[i] != nullptr) cudaStreamDestroy(streams[i]);
    if (done[i] != nullptr) cudaEventDestroy(done[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  cudaFree(mine);
  if (rates.empty()) return 0;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

Runner* make_device_runner(const Options& options) { return new DeviceRunner(options); }

}  // namespace strata_bench::fused

#else

namespace strata_bench::fused {
Runner* make_device_runner(const Options&) { return nullptr; }
}  // namespace strata_bench::fused

#endif
