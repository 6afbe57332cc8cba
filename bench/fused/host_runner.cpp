// Host buffers: the MPI library's allreduce followed by the residual +
// RMSNorm rows (the peer) against Strata's fused call (the shared-memory
// one-shot and two-shot), timed with MPI_Wtime, the slowest rank's time.
#include "bench/fused/bench_fused.hpp"

#include <map>
#include <memory>
#include <vector>

namespace strata_bench::fused {
namespace {

using strata::fused::Algorithm;

class HostRunner : public Runner {
 public:
  explicit HostRunner(const Options& o) : options_(o), objects_(o, strata::fused::Memory::host) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  Timing peer(const Case& c) override {
    Buffers b(c, rank_);
    return measure(
        options_, [&](int iters) { return sample(iters, [&] { return peer_call(c, b); }); },
        [&] { return peer_call(c, b); });
  }

  Timing ours(const Case& c, Algorithm a) override {
    strata::fused::AllreduceRmsnorm* f = objects_.get(c);
    if (f == nullptr) {
      Timing t;
      t.note = "create failed";
      return t;
    }
    Buffers b(c, rank_);
    strata::fused::RunOptions o;
    o.algorithm = a;
    o.blocks = options_.blocks;
    auto call = [&] { return f->run(b.tensors(), o) == strata::Status::ok; };
    auto verify = [&] {
      // The peer's output on the same inputs is the yardstick.
      b.reset();
      if (!peer_call(c, b)) return false;
      const std::vector<unsigned char> want = b.out;
      b.reset();
      if (!call()) return false;
      return relative_difference(b.out.data(), want.data(), c.tokens * c.hidden, c.type) < 2e-2;
    };
    return measure(
        options_, [&](int iters) { return sample(iters, call); }, verify);
  }

  Algorithm chosen(const Case& c) override {
    strata::fused::AllreduceRmsnorm* f = objects_.get(c);
    return f != nullptr ? f->chosen(c.tokens) : Algorithm::fallback;
  }
  std::string path(const Case& c) override {
    strata::fused::AllreduceRmsnorm* f = objects_.get(c);
    return f != nullptr ? strata::fused::to_string(f->path()) : "none";
  }
  double peer_read_bandwidth() override { return 0; }
  std::string peer_name() const override { return "MPI allreduce + RMSNorm"; }
  std::string describe() const override { return "host buffers, " + std::to_string(size_) + " ranks"; }

 private:
  struct Buffers {
    const Case& c;
    int rank;
    std::vector<unsigned char> x, x0, residual, residual0, weight, out;
    Buffers(const Case& cs, int r) : c(cs), rank(r) {
      const size_t n = c.tokens * c.hidden, e = strata::coll::size_of(c.type);
      x.resize(n * e);
      residual.resize(n * e);
      weight.resize(c.hidden * e);
      out.resize(n * e);
      fill_random(x.data(), n, c.type, 1000 + static_cast<uint64_t>(rank));
      fill_random(residual.data(), n, c.type, 7);
      fill_random(weight.data(), c.hidden, c.type, 11);
      x0 = x;
      residual0 = residual;
    }
    void reset() {
      x = x0;
      residual = residual0;
    }
    strata::fused::Tensors tensors() {
      strata::fused::Tensors t;
      t.x = x.data();
      t.residual = residual.data();
      t.weight = weight.data();
      t.out = out.data();
      t.tokens = c.tokens;
      return t;
    }
  };

  bool peer_call(const Case& c, Buffers& b) {
    strata::coll::Options o;
    o.algorithm = strata::coll::Algorithm::library;
    if (strata::coll::allreduce(b.x.data(), b.out.data(), c.tokens * c.hidden, c.type, strata::coll::ReduceOp::sum,
                                MPI_COMM_WORLD, o) != strata::Status::ok) {
      return false;
    }
    strata::fused::Tensors t = b.tensors();
    t.x = b.out.data();
    return strata::fused::residual_rmsnorm(t, c.hidden, c.type, strata::fused::Memory::host) == strata::Status::ok;
  }

  template <class Call>
  double sample(int iters, Call call) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      if (!call()) return -1;
    }
    double mine = (MPI_Wtime() - t0) / iters, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  }

  Options options_;
  Objects objects_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

Runner* make_host_runner(const Options& options) { return new HostRunner(options); }

}  // namespace strata_bench::fused
