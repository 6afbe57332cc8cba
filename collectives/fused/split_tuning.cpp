// tune_split: whether the token split pays for a shape on the machine at
// hand, and with which communication block budget, measured against the
// unsplit call. The split overlaps one part's fused call with the other
// part's compute, but its blocks take SMs from that compute and each part's
// compute runs on half the rows: measured on 2 x H200 (docs/fused.md), a
// TP-2 MLP layer whose communication is a tenth of its time loses with the
// split at every budget, so no fixed threshold can stand in for this.
#include <strata/fused.hpp>

#include "base/log.hpp"
#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace strata::fused {
namespace detail {
MPI_Comm comm_of(const AllreduceRmsnorm::Impl& impl) noexcept;  // allreduce_rmsnorm.cpp
}  // namespace detail

namespace {

using mpi::real;

// Milliseconds of one run of `body` on the compute stream (events on the
// device, the clock on the host, where calls return when done).
class Stopwatch {
 public:
  Stopwatch(bool device, void* stream) : device_(device), stream_(stream) {}
  ~Stopwatch() {
    if (start_ != nullptr) gpu::event_destroy(start_);
    if (stop_ != nullptr) gpu::event_destroy(stop_);
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

  template <class Body>
  Status time(Body&& body, double* ms) {
    if (!device_) {
      const auto t0 = std::chrono::steady_clock::now();
      STRATA_TRY(body());
      *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return Status::ok;
    }
    if (start_ == nullptr) STRATA_TRY(gpu::event_create(&start_, true));
    if (stop_ == nullptr) STRATA_TRY(gpu::event_create(&stop_, true));
    STRATA_TRY(gpu::event_record(start_, stream_));
    STRATA_TRY(body());
    STRATA_TRY(gpu::event_record(stop_, stream_));
    STRATA_TRY(gpu::event_synchronize(stop_));
    float elapsed = 0;
    STRATA_TRY(gpu::event_elapsed_ms(start_, stop_, &elapsed));
    *ms = elapsed;
    return Status::ok;
  }

 private:
  bool device_;
  void* stream_;
  gpu::Event start_ = nullptr;
  gpu::Event stop_ = nullptr;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

Result<SplitChoice> tune_split(AllreduceRmsnorm& fused, const Tensors& t, const Split& split,
                               const ComputeRows& compute, const OverlapStreams& streams, const SplitConfig& config,
                               int reps, double margin) noexcept {
  SplitChoice choice;
  if (!split.split() || reps < 1 || !compute) return choice;
  std::vector<int> budgets;
  if (config.comm_blocks >= 0) {
    budgets.push_back(config.comm_blocks);
  } else {
    budgets = {16, 32, 64, 0};
  }
  const bool device = fused.config().memory == Memory::device;
  Stopwatch watch(device, streams.compute);
  RunOptions whole;
  whole.stream = streams.compute;
  whole.algorithm = config.algorithm;
  auto unsplit = [&]() -> Status {
    STRATA_TRY(compute(0, t.tokens, streams.compute));
    return fused.run(t, whole);
  };
  // times[0]: unsplit; times[1 + i]: split with budgets[i]; alternated, round 0 a warm-up.
  std::vector<std::vector<double>> times(1 + budgets.size());
  for (int round = 0; round <= reps; ++round) {
    for (size_t k = 0; k < times.size(); ++k) {
      double ms = 0;
      if (k == 0) {
        STRATA_TRY(watch.time(unsplit, &ms));
      } else {
        SplitConfig c = config;
        c.comm_blocks = budgets[k - 1];
        c.chain = false;
        STRATA_TRY(watch.time([&] { return run_split(fused, t, split, compute, streams, c); }, &ms));
      }
      if (round > 0) times[k].push_back(ms);
    }
  }
  std::vector<double> medians(times.size()), slowest(times.size());
  for (size_t k = 0; k < times.size(); ++k) medians[k] = median(times[k]);
  if (real().MPI_Allreduce(medians.data(), slowest.data(), static_cast<int>(medians.size()), MPI_DOUBLE, MPI_MAX,
                           detail::comm_of(*fused.impl_)) != MPI_SUCCESS) {
    return Status::mpi_error;
  }
  choice.unsplit_ms = slowest[0];
  const auto best = std::min_element(slowest.begin() + 1, slowest.end());
  choice.split_ms = *best;
  choice.comm_blocks = budgets[static_cast<size_t>(best - slowest.begin() - 1)];
  choice.split = choice.split_ms < choice.unsplit_ms * (1.0 - margin);
  if (fused.rank() == 0) {
    STRATA_LOG(info, kColl,
               "token split of %zu tokens (%zu + %zu): %s (unsplit %.3f ms, best split %.3f ms with %d blocks)",
               t.tokens, split.first, split.second, choice.split ? "taken" : "not taken", choice.unsplit_ms,
               choice.split_ms, choice.comm_blocks);
  }
  return choice;
}

}  // namespace strata::fused
