// strata-bench-pingpong: ping-pong of a derived datatype in GPU memory
// between ranks 0 and 1. A plain MPI + CUDA program, run two ways:
//   --staging app   what a user of an MPI that is not GPU-aware writes:
//                   copy the buffer to pinned host memory, MPI on the host
//                   copy, copy back (the copies are part of the time)
//   --staging none  device pointers straight to MPI: only a GPU-aware MPI,
//                   or the Strata interposer (LD_PRELOAD), takes them
// One JSON line per point on rank 0: one-way time (median of samples);
// --window W instead streams W messages (MPI_Isend, W MPI_Irecv into one
// buffer, MPI_Waitall, a 4-byte reply; osu_bw's pattern): "us" is then the
// time per message and "gbps" the streaming rate;
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

struct Options {
  std::string staging = "none";
  std::vector<long> blocks{8, 64, 512};
  std::vector<long> sizes{1024, 65536, 1 << 20, 16 << 20};
  long stride_factor = 2;
  int samples = 7;
  bool contiguous = false;
  bool osu = false;
  int window = 0;  // > 0: streaming bandwidth, this many messages in flight
  std::string json_path;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--staging", o.staging, "none: device pointers to MPI; app: staged by hand")
      ->check(CLI::IsMember({"none", "app"}));
  app.add_option("--blocks", o.blocks, "Block lengths in bytes")->transform(strata::tools::byte_sizes());
  app.add_option("--sizes", o.sizes, "Packed bytes per message")->transform(strata::tools::byte_sizes());
  app.add_option("--stride-factor", o.stride_factor, "Stride = factor * block (at least 64 B)");
  app.add_option("--samples", o.samples, "Timed samples per point");
  app.add_flag("--contiguous", o.contiguous,
               "Contiguous messages (MPI_BYTE, count = the size) instead of the hvector; --blocks is ignored");
  app.add_flag("--osu", o.osu,
               "Print OSU micro-benchmark columns instead of JSON lines: per block size, # Size (bytes), Latency "
               "(us, one-way), Bandwidth (MB/s)");
  app.add_option("--window", o.window,
                 "Streaming bandwidth instead of the ping-pong: rank 0 sends this many messages at once "
                 "(MPI_Isend, then MPI_Waitall), rank 1 receives them (MPI_Irecv, MPI_Waitall) and replies with "
                 "4 bytes, as osu_bw does; the time reported is per message")
      ->check(CLI::Range(1, 1024));
  app.add_option("--json", o.json_path,
                 "Also write the points as JSON (with the run's tool, version, commit, command, host, time) to this "
                 "file");
}

// This rank's place in the run.
struct World {
  int rank = 0, size = 0;
  int devices = 0;
  bool app_staging = false;
  const char* method = "auto";  // STRATA_METHOD, as the points report it
};

// This rank, the world's size and this rank's GPU; false without 2 ranks and a GPU.
bool open_world(const Options& o, World* w) {
  MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w->size);
  if (w->size < 2 || cudaGetDeviceCount(&w->devices) != cudaSuccess || w->devices == 0) return false;
  cudaSetDevice(w->rank % w->devices);
  w->app_staging = o.staging == "app";
  const char* method = std::getenv("STRATA_METHOD");
  if (method) w->method = method;
  return true;
}

// One point's message: `n` blocks of `block` bytes at `stride`, as one element
// of an hvector, or `bytes` elements of MPI_BYTE.
struct Layout {
  long block = 0;  // the whole message with --contiguous
  long n = 0;
  long stride = 0;
  size_t span = 0;
  int count = 1;
  MPI_Datatype type = MPI_BYTE;
};

Layout make_layout(const Options& o, long bytes, long block_option) {
  Layout l;
  l.block = o.contiguous ? bytes : block_option;
  l.n = bytes / l.block;
  l.stride = o.contiguous ? bytes : std::max(64L, o.stride_factor * l.block);
  l.span = static_cast<size_t>((l.n - 1) * l.stride + l.block);
  l.count = o.contiguous ? static_cast<int>(bytes) : 1;
  if (!o.contiguous) {
    MPI_Type_create_hvector(static_cast<int>(l.n), static_cast<int>(l.block), l.stride, MPI_BYTE, &l.type);
    MPI_Type_commit(&l.type);
  }
  return l;
}

// Moves one point's message between ranks 0 and 1: the GPU buffer straight to
// MPI, or (--staging app) copied through pinned host memory.
struct Exchange {
  int rank = 0;
  bool app_staging = false;
  Layout layout;
  char* dev = nullptr;
  char* host = nullptr;

  int peer() const { return 1 - rank; }

  void send() const {
    if (app_staging) {
      cudaMemcpy(host, dev, layout.span, cudaMemcpyDeviceToHost);
      MPI_Send(host, layout.count, layout.type, peer(), 0, MPI_COMM_WORLD);
    } else {
      MPI_Send(dev, layout.count, layout.type, peer(), 0, MPI_COMM_WORLD);
    }
  }

  void recv() const {
    if (app_staging) {
      cudaMemcpy(host, dev, layout.span, cudaMemcpyDeviceToHost);  // the bytes the type skips stay as they are
      MPI_Recv(host, layout.count, layout.type, peer(), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      cudaMemcpy(dev, host, layout.span, cudaMemcpyHostToDevice);
    } else {
      MPI_Recv(dev, layout.count, layout.type, peer(), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  // --window: rank 0 sends `window` messages at once, rank 1 takes them
  // all, then replies with 4 bytes (osu_bw). Staged by hand, each message
  // is copied to (or from) the pinned buffer on its own, as a program that
  // sends W different device buffers would.
  void stream(int window) const {
    std::vector<MPI_Request> req(static_cast<size_t>(window));
    int ack = 0;
    if (rank == 0) {
      for (int k = 0; k < window; ++k) {
        if (app_staging) cudaMemcpy(host, dev, layout.span, cudaMemcpyDeviceToHost);
        MPI_Isend(app_staging ? host : dev, layout.count, layout.type, peer(), 1, MPI_COMM_WORLD,
                  &req[static_cast<size_t>(k)]);
      }
      MPI_Waitall(window, req.data(), MPI_STATUSES_IGNORE);
      MPI_Recv(&ack, 1, MPI_INT, peer(), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      for (int k = 0; k < window; ++k) {
        MPI_Irecv(app_staging ? host : dev, layout.count, layout.type, peer(), 1, MPI_COMM_WORLD,
                  &req[static_cast<size_t>(k)]);
      }
      MPI_Waitall(window, req.data(), MPI_STATUSES_IGNORE);
      if (app_staging) {
        for (int k = 0; k < window; ++k) cudaMemcpy(dev, host, layout.span, cudaMemcpyHostToDevice);
      }
      MPI_Send(&ack, 1, MPI_INT, peer(), 2, MPI_COMM_WORLD);
    }
  }

  void round_trip() const {
    if (rank == 0) {
      send();
      recv();
    } else if (rank == 1) {
      recv();
      send();
    }
  }
};

// The GPU buffer, filled with this rank's pattern, and its pinned host copy;
// the run aborts where CUDA fails.
void allocate_buffers(Exchange* ex) {
  const size_t span = ex->layout.span;
  std::vector<char> pattern(span);
  for (size_t i = 0; i < span; ++i) pattern[i] = static_cast<char>((i * 131 + static_cast<size_t>(ex->rank) * 7) | 1);
  if (!ok(cudaMalloc(&ex->dev, span), "cudaMalloc") || !ok(cudaMallocHost(&ex->host, span), "cudaMallocHost") ||
      !ok(cudaMemcpy(ex->dev, pattern.data(), span, cudaMemcpyHostToDevice), "cudaMemcpy")) {
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

void free_buffers(Exchange* ex) {
  cudaFree(ex->dev);
  cudaFreeHost(ex->host);
  if (ex->layout.type != MPI_BYTE) MPI_Type_free(&ex->layout.type);
}

// One message from rank 1 first: rank 0 checks that its buffer then holds
// rank 1's pattern at every byte the type addresses. The bytes that differ
// (0 on the other ranks).
long count_wrong_bytes(const Exchange& ex) {
  const Layout& l = ex.layout;
  long wrong = 0;
  if (ex.rank == 1) ex.send();
  if (ex.rank == 0) {
    ex.recv();
    std::vector<char> got(l.span);
    cudaMemcpy(got.data(), ex.dev, l.span, cudaMemcpyDeviceToHost);
    for (long k = 0; k < l.n; ++k) {
      for (long j = 0; j < l.block; ++j) {
        const size_t i = static_cast<size_t>(k * l.stride + j);
        wrong += got[i] != static_cast<char>((i * 131 + 7) | 1);
      }
    }
  }
  return wrong;
}

// µs per unit, one per sample: `step()` moves `units` units (one-way
// messages); each sample times a batch of steps sized (from one step after
// `warmups`) to take about 2 ms, at most `most` steps.
template <class Step>
std::vector<double> time_per_unit_us(Step step, double units, int warmups, double most, int samples) {
  for (int i = 0; i < warmups; ++i) step();
  double t0 = MPI_Wtime();
  step();
  double one = MPI_Wtime() - t0;
  MPI_Bcast(&one, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const int batch = static_cast<int>(std::clamp(2e-3 / std::max(one, 1e-7), 1.0, most));
  std::vector<double> us;
  for (int s = 0; s < samples; ++s) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int b = 0; b < batch; ++b) step();
    us.push_back((MPI_Wtime() - t0) * 1e6 / (static_cast<double>(batch) * units));
  }
  return us;
}

// One-way times: a round trip is two messages.
std::vector<double> time_one_way_us(const Exchange& ex, int samples) {
  return time_per_unit_us([&] { ex.round_trip(); }, 2.0, 3, 2000.0, samples);
}

// --window: time per message, a window of them a step.
std::vector<double> time_streamed_us(const Exchange& ex, int window, int samples) {
  return time_per_unit_us([&] { ex.stream(window); }, window, 2, 200.0, samples);
}

struct Point {
  long block_option = 0;  // as given by --blocks (0 with --contiguous)
  Layout layout;
  std::vector<double> us;
  long wrong = 0;
  double peer_us = -1;
};

// What rank 0 reports: the points as JSON rows, and the count of failures.
struct Results {
  int failures = 0;
  nlohmann::json rows = nlohmann::json::array();
};

// On rank 0: a JSON line (or, with --osu, only the wrong bytes on stderr) and the point's row.
void report_point(const Options& o, const World& w, const Point& p, Results* results) {
  if (w.rank != 0) return;
  const long bytes = p.layout.n * p.layout.block;
  const double us = median(p.us), gbps = static_cast<double>(bytes) / us * 1e-3;
  results->failures += p.wrong != 0;
  if (o.osu) {
    if (p.wrong != 0)
      std::fprintf(stderr, "strata-bench-pingpong: %ld B blocks, %ld bytes: %ld wrong bytes\n", p.layout.block, bytes,
                   p.wrong);
  } else {
    std::printf(
        "{\"block\":%ld,\"bytes\":%ld,\"stride\":%ld,\"us\":%.3f,\"staging\":\"%s\",\"method\":\"%s\","
        "\"verified\":%s,\"peer_copy_us\":%.3f,\"window\":%d,\"gbps\":%.2f}\n",
        p.block_option, bytes, p.layout.stride, us, o.staging.c_str(), w.method, p.wrong == 0 ? "true" : "false",
        p.peer_us, o.window, gbps);
    std::fflush(stdout);
  }
  results->rows.push_back({{"block", p.block_option},
                           {"bytes", bytes},
                           {"stride", p.layout.stride},
                           {"us", us},
                           {"staging", o.staging},
                           {"method", w.method},
                           {"verified", p.wrong == 0},
                           {"peer_copy_us", p.peer_us},
                           {"window", o.window},
                           {"gbps", gbps}});
}

// Checks, times and reports one point: `bytes` per message in blocks of `block_option`.
void run_point(const Options& o, const World& w, long bytes, long block_option, Results* results) {
  Exchange ex;
  ex.rank = w.rank;
  ex.app_staging = w.app_staging;
  ex.layout = make_layout(o, bytes, block_option);
  allocate_buffers(&ex);
  Point p;
  p.block_option = block_option;
  p.layout = ex.layout;
  p.wrong = count_wrong_bytes(ex);
  p.us = o.window > 0 ? time_streamed_us(ex, o.window, o.samples) : time_one_way_us(ex, o.samples);
  // The floor, measured in the plain run only (rank 0 holds both GPUs' contexts then).
  if (w.rank == 0 && w.app_staging) p.peer_us = peer_copy_us(ex.layout.n * ex.layout.block, w.devices);
  report_point(o, w, p, results);
  free_buffers(&ex);
}

// --osu: one table per block size, from the rows.
void print_osu_tables(const Options& o, const World& w, const nlohmann::json& rows) {
  std::printf("# strata-bench-pingpong --osu: one-way time of a derived datatype in GPU memory, ranks 0 and 1\n");
  std::printf("# staging %s, STRATA_METHOD %s; Size: bytes the type selects; Latency: median of %d samples%s\n",
              o.staging.c_str(), w.method, o.samples,
              o.window > 0 ? " (streamed: time per message, --window messages in flight)" : "");
  for (long block : o.blocks) {
    strata::tools::OsuTable table({"Latency (us)", "Bandwidth (MB/s)"});
    table.comment(o.contiguous ? std::string("contiguous (MPI_BYTE)")
                               : "hvector of " + std::to_string(block) + " B blocks at stride " +
                                     std::to_string(std::max(64L, o.stride_factor * block)) + " B");
    for (const auto& row : rows) {
      if (row["block"].get<long>() != block) continue;
      const double us = row["us"].get<double>();
      table.add_row(row["bytes"].get<long>(), {us, strata::tools::osu_mbps(row["bytes"].get<long>(), us)});
    }
    std::printf("\n%s", table.str().c_str());
  }
}

}  // namespace

static int run_tool(int argc, char** argv) {
  CLI::App app{"Ping-pong of a derived datatype in GPU memory between ranks 0 and 1"};
  strata::tools::standard_options(app, "strata-bench-pingpong");
  Options o;
  add_options(app, o);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  MPI_Init(&argc, &argv);
  World w;
  if (!open_world(o, &w)) {
    if (w.rank == 0) std::fprintf(stderr, "strata-bench-pingpong: needs 2 ranks and a GPU\n");
    MPI_Finalize();
    return 77;
  }
  Results results;
  if (o.contiguous) o.blocks = {0};  // 0: the block is the whole message
  for (long bytes : o.sizes) {
    for (long block_option : o.blocks) run_point(o, w, bytes, block_option, &results);
  }
  if (w.rank == 0 && o.osu) print_osu_tables(o, w, results.rows);
  if (w.rank == 0 && !o.json_path.empty()) {
    nlohmann::json doc = strata::tools::run_metadata("strata-bench-pingpong", argc, argv);
    doc["ranks"] = w.size;
    doc["rows"] = results.rows;
    if (!strata::tools::write_json_file(o.json_path, doc)) results.failures += 1;
  }
  MPI_Bcast(&results.failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return results.failures ? 1 : 0;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-bench-pingpong", argc, argv, run_tool); }
