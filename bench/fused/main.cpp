// strata-bench-fused: Strata's fused AllReduce + residual + RMSNorm against
// NCCL + a separate RMSNorm (device) or the MPI library + RMSNorm (host) in
// the same run on the same data, with PyTorch's columns merged from
// bench/fused/torch_peer.py's JSON (--torch), the one-shot/two-shot
// crossover, and the transfer rate against what a rank can read from its
// peers; --json FILE writes the rows too, after the run's metadata. Usage:
// docs/fused.md.
#include "bench/fused/bench_fused.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/cli/run_metadata.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace strata_bench::fused {
namespace {

using strata::fused::Algorithm;

std::vector<size_t> parse_list(const std::string& s) {
  std::vector<size_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(std::stoull(item));
  }
  return out;
}

struct TorchRow {
  double nccl_us = NAN;
  double two_shot_us = NAN;
};

std::map<std::pair<size_t, size_t>, TorchRow> read_torch(const std::string& path, std::string* machine) {
  std::map<std::pair<size_t, size_t>, TorchRow> rows;
  if (path.empty()) return rows;
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "strata-bench-fused: cannot read %s (PyTorch columns left empty)\n", path.c_str());
    return rows;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("rows")) {
    std::fprintf(stderr, "strata-bench-fused: %s is not torch_peer.py's JSON\n", path.c_str());
    return rows;
  }
  *machine = j.value("machine", "");
  for (const auto& r : j["rows"]) {
    TorchRow t;
    if (r.contains("nccl_rmsnorm_us") && r["nccl_rmsnorm_us"].is_number()) t.nccl_us = r["nccl_rmsnorm_us"];
    if (r.contains("two_shot_rmsnorm_us") && r["two_shot_rmsnorm_us"].is_number()) {
      t.two_shot_us = r["two_shot_rmsnorm_us"];
    }
    rows[{r.value("tokens", size_t{0}), r.value("hidden", size_t{0})}] = t;
  }
  return rows;
}

std::string us(const Timing& t) {
  if (!t.ran) return t.note.empty() ? "-" : "(" + t.note + ")";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", t.us);
  return b;
}
std::string num(double v, int decimals = 1, const char* suffix = "") {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f%s", decimals, v, suffix);
  return b;
}
std::string size_text(size_t bytes) {
  char b[32];
  if (bytes >= (size_t{1} << 20)) {
    std::snprintf(b, sizeof b, "%.3g MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(b, sizeof b, "%.3g KiB", static_cast<double>(bytes) / 1024);
  }
  return b;
}

// Bytes a rank reads from its peers in one call of `a` over n ranks.
double peer_bytes(Algorithm a, size_t bytes, int n) {
  if (a == Algorithm::one_shot || a == Algorithm::lamport) return static_cast<double>(bytes) * (n - 1);
  if (a == Algorithm::two_shot) return 2.0 * static_cast<double>(bytes) * (n - 1) / n;
  return NAN;
}

// One point of the table, for --json.
struct Row {
  Case c;
  Timing peer, strata, lamport, one, two, peer_graph, strata_graph;
  TorchRow torch;
  Algorithm pick = Algorithm::fallback;
  std::string path;
  double peer_gbps = NAN;
};

// `key`_us where the timing ran, else `key`_note where it says why not.
void put(nlohmann::json& row, const std::string& key, const Timing& t) {
  if (t.ran) {
    row[key + "_us"] = t.us;
  } else if (!t.note.empty()) {
    row[key + "_note"] = t.note;
  }
}

nlohmann::json to_json(const std::vector<Row>& rows, const Runner& runner, int ranks, const std::string& type,
                       double floor_bw, const std::string& torch_machine, int argc, char** argv) {
  nlohmann::json doc = strata::tools::run_metadata("strata-bench-fused", argc, argv);
  doc["ranks"] = ranks;
  doc["type"] = type;
  doc["machine"] = runner.describe();
  doc["peer"] = runner.peer_name();
  if (floor_bw > 0) doc["peer_read_gbps"] = floor_bw / 1e9;
  if (!torch_machine.empty()) doc["torch_machine"] = torch_machine;
  nlohmann::json& out = doc["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json row = {{"tokens", r.c.tokens},
                          {"hidden", r.c.hidden},
                          {"bytes", r.c.bytes()},
                          {"strata_picks", strata::fused::to_string(r.pick)},
                          {"path", r.path}};
    put(row, "peer", r.peer);
    put(row, "strata", r.strata);
    put(row, "lamport", r.lamport);
    put(row, "one_shot", r.one);
    put(row, "two_shot", r.two);
    put(row, "peer_graph", r.peer_graph);
    put(row, "strata_graph", r.strata_graph);
    if (std::isfinite(r.torch.nccl_us)) row["torch_nccl_rmsnorm_us"] = r.torch.nccl_us;
    if (std::isfinite(r.torch.two_shot_us)) row["torch_two_shot_rmsnorm_us"] = r.torch.two_shot_us;
    if (std::isfinite(r.peer_gbps)) row["peer_gbps"] = r.peer_gbps;
    out.push_back(row);
  }
  return doc;
}

// Every algorithm (and what automatic picks) of one case, the peer, and
// the graph-captured pair where asked for.
Row measure_case(Runner& runner, const Case& c, const Options& options, const TorchRow& torch, int size) {
  Row r;
  r.c = c;
  r.torch = torch;
  r.peer = runner.peer(c);
  r.lamport = runner.ours(c, Algorithm::lamport);
  r.one = runner.ours(c, Algorithm::one_shot);
  r.two = runner.ours(c, Algorithm::two_shot);
  r.pick = runner.chosen(c);
  switch (r.pick) {
    case Algorithm::two_shot: r.strata = r.two; break;
    case Algorithm::one_shot: r.strata = r.one; break;
    case Algorithm::lamport: r.strata = r.lamport; break;
    default: r.strata = runner.ours(c, Algorithm::fallback); break;
  }
  if (options.graphs) {
    r.peer_graph = runner.graphed(c, false);
    r.strata_graph = runner.graphed(c, true);
  }
  r.path = runner.path(c);
  const double moved = peer_bytes(r.pick, c.bytes(), size);
  r.peer_gbps = r.strata.ran ? moved / (r.strata.us * 1e-6) / 1e9 : NAN;
  return r;
}

void print_table_head(const Runner& runner, const std::string& type_name, int size, double floor_bw,
                      const std::string& torch_machine) {
  std::printf("# strata-bench-fused: %s, %s, %d ranks\n\n", runner.describe().c_str(), type_name.c_str(), size);
  if (floor_bw > 0) {
    std::printf("Peer read rate (each rank copying from all %d peers at once, copy engines): %.0f GB/s\n\n", size - 1,
                floor_bw / 1e9);
  }
  if (!torch_machine.empty()) std::printf("PyTorch columns: %s\n\n", torch_machine.c_str());
  std::printf(
      "| tokens | hidden | size | %s µs | PyTorch NCCL+RMSNorm µs | PyTorch two-shot+RMSNorm µs | "
      "Strata µs | Strata picks | Lamport µs | one-shot µs | two-shot µs | vs %s | graph: peer µs | "
      "graph: Strata µs | graph: vs peer | vs PyTorch two-shot | peer GB/s | %% of peer rate |\n",
      runner.peer_name().c_str(), runner.peer_name().c_str());
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

std::string ratio(const Timing& a, const Timing& b) { return a.ran && b.ran ? num(a.us / b.us, 2, "x") : "-"; }

void print_row(const Row& r, double floor_bw) {
  std::printf("| %zu | %zu | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
              r.c.tokens, r.c.hidden, size_text(r.c.bytes()).c_str(), us(r.peer).c_str(), num(r.torch.nccl_us).c_str(),
              num(r.torch.two_shot_us).c_str(), us(r.strata).c_str(), strata::fused::to_string(r.pick), r.path.c_str(),
              us(r.lamport).c_str(), us(r.one).c_str(), us(r.two).c_str(), ratio(r.peer, r.strata).c_str(),
              us(r.peer_graph).c_str(), us(r.strata_graph).c_str(), ratio(r.peer_graph, r.strata_graph).c_str(),
              r.strata.ran ? num(r.torch.two_shot_us / r.strata.us, 2, "x").c_str() : "-", num(r.peer_gbps, 0).c_str(),
              floor_bw > 0 ? num(100.0 * r.peer_gbps * 1e9 / floor_bw, 0, "%").c_str() : "-");
  std::fflush(stdout);
}

// Per hidden size, the first token count where one algorithm stopped being
// the fastest: two-shot beating one-shot, and Lamport beaten by either.
struct Crossovers {
  std::map<size_t, size_t> two_shot, lamport_lost;
  void add(const Row& r) {
    const size_t h = r.c.hidden, t = r.c.tokens;
    if (r.one.ran && r.two.ran && r.two.us < r.one.us && two_shot.count(h) == 0) two_shot[h] = t;
    const double other = std::min(r.one.ran ? r.one.us : INFINITY, r.two.ran ? r.two.us : INFINITY);
    if (r.lamport.ran && other < r.lamport.us && lamport_lost.count(h) == 0) lamport_lost[h] = t;
  }
};

void print_crossover(const char* title, const std::map<size_t, size_t>& at, const std::vector<size_t>& hiddens,
                     strata::coll::DataType type) {
  std::printf("\n%s:", title);
  for (size_t h : hiddens) {
    if (at.count(h)) {
      std::printf(" hidden %zu: %zu tokens (%s);", h, at.at(h),
                  size_text(at.at(h) * h * strata::coll::size_of(type)).c_str());
    } else {
      std::printf(" hidden %zu: none;", h);
    }
  }
}

// The command line, parsed.
struct CommandLine {
  Options options;
  std::string tokens_list = "1,8,64,128,512,1024,2048,8192", hidden_list = "4096,8192", type_name = "bfloat16";
  std::string torch_json, json_path;
  bool host = false, no_graphs = false;
  // From the strings above, after MPI_Init.
  std::vector<size_t> tokens, hiddens;
  strata::coll::DataType type = strata::coll::DataType::bfloat16;
};

void add_options(CLI::App& app, CommandLine& cl) {
  app.add_option("--tokens", cl.tokens_list, "Token counts, comma-separated");
  app.add_option("--hidden", cl.hidden_list, "Hidden sizes, comma-separated");
  app.add_option("--type", cl.type_name, "bfloat16, float16 or float32");
  app.add_flag("--host", cl.host, "Host buffers (MPI + host rows against the shared-memory path) instead of the GPU");
  app.add_option("--blocks", cl.options.blocks, "Thread blocks of the fused kernel (0: its default)");
  app.add_flag("--no-graphs", cl.no_graphs, "Skip the graph-captured columns (device)");
  app.add_option("--warmup", cl.options.warmup, "Calls before timing");
  app.add_option("--samples", cl.options.samples, "Timed samples per point (the median is reported)");
  app.add_option("--sample-us", cl.options.sample_us, "Each sample times enough calls to last about this long");
  app.add_option("--torch", cl.torch_json, "torch_peer.py's JSON from the same job: PyTorch's columns");
  app.add_option("--json", cl.json_path,
                 "Also write the rows as JSON (with the run's tool, version, commit, command, host, time) to this "
                 "file");
}

strata::coll::DataType type_named(const std::string& name) {
  if (name == "float16") return strata::coll::DataType::float16;
  if (name == "float32") return strata::coll::DataType::float32;
  return strata::coll::DataType::bfloat16;
}

// Every (hidden, tokens) point measured, its row printed on rank 0 as it comes.
struct Sweep {
  std::vector<Row> rows;
  Crossovers crossovers;
  bool wrong = false;  // a fused result that differs from the peer's
};

Sweep sweep(Runner& runner, const CommandLine& cl, const std::map<std::pair<size_t, size_t>, TorchRow>& torch, int rank,
            int size, double floor_bw) {
  Sweep out;
  for (size_t h : cl.hiddens) {
    for (size_t t : cl.tokens) {
      Case c;
      c.tokens = t;
      c.hidden = h;
      c.type = cl.type;
      out.rows.push_back(
          measure_case(runner, c, cl.options, torch.count({t, h}) ? torch.at({t, h}) : TorchRow{}, size));
      const Row& r = out.rows.back();
      out.crossovers.add(r);
      for (const Timing* x : {&r.lamport, &r.one, &r.two, &r.strata}) out.wrong = out.wrong || x->wrong;
      if (rank == 0) print_row(r, floor_bw);
    }
  }
  return out;
}

// Rank 0: the crossovers and the verdict after the table.
void print_tail(const Sweep& s, const CommandLine& cl) {
  print_crossover("One-shot/two-shot crossover (first token count where two-shot was faster)", s.crossovers.two_shot,
                  cl.hiddens, cl.type);
  print_crossover("Lamport's limit (first token count where one- or two-shot was faster)", s.crossovers.lamport_lost,
                  cl.hiddens, cl.type);
  std::printf("\n");
  if (s.wrong) std::printf("\nFAILED: a fused result differed from the peer's on the same inputs\n");
}

// Rank 0: the rows and crossovers as JSON. False when the file could not be written.
bool write_sweep_json(const Sweep& s, const CommandLine& cl, const Runner& runner, int size, double floor_bw,
                      const std::string& torch_machine, int argc, char** argv) {
  nlohmann::json doc = to_json(s.rows, runner, size, cl.type_name, floor_bw, torch_machine, argc, argv);
  for (size_t h : cl.hiddens) {
    auto at = [&](const std::map<size_t, size_t>& m) {
      return m.count(h) ? nlohmann::json(m.at(h)) : nlohmann::json();
    };
    doc["crossover_tokens"][std::to_string(h)] = at(s.crossovers.two_shot);
    doc["lamport_lost_tokens"][std::to_string(h)] = at(s.crossovers.lamport_lost);
  }
  return strata::tools::write_json_file(cl.json_path, doc);
}

int run(int argc, char** argv) {
  CLI::App app{"strata-bench-fused: fused AllReduce + residual + RMSNorm against NCCL + RMSNorm"};
  strata::tools::standard_options(app, "strata-bench-fused");
  CommandLine cl;
  add_options(app, cl);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  cl.options.device = !cl.host;
  cl.options.graphs = !cl.no_graphs && !cl.host;

  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cl.type = type_named(cl.type_name);
  cl.tokens = parse_list(cl.tokens_list);
  cl.hiddens = parse_list(cl.hidden_list);
  for (size_t t : cl.tokens) cl.options.max_tokens = std::max(cl.options.max_tokens, t);
  std::unique_ptr<Runner> runner(cl.options.device ? make_device_runner(cl.options) : make_host_runner(cl.options));
  if (!runner) {
    if (rank == 0) std::fprintf(stderr, "strata-bench-fused: built without CUDA and NCCL: use --host\n");
    MPI_Finalize();
    return 2;
  }
  std::string torch_machine;
  const auto torch = read_torch(cl.torch_json, &torch_machine);
  const double floor_bw = runner->peer_read_bandwidth();
  if (rank == 0) print_table_head(*runner, cl.type_name, size, floor_bw, torch.empty() ? "" : torch_machine);
  const Sweep s = sweep(*runner, cl, torch, rank, size, floor_bw);
  if (rank == 0) print_tail(s, cl);
  int rc = s.wrong ? 1 : 0;
  if (rank == 0 && !cl.json_path.empty() &&
      !write_sweep_json(s, cl, *runner, size, floor_bw, torch_machine, argc, argv)) {
    rc = 1;
  }
  runner.reset();
  MPI_Finalize();
  return rc;
}

}  // namespace
}  // namespace strata_bench::fused

int main(int argc, char** argv) {
  return strata::tools::guarded_main("strata-bench-fused", argc, argv, strata_bench::fused::run);
}
