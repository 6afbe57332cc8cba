// What the device benchmarks share (built with CUDA and NCCL only): one GPU
// per rank of a node, a stream, two timing events, an NCCL communicator over
// MPI_COMM_WORLD, and the timing of back-to-back calls between two events.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <string>

namespace strata_bench {

class NcclWorld {
 public:
  NcclWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    int local_rank = 0, devices = 1;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);
    cudaGetDeviceCount(&devices);
    cudaSetDevice(local_rank % (devices > 0 ? devices : 1));
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    ncclUniqueId id;
    if (rank == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ok = ncclCommInitRank(&comm, size, id, rank) == ncclSuccess;
  }
  ~NcclWorld() {
    if (ok) ncclCommDestroy(comm);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  NcclWorld(const NcclWorld&) = delete;
  NcclWorld& operator=(const NcclWorld&) = delete;

  // Seconds per call of `iters` calls queued back to back on the stream
  // between two events, the slowest rank's (every rank's events bracket the
  // same calls); negative when a call failed on any rank.
  template <class Call>
  double time_calls(int iters, Call call) const {
    cudaStreamSynchronize(stream);
    MPI_Barrier(MPI_COMM_WORLD);
    int good = cudaEventRecord(start, stream) == cudaSuccess;
    for (int i = 0; i < iters && good; ++i) good = call();
    good = good && cudaEventRecord(stop, stream) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess;
    float ms = 0;
    if (good) cudaEventElapsedTime(&ms, start, stop);
    double t = ms * 1e-3 / iters;
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return good ? t : -1.0;
  }

  // The same, the calls captured into one CUDA graph whose replay is timed
  // (nccl-tests' -G): the host's cost of launching each call out of the
  // loop. The first replay is not timed.
  template <class Call>
  double time_graph(int iters, Call call) const {
    cudaStreamSynchronize(stream);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int good = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    for (int i = 0; i < iters && good; ++i) good = call();
    if (cudaStreamEndCapture(stream, &graph) != cudaSuccess) good = 0;
    good = good && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess &&
           cudaGraphLaunch(exec, stream) == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess;
    MPI_Barrier(MPI_COMM_WORLD);
    good = good && cudaEventRecord(start, stream) == cudaSuccess && cudaGraphLaunch(exec, stream) == cudaSuccess &&
           cudaEventRecord(stop, stream) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess;
    float ms = 0;
    if (good) cudaEventElapsedTime(&ms, start, stop);
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    double t = ms * 1e-3 / iters;
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return good ? t : -1.0;
  }

  // "N x <GPU name>, NCCL <version>".
  std::string describe() const {
    int device = 0, version = 0;
    cudaGetDevice(&device);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device);
    ncclGetVersion(&version);
    return std::to_string(size) + " x " + prop.name + ", NCCL " + std::to_string(version);
  }

  int rank = 0;
  int size = 1;
  bool ok = false;
  ncclComm_t comm{};
  cudaStream_t stream{};
  cudaEvent_t start{}, stop{};
};

}  // namespace strata_bench
