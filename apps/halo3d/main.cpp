// strata-halo3d: a periodic 3D stencil halo exchange with 26 neighbours, of the
// kind TEMPI (Pearson et al., HPDC'21) measured. An ordinary MPI program that
// knows nothing of Strata: run it plain, and with
// LD_PRELOAD=libstrata_preload.so to see what the interposer changes.
//
// Exit codes: 0 verified, 1 verification failed, 2 usage error,
// 3 MPI or runtime error (the job is aborted: other ranks could hang otherwise)
// or --memory device without a device (a clean exit: every rank knows),
// 77 no device and STRATA_TEST_SKIP_WITHOUT_GPU=1 (a test to be skipped).

#include "field.hpp"
#include "field_buffer.hpp"
#include "halo_exchange.hpp"
#include "halo_grid.hpp"
#include "mpi_check.hpp"
#include "options.hpp"
#include "process_grid.hpp"
#include "report.hpp"
#include "timing.hpp"
#include "verify.hpp"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace halo3d {
namespace {

constexpr int kExitSuccess = 0;
constexpr int kExitVerificationFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitError = 3;
constexpr int kExitNoDevice = 3;
constexpr int kExitSkipped = 77;  // ctest's SKIP_RETURN_CODE of the GPU tests

int finalize(int exit_code) {
  if (MPI_Finalize() != MPI_SUCCESS) {
    std::fprintf(stderr, "strata-halo3d: MPI_Finalize failed\n");
    return kExitError;
  }
  return exit_code;
}

// For MPI and runtime errors only, never for a failed verification.
int abort_job() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized != 0 && finalized == 0) {
    MPI_Abort(MPI_COMM_WORLD, kExitError);
  }
  return kExitError;
}

enum class DeviceSetup { Ready, NoDevice, Failed };

// --memory device: every rank selects device `local rank % device count`
// (the local rank from MPI_COMM_TYPE_SHARED), then all ranks learn whether any
// rank has none, so that they stop together and cleanly. Failed (an MPI
// error, or a device that exists but cannot be used) means: abort the job.
DeviceSetup setup_device(int rank, DeviceInfo& info) {
  MPI_Comm node = MPI_COMM_NULL;
  int local_rank = 0;
  if (!mpi_ok(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
              "MPI_Comm_split_type") ||
      !mpi_ok(MPI_Comm_rank(node, &local_rank), "MPI_Comm_rank") || !mpi_ok(MPI_Comm_free(&node), "MPI_Comm_free")) {
    return DeviceSetup::Failed;
  }
  std::string error;
  const DeviceSelection selection = select_device(local_rank, info, error);
  const int missing = selection == DeviceSelection::NoDevice ? 1 : 0;
  const int failed = selection == DeviceSelection::Error ? 1 : 0;
  if (failed != 0) {
    std::fprintf(stderr, "strata-halo3d: rank %d: %s\n", rank, error.c_str());
  }
  int sums[2] = {0, 0};
  const int mine[2] = {missing, failed};
  int first_missing = INT_MAX;
  const int me = missing != 0 ? rank : INT_MAX;
  if (!mpi_ok(MPI_Allreduce(mine, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce") ||
      !mpi_ok(MPI_Allreduce(&me, &first_missing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce")) {
    return DeviceSetup::Failed;
  }
  if (sums[1] != 0) {
    return DeviceSetup::Failed;
  }
  if (sums[0] != 0) {
    if (rank == first_missing) {
      int ranks = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      std::fprintf(stderr, "strata-halo3d: rank %d: %s [%d of %d ranks have no device]\n", rank, error.c_str(), sums[0],
                   ranks);
    }
    return DeviceSetup::NoDevice;
  }
  return DeviceSetup::Ready;
}

// What a job that cannot run for lack of a device exits with: 77 (skipped)
// for the tests that set STRATA_TEST_SKIP_WITHOUT_GPU=1, else 3.
int no_device_exit_code(int rank) {
  const char* skip = std::getenv("STRATA_TEST_SKIP_WITHOUT_GPU");
  if (skip != nullptr && std::strcmp(skip, "1") == 0) {
    if (rank == 0) {
      std::fprintf(stderr, "strata-halo3d: STRATA_TEST_SKIP_WITHOUT_GPU=1: skipped (exit %d)\n", kExitSkipped);
    }
    return kExitSkipped;
  }
  return kExitNoDevice;
}

// Sets up, times, verifies and reports one run; `exit_code` says whether it
// verified. False on an MPI or allocation error.
bool run_halo(const Options& options, const std::array<int, 3>& procs, int ranks, const DeviceInfo& device,
              double start_time, int& exit_code) {
  ProcessGrid processes;
  if (!create_process_grid(procs, processes)) {
    return false;
  }
  const bool is_root = processes.rank == 0;
  const LocalGrid grid{options.grid, options.radius, options.quantities, options.layout};
  const Placement place{processes.procs, processes.coords};
  const bool is_float = options.type == ElementType::Float;
  const MPI_Datatype element = is_float ? MPI_FLOAT : MPI_DOUBLE;
  const std::size_t element_size = is_float ? sizeof(float) : sizeof(double);

  FieldBuffer field;
  std::string error;
  if (!field.allocate(options.memory, grid.element_count() * element_size, error)) {
    std::fprintf(stderr, "strata-halo3d: rank %d: %s\n", processes.rank, error.c_str());
    return false;
  }
  fill_field(field.host_view(), options.type, grid, place);

  HaloExchange halo;
  TimingResult timing;
  std::FILE* human = options.json ? stderr : stdout;
  const ProgressOutput progress{is_root ? human : nullptr, options.verbose, start_time};
  if (is_root && options.memory == MemoryKind::Device && options.staging == Staging::None &&
      mpi_gpu_awareness() == GpuAwareness::No && !strata_interposer_preloaded()) {
    std::fprintf(stderr,
                 "strata-halo3d: warning: --memory device --staging none hands device pointers "
                 "to MPI, but this MPI says it is not CUDA-aware and the Strata interposer is "
                 "not loaded: expect a crash. Use --staging app, or preload "
                 "libstrata_preload.so.\n");
  }
  if (!field.to_device() || !halo.setup(processes, grid, element) ||
      !time_exchanges(halo, field, options, processes.comm, progress, timing) || !field.to_host()) {
    return false;
  }

  if (options.inject_error && is_root) {
    corrupt_one_ghost_cell(field.host_view(), options.type, grid, place);
  }
  const VerifyResult verified = verify_field(field.host_view(), options.type, grid, place);
  print_mismatches(stderr, processes.rank, verified);

  const long long mine[3] = {verified.ghost_mismatches, verified.owned_mismatches, halo.bytes_sent()};
  long long all[3] = {0, 0, 0};
  HALO_MPI_CHECK(MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_SUM, processes.comm));
  if (!halo.release() || !free_process_grid(processes)) {
    return false;
  }

  RunReport report;
  report.ranks = ranks;
  report.procs = procs;
  report.options = &options;
  report.device = device;
  report.timing = timing;
  report.ghost_mismatches = all[0];
  report.owned_mismatches = all[1];
  report.bytes_per_exchange = all[2];
  report.preloaded = strata_interposer_preloaded();
  if (is_root) {
    print_summary(human, report);
    if (options.json) {
      print_json(stdout, report);
    }
  }
  exit_code = report.verified() ? kExitSuccess : kExitVerificationFailed;
  return true;
}

int run(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "strata-halo3d: MPI_Init failed\n");
    return kExitError;
  }
  const double start_time = MPI_Wtime();
  int rank = 0;
  int ranks = 0;
  if (!mpi_ok(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler") ||
      !mpi_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank") ||
      !mpi_ok(MPI_Comm_size(MPI_COMM_WORLD, &ranks), "MPI_Comm_size")) {
    return abort_job();
  }

  Options options;
  switch (parse_options(argc, argv, rank == 0, options)) {
    case ParseOutcome::Exit: return finalize(kExitSuccess);
    case ParseOutcome::UsageError: return finalize(kExitUsage);
    case ParseOutcome::Run: break;
  }
  if (options.memory == MemoryKind::Device && !device_memory_supported()) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "strata-halo3d: --memory device: this build has no device memory support "
                   "(built without CUDA or HIP); use --memory host, or preload a CPU build's "
                   "libstrata_preload.so with STRATA_FAKE_DEVICE=N (its device stand-in)\n");
    }
    return finalize(kExitUsage);
  }
  std::array<int, 3> procs = options.procs;
  const std::string problem = choose_process_grid(ranks, procs);
  if (!problem.empty()) {
    if (rank == 0) {
      std::fprintf(stderr, "strata-halo3d: %s\n", problem.c_str());
    }
    return finalize(kExitUsage);
  }

  DeviceInfo device;
  if (options.memory == MemoryKind::Device) {
    switch (setup_device(rank, device)) {
      case DeviceSetup::Ready: break;
      case DeviceSetup::NoDevice: return finalize(no_device_exit_code(rank));
      case DeviceSetup::Failed: return abort_job();
    }
  }

  int exit_code = kExitError;
  if (!run_halo(options, procs, ranks, device, start_time, exit_code)) {
    return abort_job();
  }
  return finalize(exit_code);
}

}  // namespace
}  // namespace halo3d

int main(int argc, char** argv) {
  try {
    return halo3d::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata-halo3d: unexpected error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "strata-halo3d: unexpected error\n");
  }
  return halo3d::abort_job();
}
