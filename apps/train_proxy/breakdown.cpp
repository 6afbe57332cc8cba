// strata-train-proxy --breakdown: one layer taken apart. Each phase (the
// GEMMs, the allreduce, the residual + RMSNorm, the fused call, the split's
// parts and their overlap) is timed alone on the compute stream with events,
// median of `reps`, every rank running the same sequence (the collectives
// match). What the phases on the critical path do not explain is idle time:
// stream waits, launch gaps, blocks sharing SMs. docs/fused.md reads it.
#include "apps/train_proxy/model.hpp"

#include <algorithm>

namespace strata_proxy {

using strata::Status;

template <class F>
Status Model::timed(int reps, F&& f, double* ms) {
  void* stream = ops_.compute_stream();
  std::vector<double> v;
  for (int i = 0; i < reps + 1; ++i) {  // the first is a warm-up
    ops_.reset_marks();
    const int a = ops_.mark(stream);
    STRATA_TRY(f());
    const int b = ops_.mark(stream);
    STRATA_TRY(ops_.synchronize());
    if (i > 0) v.push_back(ops_.ms(a, b));
  }
  std::sort(v.begin(), v.end());
  double mine = v[v.size() / 2], slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  *ms = slowest;
  return Status::ok;
}

// The second part's GEMMs on the compute stream beside the first part's
// fused call (with `part`'s blocks) on the communication stream; the compute
// stream ends after both.
Status Model::part2_beside_part1(const strata::fused::RunOptions& part) {
  void* stream = ops_.compute_stream();
  void* comm = ops_.comm_stream();
  strata::fused::RunOptions beside = part;
  beside.stream = comm;
  STRATA_TRY(ops_.join(comm, stream));
  STRATA_TRY(fused_->run(rows(0, split_.first, 0), beside));
  STRATA_TRY(compute_rows(0, split_.first, split_.second, stream));
  return ops_.join(stream, comm);
}

Status Model::breakdown(Mode mode, int reps, Breakdown* out) {
  const size_t T = shape_.tokens, H = shape_.hidden;
  void* stream = ops_.compute_stream();
  const strata::fused::Memory memory = ops_.device() ? strata::fused::Memory::device : strata::fused::Memory::host;
  Breakdown b;
  b.mode = mode;
  auto phase = [&](const char* name, auto&& f) -> Status {
    Phase p{name, 0};
    STRATA_TRY(timed(reps, f, &p.ms));
    b.phases.push_back(p);
    return Status::ok;
  };
  auto ms = [&](const char* name) {
    for (const Phase& p : b.phases) {
      if (p.name == name) return p.ms;
    }
    return 0.0;
  };
  auto whole_layer = [&] {  // a chained split's last fused call ends inside the timing
    const Status s = layer(mode, 0);
    return s != Status::ok ? s : strata::fused::join_split(*fused_, {stream, ops_.comm_stream()});
  };
  STRATA_TRY(timed(reps, whole_layer, &b.layer_ms));
  strata::fused::RunOptions whole;
  whole.algorithm = settings_.fused_algorithm;
  whole.stream = stream;
  STRATA_TRY(phase("GEMMs", [&] { return compute_rows(0, 0, T, stream); }));
  if (mode == Mode::sequential) {
    STRATA_TRY(phase("allreduce", [&] {
      strata::coll::Options o;
      o.stream = stream;
      return strata::coll::allreduce(MPI_IN_PLACE, partial_, T * H, shape_.type, strata::coll::ReduceOp::sum, tp_, o);
    }));
    STRATA_TRY(phase("residual + RMSNorm",
                     [&] { return strata::fused::residual_rmsnorm(rows(0, T, 0), H, shape_.type, memory, stream); }));
    b.critical_ms = ms("GEMMs") + ms("allreduce") + ms("residual + RMSNorm");
  } else if (mode == Mode::fused || !split_.split()) {
    STRATA_TRY(phase("fused allreduce-RMSNorm", [&] { return fused_->run(rows(0, T, 0), whole); }));
    b.critical_ms = ms("GEMMs") + ms("fused allreduce-RMSNorm");
  } else {
    const size_t first = split_.first, second = split_.second;
    strata::fused::RunOptions part = whole;
    part.blocks = strata::fused::split_comm_blocks(settings_.split);  // what run_split gives them
    STRATA_TRY(phase("GEMMs part 1", [&] { return compute_rows(0, 0, first, stream); }));
    STRATA_TRY(phase("GEMMs part 2", [&] { return compute_rows(0, first, second, stream); }));
    STRATA_TRY(phase("fused part 1", [&] { return fused_->run(rows(0, first, 0), part); }));
    STRATA_TRY(phase("fused part 2", [&] { return fused_->run(rows(first, second, 0), part); }));
    STRATA_TRY(phase("GEMMs part 2 beside fused part 1", [&] { return part2_beside_part1(part); }));
    b.critical_ms = ms("GEMMs part 1") + ms("GEMMs part 2 beside fused part 1") + ms("fused part 2");
  }
  b.idle_ms = b.layer_ms - b.critical_ms;
  *out = b;
  return Status::ok;
}

Status Model::budget_sweep(const std::vector<int>& budgets, int reps, std::vector<BudgetPoint>* out) {
  if (!ops_.device() || !split_.split()) return Status::ok;
  void* stream = ops_.compute_stream();
  const size_t first = split_.first, second = split_.second;
  for (int blocks : budgets) {
    BudgetPoint p;
    p.blocks = blocks;
    strata::fused::RunOptions o;
    o.algorithm = settings_.fused_algorithm;
    o.blocks = blocks;
    o.stream = stream;
    STRATA_TRY(timed(
        reps, [&] { return fused_->run(rows(0, first, 0), o); }, &p.fused_ms));
    STRATA_TRY(timed(
        reps, [&] { return compute_rows(0, first, second, stream); }, &p.gemm_ms));
    STRATA_TRY(timed(
        reps, [&] { return part2_beside_part1(o); }, &p.overlap_ms));
    out->push_back(p);
  }
  return Status::ok;
}

}  // namespace strata_proxy
