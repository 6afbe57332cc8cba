// Fused AllReduce + residual add + RMSNorm over the ranks of a communicator
// (tensor-parallel groups), and the token split that overlaps one part of a
// batch's compute with the other part's communication (docs/fused.md).
//
// Per call, on every rank, for a batch of `tokens` rows of `hidden` elements:
//
//   residual = T(residual + sum over ranks of x)       (fp32 accumulation)
//   out      = T(residual / sqrt(mean(residual^2) + epsilon) * weight)
//
// where the norm is taken over the rounded residual the stream now holds,
// the rank sum runs in rank order in fp32 (every rank gets the same bits),
// and T is bfloat16, float16 or float32. x is read only; `out` may be x.
//
// Paths (AllreduceRmsnorm::path()):
//  * peer:     device buffers, every rank of the communicator on one node
//              with its own GPU and peer access proven by a real transfer at
//              creation: one kernel per call over CUDA/HIP IPC (Lamport:
//              every rank writes its rows into every peer's memory and the
//              peers poll the data itself, no barrier; one-shot: every rank
//              reads every peer's rows after a start barrier and reduces
//              every row; two-shot: each rank reduces its share of rows,
//              then gathers the others'), with flags at system scope and
//              every wait bounded by STRATA_FUSED_TIMEOUT_MS.
//  * shared:   host buffers, every rank on one node: the same algorithm on
//              an MPI shared-memory window (chosen with Algorithm::one_shot
//              or two_shot; the default for host buffers is fallback).
//  * fallback: the communicator's allreduce (strata/collectives.hpp: NCCL on
//              device buffers, MPI on host buffers) into `out`, then the
//              residual + RMSNorm kernel. Taken where peer access is not
//              available, when STRATA_FUSED=0, and where the chosen
//              algorithm is fallback.
//
// Device calls are ordered on the given stream and return once queued, like
// NCCL; they are capturable in a CUDA graph (peer and fallback paths alike,
// as far as NCCL is). Every rank must make the same calls with the same
// token count, in the same order, on one stream per object at a time.
#pragma once

#include <strata/collectives.hpp>
#include <strata/export.h>
#include <strata/status.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace strata::fused {

using coll::DataType;  // bfloat16, float16 or float32 here

struct Split;
struct SplitChoice;
struct SplitConfig;
struct OverlapStreams;

enum class Algorithm {
  automatic,  // lamport where its sets hold a row (larger messages in pieces), else one_shot, then two_shot by size
              // (STRATA_FUSED_ALGO may force one)
  one_shot,   // every rank reads every peer's rows and normalises every row
  two_shot,   // reduce-scatter of rows, residual on own rows, all-gather, norm
  fallback,   // the communicator's allreduce, then the residual + RMSNorm kernel
  lamport,    // one_shot without barriers: rows pushed into the peers, the data polled (calls of at most
              // STRATA_FUSED_LAMPORT_MAX bytes; a larger message runs as several)
};
STRATA_API const char* to_string(Algorithm algorithm) noexcept;
// "auto", "one_shot", "two_shot", "fallback", "lamport".
STRATA_API Result<Algorithm> parse_algorithm(const char* name) noexcept;

enum class Path { peer, shared, fallback };
STRATA_API const char* to_string(Path path) noexcept;

enum class Memory { device, host };

struct Config {
  size_t max_tokens = 0;  // the most tokens one call may pass
  size_t hidden = 0;      // elements per row; the peer and shared paths take up to 16384 (larger: fallback)
  DataType type = DataType::bfloat16;
  Memory memory = Memory::device;  // where every call's buffers live (device: the current device)
  // Thread blocks of the peer kernel (the block budget); 0: STRATA_FUSED_BLOCKS.
  int blocks = 0;
};

struct Tensors {
  const void* x = nullptr;       // [tokens][hidden], this rank's partial sums
  void* residual = nullptr;      // [tokens][hidden], in and out
  const void* weight = nullptr;  // [hidden]
  void* out = nullptr;           // [tokens][hidden], may be x (not residual)
  size_t tokens = 0;
  float epsilon = 1e-6f;
};

// Queues the rows [begin, begin + count) of the compute that produces x
// (and anything else that must precede the allreduce) on `stream`
// (run_split, below).
using ComputeRows = std::function<Status(size_t begin, size_t count, void* stream)>;

struct RunOptions {
  Algorithm algorithm = Algorithm::automatic;
  int blocks = 0;          // 0: the object's; fewer leave SMs to concurrent compute
  void* stream = nullptr;  // device: a cudaStream_t / hipStream_t (null: the default stream)
};

class STRATA_API AllreduceRmsnorm {
 public:
  // Collective over `comm` (duplicated internally). Sets up the peer path
  // where it can and says once, at info level, which path it took and why.
  static Result<std::unique_ptr<AllreduceRmsnorm>> create(MPI_Comm comm, const Config& config) noexcept;
  ~AllreduceRmsnorm();
  AllreduceRmsnorm(const AllreduceRmsnorm&) = delete;
  AllreduceRmsnorm& operator=(const AllreduceRmsnorm&) = delete;

  // One call (collective). Status::timeout when an earlier call's kernel
  // gave up waiting for a peer (the message names it, error_message());
  // the object is then unusable: make a new one.
  Status run(const Tensors& tensors, const RunOptions& options = {}) noexcept;

  // The algorithm `automatic` resolves to for a token count.
  Algorithm chosen(size_t tokens) const noexcept;
  Path path() const noexcept;
  // The largest message (bytes) a Lamport call takes here (0: none).
  size_t lamport_max() const noexcept;
  const Config& config() const noexcept;
  int rank() const noexcept;
  int size() const noexcept;
  // The reason the last failing call gave, or "" (also kernel timeouts seen since).
  const char* error_message() const noexcept;
  // Checks for a kernel timeout without a call (device path; no synchronisation).
  Status check() noexcept;

  struct Impl;

 private:
  friend Status run_split(AllreduceRmsnorm&, const Tensors&, const Split&, const ComputeRows&, const OverlapStreams&,
                          const SplitConfig&) noexcept;
  friend Status join_split(AllreduceRmsnorm&, const OverlapStreams&) noexcept;
  friend Result<SplitChoice> tune_split(AllreduceRmsnorm&, const Tensors&, const Split&, const ComputeRows&,
                                        const OverlapStreams&, const SplitConfig&, int, double) noexcept;
  explicit AllreduceRmsnorm(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

// The residual + RMSNorm of one rank's rows without communication (what the
// fallback path runs after its allreduce; also the unfused baseline):
//   residual = T(residual + x); out = rmsnorm(residual) * weight.
// Device buffers on `stream` (queued), host buffers at once.
STRATA_API Status residual_rmsnorm(const Tensors& tensors, size_t hidden, DataType type, Memory memory,
                                   void* stream = nullptr) noexcept;

// ---------------------------------------------------------------------------
// Token splitting (TokenWeave): a batch's tokens in two parts, each a whole
// number of waves, so that one part's compute runs while the other part's
// fused AllReduce-RMSNorm runs on a second stream.

struct SplitConfig {
  static constexpr int64_t kFromEnvironment = INT64_MIN;
  size_t wave = 0;                    // 0: STRATA_SPLIT_WAVE (tokens per GEMM wave)
  int64_t offset = kFromEnvironment;  // tokens added to the half before rounding: STRATA_SPLIT_OFFSET
  size_t min_tokens = 0;              // no split below; 0: STRATA_SPLIT_MIN_TOKENS
  int comm_blocks = -1;               // block budget of the fused calls; -1: STRATA_SPLIT_COMM_BLOCKS (0: the object's)
  Algorithm algorithm = Algorithm::automatic;  // of the fused calls
  // Pipelined layers (device path): the call returns with its second fused
  // call still running on the communication stream; the next run_split's
  // first part waits only for this call's first part (its rows), its
  // second part for this call's second. End the chain with join_split
  // before the compute stream reads all rows. Each part's compute must
  // touch only its own rows.
  bool chain = false;
};

struct Split {
  size_t first = 0;   // tokens [0, first)
  size_t second = 0;  // tokens [first, first + second); 0: no split
  bool split() const noexcept { return second > 0; }
};

// first = round(tokens / 2 + offset) to a multiple of the wave, kept within
// [wave, tokens - 1]; no split below min_tokens or where that leaves no
// second part. The same on every rank for the same tokens.
STRATA_API Split split_tokens(size_t tokens, const SplitConfig& config = {}) noexcept;

// The block budget of the split's fused calls: config.comm_blocks, or
// STRATA_SPLIT_COMM_BLOCKS when it is -1 (0: the object's).
STRATA_API int split_comm_blocks(const SplitConfig& config = {}) noexcept;

struct OverlapStreams {
  void* compute = nullptr;  // where `compute` runs; the caller's work after this call waits on it
  void* comm = nullptr;     // the fused calls (must differ from compute on the device path)
};

// compute(part 1) | fused(part 1) overlapped with compute(part 2) | fused(part 2):
// on the device path with events between the two streams, the compute stream
// ending after both fused calls; on host buffers one after the other. Without
// a split: compute, then fused, on the compute stream.
STRATA_API Status run_split(AllreduceRmsnorm& fused, const Tensors& tensors, const Split& split,
                            const ComputeRows& compute, const OverlapStreams& streams,
                            const SplitConfig& config = {}) noexcept;

// The compute stream waits for what chained run_split calls left running
// (nothing to do when none is pending).
STRATA_API Status join_split(AllreduceRmsnorm& fused, const OverlapStreams& streams) noexcept;

// Whether the split pays on this machine for this shape, measured: `reps`
// rounds (after one warm-up) alternating the unsplit call (compute of all
// tokens, then one fused call) with run_split at each communication block
// budget in `config.comm_blocks` = -1: 16, 32, 64 and the object's;
// otherwise that one only. The slowest rank's median of each; the split is
// taken only when its best is faster than unsplit by more than `margin`
// (a fraction). Collective; the calls change residual and out as real
// calls do: tune on scratch data or redo the step after. The same answer
// on every rank.
struct SplitChoice {
  bool split = false;     // splitting measured faster
  int comm_blocks = 0;    // the budget that measured fastest (0: the object's)
  double unsplit_ms = 0;  // compute + fused on all tokens
  double split_ms = 0;    // the best split (0 when none was timed)
};
STRATA_API Result<SplitChoice> tune_split(AllreduceRmsnorm& fused, const Tensors& tensors, const Split& split,
                                          const ComputeRows& compute, const OverlapStreams& streams,
                                          const SplitConfig& config = {}, int reps = 3, double margin = 0.02) noexcept;

}  // namespace strata::fused
