// strata-bench-coll: nccl-tests-style table of Strata's collectives (each
// algorithm) next to the peer run in the same process on the same data —
// flat NCCL called directly on device buffers, the MPI library's own
// collective on host buffers — with the cost model's prediction.
#pragma once

#include <strata/collectives.hpp>

#include "bench/common/sampling.hpp"

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace strata_bench {

struct Case {
  strata::coll::Collective collective;
  strata::coll::DataType type;
  strata::coll::ReduceOp op;
  size_t
      bytes;  // nccl-tests' size: allreduce/broadcast/reduce the buffer, reduce_scatter the input, allgather the output
  size_t count;           // elements per rank's call (allgather/reduce_scatter: the per-rank block)
  bool in_place = false;  // MPI_IN_PLACE as the send buffer (has_in_place collectives)
};

struct Options : SampleOptions {
  bool device = false;
  bool in_place = false;  // also time the calls in place
  bool graph = false;     // device: also the peer's calls captured into a CUDA graph, its replay timed
};

// The collectives timed in place too with --in-place, as nccl-tests'
// in-place columns: allreduce, allgather, reduce_scatter.
bool has_in_place(strata::coll::Collective c);
// Where a rank's input starts in the receive buffer of an in-place call (MPI
// semantics): its own block for allgather, the start otherwise (the whole
// input for reduce_scatter, whose result then starts there too).
size_t in_place_offset(const Case& c, int rank);

// Sizes of the per-rank buffers.
size_t send_bytes(const Case& c, int ranks);
size_t recv_bytes(const Case& c, int ranks);
double bus_factor(strata::coll::Collective c, int ranks);  // nccl-tests' busbw / algbw

// The runners: the peer ("library") and Strata with an algorithm. Both
// verify their first result against a reference computed on the host.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual Timing peer(const Case& c) = 0;
  virtual Timing ours(const Case& c, strata::coll::Algorithm algorithm) = 0;
  // The peer's calls captured into a CUDA graph, its replay timed (--graph;
  // device buffers only).
  virtual Timing peer_graph(const Case&) {
    Timing none;
    none.note = "--graph: device buffers only";
    return none;
  }
  virtual std::string peer_name() const = 0;
  virtual std::string describe() const = 0;  // the machine, for the header
};
Runner* make_host_runner(const Options& options);
Runner* make_device_runner(const Options& options);  // null when built without CUDA and NCCL

// Inputs: small integers (exact in every type, and in any summation order),
// different per rank and element.
void fill_input(void* host, size_t count, strata::coll::DataType type, int rank, unsigned salt);
// The expected output on `rank` (host memory), computed naively from every
// rank's input.
std::vector<char> expected_output(const Case& c, int rank, int ranks, unsigned salt, bool in_place_root_only = false);

}  // namespace strata_bench
