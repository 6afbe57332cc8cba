// strata-halo3d: a periodic 3D stencil halo exchange with 26 neighbours, of the
// kind TEMPI (Pearson et al., HPDC'21) measured. An ordinary MPI program that
// knows nothing of Strata: run it plain, and with
// LD_PRELOAD=libstrata_preload.so to see what the interposer changes.
//
// Exit codes: 0 verified, 1 verification failed, 2 usage error,
// 3 MPI or runtime error (the job is aborted: other ranks could hang otherwise).

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

#include <cstdio>
#include <exception>
#include <string>

namespace halo3d {
namespace {

constexpr int kExitSuccess = 0;
constexpr int kExitVerificationFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitError = 3;

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

// Sets up, times, verifies and reports one run; `exit_code` says whether it
// verified. False on an MPI or allocation error.
bool run_halo(const Options& options, const std::array<int, 3>& procs, int ranks,
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
  if (!field.to_device() || !halo.setup(processes, grid, element) ||
      !time_exchanges(halo, field.data(), options, processes.comm, progress, timing) ||
      !field.to_host()) {
    return false;
  }

  if (options.inject_error && is_root) {
    corrupt_one_ghost_cell(field.host_view(), options.type, grid, place);
  }
  const VerifyResult verified = verify_field(field.host_view(), options.type, grid, place);
  print_mismatches(stderr, processes.rank, verified);

  const long long mine[3] = {verified.ghost_mismatches, verified.owned_mismatches,
                             halo.bytes_sent()};
  long long all[3] = {0, 0, 0};
  HALO_MPI_CHECK(MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_SUM, processes.comm));
  if (!halo.release() || !free_process_grid(processes)) {
    return false;
  }

  RunReport report;
  report.ranks = ranks;
  report.procs = procs;
  report.options = &options;
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
  if (!mpi_ok(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler") ||
      !mpi_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank") ||
      !mpi_ok(MPI_Comm_size(MPI_COMM_WORLD, &ranks), "MPI_Comm_size")) {
    return abort_job();
  }

  Options options;
  switch (parse_options(argc, argv, rank == 0, options)) {
    case ParseOutcome::Exit:
      return finalize(kExitSuccess);
    case ParseOutcome::UsageError:
      return finalize(kExitUsage);
    case ParseOutcome::Run:
      break;
  }
  if (options.memory == MemoryKind::Device && !device_memory_supported()) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "strata-halo3d: --memory device: this build has no device memory support "
                   "(built without CUDA or HIP); use --memory host\n");
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

  int exit_code = kExitError;
  if (!run_halo(options, procs, ranks, start_time, exit_code)) {
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
