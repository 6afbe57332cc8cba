// strata-measure: measures this machine once and writes the performance
// model the runtime reads (model.json in STRATA_CACHE_DIR). Launch it the way
// the jobs run (ranks per node), at least two ranks:
//
//   mpirun -np 2 strata-measure            # writes ~/.cache/strata/model.json
//   mpirun -np 8 strata-measure --out FILE --quick
//
// Host part (this build): the library's MPI_Pack against Strata's pack (rank
// 0), derived-type exchanges between rank pairs through the library against
// Strata's path (all ranks at once), and the memcpy rate, over block lengths
// 1-512 B and messages 256 B - 4 MiB; each point is the median of repeated
// samples, both paths alternated. Device part (where every rank has a GPU):
// pack launch cost, pinned copy rates, and device-buffer exchanges per method;
// then the library's collectives on device buffers (flat NCCL/RCCL), to
// which the collectives' cost model fits its level's figures (the "links"
// section; run on one node: the node's level).
#include "base/log.hpp"
#include "base/paths.hpp"
#include "tools/measure/coll_measure.hpp"
#include "tools/measure/device_measure.hpp"
#include "tools/measure/host_transfer.hpp"

#include "tools/cli/command_line.hpp"
#include "tools/guarded_main.hpp"

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

struct Options {
  std::string out = strata::model_file_path();
  bool quick = false;
  bool skip_transfer = false;
  bool skip_device = false;
  bool skip_collectives = false;
  bool collectives_only = false;
  bool graph = false;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--out", o.out, "Model file to write (default: STRATA_CACHE_DIR/model.json)");
  app.add_flag("--quick", o.quick, "A small grid (for tests): a few seconds");
  app.add_flag("--no-transfer", o.skip_transfer, "Only the single-rank parts (pack, memcpy)");
  app.add_flag("--no-device", o.skip_device, "Skip the GPU part even where a GPU is present");
  app.add_flag("--no-collectives", o.skip_collectives,
               "Skip the device collectives (the cost model's calibration) even where GPUs are present");
  app.add_flag("--collectives-only", o.collectives_only,
               "Only the device collectives and the cost model's fit, written into the model file (--out) whose other "
               "sections are kept");
  app.add_flag("--graph", o.graph,
               "Time the device collectives as the replay of a CUDA/HIP graph that captured them: the device's time, "
               "without the host's cost of launching each call (which differs between processes on some machines: "
               "bench/results/coll-h100x2.md)");
}

strata::measure::CollGrid coll_grid(const Options& o) {
  strata::measure::CollGrid grid = o.quick ? strata::measure::CollGrid::quick() : strata::measure::CollGrid{};
  grid.graph = o.graph;
  return grid;
}

// The host model: memcpy rate and packs (rank 0), then the derived-type
// exchanges (all ranks; the figures are rank 0's).
strata::interposer::HostModel measure_host_model(const Options& o, int rank, int size) {
  strata::measure::GridOptions grid;
  if (o.quick) {
    grid.blocks = {1, 16, 256};
    grid.sizes = {1024, 65536};
    grid.samples = 5;
    grid.min_sample_us = 50;
  }
  strata::interposer::HostModel model;
  if (rank == 0) {
    std::fprintf(stderr, "strata-measure: memcpy rate\n");
    model.memcpy_gbps = strata::measure::measure_memcpy_gbps(int64_t{256} << 20);
    std::fprintf(stderr, "  memcpy %.1f GB/s\nstrata-measure: MPI_Pack against Strata's pack\n", model.memcpy_gbps);
    model.pack = strata::measure::measure_packs(grid);
  }
  if (!o.skip_transfer) {
    if (size < 2 && rank == 0) {
      std::fprintf(stderr, "strata-measure: one rank only: no transfer figures (run with mpirun -np 2)\n");
    } else if (rank == 0) {
      std::fprintf(stderr, "strata-measure: derived-type exchanges between rank pairs, all ranks at once\n");
    }
    std::vector<strata::interposer::HostSample> transfers = strata::measure::measure_transfers(MPI_COMM_WORLD, grid);
    if (rank == 0) model.transfer = std::move(transfers);
  }
  return model;
}

// Launch cost, copy rates and device-buffer exchanges; no transfer figures
// where a rank has no GPU.
strata::measure::DeviceFigures measure_device_figures(const Options& o, int rank) {
  strata::measure::DeviceGrid dgrid;
  if (o.quick) {
    dgrid.blocks = {8, 512};
    dgrid.sizes = {4096, 1 << 20};
    dgrid.samples = 3;
  }
  if (rank == 0) std::fprintf(stderr, "strata-measure: GPU: launch, copy rates, device-buffer exchanges per method\n");
  strata::measure::DeviceFigures device = strata::measure::measure_device(MPI_COMM_WORLD, dgrid);
  if (rank == 0 && device.transfer.empty()) std::fprintf(stderr, "  no GPU on every rank: no device figures\n");
  if (rank == 0 && !device.transfer.empty()) {
    std::fprintf(stderr, "  launch %.1f us, H2D %.1f GB/s, D2H %.1f GB/s\n", device.launch_us, device.h2d_gbps,
                 device.d2h_gbps);
  }
  return device;
}

// The library's collectives on device buffers and the cost model's fit,
// where rank 0 found GPUs (all ranks agree through the broadcast).
strata::measure::CollFigures measure_device_collectives(const Options& o, int rank, int size,
                                                        const strata::measure::DeviceFigures& device) {
  strata::measure::CollFigures collectives;
  int gpus = device.transfer.empty() ? 0 : 1;  // the device figures are rank 0's
  MPI_Bcast(&gpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!o.skip_device && !o.skip_collectives && gpus != 0 && size > 1) {
    if (rank == 0) std::fprintf(stderr, "strata-measure: device collectives (the library's), the cost model's fit\n");
    collectives = strata::measure::measure_collectives(MPI_COMM_WORLD, coll_grid(o));
    if (rank == 0) strata::measure::print_calibration(collectives);
  }
  return collectives;
}

// The model file's "machine", "mpi", "date" and "grid".
std::vector<std::pair<std::string, std::string>> run_description(bool quick) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string mpi(version);
  mpi = mpi.substr(0, mpi.find('\n'));
  char date[64] = "";
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"machine", host}, {"mpi", mpi}, {"date", date}, {"grid", quick ? "quick" : "full"}};
}

// The model file: the host model, then the device section and the cost
// model's fit where they were measured.
nlohmann::json model_document(const Options& o, const strata::interposer::HostModel& model,
                              const strata::measure::DeviceFigures& device,
                              const strata::measure::CollFigures& collectives) {
  nlohmann::json doc = nlohmann::json::parse(model.to_json(run_description(o.quick)));
  if (!device.transfer.empty()) {
    strata::interposer::DeviceModel dm;
    dm.samples = device.transfer;
    doc["device"] = nlohmann::json::parse(dm.to_json_section());
    doc["device"]["launch_us"] = device.launch_us;
    doc["device"]["h2d_gbps"] = device.h2d_gbps;
    doc["device"]["d2h_gbps"] = device.d2h_gbps;
  }
  if (!collectives.level.empty() && collectives.why.empty()) {
    strata::measure::add_calibration(collectives, &doc);
  }
  return doc;
}

// 0 where `text` was written to `out` (its folder made), 1 otherwise.
int write_model(const std::string& out, const std::string& text) {
  if (out.empty()) {
    std::fprintf(stderr, "strata-measure: no cache folder (set STRATA_CACHE_DIR or HOME) and no --out\n");
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(out).parent_path(), ec);
  std::ofstream file(out);
  file << text << "\n";
  if (!file) {
    std::fprintf(stderr, "strata-measure: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(stderr, "strata-measure: wrote %s\n", out.c_str());
  return 0;
}

}  // namespace

static int run_tool(int argc, char** argv) {
  CLI::App app{"Measure this machine and write Strata's performance model"};
  strata::tools::standard_options(app, "strata-measure");
  Options o;
  add_options(app, o);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (o.collectives_only) {
    const int status = strata::measure::collectives_only(MPI_COMM_WORLD, o.out, coll_grid(o));
    MPI_Finalize();
    return status;
  }
  const strata::interposer::HostModel model = measure_host_model(o, rank, size);
  strata::measure::DeviceFigures device;
  if (!o.skip_device) device = measure_device_figures(o, rank);
  const strata::measure::CollFigures collectives = measure_device_collectives(o, rank, size, device);
  int status = 0;
  if (rank == 0) status = write_model(o.out, model_document(o, model, device, collectives).dump(1));
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-measure", argc, argv, run_tool); }
