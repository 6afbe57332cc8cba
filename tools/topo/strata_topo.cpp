// strata-topo: where the ranks of a job run, as Strata sees it (discovered,
// or emulated by STRATA_TOPOLOGY), and the levels its collectives use.
//
//   mpirun -np 8 strata-topo            the tree and the level table (rank 0 prints)
//   mpirun -np 8 strata-topo --json     the same as one JSON object
//   mpirun -np 8 strata-topo -o f.json  written to a file instead of stdout
//
// Like a job script, each rank first takes GPU (node-local rank % GPUs);
// --keep-device leaves the device the launcher gave it.
#include "portability/gpu/gpu_api.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/guarded_main.hpp"

#include <strata/topology.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

namespace {

// Rank 0 writes `text` to `path` (stdout when empty); false on failure.
bool write_out(const std::string& text, const std::string& path) {
  std::FILE* f = path.empty() ? stdout : std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "strata-topo: cannot open %s\n", path.c_str());
    return false;
  }
  bool ok = std::fputs(text.c_str(), f) >= 0 && std::fputc('\n', f) != EOF;
  if (f != stdout) ok = std::fclose(f) == 0 && ok;
  return ok;
}

void pick_device_by_local_rank() {
  int count = 0;
  if (!strata::gpu::available() || strata::gpu::device_count(&count) != strata::Status::ok || count == 0) return;
  MPI_Comm local = MPI_COMM_NULL;
  int local_rank = 0;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) != MPI_SUCCESS) return;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  if (strata::gpu::set_device(local_rank % count) != strata::Status::ok) {
    std::fprintf(stderr, "strata-topo: cannot select GPU %d: %s\n", local_rank % count,
                 strata::gpu::last_error_string());
  }
}

int run(int rank, bool json, const std::string& output) {
  auto topo = strata::topo::Topology::create(MPI_COMM_WORLD);
  int ok = topo.ok() ? 1 : 0;
  if (rank == 0) {
    if (!topo.ok()) {
      std::fprintf(stderr, "strata-topo: Topology::create failed: %s\n", strata::to_string(topo.status()));
    } else {
      ok = write_out(json ? (*topo)->to_json() : (*topo)->to_text(), output) ? 1 : 0;
    }
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_ok == 1 ? 0 : 1;
}

}  // namespace

static int run_tool(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"Print where the ranks run and the topology levels Strata uses (run under mpirun)"};
  strata::tools::standard_options(app, "strata-topo");
  bool json = false;
  std::string output;
  bool keep_device = false;
  app.add_flag("--json", json, "Print one JSON object instead of the text tree");
  app.add_option("-o,--output", output, "Write to this file instead of stdout");
  app.add_flag("--keep-device", keep_device, "Keep each rank's current GPU (default: node-local rank % GPUs)");
  // Only rank 0 prints help or the error; every rank exits with its code.
  int rc = strata::tools::parse_command_line(app, argc, argv, rank == 0);
  if (rc < 0) {
    if (!keep_device) pick_device_by_local_rank();
    rc = run(rank, json, output);
  }
  MPI_Finalize();
  return rc;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-topo", argc, argv, run_tool); }
