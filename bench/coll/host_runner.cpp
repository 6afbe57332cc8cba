// Host buffers: the MPI library's collective (the peer) against Strata's.
#include "bench/coll/bench_coll.hpp"
#include "bench/common/sampling.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

namespace strata_bench {
namespace {

using strata::coll::Algorithm;
using strata::coll::Collective;
using strata::coll::DataType;
using strata::coll::ReduceOp;

bool mpi_type(DataType t, bool reduces, MPI_Datatype* out) {
  switch (t) {
    case DataType::int32: *out = MPI_INT32_T; return true;
    case DataType::int64: *out = MPI_INT64_T; return true;
    case DataType::float32: *out = MPI_FLOAT; return true;
    case DataType::float64: *out = MPI_DOUBLE; return true;
    case DataType::float16:
    case DataType::bfloat16: *out = MPI_UINT16_T; return !reduces;  // moved, never reduced by the library
  }
  return false;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_SUM;
}

bool reduces(Collective c) { return c != Collective::allgather && c != Collective::broadcast; }

class HostRunner : public Runner {
 public:
  explicit HostRunner(const Options& o) : options_(o) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  Timing peer(const Case& c) override {
    MPI_Datatype t;
    if (!mpi_type(c.type, reduces(c.collective), &t)) {
      Timing none;
      none.note = "the library has no such reduction";
      return none;
    }
    const int n = static_cast<int>(c.count);
    const MPI_Op op = mpi_op(c.op);
    return run(c, [&, t, n, op](const void* s, void* r) {
      switch (c.collective) {
        case Collective::allreduce: return MPI_Allreduce(s, r, n, t, op, MPI_COMM_WORLD);
        case Collective::reduce_scatter: return MPI_Reduce_scatter_block(s, r, n, t, op, MPI_COMM_WORLD);
        case Collective::allgather: return MPI_Allgather(s, n, t, r, n, t, MPI_COMM_WORLD);
        case Collective::broadcast: return MPI_Bcast(r, n, t, 0, MPI_COMM_WORLD);
        case Collective::reduce: return MPI_Reduce(s, r, n, t, op, 0, MPI_COMM_WORLD);
      }
      return MPI_ERR_OTHER;
    });
  }

  std::string peer_name() const override { return "MPI library"; }
  std::string describe() const override {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    std::string s(v, static_cast<size_t>(len));
    return "host buffers, " + s.substr(0, s.find_first_of(",\n"));
  }

  Timing ours(const Case& c, Algorithm a) override {
    strata::coll::Options o;
    o.algorithm = a;
    return run(c, [&, o](const void* s, void* r) {
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
      return st == strata::Status::ok ? MPI_SUCCESS : MPI_ERR_OTHER;
    });
  }

 private:
  using Call = std::function<int(const void*, void*)>;

  Timing run(const Case& c, const Call& call) {
    // In place: no send buffer; the input goes where MPI_IN_PLACE wants it
    // in the receive buffer (reduce_scatter's whole input).
    const size_t in = c.collective == Collective::reduce_scatter ? c.count * static_cast<size_t>(size_) : c.count;
    std::vector<char> send(c.in_place ? 0 : send_bytes(c, size_));
    std::vector<char> recv(c.in_place ? std::max(send_bytes(c, size_), recv_bytes(c, size_)) : recv_bytes(c, size_));
    const void* source = c.in_place ? MPI_IN_PLACE : send.data();
    auto fresh = [&](unsigned salt) {
      std::memset(recv.data(), 0xA5, recv.size());
      if (c.in_place) {
        fill_input(recv.data() + in_place_offset(c, rank_), in, c.type, rank_, salt);
        return;
      }
      fill_input(send.data(), in, c.type, rank_, salt);
      if (c.collective == Collective::broadcast && rank_ == 0) fill_input(recv.data(), c.count, c.type, 0, salt);
    };
    auto verify = [&] {
      const unsigned salt = 0x5eed;
      fresh(salt);
      int ok = call(source, recv.data()) == MPI_SUCCESS;
      if (ok && (c.collective != Collective::reduce || rank_ == 0)) {
        const std::vector<char> want = expected_output(c, rank_, size_, salt);
        ok = std::memcmp(want.data(), recv.data(), want.size()) == 0;
      }
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      return ok != 0;
    };
    auto sample = [&](int iters) {
      fresh(1);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      int ok = 1;
      for (int i = 0; i < iters && ok; ++i) ok = call(source, recv.data()) == MPI_SUCCESS;
      double t = (MPI_Wtime() - t0) / iters;
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      return ok ? t : -1.0;
    };
    return measure(options_, sample, verify);
  }

  Options options_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

Runner* make_host_runner(const Options& options) { return new HostRunner(options); }

}  // namespace strata_bench
