// Token splitting (TokenWeave): the split arithmetic and the two-stream
// overlap of one part's compute with the other part's fused call.
#include <strata/fused.hpp>

#include "base/config.hpp"
#include "base/log.hpp"
#include "collectives/fused/exchange.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::fused {
namespace detail {
Status split_events(AllreduceRmsnorm::Impl& impl, void* (&events)[4]) noexcept;  // allreduce_rmsnorm.cpp
bool& split_pending(AllreduceRmsnorm::Impl& impl) noexcept;
}  // namespace detail

namespace {

config::IntParam g_wave{"STRATA_SPLIT_WAVE", 256,
                        "Token split: each part is a multiple of this many tokens (a GEMM wave's rows)", 1,
                        int64_t{1} << 30};
config::IntParam g_offset{"STRATA_SPLIT_OFFSET", 0,
                          "Token split: tokens added to half the batch before rounding to the wave (tuned per model "
                          "and GPU, as TokenWeave does)",
                          -(int64_t{1} << 30), int64_t{1} << 30};
config::IntParam g_min_tokens{"STRATA_SPLIT_MIN_TOKENS", 1024,
                              "Token split: batches with fewer tokens are not split (overlap does not pay below)", 1,
                              int64_t{1} << 40};
// 48: measured on 2 x H100 (hidden 8192, 2048-row halves): the fused call
// beside the GEMMs took 1.82 ms together at 16 blocks, 1.69 at 32, 1.67 at
// 48, 1.73 at 66 and at 132 (docs/fused.md); tune_split picks per shape.
config::IntParam g_comm_blocks{"STRATA_SPLIT_COMM_BLOCKS", 48,
                               "Token split: the fused calls' block budget, in multiprocessors, while compute runs "
                               "beside them (0: the object's)",
                               0, 256};

}  // namespace

int split_comm_blocks(const SplitConfig& config) noexcept {
  return config.comm_blocks >= 0 ? config.comm_blocks : static_cast<int>(g_comm_blocks.get());
}

Split split_tokens(size_t tokens, const SplitConfig& config) noexcept {
  const auto wave = static_cast<int64_t>(config.wave > 0 ? config.wave : static_cast<size_t>(g_wave.get()));
  const int64_t offset = config.offset != SplitConfig::kFromEnvironment ? config.offset : g_offset.get();
  const size_t min_tokens = config.min_tokens > 0 ? config.min_tokens : static_cast<size_t>(g_min_tokens.get());
  Split s;
  s.first = tokens;
  if (tokens < min_tokens || tokens < 2) return s;
  const int64_t n = static_cast<int64_t>(tokens);
  const int64_t half = n / 2 + offset;
  int64_t first = (half + wave / 2) / wave * wave;  // nearest multiple, ties up
  if (half < 0) first = 0;
  if (first < wave) first = wave;
  if (first >= n) return s;  // no room for a second part
  s.first = static_cast<size_t>(first);
  s.second = tokens - s.first;
  return s;
}

Status run_split(AllreduceRmsnorm& fused, const Tensors& t, const Split& split, const ComputeRows& compute,
                 const OverlapStreams& streams, const SplitConfig& config) noexcept {
  if (!compute || split.first + split.second != t.tokens) {
    STRATA_LOG(error, kColl, "run_split: the split (%zu + %zu) does not cover the %zu tokens", split.first,
               split.second, t.tokens);
    return Status::invalid_argument;
  }
  const Config& c = fused.config();
  const size_t row_bytes = c.hidden * coll::size_of(c.type);
  RunOptions whole;
  whole.stream = streams.compute;
  whole.algorithm = config.algorithm;
  if (!split.split()) {
    STRATA_TRY(join_split(fused, streams));
    STRATA_TRY(compute(0, t.tokens, streams.compute));
    return fused.run(t, whole);
  }
  const int budget = split_comm_blocks(config);
  RunOptions part;
  part.blocks = budget;
  part.algorithm = config.algorithm;
  const Tensors first = rows_of(t, 0, split.first, row_bytes);
  const Tensors second = rows_of(t, split.first, split.second, row_bytes);
  if (c.memory == Memory::host) {
    STRATA_TRY(compute(0, split.first, streams.compute));
    STRATA_TRY(fused.run(first, part));
    STRATA_TRY(compute(split.first, split.second, streams.compute));
    return fused.run(second, part);
  }
  if (streams.comm == streams.compute) {
    STRATA_LOG(error, kColl, "run_split: the compute and communication streams must differ");
    return Status::invalid_argument;
  }
  // ev: 0 compute 1 done, 1 compute 2 done, 2 fused 2 done, 3 fused 1 done.
  void* ev[4] = {};
  STRATA_TRY(detail::split_events(*fused.impl_, ev));
  bool& pending = detail::split_pending(*fused.impl_);
  part.stream = streams.comm;
  // compute 1 -> [comm] fused 1 ; compute 2 (overlaps fused 1) -> [comm] fused 2 ; compute waits for comm
  // (chained: a part's compute waits only for the previous call's fused call of the same part, and the
  // second fused call overlaps the next call's first compute).
  if (pending) STRATA_TRY(gpu::stream_wait_event(streams.compute, ev[3]));
  STRATA_TRY(compute(0, split.first, streams.compute));
  STRATA_TRY(gpu::event_record(ev[0], streams.compute));
  STRATA_TRY(gpu::stream_wait_event(streams.comm, ev[0]));
  STRATA_TRY(fused.run(first, part));
  STRATA_TRY(gpu::event_record(ev[3], streams.comm));
  if (pending) STRATA_TRY(gpu::stream_wait_event(streams.compute, ev[2]));
  STRATA_TRY(compute(split.first, split.second, streams.compute));
  STRATA_TRY(gpu::event_record(ev[1], streams.compute));
  STRATA_TRY(gpu::stream_wait_event(streams.comm, ev[1]));
  STRATA_TRY(fused.run(second, part));
  STRATA_TRY(gpu::event_record(ev[2], streams.comm));
  pending = config.chain;
  return config.chain ? Status::ok : gpu::stream_wait_event(streams.compute, ev[2]);
}

Status join_split(AllreduceRmsnorm& fused, const OverlapStreams& streams) noexcept {
  bool& pending = detail::split_pending(*fused.impl_);
  if (!pending) return Status::ok;
  void* ev[4] = {};
  STRATA_TRY(detail::split_events(*fused.impl_, ev));
  pending = false;
  return gpu::stream_wait_event(streams.compute, ev[2]);
}

}  // namespace strata::fused
