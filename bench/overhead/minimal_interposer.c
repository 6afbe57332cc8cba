/* The floor of any LD_PRELOAD interposer, for strata-bench-overhead's
 * "minimal" column: the MPI calls the rank program makes in its timed loops,
 * each forwarded to the next definition (the library's) through a pointer
 * that dlsym(RTLD_NEXT) resolved once at load. No checks, no counting: what
 * an interposer that does nothing costs (one more call through the PLT and
 * one indirect call). Strata's added nanoseconds minus these are its own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

#define NEXT(name) static __typeof__(&name) next_##name

NEXT(MPI_Send);
NEXT(MPI_Recv);
NEXT(MPI_Isend);
NEXT(MPI_Irecv);
NEXT(MPI_Wait);
NEXT(MPI_Allreduce);
NEXT(MPI_Alltoall);

#ifdef STRATA_MINIMAL_STARTS_GPU_DRIVER
/* The variant libstrata-bench-overhead-minimal-driver.so: the same
 * forwarding, plus the GPU driver started at load (cuInit and a device
 * count, through dlopen: no build dependency), as a preloaded Strata rank
 * starts it at MPI_Init even in a host job (to ask whether the library is
 * GPU-aware, and to classify pointers). Its driver threads are then in the
 * control too: `--minimal` with it tells whether they are what a host job
 * pays. Nothing where no driver is installed. */
static void start_gpu_driver(void) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cuda == NULL) return;
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
  int (*count)(int*) = (int (*)(int*))dlsym(cuda, "cuDeviceGetCount");
  int n = 0;
  if (init != NULL && init(0) == 0 && count != NULL) (void)count(&n);
}
#endif

__attribute__((constructor)) static void resolve(void) {
#ifdef STRATA_MINIMAL_STARTS_GPU_DRIVER
  start_gpu_driver();
#endif
  next_MPI_Send = (__typeof__(next_MPI_Send))dlsym(RTLD_NEXT, "MPI_Send");
  next_MPI_Recv = (__typeof__(next_MPI_Recv))dlsym(RTLD_NEXT, "MPI_Recv");
  next_MPI_Isend = (__typeof__(next_MPI_Isend))dlsym(RTLD_NEXT, "MPI_Isend");
  next_MPI_Irecv = (__typeof__(next_MPI_Irecv))dlsym(RTLD_NEXT, "MPI_Irecv");
  next_MPI_Wait = (__typeof__(next_MPI_Wait))dlsym(RTLD_NEXT, "MPI_Wait");
  next_MPI_Allreduce = (__typeof__(next_MPI_Allreduce))dlsym(RTLD_NEXT, "MPI_Allreduce");
  next_MPI_Alltoall = (__typeof__(next_MPI_Alltoall))dlsym(RTLD_NEXT, "MPI_Alltoall");
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return next_MPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return next_MPI_Recv(buf, count, type, source, tag, comm, status);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return next_MPI_Isend(buf, count, type, dest, tag, comm, request);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return next_MPI_Irecv(buf, count, type, source, tag, comm, request);
}
int MPI_Wait(MPI_Request* request, MPI_Status* status) { return next_MPI_Wait(request, status); }
int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return next_MPI_Allreduce(send, recv, count, type, op, comm);
}
int MPI_Alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                 MPI_Datatype recv_type, MPI_Comm comm) {
  return next_MPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm);
}
