#include "apps/train_proxy/model.hpp"

#include "portability/numeric/float16.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace strata_proxy {
namespace {

using strata::Status;
using strata::coll::DataType;

// Host values in [-scale, scale] (+ offset) as `type`'s bits.
std::vector<unsigned char> random_values(size_t n, DataType type, uint64_t seed, float scale, float offset = 0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const size_t e = strata::coll::size_of(type);
  std::vector<unsigned char> out(n * e);
  for (size_t i = 0; i < n; ++i) {
    const float v = offset + scale * unit(gen);
    if (type == DataType::float32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      const uint16_t h =
          type == DataType::bfloat16 ? strata::numeric::float_to_bfloat16(v) : strata::numeric::float_to_half(v);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

uint64_t mix(uint64_t a, uint64_t b) { return (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull); }

}  // namespace

const char* to_string(Mode m) {
  switch (m) {
    case Mode::sequential: return "sequential";
    case Mode::fused: return "fused";
    case Mode::split: return "fused+split";
  }
  return "?";
}

Model::Model(Ops& ops, const Shape& shape, const Settings& settings, MPI_Comm tp, MPI_Comm dp)
    : ops_(ops), shape_(shape), settings_(settings), tp_(tp), dp_(dp) {
  MPI_Comm_rank(tp_, &tp_rank_);
  MPI_Comm_rank(dp_, &dp_rank_);
  MPI_Comm_size(dp_, &dp_size_);
  element_ = strata::coll::size_of(shape_.type);
}

Model::~Model() {
  fused_.reset();  // collective over the TP group, before its buffers go
  for (void* p : owned_) ops_.release(p);
}

void* Model::buffer(size_t elements) {
  void* p = ops_.alloc(elements * element_);
  if (p != nullptr) owned_.push_back(p);
  return p;
}

Status Model::init() {
  const size_t H = shape_.hidden, F = shape_.ffn_local, T = shape_.tokens, L = shape_.layers;
  if (owned_.empty()) {
    for (size_t l = 0; l < L; ++l) {
      w1_.push_back(buffer(H * F));
      w2_.push_back(buffer(F * H));
      norm_.push_back(buffer(H));
      dw1_.push_back(buffer(H * F));
      dw2_.push_back(buffer(F * H));
      a_.push_back(buffer(T * F));
    }
    for (size_t l = 0; l <= L; ++l) h_.push_back(buffer(T * H));
    input_ = buffer(T * H);
    residual_ = buffer(T * H);
    partial_ = buffer(T * H);
    for (void* p : owned_) {
      if (p == nullptr) return Status::out_of_memory;
    }
  }
  // Weights: a TP rank's shard, the same on every DP replica; inputs: per DP replica, the same within a TP group.
  // Made once (the host's random numbers take seconds at hidden 8192), uploaded on every init.
  const uint64_t s = settings_.seed;
  if (initial_.empty()) {
    const float w1_scale = 1.0f / std::sqrt(static_cast<float>(H)), w2_scale = 1.0f / std::sqrt(static_cast<float>(F));
    const auto tp = 1000 * static_cast<uint64_t>(tp_rank_);
    for (size_t l = 0; l < L; ++l) {
      initial_.push_back(random_values(H * F, shape_.type, mix(s, 10 * l + 1 + tp), w1_scale));
      initial_.push_back(random_values(F * H, shape_.type, mix(s, 10 * l + 2 + tp), w2_scale));
      initial_.push_back(random_values(H, shape_.type, mix(s, 10 * l + 3), 0.1f, 1.0f));
    }
    initial_.push_back(random_values(T * H, shape_.type, mix(s, 7 + 1000 * static_cast<uint64_t>(dp_rank_)), 1.0f));
  }
  for (size_t l = 0; l < L; ++l) {
    STRATA_TRY(ops_.upload(w1_[l], initial_[3 * l].data(), initial_[3 * l].size()));
    STRATA_TRY(ops_.upload(w2_[l], initial_[3 * l + 1].data(), initial_[3 * l + 1].size()));
    STRATA_TRY(ops_.upload(norm_[l], initial_[3 * l + 2].data(), initial_[3 * l + 2].size()));
  }
  STRATA_TRY(ops_.upload(input_, initial_.back().data(), initial_.back().size()));
  if (!fused_) {
    strata::fused::Config cfg;
    cfg.max_tokens = T;
    cfg.hidden = H;
    cfg.type = shape_.type;
    cfg.memory = ops_.device() ? strata::fused::Memory::device : strata::fused::Memory::host;
    auto f = strata::fused::AllreduceRmsnorm::create(tp_, cfg);
    if (!f) return f.status();
    fused_ = std::move(f).value();
  }
  split_ = split_off_ ? strata::fused::Split{T, 0} : strata::fused::split_tokens(T, settings_.split);
  return ops_.synchronize();
}

strata::fused::Tensors Model::rows(size_t begin, size_t count, size_t l) {
  const size_t row = shape_.hidden * element_;
  auto at = [&](void* p) { return static_cast<unsigned char*>(p) + begin * row; };
  strata::fused::Tensors t;
  t.x = at(partial_);
  t.residual = at(residual_);
  t.weight = norm_[l];
  t.out = at(h_[l + 1]);
  t.tokens = count;
  t.epsilon = settings_.epsilon;
  return t;
}

Status Model::tune_split(int reps, strata::fused::SplitChoice* choice) {
  strata::fused::SplitConfig cfg = settings_.split;
  cfg.algorithm = settings_.fused_algorithm;
  auto compute = [this](size_t begin, size_t count, void* s) { return compute_rows(0, begin, count, s); };
  auto r = strata::fused::tune_split(*fused_, rows(0, shape_.tokens, 0), split_, compute,
                                     {ops_.compute_stream(), ops_.comm_stream()}, cfg, reps);
  if (!r) return r.status();
  *choice = *r;
  if (!choice->split) {
    split_off_ = true;
    split_ = strata::fused::Split{shape_.tokens, 0};
  } else {
    settings_.split.comm_blocks = choice->comm_blocks;
  }
  return ops_.synchronize();
}

strata::fused::Path Model::fused_path() const { return fused_ ? fused_->path() : strata::fused::Path::fallback; }

// a[l] rows = h[l] rows x W1; partial rows = a[l] rows x W2.
Status Model::compute_rows(size_t l, size_t begin, size_t count, void* stream) {
  const size_t H = shape_.hidden, F = shape_.ffn_local;
  auto* h = static_cast<unsigned char*>(h_[l]) + begin * H * element_;
  auto* a = static_cast<unsigned char*>(a_[l]) + begin * F * element_;
  auto* p = static_cast<unsigned char*>(partial_) + begin * H * element_;
  STRATA_TRY(ops_.gemm(false, false, count, F, H, h, w1_[l], a, stream));
  return ops_.gemm(false, false, count, H, F, a, w2_[l], p, stream);
}

Status Model::layer(Mode mode, size_t l) {
  const size_t T = shape_.tokens;
  void* stream = ops_.compute_stream();
  const strata::fused::Tensors t = rows(0, T, l);
  if (mode == Mode::split) {
    strata::fused::SplitConfig cfg = settings_.split;
    cfg.algorithm = settings_.fused_algorithm;
    auto compute = [this, l](size_t begin, size_t count, void* s) { return compute_rows(l, begin, count, s); };
    const strata::fused::OverlapStreams streams{stream, ops_.comm_stream()};
    STRATA_TRY(strata::fused::run_split(*fused_, t, split_, compute, streams, cfg));
    // Chained layers: the last one's second fused call ends before the layer does.
    return l + 1 == shape_.layers ? strata::fused::join_split(*fused_, streams) : Status::ok;
  }
  STRATA_TRY(compute_rows(l, 0, T, stream));
  if (mode == Mode::fused) {
    strata::fused::RunOptions o;
    o.algorithm = settings_.fused_algorithm;
    o.stream = stream;
    return fused_->run(t, o);
  }
  // Sequential: the TP group's allreduce (NCCL on device buffers), then the residual + RMSNorm kernel.
  strata::coll::Options o;
  o.stream = stream;
  STRATA_TRY(strata::coll::allreduce(MPI_IN_PLACE, partial_, T * shape_.hidden, shape_.type,
                                     strata::coll::ReduceOp::sum, tp_, o));
  return strata::fused::residual_rmsnorm(t, shape_.hidden, shape_.type,
                                         ops_.device() ? strata::fused::Memory::device : strata::fused::Memory::host,
                                         stream);
}

Status Model::step(Mode mode, StepTimes* times) {
  const size_t H = shape_.hidden, F = shape_.ffn_local, T = shape_.tokens, L = shape_.layers;
  void* stream = ops_.compute_stream();
  ops_.reset_marks();
  const int begin = ops_.mark(stream);
  STRATA_TRY(ops_.copy(residual_, input_, T * H * element_, stream));
  STRATA_TRY(ops_.copy(h_[0], input_, T * H * element_, stream));
  std::vector<int> layer_marks{ops_.mark(stream)};
  for (size_t l = 0; l < L; ++l) {
    STRATA_TRY(layer(mode, l));
    if (settings_.inject_error && mode != Mode::sequential && l == 0 && tp_rank_ == 0 && dp_rank_ == 0) {
      STRATA_TRY(corrupt(h_[1]));
    }
    layer_marks.push_back(ops_.mark(stream));
  }
  // Weight gradients: dW2 = a^T h[l+1], dW1 = h[l]^T a (the shapes of a backward pass's).
  for (size_t l = 0; l < L; ++l) {
    STRATA_TRY(ops_.gemm(true, false, F, H, T, a_[l], h_[l + 1], dw2_[l], stream));
    STRATA_TRY(ops_.gemm(true, false, H, F, T, h_[l], a_[l], dw1_[l], stream));
  }
  const int backward = ops_.mark(stream);
  if (dp_size_ > 1) {
    strata::coll::Options o;
    o.stream = stream;
    o.algorithm = settings_.dp_algorithm;
    for (size_t l = 0; l < L; ++l) {
      STRATA_TRY(
          strata::coll::allreduce(MPI_IN_PLACE, dw1_[l], H * F, shape_.type, strata::coll::ReduceOp::sum, dp_, o));
      STRATA_TRY(
          strata::coll::allreduce(MPI_IN_PLACE, dw2_[l], F * H, shape_.type, strata::coll::ReduceOp::sum, dp_, o));
    }
  }
  const int reduced = ops_.mark(stream);
  const float step = -settings_.lr / static_cast<float>(T * static_cast<size_t>(dp_size_));
  for (size_t l = 0; l < L; ++l) {
    STRATA_TRY(ops_.axpy(H * F, step, dw1_[l], w1_[l], stream));
    STRATA_TRY(ops_.axpy(F * H, step, dw2_[l], w2_[l], stream));
  }
  const int end = ops_.mark(stream);
  STRATA_TRY(ops_.synchronize());
  STRATA_TRY(fused_->check());
  times->step_ms = ops_.ms(begin, end);
  times->forward_ms = ops_.ms(layer_marks.front(), layer_marks.back());
  times->layer_ms.clear();
  for (size_t l = 0; l < L; ++l) times->layer_ms.push_back(ops_.ms(layer_marks[l], layer_marks[l + 1]));
  times->backward_ms = ops_.ms(layer_marks.back(), backward);
  times->grad_allreduce_ms = ops_.ms(backward, reduced);
  return Status::ok;
}

// Adds 8 to the first element (after the queued work is done).
Status Model::corrupt(void* tensor) {
  STRATA_TRY(ops_.synchronize());
  std::vector<unsigned char> e(element_);
  STRATA_TRY(ops_.download(e.data(), tensor, element_));
  float v = 0;
  if (shape_.type == DataType::float32) {
    std::memcpy(&v, e.data(), 4);
    v += 8.0f;
    std::memcpy(e.data(), &v, 4);
  } else {
    uint16_t h = 0;
    std::memcpy(&h, e.data(), 2);
    const bool bf = shape_.type == DataType::bfloat16;
    v = (bf ? strata::numeric::bfloat16_to_float(h) : strata::numeric::half_to_float(h)) + 8.0f;
    h = bf ? strata::numeric::float_to_bfloat16(v) : strata::numeric::float_to_half(v);
    std::memcpy(e.data(), &h, 2);
  }
  return ops_.upload(tensor, e.data(), element_);
}

std::vector<unsigned char> Model::output() {
  std::vector<unsigned char> out(shape_.tokens * shape_.hidden * element_);
  ops_.download(out.data(), h_[shape_.layers], out.size());
  return out;
}

std::vector<unsigned char> Model::first_weights() {
  std::vector<unsigned char> out(shape_.ffn_local * shape_.hidden * element_);
  ops_.download(out.data(), w2_[0], out.size());
  return out;
}

}  // namespace strata_proxy
