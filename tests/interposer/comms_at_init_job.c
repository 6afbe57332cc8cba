/* Does the preloaded interposer make communicators at MPI_Init? It must not
 * in a host job: in Open MPI, making one starts a non-blocking allreduce on
 * the parent (the new context id), after which the non-blocking
 * collectives' progress function is polled in every wait of the job, a cost
 * the plain program never pays (interposer/transfer/direct.cpp, setup).
 * Run preloaded with comm_counter (which counts what Strata makes):
 *   comms_at_init_job none    no communicator made by MPI_Init
 *   comms_at_init_job some    at least one (a GPU program, or
 *                             STRATA_P2P_IPC=on: the proof that the count
 *                             sees Strata's calls)
 * In every case (Open MPI) the communicators made must not have left the
 * non-blocking collectives' progress function registered, as
 * MPI_Comm_split_type on MPI_COMM_WORLD does.
 * Prints "ok ..." or "FAILED ..." on rank 0 (exit 1). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int (*made)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "strata_test_comms_made");
  const int count = made != NULL ? made() : -1;
  int (*nbc)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "strata_test_nbc_progress");
  const int nbc_progress = nbc != NULL ? nbc() : -1;
  const int want_none = argc > 1 && strcmp(argv[1], "none") == 0;
  int rc = 0;
  if (rank == 0) {
    if (count < 0) {
      printf("FAILED comm_counter is not loaded\n");
      rc = 1;
    } else if (want_none ? count != 0 : count == 0) {
      printf("FAILED MPI_Init made %d communicator(s), expected %s\n", count, want_none ? "none" : "some");
      rc = 1;
    } else if (nbc_progress != 0) {
      printf("FAILED MPI_Init left the non-blocking collectives' progress function registered (%d time(s))\n",
             nbc_progress);
      rc = 1;
    } else {
      printf("ok MPI_Init made %d communicator(s)\n", count);
    }
  }
  MPI_Finalize();
  return rc;
}
