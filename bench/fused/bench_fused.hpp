// strata-bench-fused: Strata's fused AllReduce + residual + RMSNorm next to
// the peer run in the same process on the same data — NCCL's allreduce
// followed by a separate residual + RMSNorm kernel on device buffers, the
// MPI library's allreduce followed by the host rows on host buffers — and,
// merged from bench/fused/torch_peer.py's JSON of the same job, PyTorch's
// NCCL and symmetric-memory two-shot + RMSNorm. docs/fused.md.
#pragma once

#include <strata/fused.hpp>

#include "bench/common/sampling.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <string>

namespace strata_bench::fused {

struct Case {
  size_t tokens = 1;
  size_t hidden = 4096;
  strata::coll::DataType type = strata::coll::DataType::bfloat16;
  size_t bytes() const { return tokens * hidden * strata::coll::size_of(type); }
};

struct Options : SampleOptions {
  bool device = false;
  size_t max_tokens = 1;
  int blocks = 0;      // 0: the object's default
  bool graphs = true;  // the graph-captured columns (device)
};

class Runner {
 public:
  virtual ~Runner() = default;
  // NCCL (device) or the MPI library (host) allreduce, then residual + RMSNorm.
  virtual Timing peer(const Case& c) = 0;
  // Strata's fused call with an algorithm (automatic: what it picks).
  virtual Timing ours(const Case& c, strata::fused::Algorithm a) = 0;
  // The peer's calls (ours: false) or Strata's automatic call (true)
  // captured in a CUDA graph, the graph replayed: launch costs gone.
  virtual Timing graphed(const Case& /*c*/, bool /*ours*/) {
    Timing t;
    t.note = "device only";
    return t;
  }
  // What automatic runs for this case, and on which path.
  virtual strata::fused::Algorithm chosen(const Case& c) = 0;
  virtual std::string path(const Case& c) = 0;
  // Bytes per second each rank can read from all its peers at once
  // (measured, device only; 0 when unknown).
  virtual double peer_read_bandwidth() = 0;
  virtual std::string peer_name() const = 0;
  virtual std::string describe() const = 0;
};

// The fused objects of a run, one per (hidden, type), made on first use
// (collective: every rank asks for the same cases in the same order).
class Objects {
 public:
  Objects(const Options& options, strata::fused::Memory memory) : options_(options), memory_(memory) {}
  strata::fused::AllreduceRmsnorm* get(const Case& c);
  void clear() { objects_.clear(); }

 private:
  Options options_;
  strata::fused::Memory memory_;
  std::map<std::pair<size_t, int>, std::unique_ptr<strata::fused::AllreduceRmsnorm>> objects_;
};

Runner* make_host_runner(const Options& options);
Runner* make_device_runner(const Options& options);  // null without CUDA and NCCL

// Fresh inputs in [-1, 1] (bfloat16/float16/float32 bits) from a seed.
void fill_random(void* host, size_t count, strata::coll::DataType type, uint64_t seed);
// max |a - b| / max |b| over count elements of `type`.
double relative_difference(const void* a, const void* b, size_t count, strata::coll::DataType type);

}  // namespace strata_bench::fused
