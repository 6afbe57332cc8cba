// Device buffers: flat NCCL called directly (the peer) against Strata's
// collectives, on one stream, timed with events.
#include "bench/coll/bench_coll.hpp"
#include "bench/common/sampling.hpp"

#if defined(STRATA_BENCH_NCCL)
#include "bench/common/nccl_world.hpp"

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

namespace strata_bench {
namespace {

using strata::coll::Algorithm;
using strata::coll::Collective;
using strata::coll::DataType;
using strata::coll::ReduceOp;

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::int32: return ncclInt32;
    case DataType::int64: return ncclInt64;
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
    case DataType::float16: return ncclFloat16;
    case DataType::bfloat16: return ncclBfloat16;
  }
  return ncclInt8;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
  }
  return ncclSum;
}

class DeviceRunner : public Runner {
 public:
  explicit DeviceRunner(const Options& o) : options_(o), rank_(world_.rank), size_(world_.size) {}

  Timing peer(const Case& c) override { return peer_timed(c, false); }
  Timing peer_graph(const Case& c) override { return peer_timed(c, true); }

  std::string peer_name() const override { return "NCCL (flat)"; }
  std::string describe() const override { return "device buffers, " + world_.describe(); }

  Timing peer_timed(const Case& c, bool graph) {
    if (!world_.ok) {
      Timing none;
      none.note = "ncclCommInitRank failed";
      return none;
    }
    const ncclDataType_t t = nccl_type(c.type);
    const ncclRedOp_t op = nccl_op(c.op);
    return run(c, graph, [&, t, op](const void* s, void* r) {
      ncclResult_t rc = ncclInternalError;
      switch (c.collective) {
        case Collective::allreduce: rc = ncclAllReduce(s, r, c.count, t, op, world_.comm, world_.stream); break;
        case Collective::reduce_scatter:
          rc = ncclReduceScatter(s, r, c.count, t, op, world_.comm, world_.stream);
          break;
        case Collective::allgather: rc = ncclAllGather(s, r, c.count, t, world_.comm, world_.stream); break;
        case Collective::broadcast: rc = ncclBroadcast(r, r, c.count, t, 0, world_.comm, world_.stream); break;
        case Collective::reduce: rc = ncclReduce(s, r, c.count, t, op, 0, world_.comm, world_.stream); break;
      }
      return rc == ncclSuccess;
    });
  }

  Timing ours(const Case& c, Algorithm a) override {
    strata::coll::Options o;
    o.algorithm = a;
    o.stream = world_.stream;
    return run(c, false, [&, o](const void* s, void* r) {
      strata::Status st = strata::Status::internal;
      switch (c.collective) {
        case Collective::allreduce: st = strata::coll::allreduce(s, r, c.count, c.type, c.op, MPI_COMM_WORLD, o); break;
        case Collective::reduce_scatter:
          st = strata::coll::reduce_scatter(s, r, c.count, c.type, c.op, MPI_COMM_WORLD, o);
          break;
        case Collective::allgather: st = strata::coll::allgather(s, r, c.count, c.type, MPI_COMM_WORLD, o); break;
        case Collective::broadcast: st = strata::coll::broadcast(r, c.count, c.type, 0, MPI_COMM_WORLD, o); break;
        case Collective::reduce: st = strata::coll::reduce(s, r, c.count, c.type, c.op, 0, MPI_COMM_WORLD, o); break;
      }
      return st == strata::Status::ok;
    });
  }

 private:
  using Call = std::function<bool(const void*, void*)>;

  // Device buffers for one case, freed when the case is done.
  struct Buffers {
    void* send = nullptr;
    void* recv = nullptr;
    ~Buffers() {
      cudaFree(send);
      cudaFree(recv);
    }
  };

  Timing run(const Case& c, bool graph, const Call& call) {
    if (c.in_place) {  // NCCL's in-place forms alias the buffers where MPI's pass MPI_IN_PLACE: not written yet
      Timing none;
      none.note = "in place: host buffers only";
      return none;
    }
    Buffers b;
    const size_t sb = send_bytes(c, size_), rb = recv_bytes(c, size_);
    if (cudaMalloc(&b.send, sb) != cudaSuccess || cudaMalloc(&b.recv, rb) != cudaSuccess) {
      Timing none;
      none.note = "cudaMalloc failed";
      return none;
    }
    std::vector<char> host_send(sb), host_recv(rb);
    auto fresh = [&](unsigned salt) {
      const size_t in = c.collective == Collective::reduce_scatter ? c.count * static_cast<size_t>(size_) : c.count;
      fill_input(host_send.data(), in, c.type, rank_, salt);
      cudaMemcpy(b.send, host_send.data(), sb, cudaMemcpyHostToDevice);
      cudaMemset(b.recv, 0xA5, rb);
      if (c.collective == Collective::broadcast && rank_ == 0) {
        fill_input(host_recv.data(), c.count, c.type, 0, salt);
        cudaMemcpy(b.recv, host_recv.data(), rb, cudaMemcpyHostToDevice);
      }
      cudaDeviceSynchronize();
    };
    auto verify = [&] {
      const unsigned salt = 0x5eed;
      fresh(salt);
      int ok = call(b.send, b.recv) && cudaStreamSynchronize(world_.stream) == cudaSuccess;
      if (ok && (c.collective != Collective::reduce || rank_ == 0)) {
        cudaMemcpy(host_recv.data(), b.recv, rb, cudaMemcpyDeviceToHost);
        const std::vector<char> want = expected_output(c, rank_, size_, salt);
        ok = std::memcmp(want.data(), host_recv.data(), want.size()) == 0;
      }
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      return ok != 0;
    };
    auto sample = [&](int iters) {
      const auto one = [&] { return call(b.send, b.recv); };
      return graph ? world_.time_graph(iters, one) : world_.time_calls(iters, one);
    };
    return measure(options_, sample, verify);
  }

  NcclWorld world_;
  Options options_;
  int rank_;
  int size_;
};

}  // namespace

Runner* make_device_runner(const Options& options) { return new DeviceRunner(options); }

}  // namespace strata_bench

#else

namespace strata_bench {
Runner* make_device_runner(const Options&) { return nullptr; }
}  // namespace strata_bench

#endif
