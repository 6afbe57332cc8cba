/* Does the preloaded interposer start the GPU driver in a host program?
 * It must not: a plain run never does, and starting it costs every rank a
 * thread, 17 GB of address space and a fraction of a second (seen on
 * 2 x H100). A host program on a GPU node makes the calls a host program
 * makes (point-to-point of heap buffers, small and large, a derived
 * datatype, an allreduce), then asks whether the CUDA driver's library is
 * loaded: the CUDA runtime loads it when it starts, and Strata reaches the
 * driver only through the runtime (portability/gpu/gpu_runtime.cu).
 * Meaningful where CUDA is built in and a driver is installed; prints "ok"
 * or "FAILED ..." on rank 0 (exit 1). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int exchange(void* buffer, int count, MPI_Datatype type, int rank) {
  if (rank == 0) return MPI_Send(buffer, count, type, 1, 7, MPI_COMM_WORLD);
  if (rank == 1) return MPI_Recv(buffer, count, type, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int small = 1024, large = 4 << 20;
  char* a = malloc(small);
  char* b = malloc(large);
  memset(a, rank, small);
  memset(b, rank, large);
  MPI_Datatype vector;
  MPI_Type_vector(1024, 8, 64, MPI_BYTE, &vector);
  MPI_Type_commit(&vector);
  int rc = exchange(a, small, MPI_BYTE, rank) | exchange(b, large, MPI_BYTE, rank) | exchange(b, 1, vector, rank);
  float x = 1.0f, sum = 0.0f;
  rc |= MPI_Allreduce(&x, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  rc |= MPI_Allreduce(MPI_IN_PLACE, b, large / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Type_free(&vector);
  void* driver = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  int started = driver != NULL;
  if (driver != NULL) dlclose(driver);
  int any = 0;
  MPI_Allreduce(&started, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    if (rc != MPI_SUCCESS) {
      printf("FAILED an MPI call failed\n");
    } else if (any) {
      printf("FAILED a host program's rank has the CUDA driver loaded: the preload started the GPU runtime\n");
    } else {
      printf("ok no rank loaded the CUDA driver\n");
    }
  }
  free(a);
  free(b);
  MPI_Finalize();
  return rc != MPI_SUCCESS || any ? 1 : 0;
}
