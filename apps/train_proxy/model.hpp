// strata-train-proxy's model: a stack of tensor-parallel MLP blocks
// (Megatron's row/column split: W1 [hidden][ffn/TP] column-parallel, W2
// [ffn/TP][hidden] row-parallel), each ending in the allreduce of its
// partial sums over the TP group, the residual add and RMSNorm — the spot
// the fused kernel and the token split target — then weight-gradient GEMMs
// of the same shapes as a backward pass's, the gradients' allreduce over
// the DP group through Strata's (hierarchical) collectives, and an SGD
// update. No activation function: its cost is small next to the GEMMs and
// it changes nothing the proxy measures.
#pragma once

#include "apps/train_proxy/ops.hpp"

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace strata_proxy {

enum class Mode { sequential, fused, split };
const char* to_string(Mode m);

struct Shape {
  size_t hidden = 1024;
  size_t ffn_local = 1024;  // ffn / TP
  size_t tokens = 1024;
  size_t layers = 2;
  strata::coll::DataType type = strata::coll::DataType::bfloat16;
};

struct Settings {
  float lr = 0.01f;
  float epsilon = 1e-6f;
  uint64_t seed = 1;
  strata::fused::Algorithm fused_algorithm = strata::fused::Algorithm::automatic;
  strata::coll::Algorithm dp_algorithm = strata::coll::Algorithm::automatic;
  strata::fused::SplitConfig split;
  bool inject_error = false;  // corrupt one element after the first fused layer (tests the verification)
};

// One layer taken apart (Model::breakdown): each phase timed alone on the
// compute stream (median of the repetitions), the layer as the mode runs it,
// and what the phases do not explain.
struct Phase {
  std::string name;
  double ms = 0;
};
struct Breakdown {
  Mode mode = Mode::sequential;
  double layer_ms = 0;        // layer 0 alone, as the mode runs it
  std::vector<Phase> phases;  // timed alone
  double critical_ms = 0;     // the phases on the layer's critical path, added up
  double idle_ms = 0;         // layer_ms - critical_ms: waits, launch gaps, SMs shared
};
// The split's communication budget: its first fused call alone, and run
// beside the second part's GEMMs, for a block count.
struct BudgetPoint {
  int blocks = 0;
  double fused_ms = 0;    // fused call of the first part, alone
  double overlap_ms = 0;  // GEMMs of the second part | fused call of the first part
  double gemm_ms = 0;     // GEMMs of the second part, alone
};

struct StepTimes {
  double step_ms = 0;
  double forward_ms = 0;
  std::vector<double> layer_ms;
  double backward_ms = 0;
  double grad_allreduce_ms = 0;
};

class Model {
 public:
  Model(Ops& ops, const Shape& shape, const Settings& settings, MPI_Comm tp, MPI_Comm dp);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Weights and inputs from the seed (the same on every call), the fused object.
  strata::Status init();
  strata::Status step(Mode mode, StepTimes* times);
  // The last layer's output and the first layer's W2 (host copies), to compare runs.
  std::vector<unsigned char> output();
  std::vector<unsigned char> first_weights();
  const strata::fused::Split& split() const { return split_; }
  // The split as configured again (after tune_split turned it off).
  void reset_split() {
    split_off_ = false;
    split_ = strata::fused::split_tokens(shape_.tokens, settings_.split);
  }
  strata::fused::Path fused_path() const;
  // Whether the token split pays here (strata::fused::tune_split on layer
  // 0): when it does not, the split mode runs unsplit from now on; when it
  // does, with the block budget that measured fastest. Collective.
  strata::Status tune_split(int reps, strata::fused::SplitChoice* choice);
  // Layer 0 of `mode` taken apart (breakdown.cpp); collective.
  strata::Status breakdown(Mode mode, int reps, Breakdown* out);
  // The split's first fused call with each block budget (device, split only).
  strata::Status budget_sweep(const std::vector<int>& budgets, int reps, std::vector<BudgetPoint>* out);

 private:
  void* buffer(size_t elements);
  strata::Status layer(Mode mode, size_t l);
  strata::Status compute_rows(size_t l, size_t begin, size_t count, void* stream);
  strata::Status corrupt(void* tensor);
  template <class F>
  strata::Status timed(int reps, F&& f, double* ms);
  // The fused call's tensors of layer l's rows [begin, begin + count).
  strata::fused::Tensors rows(size_t begin, size_t count, size_t l);
  strata::Status part2_beside_part1(const strata::fused::RunOptions& part);

  Ops& ops_;
  Shape shape_;
  Settings settings_;
  MPI_Comm tp_;
  MPI_Comm dp_;
  int tp_rank_ = 0, dp_rank_ = 0, dp_size_ = 1;
  size_t element_ = 2;
  std::vector<void*> owned_;
  std::vector<void*> w1_, w2_, norm_, dw1_, dw2_, a_, h_;  // per layer (h_: layers + 1)
  void* input_ = nullptr;
  void* residual_ = nullptr;
  void* partial_ = nullptr;
  std::vector<std::vector<unsigned char>> initial_;  // host copies: per layer W1, W2, norm; then the input
  std::unique_ptr<strata::fused::AllreduceRmsnorm> fused_;
  strata::fused::Split split_;
  bool split_off_ = false;  // tune_split found the split slower: init() keeps it off
};

}  // namespace strata_proxy
