// strata-coll-model: the collectives' cost model on a described machine.
//
//   strata-coll-model --machine frontier --ranks 8,384,3072 --sizes 1M,1G
//       predicted times of every algorithm, flat / hierarchical ratios and
//       the choice, one markdown table per collective
//   strata-coll-model --machine frontier --zero 20e9
//       one ZeRO-3 training step's gathers and reduce-scatters: flat,
//       ZeRO++ hpZ (2-level), 3-level, the model's choice
//   --levels "gcd:2:200:2,package:4:50:3,node:N:100:5"   a machine by hand
//       (name:fanout[:GBps:alpha_us[:call_us]], fastest first, N = the rest;
//       the node level's GB/s is the node's injection bandwidth)
//   --json FILE   also the predictions as rows (json_rows.hpp), after the
//       run's metadata
//
// docs/scaling.md is this tool's output for Frontier.
#include "tools/coll_model/json_rows.hpp"
#include "tools/coll_model/tables.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/cli/run_metadata.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using strata::coll::Collective;

// "64K", "1M", "2G" (powers of 1024) or a plain number ("4e10").
bool parse_size(const std::string& text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  const std::string suffix(end);
  const char* units = "KMGT";
  if (!suffix.empty()) {
    const char* u =
        suffix.size() == 1 ? std::strchr(units, std::toupper(static_cast<unsigned char>(suffix[0]))) : nullptr;
    if (u == nullptr || *u == '\0') return false;
    v *= std::pow(1024.0, static_cast<double>(u - units + 1));
  }
  *out = v;
  return std::isfinite(v) && v >= 0;
}

bool parse_collective(const std::string& name, Collective* out) {
  const std::pair<const char*, Collective> names[] = {{"allreduce", Collective::allreduce},
                                                      {"reduce_scatter", Collective::reduce_scatter},
                                                      {"allgather", Collective::allgather},
                                                      {"broadcast", Collective::broadcast},
                                                      {"reduce", Collective::reduce}};
  for (const auto& n : names) {
    if (name == n.first) {
      *out = n.second;
      return true;
    }
  }
  return false;
}

void print_levels(const strata::coll::model::Machine& m) {
  std::printf("| level | fanout | GB/s | per | alpha (µs) | call (µs) |\n| --- | ---: | ---: | --- | ---: | ---: |\n");
  for (const auto& l : m.levels) {
    std::printf("| %s | %d | %g | %s | %g | %g |\n", l.name.c_str(), l.fanout, l.link.gbps,
                l.link.per_node ? "node" : "rank", l.link.alpha_us, l.link.call_us);
  }
}

struct Options {
  std::string machine_name = "frontier";
  std::string levels;
  bool host = false;
  std::vector<int> ranks;
  std::vector<std::string> sizes_text = {"1M", "64M", "1G"};
  std::vector<std::string> collectives_text = {"allreduce", "reduce_scatter", "allgather"};
  double zero_params = 0;
  strata::coll::model::ZeroModel zero;
  std::string json_path;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--machine", o.machine_name, "Preset: frontier or h200x4");
  app.add_option("--levels", o.levels, "Levels by hand: name:fanout[:GBps:alpha_us[:call_us]],... (N: the rest)");
  app.add_flag("--host", o.host, "Host buffers (MPI algorithms) instead of device buffers (NCCL)");
  app.add_option("--ranks", o.ranks, "Rank counts")->delimiter(',');
  app.add_option("--sizes", o.sizes_text, "Buffer sizes (64K, 1M, 4e10; as predict_us: allgather the output)")
      ->delimiter(',');
  app.add_option("--collectives", o.collectives_text, "allreduce,reduce_scatter,allgather,broadcast,reduce")
      ->delimiter(',');
  app.add_option("--zero", o.zero_params, "Predict one ZeRO-3 step for a model of this many parameters");
  app.add_option("--layers", o.zero.layers, "ZeRO: layers (one gather and one reduce-scatter call each)");
  app.add_option("--param-bytes", o.zero.param_bytes, "ZeRO: bytes per gathered parameter (2: bf16)");
  app.add_option("--grad-bytes", o.zero.grad_bytes, "ZeRO: bytes per reduced gradient (2: bf16)");
  app.add_option("--json", o.json_path,
                 "Also write the predictions as JSON rows (with the run's tool, version, commit, command, host, "
                 "time) to this file");
}

// The rank counts without --ranks: the h200x4 preset's, else a sweep up to a large machine.
std::vector<int> default_ranks(const Options& o) {
  return o.machine_name == "h200x4" && o.levels.empty()
             ? std::vector<int>{2, 4}
             : std::vector<int>{8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 3072};
}

// --sizes as bytes; false (said on stderr) at the first malformed one.
bool parse_sizes(const std::vector<std::string>& texts, std::vector<double>* out) {
  for (const std::string& s : texts) {
    double v = 0;
    if (!parse_size(s, &v)) {
      std::fprintf(stderr, "strata-coll-model: bad size '%s'\n", s.c_str());
      return false;
    }
    out->push_back(v);
  }
  return true;
}

// --collectives; false (said on stderr) at the first unknown name.
bool parse_collectives(const std::vector<std::string>& names, std::vector<Collective>* out) {
  for (const std::string& name : names) {
    Collective c;
    if (!parse_collective(name, &c)) {
      std::fprintf(stderr, "strata-coll-model: unknown collective '%s'\n", name.c_str());
      return false;
    }
    out->push_back(c);
  }
  return true;
}

// What to predict for: rank counts (the header shows the machine at the
// last), buffer sizes and collectives.
struct Sweep {
  std::vector<int> ranks;
  std::vector<double> sizes;
  std::vector<Collective> collectives;
};

// The header: the machine and its levels at the sweep's last rank count.
void print_machine(const Options& o, const strata::tools::MachineSpec& spec, const Sweep& sweep) {
  std::printf("Machine: %s (%s buffers). Levels at %d ranks:\n\n", spec.description.c_str(), o.host ? "host" : "device",
              sweep.ranks.back());
  strata::Result<strata::coll::model::Machine> largest = strata::tools::build(spec, sweep.ranks.back(), !o.host);
  if (largest) print_levels(largest.value());
}

// With --zero, one ZeRO-3 step; else each collective's sweep, a table each.
// The same predictions go into `doc` as rows.
void print_predictions(const Options& o, const strata::tools::MachineSpec& spec, const Sweep& sweep,
                       nlohmann::json* doc) {
  if (o.zero_params > 0) {
    strata::coll::model::ZeroModel zero = o.zero;
    zero.params = o.zero_params;
    strata::tools::print_zero(zero, spec, sweep.ranks, !o.host);
    (*doc)["zero"] = {{"params", zero.params},
                      {"layers", zero.layers},
                      {"param_bytes", zero.param_bytes},
                      {"grad_bytes", zero.grad_bytes}};
    (*doc)["rows"] = strata::tools::zero_rows(zero, spec, sweep.ranks, !o.host);
  } else {
    for (Collective c : sweep.collectives) strata::tools::print_sweep(c, spec, sweep.ranks, sweep.sizes, !o.host);
    (*doc)["rows"] = strata::tools::sweep_rows(sweep.collectives, spec, sweep.ranks, sweep.sizes, !o.host);
  }
}

}  // namespace

static int run_tool(int argc, char** argv) {
  CLI::App app{"Predict collective times with Strata's alpha-beta cost model"};
  strata::tools::standard_options(app, "strata-coll-model");
  Options o;
  add_options(app, o);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  strata::Result<strata::tools::MachineSpec> spec =
      o.levels.empty() ? strata::tools::preset(o.machine_name) : strata::tools::parse_levels(o.levels);
  if (!spec) {
    std::fprintf(stderr, "strata-coll-model: unknown machine '%s' or malformed --levels '%s'\n", o.machine_name.c_str(),
                 o.levels.c_str());
    return 2;
  }
  Sweep sweep;
  sweep.ranks = o.ranks.empty() ? default_ranks(o) : o.ranks;
  if (!parse_sizes(o.sizes_text, &sweep.sizes) || !parse_collectives(o.collectives_text, &sweep.collectives)) return 2;

  print_machine(o, spec.value(), sweep);
  nlohmann::json doc = strata::tools::run_metadata("strata-coll-model", argc, argv);
  doc["machine"] = spec.value().description;
  doc["buffers"] = o.host ? "host" : "device";
  print_predictions(o, spec.value(), sweep, &doc);
  if (!o.json_path.empty() && !strata::tools::write_json_file(o.json_path, doc)) return 1;
  return 0;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-coll-model", argc, argv, run_tool); }
