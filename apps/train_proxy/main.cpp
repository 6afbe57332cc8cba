// strata-train-proxy: a training step of a tensor- and data-parallel
// transformer's MLP blocks (model.hpp), run sequentially (allreduce, then
// residual + RMSNorm), fused (Strata's AllReduce-RMSNorm) and fused with the
// token split, with a progress line per step, a table of layer and step
// times, and a check that each mode's output and weights match the
// sequential run's. Usage: docs/fused.md.
#include "apps/train_proxy/model.hpp"

#include "portability/numeric/float16.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace strata_proxy {
namespace {

using strata::Status;
using strata::coll::DataType;

double value(const unsigned char* b, size_t i, DataType t) {
  uint16_t h = 0;
  float f = 0;
  if (t == DataType::float32) {
    std::memcpy(&f, b + 4 * i, 4);
    return f;
  }
  std::memcpy(&h, b + 2 * i, 2);
  return t == DataType::bfloat16 ? strata::numeric::bfloat16_to_float(h) : strata::numeric::half_to_float(h);
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// max |a - b| / max |b|, the largest over the ranks.
double relative_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, DataType t) {
  const size_t n = a.size() / strata::coll::size_of(t);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = value(a.data(), i, t), y = value(b.data(), i, t);
    worst = std::isfinite(x) && std::isfinite(y) ? std::max(worst, std::fabs(x - y)) : INFINITY;
    scale = std::max(scale, std::fabs(y));
  }
  double mine = scale > 0 ? worst / scale : worst, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

double slowest(double v) {
  double all = 0;
  MPI_Allreduce(&v, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

struct Summary {
  std::string path;
  double layer_us = NAN, step_ms = NAN, forward_ms = NAN, grad_ms = NAN;
  double output_diff = NAN, weight_diff = NAN;
};

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> out;
  size_t at = 0;
  while (at < s.size()) {
    const size_t comma = s.find(',', at);
    const std::string item = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!item.empty()) out.push_back(std::atoi(item.c_str()));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// --breakdown's tables (rank 0 prints; every rank measures).
Status print_breakdown(Model& model, const std::vector<Mode>& order, int reps, const std::string& budgets, int rank) {
  model.reset_split();  // taken apart even where the measurement turned it off
  if (rank == 0) {
    std::printf("\n## One layer taken apart (layer 0; each phase alone, median of %d)\n\n", reps);
    std::printf(
        "| mode | layer alone ms | phases alone (ms) | critical path ms | idle ms |\n|---|---:|---|---:|---:|\n");
  }
  for (Mode mode : order) {
    Breakdown b;
    STRATA_TRY(model.breakdown(mode, reps, &b));
    if (rank != 0) continue;
    std::string phases;
    for (const Phase& p : b.phases) {
      char item[96];
      std::snprintf(item, sizeof item, "%s%s %.3f", phases.empty() ? "" : "; ", p.name.c_str(), p.ms);
      phases += item;
    }
    std::printf("| %s | %.3f | %s | %.3f | %.3f |\n", to_string(mode), b.layer_ms, phases.c_str(), b.critical_ms,
                b.idle_ms);
  }
  std::vector<BudgetPoint> points;
  STRATA_TRY(model.budget_sweep(parse_ints(budgets), reps, &points));
  if (rank == 0 && !points.empty()) {
    std::printf(
        "\n| split's comm blocks | fused part 1 alone ms | GEMMs part 2 alone ms | both at once ms | "
        "both at once vs one after the other |\n|---:|---:|---:|---:|---:|\n");
    for (const BudgetPoint& p : points) {
      std::printf("| %d | %.3f | %.3f | %.3f | %.2fx |\n", p.blocks, p.fused_ms, p.gemm_ms, p.overlap_ms,
                  (p.fused_ms + p.gemm_ms) / p.overlap_ms);
    }
  }
  return Status::ok;
}

// A mode's times over every round (the first step of each round warms up).
struct Samples {
  std::vector<double> layers, step, forward, grad;
};

Status run_steps(Model& model, Mode mode, int steps, int rank, Samples* x) {
  for (int i = 0; i < steps; ++i) {
    StepTimes t;
    STRATA_TRY(model.step(mode, &t));
    // Every rank reduces the same values in the same order.
    const double st = slowest(t.step_ms), fw = slowest(t.forward_ms), bw = slowest(t.backward_ms),
                 gr = slowest(t.grad_allreduce_ms);
    if (rank == 0) {
      std::printf("[train-proxy] %-11s step %d/%d: %.3f ms (forward %.3f, backward %.3f, grad allreduce %.3f)\n",
                  to_string(mode), i + 1, steps, st, fw, bw, gr);
      std::fflush(stdout);
    }
    if (i > 0 || steps == 1) {
      for (double l : t.layer_ms) x->layers.push_back(slowest(l));
      x->step.push_back(st);
      x->forward.push_back(fw);
      x->grad.push_back(gr);
    }
  }
  return Status::ok;
}

int run(int argc, char** argv) {
  CLI::App app{"strata-train-proxy: a TP x DP training step, sequential vs fused AllReduce-RMSNorm vs token split"};
  strata::tools::standard_options(app, "strata-train-proxy");
  Shape shape;
  Settings settings;
  size_t ffn = 0;
  int tp = 0, dp = 1, steps = 5;
  std::string type_name = "bfloat16", memory = "auto", modes_text = "sequential,fused,split";
  std::string fused_algo = "auto", dp_algo = "auto";
  double tolerance = -1;
  int64_t split_offset = 0;
  app.add_option("--hidden", shape.hidden, "Model width");
  app.add_option("--ffn", ffn, "MLP width (0: 4 x hidden), split over the TP ranks");
  app.add_option("--layers", shape.layers, "MLP blocks");
  app.add_option("--tokens", shape.tokens, "Tokens per DP replica and step");
  app.add_option("--tp", tp, "Tensor-parallel group size (0: every rank)");
  app.add_option("--dp", dp, "Data-parallel replicas");
  app.add_option("--steps", steps, "Training steps per mode");
  app.add_option("--type", type_name, "bfloat16, float16 or float32");
  app.add_option("--memory", memory, "device, host, or auto (device when a GPU is visible)");
  app.add_option("--modes", modes_text, "Comma-separated: sequential, fused, split");
  app.add_option("--fused-algo", fused_algo, "The fused calls' algorithm: auto, one_shot, two_shot, fallback");
  app.add_option("--dp-algo", dp_algo,
                 "The gradients' allreduce: auto, library, ring, recursive, hierarchical, two_level");
  app.add_option("--split-wave", settings.split.wave, "Token split: tokens per wave (0: STRATA_SPLIT_WAVE)");
  app.add_option("--split-offset", split_offset, "Token split: tokens added to the half");
  app.add_option("--split-min-tokens", settings.split.min_tokens, "No split below (0: STRATA_SPLIT_MIN_TOKENS)");
  app.add_option("--comm-blocks", settings.split.comm_blocks, "Blocks of the split's fused calls (-1: environment)");
  settings.split.chain = true;
  app.add_flag("--split-chain,!--no-split-chain", settings.split.chain,
               "Token split: pipeline the layers (a part's GEMMs wait only for the previous layer's same part)");
  bool split_tune = true;
  app.add_flag("--split-tune,!--no-split-tune", split_tune,
               "Token split: measure first whether it pays here and with which block budget (fused::tune_split); "
               "where it does not, the split mode runs unsplit");
  int rounds = 1;
  app.add_option("--rounds", rounds,
                 "Runs of every mode, alternated (sequential, fused, split, sequential, ...): the GPU's clocks drift "
                 "over a run, so the medians are taken over all rounds");
  int breakdown_reps = 0;
  std::string budgets_text;
  app.add_option("--breakdown", breakdown_reps,
                 "Also take layer 0 of each mode apart: every phase timed alone, median of this many repetitions");
  app.add_option("--budgets", budgets_text,
                 "With --breakdown: block budgets (comma-separated) of the split's fused call to time alone and "
                 "beside the GEMMs");
  app.add_option("--lr", settings.lr, "SGD learning rate");
  app.add_option("--seed", settings.seed, "Weights and inputs");
  app.add_flag("--inject-error", settings.inject_error, "Corrupt one element in the fused modes (the check must fail)");
  app.add_option("--tolerance", tolerance, "Largest relative difference from the sequential run (default by type)");
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (app.count("--split-offset")) settings.split.offset = split_offset;

  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto fail = [&](const std::string& why) {
    if (rank == 0) std::fprintf(stderr, "strata-train-proxy: %s\n", why.c_str());
    MPI_Finalize();
    return 2;
  };
  if (tp <= 0) tp = size / dp;
  if (tp * dp != size) return fail("--tp x --dp must equal the number of ranks");
  if (ffn == 0) ffn = 4 * shape.hidden;
  if (ffn % static_cast<size_t>(tp) != 0) return fail("--ffn must divide by --tp");
  shape.ffn_local = ffn / static_cast<size_t>(tp);
  shape.type =
      type_name == "float32" ? DataType::float32 : (type_name == "float16" ? DataType::float16 : DataType::bfloat16);
  if (tolerance < 0) tolerance = shape.type == DataType::float32 ? 1e-4 : 5e-2;
  auto fa = strata::fused::parse_algorithm(fused_algo.c_str());
  auto da = strata::coll::parse_algorithm(dp_algo.c_str());
  if (!fa || !da) return fail("unknown --fused-algo or --dp-algo");
  settings.fused_algorithm = *fa;
  settings.dp_algorithm = *da;
  std::vector<Mode> modes;
  for (const char* m : {"sequential", "fused", "split"}) {
    if (modes_text.find(m) != std::string::npos) {
      modes.push_back(std::strcmp(m, "sequential") == 0 ? Mode::sequential
                                                        : (std::strcmp(m, "fused") == 0 ? Mode::fused : Mode::split));
    }
  }

  // TP groups of consecutive ranks; DP groups across them.
  MPI_Comm tp_comm, dp_comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank / tp, rank, &tp_comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank % tp, rank, &dp_comm);
  std::unique_ptr<Ops> ops;
  std::string why;
  if (memory != "host") {
    // One GPU per rank of a node.
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    ops = make_device_ops(shape.type, &why, local);
    if (!ops && memory == "device") {
      const char* skip = std::getenv("STRATA_TEST_SKIP_WITHOUT_GPU");
      if (skip != nullptr && std::strcmp(skip, "1") == 0) {
        if (rank == 0) std::printf("--memory device: %s; STRATA_TEST_SKIP_WITHOUT_GPU=1: skipped\n", why.c_str());
        MPI_Finalize();
        return 77;
      }
      return fail("--memory device: " + why);
    }
  }
  if (!ops) ops = make_host_ops(shape.type);

  int result = 0;
  {
    Model model(*ops, shape, settings, tp_comm, dp_comm);
    std::map<Mode, Summary> summary;
    std::vector<unsigned char> ref_out, ref_weights;
    std::vector<Mode> order = modes;
    // The sequential run is the reference: first, and run even when not asked for.
    order.erase(std::remove(order.begin(), order.end(), Mode::sequential), order.end());
    order.insert(order.begin(), Mode::sequential);
    std::map<Mode, Samples> samples;
    bool tuned = false, header = false;
    for (int round = 0; round < rounds; ++round) {
      for (Mode mode : order) {
        Status s = model.init();
        if (s != Status::ok) return fail(std::string("init: ") + strata::to_string(s));
        if (mode == Mode::split && split_tune && !tuned && model.split().split()) {
          tuned = true;
          strata::fused::SplitChoice choice;
          s = model.tune_split(3, &choice);
          if (s != Status::ok) return fail(std::string("tune_split: ") + strata::to_string(s));
          if (rank == 0) {
            std::printf("# token split measured on layer 0: unsplit %.3f ms, best split %.3f ms (%d blocks): %s\n",
                        choice.unsplit_ms, choice.split_ms, choice.comm_blocks,
                        choice.split ? "split" : "not split (it would be slower here)");
          }
        }
        if (rank == 0 && !header) {
          header = true;
          std::printf(
              "# strata-train-proxy: %d ranks (TP %d x DP %d), %s, hidden %zu, ffn %zu, %zu layers, %zu tokens, "
              "%s, %d round(s)\n",
              size, tp, dp, ops->describe().c_str(), shape.hidden, ffn, shape.layers, shape.tokens, type_name.c_str(),
              rounds);
          const auto& sp = model.split();
          if (sp.split()) {
            std::printf("# token split: %zu = %zu + %zu\n", shape.tokens, sp.first, sp.second);
          } else {
            std::printf("# token split: none at %zu tokens (below the minimum or no room for two waves)\n",
                        shape.tokens);
          }
        }
        s = run_steps(model, mode, steps, rank, &samples[mode]);
        if (s != Status::ok) return fail(std::string(to_string(mode)) + " step: " + strata::to_string(s));
        Summary& sm = summary[mode];
        sm.path = mode == Mode::sequential ? "allreduce + RMSNorm" : strata::fused::to_string(model.fused_path());
        const auto out = model.output(), weights = model.first_weights();
        if (mode == Mode::sequential) {
          ref_out = out;
          ref_weights = weights;
        }
        sm.output_diff = std::max(round > 0 ? sm.output_diff : 0.0, relative_difference(out, ref_out, shape.type));
        sm.weight_diff =
            std::max(round > 0 ? sm.weight_diff : 0.0, relative_difference(weights, ref_weights, shape.type));
        if (!(sm.output_diff <= tolerance && sm.weight_diff <= tolerance)) result = 1;
      }
    }
    for (Mode mode : order) {
      Summary& sm = summary[mode];
      const Samples& x = samples[mode];
      sm.layer_us = median(x.layers) * 1e3;
      sm.step_ms = median(x.step);
      sm.forward_ms = median(x.forward);
      sm.grad_ms = median(x.grad);
    }
    if (rank == 0) {
      std::printf(
          "\n| mode | path | layer µs (median) | forward ms | step ms | grad allreduce ms | layer vs sequential | "
          "output vs sequential | weights vs sequential |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
      const double base = summary[Mode::sequential].layer_us;
      for (Mode mode : order) {
        const Summary& sm = summary[mode];
        std::printf("| %s | %s | %.1f | %.3f | %.3f | %.3f | %.2fx | %.2e | %.2e |\n", to_string(mode), sm.path.c_str(),
                    sm.layer_us, sm.forward_ms, sm.step_ms, sm.grad_ms, base / sm.layer_us, sm.output_diff,
                    sm.weight_diff);
      }
      std::printf("\nverification against the sequential run (tolerance %.1e): %s\n", tolerance,
                  result == 0 ? "passed" : "FAILED");
    }
    if (breakdown_reps > 0 && print_breakdown(model, order, breakdown_reps, budgets_text, rank) != Status::ok) {
      return fail("--breakdown failed");
    }
  }
  ops.reset();
  MPI_Comm_free(&tp_comm);
  MPI_Comm_free(&dp_comm);
  MPI_Finalize();
  return result;
}

}  // namespace
}  // namespace strata_proxy

int main(int argc, char** argv) {
  return strata::tools::guarded_main("strata-train-proxy", argc, argv, strata_proxy::run);
}
