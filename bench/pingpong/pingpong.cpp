// strata-bench-pingpong: ping-pong of a derived datatype in GPU memory
// between ranks 0 and 1. A plain MPI + CUDA program, run two ways:
//   --staging app   what a user of an MPI that is not GPU-aware writes:
//                   copy the buffer to pinned host memory, MPI on the host
//                   copy, copy back (the copies are part of the time)
//   --staging none  device pointers straight to MPI: only a GPU-aware MPI,
//                   or the Strata interposer (LD_PRELOAD), takes them
// One JSON line per point on rank 0: one-way time (median of samples);
// --osu prints OSU micro-benchmark columns instead (per block size: # Size,
// Latency (us), Bandwidth (MB/s)); --json FILE also writes the points as one
// document, after the run's metadata (tools/cli/run_metadata.hpp).
// bench/pingpong/pingpong-compare.sh runs both ways and the interposer's
// methods and prints the table (--osu: plain and Strata side by side).
#include "tools/cli/command_line.hpp"
#include "tools/cli/osu_table.hpp"
#include "tools/cli/run_metadata.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "strata-bench-pingpong: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The floor of any transport between GPUs 0 and 1: one process copies
// `bytes` from GPU 1 to GPU 0 (cudaMemcpyPeerAsync, peer access on; median
// of event-timed copies after warm-up), in µs; -1 without two GPUs that
// reach each other.
double peer_copy_us(long bytes, int devices) {
  int access = 0;
  if (devices < 2 || cudaDeviceCanAccessPeer(&access, 0, 1) != cudaSuccess || !access) return -1;
  int current = 0;
  cudaGetDevice(&current);
  void* src = nullptr;
  void* dst = nullptr;
  cudaSetDevice(1);
  const bool have_src = cudaMalloc(&src, static_cast<size_t>(bytes)) == cudaSuccess;
  cudaSetDevice(0);
  (void)cudaDeviceEnablePeerAccess(1, 0);  // already enabled is fine
  (void)cudaGetLastError();
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  double us = -1;
  if (have_src && cudaMalloc(&dst, static_cast<size_t>(bytes)) == cudaSuccess &&
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
      cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess) {
    std::vector<double> samples;
    for (int i = 0; i < 23; ++i) {
      cudaEventRecord(start, stream);
      cudaMemcpyPeerAsync(dst, 0, src, 1, static_cast<size_t>(bytes), stream);
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      if (i >= 3) samples.push_back(ms * 1e3);
    }
    us = median(samples);
  }
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (stream) cudaStreamDestroy(stream);
  cudaFree(dst);
  cudaSetDevice(1);
  cudaFree(src);
  cudaSetDevice(current);
  return us;
}

}  // namespace

static int run_tool(int argc, char** argv) {
  CLI::App app{"Ping-pong of a derived datatype in GPU memory between ranks 0 and 1"};
  strata::tools::standard_options(app, "strata-bench-pingpong");
  std::string staging = "none";
  std::vector<long> blocks{8, 64, 512};
  std::vector<long> sizes{1024, 65536, 1 << 20, 16 << 20};
  long stride_factor = 2;
  int samples = 7;
  app.add_option("--staging", staging, "none: device pointers to MPI; app: staged by hand")
      ->check(CLI::IsMember({"none", "app"}));
  app.add_option("--blocks", blocks, "Block lengths in bytes")->transform(strata::tools::byte_sizes());
  app.add_option("--sizes", sizes, "Packed bytes per message")->transform(strata::tools::byte_sizes());
  app.add_option("--stride-factor", stride_factor, "Stride = factor * block (at least 64 B)");
  app.add_option("--samples", samples, "Timed samples per point");
  bool contiguous = false;
  app.add_flag("--contiguous", contiguous,
               "Contiguous messages (MPI_BYTE, count = the size) instead of the hvector; --blocks is ignored");
  bool osu = false;
  app.add_flag("--osu", osu,
               "Print OSU micro-benchmark columns instead of JSON lines: per block size, # Size (bytes), Latency "
               "(us, one-way), Bandwidth (MB/s)");
  std::string json_path;
  app.add_option("--json", json_path,
                 "Also write the points as JSON (with the run's tool, version, commit, command, host, time) to this "
                 "file");
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int devices = 0;
  if (size < 2 || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) std::fprintf(stderr, "strata-bench-pingpong: needs 2 ranks and a GPU\n");
    MPI_Finalize();
    return 77;
  }
  cudaSetDevice(rank % devices);
  const bool app_staging = staging == "app";
  const char* method = std::getenv("STRATA_METHOD");
  int failures = 0;
  nlohmann::json rows = nlohmann::json::array();
  if (contiguous) blocks = {0};  // 0: the block is the whole message
  for (long bytes : sizes) {
    for (long block_option : blocks) {
      const long block = contiguous ? bytes : block_option;
      const long n = bytes / block;
      const long stride = contiguous ? bytes : std::max(64L, stride_factor * block);
      const size_t span = static_cast<size_t>((n - 1) * stride + block);
      // One element of the hvector, or `bytes` elements of MPI_BYTE.
      MPI_Datatype type = MPI_BYTE;
      const int count = contiguous ? static_cast<int>(bytes) : 1;
      if (!contiguous) {
        MPI_Type_create_hvector(static_cast<int>(n), static_cast<int>(block), stride, MPI_BYTE, &type);
        MPI_Type_commit(&type);
      }
      char* dev = nullptr;
      char* host = nullptr;
      std::vector<char> pattern(span);
      for (size_t i = 0; i < span; ++i) pattern[i] = static_cast<char>((i * 131 + static_cast<size_t>(rank) * 7) | 1);
      if (!ok(cudaMalloc(&dev, span), "cudaMalloc") || !ok(cudaMallocHost(&host, span), "cudaMallocHost") ||
          !ok(cudaMemcpy(dev, pattern.data(), span, cudaMemcpyHostToDevice), "cudaMemcpy")) {
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
      const int peer = 1 - rank;
      auto send = [&] {
        if (app_staging) {
          cudaMemcpy(host, dev, span, cudaMemcpyDeviceToHost);
          MPI_Send(host, count, type, peer, 0, MPI_COMM_WORLD);
        } else {
          MPI_Send(dev, count, type, peer, 0, MPI_COMM_WORLD);
        }
      };
      auto recv = [&] {
        if (app_staging) {
          cudaMemcpy(host, dev, span, cudaMemcpyDeviceToHost);  // the bytes the type skips stay as they are
          MPI_Recv(host, count, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          cudaMemcpy(dev, host, span, cudaMemcpyHostToDevice);
        } else {
          MPI_Recv(dev, count, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      };
      auto round_trips = [&](int count) {
        for (int i = 0; i < count; ++i) {
          if (rank == 0) {
            send();
            recv();
          } else if (rank == 1) {
            recv();
            send();
          }
        }
      };
      // One message from rank 1 first: rank 0 checks that its buffer then
      // holds rank 1's pattern at every byte the type addresses.
      long wrong = 0;
      if (rank == 1) send();
      if (rank == 0) {
        recv();
        std::vector<char> got(span);
        cudaMemcpy(got.data(), dev, span, cudaMemcpyDeviceToHost);
        for (long k = 0; k < n; ++k) {
          for (long j = 0; j < block; ++j) {
            const size_t i = static_cast<size_t>(k * stride + j);
            wrong += got[i] != static_cast<char>((i * 131 + 7) | 1);
          }
        }
      }
      round_trips(3);
      double t0 = MPI_Wtime();
      round_trips(1);
      double one = MPI_Wtime() - t0;
      MPI_Bcast(&one, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      const int batch = static_cast<int>(std::clamp(2e-3 / std::max(one, 1e-7), 1.0, 2000.0));
      std::vector<double> us;
      for (int s = 0; s < samples; ++s) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        round_trips(batch);
        us.push_back((MPI_Wtime() - t0) * 1e6 / (2.0 * batch));
      }
      // The floor, measured in the plain run only (rank 0 holds both GPUs' contexts then).
      const double peer_us = rank == 0 && app_staging ? peer_copy_us(n * block, devices) : -1;
      if (rank == 0 && osu) {
        failures += wrong != 0;
        if (wrong != 0)
          std::fprintf(stderr, "strata-bench-pingpong: %ld B blocks, %ld bytes: %ld wrong bytes\n", block, n * block,
                       wrong);
      } else if (rank == 0) {
        failures += wrong != 0;
        std::printf(
            "{\"block\":%ld,\"bytes\":%ld,\"stride\":%ld,\"us\":%.3f,\"staging\":\"%s\",\"method\":\"%s\","
            "\"verified\":%s,\"peer_copy_us\":%.3f}\n",
            block_option, n * block, stride, median(us), staging.c_str(), method ? method : "auto",
            wrong == 0 ? "true" : "false", peer_us);
        std::fflush(stdout);
      }
      if (rank == 0) {
        rows.push_back({{"block", block_option},
                        {"bytes", n * block},
                        {"stride", stride},
                        {"us", median(us)},
                        {"staging", staging},
                        {"method", method ? method : "auto"},
                        {"verified", wrong == 0},
                        {"peer_copy_us", peer_us}});
      }
      cudaFree(dev);
      cudaFreeHost(host);
      if (type != MPI_BYTE) MPI_Type_free(&type);
    }
  }
  if (rank == 0 && osu) {
    std::printf("# strata-bench-pingpong --osu: one-way time of a derived datatype in GPU memory, ranks 0 and 1\n");
    std::printf("# staging %s, STRATA_METHOD %s; Size: bytes the type selects; Latency: median of %d samples\n",
                staging.c_str(), method ? method : "auto", samples);
    for (long block : blocks) {
      strata::tools::OsuTable table({"Latency (us)", "Bandwidth (MB/s)"});
      table.comment(contiguous ? std::string("contiguous (MPI_BYTE)")
                               : "hvector of " + std::to_string(block) + " B blocks at stride " +
                                     std::to_string(std::max(64L, stride_factor * block)) + " B");
      for (const auto& row : rows) {
        if (row["block"].get<long>() != block) continue;
        const double us = row["us"].get<double>();
        table.add_row(row["bytes"].get<long>(), {us, strata::tools::osu_mbps(row["bytes"].get<long>(), us)});
      }
      std::printf("\n%s", table.str().c_str());
    }
  }
  if (rank == 0 && !json_path.empty()) {
    nlohmann::json doc = strata::tools::run_metadata("strata-bench-pingpong", argc, argv);
    doc["ranks"] = size;
    doc["rows"] = rows;
    if (!strata::tools::write_json_file(json_path, doc)) failures += 1;
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failures ? 1 : 0;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-bench-pingpong", argc, argv, run_tool); }
