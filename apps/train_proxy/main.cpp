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

// The command line, checked and completed once MPI_Init told the size.
struct Options {
  Shape shape;
  Settings settings;
  size_t ffn = 0;
  int tp = 0, dp = 1, steps = 5, rounds = 1, breakdown_reps = 0;
  std::string type_name = "bfloat16", memory = "auto", modes_text = "sequential,fused,split";
  std::string fused_algo = "auto", dp_algo = "auto", budgets;
  double tolerance = -1;
  int64_t split_offset = 0;
  bool split_tune = true;
  std::vector<Mode> order;  // sequential first (the reference), then the modes asked for
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--hidden", o.shape.hidden, "Model width");
  app.add_option("--ffn", o.ffn, "MLP width (0: 4 x hidden), split over the TP ranks");
  app.add_option("--layers", o.shape.layers, "MLP blocks");
  app.add_option("--tokens", o.shape.tokens, "Tokens per DP replica and step");
  app.add_option("--tp", o.tp, "Tensor-parallel group size (0: every rank)");
  app.add_option("--dp", o.dp, "Data-parallel replicas");
  app.add_option("--steps", o.steps, "Training steps per mode");
  app.add_option("--type", o.type_name, "bfloat16, float16 or float32");
  app.add_option("--memory", o.memory, "device, host, or auto (device when a GPU is visible)");
  app.add_option("--modes", o.modes_text, "Comma-separated: sequential, fused, split");
  app.add_option("--fused-algo", o.fused_algo,
                 "The fused calls' algorithm: auto, lamport, one_shot, two_shot, fallback");
  app.add_option("--dp-algo", o.dp_algo,
                 "The gradients' allreduce: auto, library, ring, recursive, hierarchical, two_level");
  app.add_option("--split-wave", o.settings.split.wave, "Token split: tokens per wave (0: STRATA_SPLIT_WAVE)");
  app.add_option("--split-offset", o.split_offset, "Token split: tokens added to the half");
  app.add_option("--split-min-tokens", o.settings.split.min_tokens, "No split below (0: STRATA_SPLIT_MIN_TOKENS)");
  app.add_option("--comm-blocks", o.settings.split.comm_blocks, "Blocks of the split's fused calls (-1: environment)");
  o.settings.split.chain = true;
  app.add_flag("--split-chain,!--no-split-chain", o.settings.split.chain,
               "Token split: pipeline the layers (a part's GEMMs wait only for the previous layer's same part)");
  app.add_flag("--split-tune,!--no-split-tune", o.split_tune,
               "Token split: measure first whether it pays here and with which block budget (fused::tune_split); "
               "where it does not, the split mode runs unsplit");
  app.add_option("--rounds", o.rounds,
                 "Runs of every mode, alternated (sequential, fused, split, sequential, ...): the GPU's clocks drift "
                 "over a run, so the medians are taken over all rounds");
  app.add_option("--breakdown", o.breakdown_reps,
                 "Also take layer 0 of each mode apart: every phase timed alone, median of this many repetitions");
  app.add_option("--budgets", o.budgets,
                 "With --breakdown: block budgets (comma-separated) of the split's fused call to time alone and "
                 "beside the GEMMs");
  app.add_option("--lr", o.settings.lr, "SGD learning rate");
  app.add_option("--seed", o.settings.seed, "Weights and inputs");
  app.add_flag("--inject-error", o.settings.inject_error,
               "Corrupt one element in the fused modes (the check must fail)");
  app.add_option("--tolerance", o.tolerance, "Largest relative difference from the sequential run (default by type)");
}

// What the options leave open, from the job's size; "" or what is wrong.
std::string complete(Options& o, int size) {
  if (o.tp <= 0) o.tp = size / o.dp;
  if (o.tp * o.dp != size) return "--tp x --dp must equal the number of ranks";
  if (o.ffn == 0) o.ffn = 4 * o.shape.hidden;
  if (o.ffn % static_cast<size_t>(o.tp) != 0) return "--ffn must divide by --tp";
  o.shape.ffn_local = o.ffn / static_cast<size_t>(o.tp);
  o.shape.type = o.type_name == "float32"   ? DataType::float32
                 : o.type_name == "float16" ? DataType::float16
                                            : DataType::bfloat16;
  if (o.tolerance < 0) o.tolerance = o.shape.type == DataType::float32 ? 1e-4 : 5e-2;
  auto fa = strata::fused::parse_algorithm(o.fused_algo.c_str());
  auto da = strata::coll::parse_algorithm(o.dp_algo.c_str());
  if (!fa || !da) return "unknown --fused-algo or --dp-algo";
  o.settings.fused_algorithm = *fa;
  o.settings.dp_algorithm = *da;
  o.order = {Mode::sequential};  // the reference: first, and run even when not asked for
  if (o.modes_text.find("fused") != std::string::npos) o.order.push_back(Mode::fused);
  if (o.modes_text.find("split") != std::string::npos) o.order.push_back(Mode::split);
  return "";
}

// One GPU per rank of a node where there is one (or --memory host).
// Null with *skip where the test launcher asked to skip without a GPU.
std::unique_ptr<Ops> make_ops(const Options& o, int rank, std::string* why, bool* skip) {
  *skip = false;
  if (o.memory == "host") return make_host_ops(o.shape.type);
  MPI_Comm node;
  int local = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  std::unique_ptr<Ops> ops = make_device_ops(o.shape.type, why, local);
  if (ops || o.memory != "device") return ops ? std::move(ops) : make_host_ops(o.shape.type);
  const char* env = std::getenv("STRATA_TEST_SKIP_WITHOUT_GPU");
  *skip = env != nullptr && std::strcmp(env, "1") == 0;
  return nullptr;
}

void print_header(const Options& o, const Model& model, const Ops& ops, int size) {
  std::printf(
      "# strata-train-proxy: %d ranks (TP %d x DP %d), %s, hidden %zu, ffn %zu, %zu layers, %zu tokens, %s, "
      "%d round(s)\n",
      size, o.tp, o.dp, ops.describe().c_str(), o.shape.hidden, o.ffn, o.shape.layers, o.shape.tokens,
      o.type_name.c_str(), o.rounds);
  const auto& sp = model.split();
  if (sp.split()) {
    std::printf("# token split: %zu = %zu + %zu\n", o.shape.tokens, sp.first, sp.second);
  } else {
    std::printf("# token split: none at %zu tokens (below the minimum or no room for two waves)\n", o.shape.tokens);
  }
}

// Every mode in every round, verified against that round's sequential run;
// `why` says what failed (then the job ends with 2).
struct Results {
  std::map<Mode, Summary> summary;
  std::map<Mode, Samples> samples;
  bool verified = true;
};

Status run_rounds(Model& model, const Options& o, const Ops& ops, int rank, int size, Results* r, std::string* why) {
  std::vector<unsigned char> ref_out, ref_weights;
  bool tuned = false, header = false;
  for (int round = 0; round < o.rounds; ++round) {
    for (Mode mode : o.order) {
      *why = "init";
      STRATA_TRY(model.init());
      if (mode == Mode::split && o.split_tune && !tuned && model.split().split()) {
        tuned = true;
        strata::fused::SplitChoice choice;
        *why = "tune_split";
        STRATA_TRY(model.tune_split(3, &choice));
        if (rank == 0) {
          std::printf("# token split measured on layer 0: unsplit %.3f ms, best split %.3f ms (%d blocks): %s\n",
                      choice.unsplit_ms, choice.split_ms, choice.comm_blocks,
                      choice.split ? "split" : "not split (it would be slower here)");
        }
      }
      if (rank == 0 && !header) print_header(o, model, ops, size);
      header = true;
      *why = std::string(to_string(mode)) + " step";
      STRATA_TRY(run_steps(model, mode, o.steps, rank, &r->samples[mode]));
      Summary& sm = r->summary[mode];
      sm.path = mode == Mode::sequential ? "allreduce + RMSNorm" : strata::fused::to_string(model.fused_path());
      const auto out = model.output(), weights = model.first_weights();
      if (mode == Mode::sequential) {
        ref_out = out;
        ref_weights = weights;
      }
      sm.output_diff = std::max(round > 0 ? sm.output_diff : 0.0, relative_difference(out, ref_out, o.shape.type));
      sm.weight_diff =
          std::max(round > 0 ? sm.weight_diff : 0.0, relative_difference(weights, ref_weights, o.shape.type));
      if (!(sm.output_diff <= o.tolerance && sm.weight_diff <= o.tolerance)) r->verified = false;
    }
  }
  for (Mode mode : o.order) {
    Summary& sm = r->summary[mode];
    const Samples& x = r->samples[mode];
    sm.layer_us = median(x.layers) * 1e3;
    sm.step_ms = median(x.step);
    sm.forward_ms = median(x.forward);
    sm.grad_ms = median(x.grad);
  }
  return Status::ok;
}

void print_summary(const Options& o, Results& r) {
  std::printf(
      "\n| mode | path | layer µs (median) | forward ms | step ms | grad allreduce ms | layer vs sequential | "
      "output vs sequential | weights vs sequential |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const double base = r.summary[Mode::sequential].layer_us;
  for (Mode mode : o.order) {
    const Summary& sm = r.summary[mode];
    std::printf("| %s | %s | %.1f | %.3f | %.3f | %.3f | %.2fx | %.2e | %.2e |\n", to_string(mode), sm.path.c_str(),
                sm.layer_us, sm.forward_ms, sm.step_ms, sm.grad_ms, base / sm.layer_us, sm.output_diff, sm.weight_diff);
  }
  std::printf("\nverification against the sequential run (tolerance %.1e): %s\n", o.tolerance,
              r.verified ? "passed" : "FAILED");
}

int run(int argc, char** argv) {
  CLI::App app{"strata-train-proxy: a TP x DP training step, sequential vs fused AllReduce-RMSNorm vs token split"};
  strata::tools::standard_options(app, "strata-train-proxy");
  Options o;
  add_options(app, o);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (app.count("--split-offset")) o.settings.split.offset = o.split_offset;

  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto fail = [&](const std::string& why) {
    if (rank == 0) std::fprintf(stderr, "strata-train-proxy: %s\n", why.c_str());
    MPI_Finalize();
    return 2;
  };
  if (const std::string wrong = complete(o, size); !wrong.empty()) return fail(wrong);
  // TP groups of consecutive ranks; DP groups across them.
  MPI_Comm tp_comm, dp_comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank / o.tp, rank, &tp_comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank % o.tp, rank, &dp_comm);
  std::string why;
  bool skip = false;
  std::unique_ptr<Ops> ops = make_ops(o, rank, &why, &skip);
  if (!ops && skip) {
    if (rank == 0) std::printf("--memory device: %s; STRATA_TEST_SKIP_WITHOUT_GPU=1: skipped\n", why.c_str());
    MPI_Finalize();
    return 77;
  }
  if (!ops) return fail("--memory device: " + why);
  int result = 0;
  {
    Model model(*ops, o.shape, o.settings, tp_comm, dp_comm);
    Results r;
    if (const Status s = run_rounds(model, o, *ops, rank, size, &r, &why); s != Status::ok) {
      return fail(why + ": " + strata::to_string(s));
    }
    result = r.verified ? 0 : 1;
    if (rank == 0) print_summary(o, r);
    if (o.breakdown_reps > 0 && print_breakdown(model, o.order, o.breakdown_reps, o.budgets, rank) != Status::ok) {
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
