// strata-bench-coll: Strata's collectives (each algorithm) against the peer
// in the same run — flat NCCL on device buffers (--device), the MPI
// library on host buffers — with nccl-tests' columns and the cost model's
// prediction. Usage: docs/collectives.md.
#include "bench/coll/bench_coll.hpp"
#include "bench/coll/rows.hpp"

#include "collectives/context.hpp"
#include "collectives/model/cost_model.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/cli/run_metadata.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

namespace strata_bench {
namespace {

using strata::coll::Algorithm;
using strata::coll::Collective;
using strata::coll::DataType;
using strata::coll::ReduceOp;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool parse_collective(const std::string& s, Collective* c) {
  for (Collective x : {Collective::allreduce, Collective::reduce_scatter, Collective::allgather, Collective::broadcast,
                       Collective::reduce}) {
    if (s == strata::coll::to_string(x)) {
      *c = x;
      return true;
    }
  }
  return false;
}

bool parse_type(const std::string& s, DataType* t) {
  for (DataType x : {DataType::int32, DataType::int64, DataType::float32, DataType::float64, DataType::float16,
                     DataType::bfloat16}) {
    if (s == strata::coll::to_string(x)) {
      *t = x;
      return true;
    }
  }
  return false;
}

bool parse_op(const std::string& s, ReduceOp* op) {
  for (ReduceOp x : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
    if (s == strata::coll::to_string(x)) {
      *op = x;
      return true;
    }
  }
  return false;
}

// What to time, from the command line's words.
struct Selection {
  DataType type{};
  ReduceOp op{};
  std::vector<Collective> collectives;
  std::vector<Algorithm> algorithms;
};

bool select(const std::string& collectives, const std::string& type_name, const std::string& op_name,
            std::string algorithms, bool device, Selection* sel) {
  bool ok = parse_type(type_name, &sel->type) && parse_op(op_name, &sel->op);
  for (const std::string& s : split(collectives)) {
    Collective c{};
    ok = ok && parse_collective(s, &c);
    sel->collectives.push_back(c);
  }
  if (algorithms.empty())
    algorithms = device ? "library,hierarchical,two_level" : "library,ring,recursive,hierarchical,two_level";
  for (const std::string& s : split(algorithms)) {
    strata::Result<Algorithm> a = strata::coll::parse_algorithm(s.c_str());
    ok = ok && a.ok() && a.value() != Algorithm::automatic;
    if (a) sel->algorithms.push_back(a.value());
  }
  return ok;
}

// The case of `bytes` of collective `col` (0 elements: none); the bytes
// rounded to whole elements (per rank for allgather and reduce_scatter).
Case case_of(Collective col, const Selection& sel, double bytes, int ranks) {
  const size_t element = strata::coll::size_of(sel.type);
  Case c{col, sel.type, sel.op, static_cast<size_t>(bytes), 0};
  const size_t per = (col == Collective::allgather || col == Collective::reduce_scatter)
                         ? element * static_cast<size_t>(ranks)
                         : element;
  c.count = c.bytes / per;
  c.bytes = c.count * per;
  return c;
}

// The peer's row and one per algorithm for one case (rank 0 prints them).
void measure_case(Runner& runner, const Case& c, const Selection& sel, const Options& options,
                  const strata::coll::model::Machine* machine, int rank, int ranks, std::vector<Row>* rows) {
  auto predict = [&](Algorithm a) {
    if (machine == nullptr) return -1.0;
    strata::Result<double> p = strata::coll::model::predict_us(c.collective, a, static_cast<double>(c.bytes), *machine);
    return p ? p.value() : -1.0;
  };
  Case in_place = c;
  in_place.in_place = true;
  const bool time_in_place = options.in_place && has_in_place(c.collective);
  Row peer{c, runner.peer_name() + " (peer)", runner.peer(c), predict(Algorithm::library), 0, {}};
  if (time_in_place) peer.in_place = runner.peer(in_place);
  if (rank == 0) print_row(peer, ranks, options.in_place);
  rows->push_back(peer);
  if (options.graph) {
    Row graph{c, runner.peer_name() + " (peer, CUDA graph)", runner.peer_graph(c), predict(Algorithm::library), 0, {}};
    if (rank == 0) print_row(graph, ranks, options.in_place);
    rows->push_back(graph);
  }
  for (Algorithm a : sel.algorithms) {
    Row r{c, strata::coll::to_string(a), runner.ours(c, a), predict(a), peer.timing.ran ? peer.timing.us : 0, {}};
    if (time_in_place) r.in_place = runner.ours(in_place, a);
    if (rank == 0) print_row(r, ranks, options.in_place);
    rows->push_back(r);
  }
  if (rank == 0) std::fflush(stdout);
}

int run(int argc, char** argv) {
  CLI::App app{"Strata's collectives against the peer (flat NCCL on device buffers, the MPI library on host buffers)"};
  strata::tools::standard_options(app, "strata-bench-coll");
  Options options;
  std::string collectives = "allreduce,reduce_scatter,allgather,broadcast,reduce";
  std::string type_name = "float32", op_name = "sum", algorithms;
  double min_bytes = 8, max_bytes = 64.0 * 1024 * 1024, factor = 4;
  app.add_flag("--device", options.device, "Device buffers (NCCL as the peer); default host buffers (the MPI library)");
  app.add_option("--collectives", collectives, "Comma-separated: allreduce,reduce_scatter,allgather,broadcast,reduce");
  app.add_option("--type", type_name, "int32, int64, float32, float64, float16, bfloat16");
  app.add_option("--op", op_name, "sum, prod, min, max");
  app.add_option("--algorithms", algorithms,
                 "Strata algorithms to time (default: host library,ring,recursive,hierarchical,two_level; device "
                 "library,hierarchical,two_level)");
  app.add_option("-b,--min-bytes", min_bytes, "Smallest size in bytes (K/M/G suffixes; nccl-tests' -b)")
      ->transform(strata::tools::byte_sizes());
  app.add_option("-e,--max-bytes", max_bytes, "Largest size in bytes (nccl-tests' -e)")
      ->transform(strata::tools::byte_sizes());
  app.add_option("-f,--factor", factor, "Size step factor (nccl-tests' -f)");
  app.add_option("-n,--samples", options.samples, "Samples per point, the median reported (nccl-tests' -n)");
  app.add_option("-w,--warmup", options.warmup, "Warm-up calls per point (nccl-tests' -w)");
  app.add_option("--sample-us", options.sample_us, "Each sample times enough calls to last this long");
  app.add_flag("--graph", options.graph,
               "Device buffers: also a row of the peer's calls captured into a CUDA graph, its replay timed "
               "(nccl-tests' -G: the host's launch cost out of the loop)");
  app.add_flag("--in-place", options.in_place,
               "Also time allreduce, allgather and reduce_scatter in place (MPI_IN_PLACE; host buffers): "
               "nccl-tests' in-place columns, after all the others");
  std::string json_path, csv_path;
  app.add_option("--json", json_path,
                 "Also write the rows as JSON (with the run's tool, version, commit, command, "
                 "host, time) to this file");
  app.add_option("--csv", csv_path, "Also write the rows as CSV to this file");
  int rank = 0, ranks = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv, rank == 0); rc >= 0) {
    MPI_Finalize();
    return rc;
  }
  Selection sel;
  if (!select(collectives, type_name, op_name, algorithms, options.device, &sel) || factor <= 1 || min_bytes < 1) {
    if (rank == 0) std::fprintf(stderr, "strata-bench-coll: bad --type, --op, --collectives, --algorithms or sizes\n");
    MPI_Finalize();
    return 2;
  }
  std::unique_ptr<Runner> runner(options.device ? make_device_runner(options) : make_host_runner(options));
  if (!runner) {
    if (rank == 0) std::fprintf(stderr, "strata-bench-coll: --device needs a build with CUDA and NCCL\n");
    MPI_Finalize();
    return 2;
  }
  strata::Result<strata::coll::Context*> context = strata::coll::Context::of(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("strata-bench-coll: %d ranks, %s\n\n", ranks, runner->describe().c_str());
    if (context) std::printf("```\n%s```\n\n", context.value()->topology().to_text().c_str());
    print_header(options.in_place);
  }
  const strata::coll::model::Machine* machine = context ? &context.value()->machine(options.device) : nullptr;
  std::vector<Row> rows;
  for (Collective col : sel.collectives) {
    for (double bytes = min_bytes; bytes <= max_bytes * 1.0001; bytes *= factor) {
      const Case c = case_of(col, sel, bytes, ranks);
      if (c.count > 0) measure_case(*runner, c, sel, options, machine, rank, ranks, &rows);
    }
  }
  int rc = 0;
  if (rank == 0) {
    print_closing_lines(rows, ranks, options.in_place);
    if (!json_path.empty() &&
        !strata::tools::write_json_file(json_path, to_json(rows, ranks, options.in_place, argc, argv))) {
      rc = 1;
    }
    if (!csv_path.empty() && !write_csv(csv_path, rows, ranks, options.in_place)) rc = 1;
  }
  runner.reset();
  MPI_Finalize();
  return rc;
}

}  // namespace
}  // namespace strata_bench

int main(int argc, char** argv) {
  return strata::tools::guarded_main("strata-bench-coll", argc, argv, strata_bench::run);
}
