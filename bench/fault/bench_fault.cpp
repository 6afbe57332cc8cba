// strata-bench-fault: what recording and detection cost, on against off in
// the same run (docs/fault.md, "Overhead").
//
//   mpirun -np 8 strata-bench-fault [--ops 2000] [--blocks 24] [--bytes 8]
//   mpirun -np N strata-bench-fault --device [--device-bytes 65536,1048576] [--control]
//
// The calls go through the interposer's own entry points (what an
// application under libstrata_preload.so runs), with the watchdog, the
// out-of-band channel and the coordinator running all along. Blocks of
// --ops calls alternate on/off in an ABBA pattern (on, off, off, on, ...)
// so that drift cancels; "off" clears the hooks' switch, so the calls pay
// exactly the one branch an application with STRATA_FAULT unset pays, and
// the agent has nothing to scan or ship. Each block's time is the slowest
// rank's. The overhead is the median over ABBA groups of
// (on1 + on2) / (off1 + off2) - 1. Also the cost of one recorded call
// without MPI (a scope opened and closed in a loop, on one rank) and its
// parts (a tick read, CLOCK_MONOTONIC, a bare ring record in each mode).
// --device adds Strata's allreduce of float device buffers (NCCL, one GPU
// per rank where there are enough, stream-ordered; a block ends with a
// stream synchronisation), recorded with device times (the collectives
// install the event timer; STRATA_FAULT_DEVICE_EVERY and _PERIOD_US pick the
// calls timed), and how many records in the ring carry a device time.
// --json FILE: the same numbers, after the run's metadata (one row per call).
#include "fault/clock.hpp"
#include "fault/hooks.hpp"
#include "fault/recorder/ring.hpp"
#include "fault/recorder/state.hpp"
#include "interposer/handlers/direct.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/run_metadata.hpp"
#include "tools/guarded_main.hpp"

#include "mpi/helpers.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <strata/collectives.hpp>
#include <strata/fault.hpp>

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <thread>
#include <string>
#include <vector>

namespace {

namespace sf = strata::fault;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)))];
}

struct Result {
  std::string name;
  double off_us = 0, on_us = 0;           // median time per call
  double overhead = 0, q25 = 0, q75 = 0;  // over ABBA groups
};

// Slowest rank's time for `ops` calls of `call`, then `drain` (the
// device's stream), in seconds.
double block(int ops, const std::function<void()>& call, const std::function<void()>& drain) {
  strata::mpi::real().MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = strata::mpi::wtime();
  for (int i = 0; i < ops; ++i) call();
  if (drain) drain();
  double t = strata::mpi::wtime() - t0, slowest = 0;
  strata::mpi::real().MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// `control`: every block off (the A/A control: what the ABBA median reads
// where recording changes nothing; the row's name says so).
Result measure(const std::string& name, int ops, int blocks, const std::function<void()>& call,
               const std::function<void()>& drain = {}, bool control = false) {
  sf::hooks::g_on.store(true);
  block(ops, call, drain);  // warm-up (contexts, model, connections)
  std::vector<double> on, off, ratios;
  for (int b = 0; b + 3 < blocks; b += 4) {
    double t[4];
    for (int k = 0; k < 4; ++k) {
      const bool recording = k == 0 || k == 3;
      sf::hooks::g_on.store(recording && !control);
      t[k] = block(ops, call, drain);
      (recording ? on : off).push_back(t[k] / ops);
    }
    ratios.push_back((t[0] + t[3]) / (t[1] + t[2]) - 1);
  }
  sf::hooks::g_on.store(true);
  Result r;
  r.name = control ? name + " (A/A control: off against off)" : name;
  r.on_us = 1e6 * median(on);
  r.off_us = 1e6 * median(off);
  r.overhead = median(ratios);
  r.q25 = quantile(ratios, 0.25);
  r.q75 = quantile(ratios, 0.75);
  return r;
}

// One recorded call without MPI: nanoseconds per scope, on one rank.
double scope_ns(bool collective, int64_t n) {
  sf::hooks::g_on.store(true);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    if (collective) {
      sf::CollScope rec(sf::OpKind::allreduce, MPI_COMM_WORLD, 1, MPI_DOUBLE);
    } else {
      sf::P2pScope rec(sf::OpKind::send, MPI_COMM_WORLD, 1, MPI_DOUBLE, 0, 0);
    }
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         static_cast<double>(n);
}

// The device collectives still in the ring and how many carry a device
// time (the watchdog resolves the marks at its ticks: wait two), with the
// median of those times.
struct DeviceTimed {
  int records = 0, timed = 0;
  double median_us = 0;
};
DeviceTimed device_timed() {
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  const sf::ProcessState& p = sf::process();
  DeviceTimed d;
  std::vector<double> us;
  if (!p.ring) return d;
  for (uint64_t i = p.ring->tail(); i < p.ring->head(); ++i) {
    sf::Record r;
    if (!p.ring->read(i, &r) || r.kind != sf::OpKind::allreduce) continue;
    ++d.records;
    if (const int64_t ns = p.device_times.find(i); ns >= 0) us.push_back(1e-3 * static_cast<double>(ns));
  }
  d.timed = static_cast<int>(us.size());
  if (!us.empty()) d.median_us = median(us);
  return d;
}

// What a record is made of, in nanoseconds per operation: the tick read
// the hooks stamp with, CLOCK_MONOTONIC, and one record begun and finished
// in a private ring of the default size (no hooks, no MPI).
struct Parts {
  double tick_ns, clock_ns, ring_single_ns, ring_shared_ns;
};
Parts parts(int64_t n) {
  auto per_op = [n](auto&& body) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i) body(i);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
           static_cast<double>(n);
  };
  volatile uint64_t sink = 0;
  Parts p{};
  p.tick_ns = per_op([&](int64_t) { sink = sink + sf::now_ticks(); });
  p.clock_ns = per_op([&](int64_t) { sink = sink + static_cast<uint64_t>(sf::now_ns()); });
  auto ring_ns = [&](bool shared) {
    sf::Ring ring(4096, shared);
    sf::RecordStart r;
    r.kind = sf::OpKind::allreduce;
    return per_op([&](int64_t i) {
      r.enq_ns = i + 1;
      ring.finish(ring.begin(r), i + 2);
    });
  };
  p.ring_single_ns = ring_ns(false);
  p.ring_shared_ns = ring_ns(true);
  return p;
}

// What a run found, for --json.
struct Findings {
  const std::vector<Result>& results;
  double coll_ns, p2p_ns;  // one recorded call without MPI
  Parts cost;
  bool device;
  DeviceTimed timed;
  bool diagnosed;
};

// --json: the table's rows and the one-rank costs, after the run's metadata.
nlohmann::json to_json(const Findings& f, int ranks, int ops, int blocks, int argc, char** argv) {
  nlohmann::json doc = strata::tools::run_metadata("strata-bench-fault", argc, argv);
  doc["ranks"] = ranks;
  doc["ops_per_block"] = ops;
  doc["blocks"] = blocks;
  nlohmann::json& rows = doc["rows"] = nlohmann::json::array();
  for (const Result& r : f.results) {
    rows.push_back({{"call", r.name},
                    {"off_us", r.off_us},
                    {"on_us", r.on_us},
                    {"overhead", r.overhead},
                    {"overhead_q25", r.q25},
                    {"overhead_q75", r.q75}});
  }
  doc["scope_ns"] = {{"collective", f.coll_ns}, {"point_to_point", f.p2p_ns}};
  doc["parts_ns"] = {{"tick", f.cost.tick_ns},
                     {"clock_monotonic", f.cost.clock_ns},
                     {"ring_single_writer", f.cost.ring_single_ns},
                     {"ring_shared", f.cost.ring_shared_ns}};
  doc["tick_source"] = sf::tick_source();
  if (f.device) {
    doc["device_times"] = {{"records", f.timed.records}, {"timed", f.timed.timed}, {"median_us", f.timed.median_us}};
  }
  doc["diagnosed"] = f.diagnosed;
  return doc;
}

struct Options {
  int ops = 2000, blocks = 24, bytes = 8;
  bool markdown = false, device = false, multiple = false, control = false;
  std::vector<size_t> device_bytes{size_t{64} << 10, size_t{1} << 20, size_t{16} << 20};
  std::string json_path;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--ops", o.ops, "Calls per block");
  app.add_option("--blocks", o.blocks, "Blocks per case (a multiple of 4: ABBA groups)");
  app.add_option("--bytes", o.bytes, "Payload per call (a multiple of 8)")->transform(strata::tools::byte_sizes());
  app.add_flag("--markdown", o.markdown, "Print a markdown table");
  app.add_flag("--thread-multiple", o.multiple, "Ask for MPI_THREAD_MULTIPLE (the ring's shared-writer mode)");
  app.add_flag("--device", o.device, "Also Strata's allreduce of device buffers (a GPU per rank, NCCL)");
  app.add_flag("--control", o.control,
               "After each device size, the same ABBA run with recording off in every block: the spread the "
               "overhead column has where recording costs nothing");
  app.add_option("--device-bytes", o.device_bytes, "Sizes of the device allreduce")
      ->delimiter(',')
      ->transform(strata::tools::byte_sizes());
  app.add_option("--json", o.json_path,
                 "Also write the results as JSON (with the run's tool, version, commit, command, host, time) to "
                 "this file");
}

struct World {
  int rank = 0, size = 0;
};

// This rank and the world's size, with fault detection started (the job
// aborts where it does not start).
World start_detection() {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  if (sf::start(true) != strata::Status::ok) {
    if (w.rank == 0) std::fprintf(stderr, "strata-bench-fault: fault detection did not start\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return w;
}

// The host calls through the interposer: allreduce, a sendrecv ring, bcast.
std::vector<Result> measure_host(const Options& o, const World& w) {
  const int count = std::max(1, o.bytes / 8);
  std::vector<double> in(static_cast<size_t>(count), 1.0), out(static_cast<size_t>(count));
  const int right = (w.rank + 1) % w.size, left = (w.rank + w.size - 1) % w.size;
  std::vector<Result> results;
  results.push_back(measure("MPI_Allreduce " + std::to_string(8 * count) + " B (host)", o.ops, o.blocks, [&] {
    strata::interposer::direct::allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }));
  results.push_back(measure("MPI_Sendrecv " + std::to_string(8 * count) + " B ring (host)", o.ops, o.blocks, [&] {
    strata::interposer::direct::sendrecv(in.data(), count, MPI_DOUBLE, right, 3, out.data(), count, MPI_DOUBLE, left, 3,
                                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }));
  results.push_back(measure("MPI_Bcast " + std::to_string(8 * count) + " B (host)", o.ops, o.blocks, [&] {
    strata::interposer::direct::bcast(out.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }));
  return results;
}

// This rank's GPU (shared where there are fewer GPUs than ranks), a stream
// and send and receive buffers of `largest` bytes, the send buffer filled.
struct DeviceBuffers {
  int gpus = 0;
  strata::gpu::Stream stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

DeviceBuffers open_device_buffers(size_t largest, int rank) {
  DeviceBuffers d;
  if (strata::gpu::device_count(&d.gpus) != strata::Status::ok || d.gpus == 0) {
    if (rank == 0) std::fprintf(stderr, "strata-bench-fault: --device needs a GPU\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  strata::gpu::set_device(rank % d.gpus);
  strata::gpu::stream_create(&d.stream);
  if (strata::gpu::malloc_device(&d.send, largest) != strata::Status::ok ||
      strata::gpu::malloc_device(&d.recv, largest) != strata::Status::ok) {
    std::fprintf(stderr, "strata-bench-fault: no device memory: %s\n", strata::gpu::last_error_string());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // not zeros: a timed reduction of zeros may take a shortcut somewhere
  std::vector<float> values(largest / sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7 + static_cast<size_t>(rank)) % 64);
  strata::gpu::memcpy_async(d.send, values.data(), values.size() * sizeof(float), d.stream);
  strata::gpu::stream_synchronize(d.stream);
  return d;
}

void close_device_buffers(const DeviceBuffers& d) {
  strata::gpu::free_device(d.send);
  strata::gpu::free_device(d.recv);
  strata::gpu::stream_destroy(d.stream);
}

// Strata's allreduce of float device buffers, one case per --device-bytes
// size, stream-ordered; then how many of them carry a device time.
DeviceTimed measure_device(const Options& o, const World& w, std::vector<Result>* results) {
  const size_t largest = *std::max_element(o.device_bytes.begin(), o.device_bytes.end());
  const DeviceBuffers d = open_device_buffers(largest, w.rank);
  strata::coll::Options options;
  options.stream = d.stream;
  for (size_t b : o.device_bytes) {
    const size_t elements = b / sizeof(float);
    const std::string name = "strata::coll::allreduce " + std::to_string(b >> 10) + " KiB float (device, " +
                             std::to_string(w.size) + (w.size > d.gpus ? " ranks sharing GPUs)" : " GPUs)");
    const int device_ops = std::max(10, o.ops / (1 + static_cast<int>(b >> 20)));
    auto call = [&] {
      if (strata::coll::allreduce(d.send, d.recv, elements, strata::coll::DataType::float32,
                                  strata::coll::ReduceOp::sum, MPI_COMM_WORLD, options) != strata::Status::ok) {
        std::fprintf(stderr, "strata-bench-fault: device allreduce failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    };
    auto drain = [&] { strata::gpu::stream_synchronize(d.stream); };
    results->push_back(measure(name, device_ops, o.blocks, call, drain));
    if (o.control) results->push_back(measure(name, device_ops, o.blocks, call, drain, true));
  }
  const DeviceTimed timed = device_timed();
  close_device_buffers(d);
  return timed;
}

// The table (markdown) and the one-rank costs, on rank 0.
void print_findings(const Findings& f, const Options& o, int ranks) {
  std::printf("%d ranks, %d calls per block, %d blocks per case (ABBA), the slowest rank's time per block\n\n", ranks,
              o.ops, o.blocks);
  std::printf("| call | off (us/call) | on (us/call) | overhead (median of ABBA groups) | 25%%-75%% |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  for (const Result& r : f.results) {
    std::printf("| %s | %.2f | %.2f | %+.2f%% | %+.2f%% .. %+.2f%% |\n", r.name.c_str(), r.off_us, r.on_us,
                100 * r.overhead, 100 * r.q25, 100 * r.q75);
  }
  std::printf("\none recorded call without MPI (rank 0): collective scope %.0f ns, point-to-point scope %.0f ns\n",
              f.coll_ns, f.p2p_ns);
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  std::printf(
      "its parts: a tick read %.1f ns (%s), CLOCK_MONOTONIC %.1f ns, a ring record begun and finished "
      "%.1f ns single-writer (below MPI_THREAD_MULTIPLE: this run %s), %.1f ns shared (MPI_THREAD_MULTIPLE)\n",
      f.cost.tick_ns, sf::tick_source(), f.cost.clock_ns, f.cost.ring_single_ns,
      level == MPI_THREAD_MULTIPLE ? "no" : "yes", f.cost.ring_shared_ns);
  if (f.device) {
    std::printf("device times: %d of the %d device allreduce records in the ring carry one (median %.2f us)\n",
                f.timed.timed, f.timed.records, f.timed.median_us);
  }
  std::printf("diagnoses during the benchmark: %s\n", f.diagnosed ? "some (see the log)" : "none");
}

}  // namespace

static int run(int argc, char** argv) {
  CLI::App app{"strata-bench-fault: the cost of fault recording and detection, on against off in one run"};
  strata::tools::standard_options(app, "strata-bench-fault");
  Options o;
  add_options(app, o);
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, o.multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  const World w = start_detection();
  std::vector<Result> results = measure_host(o, w);
  DeviceTimed timed;
  if (o.device) timed = measure_device(o, w, &results);
  const double coll_ns = scope_ns(true, 2000000), p2p_ns = scope_ns(false, 2000000);
  const Parts cost = parts(2000000);
  const bool diagnosed = !sf::diagnoses().empty();
  sf::stop();
  const Findings found{results, coll_ns, p2p_ns, cost, o.device, timed, diagnosed};
  if (w.rank == 0) print_findings(found, o, w.size);
  int rc = 0;
  if (w.rank == 0 && !o.json_path.empty()) {
    if (!strata::tools::write_json_file(o.json_path, to_json(found, w.size, o.ops, o.blocks, argc, argv))) rc = 1;
  }
  MPI_Finalize();
  return rc;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-bench-fault", argc, argv, run); }
