// A plain MPI program (it knows nothing of Strata) with the shape of a
// training or stencil step: some computation, a ring exchange with both
// neighbours (MPI_Sendrecv), then an 8-byte MPI_Allreduce. Run under
// libstrata_preload.so with STRATA_FAULT=1 (and STRATA_FAULT_INJECT) by
// run-fault-case.sh; it checks its own results, so an injected fault never
// hides a wrong answer.
//
//   fault_workload [--iters N] [--seconds S] [--compute-us U] [--p2p ring|none] [--nonblocking]
//                  [--memory host|device]
//
// --memory device: the allreduce's buffers in device memory (a GPU per rank,
// rank r on device r % n; or, in a CPU build, the interposer's device
// stand-in, STRATA_FAKE_DEVICE=N), so that the interposer routes it to NCCL
// (or the stand-in's NCCL): the fault drills of GPU collectives.
//
// --seconds: stop after S seconds (rank 0's clock, agreed through the
// allreduce) or N iterations, whichever comes first.
#include "support/test_device_memory.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {
constexpr int kExitSkipped = 77;  // ctest's SKIP_RETURN_CODE of the device cases

void spin_us(long us) {
  if (us <= 0) return;
  timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 >= us) return;
  }
}

int check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "fault_workload: %s failed (%d)\n", what, rc);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 200, compute_us = 0;
  double seconds = 0;
  bool ring = true, nonblocking = false, device = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
      if (iters == 200) iters = 1L << 40;
    } else if (!std::strcmp(argv[i], "--compute-us") && i + 1 < argc) {
      compute_us = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--p2p") && i + 1 < argc) {
      ring = std::strcmp(argv[++i], "none") != 0;
    } else if (!std::strcmp(argv[i], "--nonblocking")) {
      nonblocking = true;
    } else if (!std::strcmp(argv[i], "--memory") && i + 1 < argc) {
      device = std::strcmp(argv[++i], "device") == 0;
    } else {
      std::fprintf(stderr,
                   "usage: fault_workload [--iters N] [--seconds S] [--compute-us U] [--p2p ring|none] "
                   "[--nonblocking] [--memory host|device]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  void* dev_in = nullptr;
  void* dev_out = nullptr;
  if (device) {
    const int gpus = strata_test::test_device_count();
    int fewest = 0;
    MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (fewest <= 0) {  // a GPU build on a machine without one: the case is skipped, not failed
      if (rank == 0) std::fprintf(stderr, "fault_workload: skipped: --memory device but a rank has no device\n");
      MPI_Finalize();
      return kExitSkipped;
    }
    strata_test::test_device_select(rank % gpus);
    dev_in = strata_test::test_device_alloc(2 * sizeof(long));
    dev_out = strata_test::test_device_alloc(2 * sizeof(long));
  }
  const double t0 = MPI_Wtime();
  long bad = 0, done = 0;
  for (long it = 1; it <= iters; ++it) {
    spin_us(compute_us);
    if (ring && size > 1) {
      long out[2] = {rank, it}, from_left[2] = {-1, -1}, from_right[2] = {-1, -1};
      if (nonblocking) {
        MPI_Request req[4];
        check(MPI_Irecv(from_left, 2, MPI_LONG, left, 1, MPI_COMM_WORLD, &req[0]), "MPI_Irecv");
        check(MPI_Irecv(from_right, 2, MPI_LONG, right, 2, MPI_COMM_WORLD, &req[1]), "MPI_Irecv");
        check(MPI_Isend(out, 2, MPI_LONG, right, 1, MPI_COMM_WORLD, &req[2]), "MPI_Isend");
        check(MPI_Isend(out, 2, MPI_LONG, left, 2, MPI_COMM_WORLD, &req[3]), "MPI_Isend");
        check(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
      } else {
        check(MPI_Sendrecv(out, 2, MPI_LONG, right, 1, from_left, 2, MPI_LONG, left, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
        check(MPI_Sendrecv(out, 2, MPI_LONG, left, 2, from_right, 2, MPI_LONG, right, 2, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
      }
      if (from_left[0] != left || from_left[1] != it || from_right[0] != right || from_right[1] != it) ++bad;
    }
    // The sum checks the collective; the second value is rank 0's "time is up".
    long mine[2] = {rank + it, rank == 0 && seconds > 0 && MPI_Wtime() - t0 >= seconds ? 1 : 0}, sum[2] = {0, 0};
    if (device) {
      strata_test::test_device_to(dev_in, mine, sizeof mine);
      check(MPI_Allreduce(dev_in, dev_out, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
      strata_test::test_device_from(sum, dev_out, sizeof sum);
    } else {
      check(MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    }
    if (sum[0] != static_cast<long>(size) * (size - 1) / 2 + static_cast<long>(size) * it) ++bad;
    done = it;
    if (sum[1] != 0) break;
  }
  const double elapsed = MPI_Wtime() - t0;
  long all_bad = 0;
  MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("fault_workload: %ld iterations on %d ranks in %.3f s (%.1f us each), %ld wrong results\n", done, size,
                elapsed, 1e6 * elapsed / static_cast<double>(done > 0 ? done : 1), all_bad);
  }
  if (device) {
    strata_test::test_device_free(dev_in);
    strata_test::test_device_free(dev_out);
  }
  MPI_Finalize();
  return all_bad == 0 ? 0 : 1;
}
