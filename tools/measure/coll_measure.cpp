#include "tools/measure/coll_measure.hpp"

#include "collectives/context.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <strata/collectives.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace strata::measure {

using coll::Collective;
using mpi::real;

namespace {

constexpr Collective kCollectives[] = {Collective::allreduce, Collective::reduce_scatter, Collective::allgather,
                                       Collective::broadcast, Collective::reduce};

struct Buffers {
  void* send = nullptr;
  void* recv = nullptr;
  explicit Buffers(size_t bytes) {
    if (gpu::malloc_device(&send, bytes) != Status::ok) send = nullptr;
    if (gpu::malloc_device(&recv, bytes) != Status::ok) recv = nullptr;
    if (send != nullptr) gpu::memset_async(send, 0x3c, bytes, nullptr);  // small floats, never zeros or NaNs
    if (recv != nullptr) gpu::memset_async(recv, 0x3c, bytes, nullptr);
    gpu::stream_synchronize(nullptr);
  }
  ~Buffers() {
    if (send != nullptr) gpu::free_device(send);
    if (recv != nullptr) gpu::free_device(recv);
  }
  explicit operator bool() const { return send != nullptr && recv != nullptr; }
};

// One call of `c` moving `bytes` (predict_us's convention) in float32.
Status call(Collective c, double bytes, int ranks, const Buffers& b, MPI_Comm comm, const coll::Options& o) {
  const auto per = [&](int n) { return static_cast<size_t>(bytes / (4.0 * n)); };
  const coll::DataType f32 = coll::DataType::float32;
  switch (c) {
    case Collective::allreduce: return coll::allreduce(b.send, b.recv, per(1), f32, coll::ReduceOp::sum, comm, o);
    case Collective::reduce_scatter:
      return coll::reduce_scatter(b.send, b.recv, per(ranks), f32, coll::ReduceOp::sum, comm, o);
    case Collective::allgather: return coll::allgather(b.send, b.recv, per(ranks), f32, comm, o);
    case Collective::broadcast: return coll::broadcast(b.recv, per(1), f32, 0, comm, o);
    case Collective::reduce: return coll::reduce(b.send, b.recv, per(1), f32, coll::ReduceOp::sum, 0, comm, o);
  }
  return Status::invalid_argument;
}

// The median over samples of one call's device time (events around a
// batch), the slowest rank's; negative when a call failed on some rank.
double time_us(Collective c, double bytes, int ranks, const Buffers& b, MPI_Comm comm, const CollGrid& grid) {
  gpu::Stream stream = nullptr;
  gpu::Event start = nullptr, stop = nullptr;
  int ok = gpu::stream_create(&stream) == Status::ok && gpu::event_create(&start, true) == Status::ok &&
           gpu::event_create(&stop, true) == Status::ok;
  coll::Options o;
  o.algorithm = coll::Algorithm::library;
  o.stream = stream;
  auto calls = [&](int n) {
    for (int i = 0; i < n && ok; ++i) ok = call(c, bytes, ranks, b, comm, o) == Status::ok;
  };
  auto batch_us = [&](int n, bool captured) {
    gpu::GraphExec graph = nullptr;
    if (captured) {  // captured, replayed once untimed, then timed
      ok = ok && gpu::capture_begin(stream) == Status::ok;
      calls(n);
      ok = gpu::capture_end(stream, &graph) == Status::ok && ok && gpu::graph_launch(graph, stream) == Status::ok &&
           gpu::stream_synchronize(stream) == Status::ok;
      // The ranks start the timed replay together: capturing and
      // instantiating take each rank its own time, after the caller's
      // barrier (the slowest rank's time would carry the difference).
      real().MPI_Barrier(comm);
    }
    gpu::event_record(start, stream);
    if (graph != nullptr) {
      ok = ok && gpu::graph_launch(graph, stream) == Status::ok;
    } else {
      calls(n);
    }
    gpu::event_record(stop, stream);
    float ms = 0;
    if (gpu::event_synchronize(stop) != Status::ok || gpu::event_elapsed_ms(start, stop, &ms) != Status::ok) ok = 0;
    if (graph != nullptr) gpu::graph_destroy(graph);
    return 1000.0 * ms;
  };
  if (ok) batch_us(3, false);  // warm-up, never captured (the first call makes NCCL's communicator)
  double one = ok ? std::max(batch_us(1, grid.graph), 0.5) : 1;
  real().MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, comm);
  const int n = static_cast<int>(std::clamp(grid.min_sample_us / one, 1.0, 1000.0));
  std::vector<double> v;
  for (int s = 0; s < grid.samples && ok; ++s) {
    real().MPI_Barrier(comm);
    v.push_back(batch_us(n, grid.graph) / n);
  }
  std::sort(v.begin(), v.end());
  double us = ok && !v.empty() ? v[v.size() / 2] : -1;
  double worst[2] = {us, us < 0 ? 1.0 : 0.0};
  real().MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, comm);
  if (stop != nullptr) gpu::event_destroy(stop);
  if (start != nullptr) gpu::event_destroy(start);
  if (stream != nullptr) gpu::stream_destroy(stream);
  return worst[1] > 0 ? -1 : worst[0];
}

}  // namespace

CollFigures measure_collectives(MPI_Comm comm, const CollGrid& grid) {
  CollFigures out;
  int rank = 0, ranks = 0;
  real().MPI_Comm_rank(comm, &rank);
  real().MPI_Comm_size(comm, &ranks);
  Result<coll::Context*> context = coll::Context::of(comm);
  if (!context) {
    out.why = "no collectives context";
    return out;
  }
  const coll::model::Machine& machine = context.value()->machine(true);
  int active = 0;
  for (const coll::model::LevelShape& l : machine.levels) {
    if (l.fanout > 1) {
      ++active;
      out.level = l.name;
    }
  }
  if (active != 1) {
    out.level.clear();
    out.why = active == 0 ? "one rank" : "more than one level (fit a node's level from a run on one node)";
    return out;
  }
  Buffers b(static_cast<size_t>(grid.max_bytes));
  int have = b ? 1 : 0;
  real().MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, comm);
  if (!have) {
    out.why = "cannot allocate the device buffers";
    return out;
  }
  for (Collective c : kCollectives) {
    for (double bytes = grid.min_bytes; bytes <= grid.max_bytes * 1.0001; bytes *= grid.factor) {
      if (bytes < 4.0 * ranks) continue;  // at least one float per rank
      const double us = time_us(c, bytes, ranks, b, comm, grid);
      if (us < 0) {
        out.why = std::string("the library's ") + coll::to_string(c) +
                  (grid.graph ? " could not be captured into a graph and replayed (--graph; the stand-in has no graphs)"
                              : " failed on device buffers (no NCCL/RCCL?)");
        out.samples.clear();
        return out;
      }
      out.samples.push_back({c, bytes, us});
      if (rank == 0) std::fprintf(stderr, "  %-15s %12.0f B: %10.2f us\n", coll::to_string(c), bytes, us);
    }
  }
  Result<coll::model::Calibration> fit = coll::model::calibrate_level(machine, out.samples);
  if (!fit) {
    out.why = "the fit failed";
    return out;
  }
  out.calibration = fit.value();
  return out;
}

void print_calibration(const CollFigures& f) {
  if (!f.why.empty()) {
    std::fprintf(stderr, "  no fit: %s\n", f.why.c_str());
    return;
  }
  const coll::model::LinkFigures& l = f.calibration.link;
  std::fprintf(stderr, "  level %s: bulk %.1f GB/s, alpha %.2f us, call %.2f us", f.level.c_str(), l.gbps, l.alpha_us,
               l.call_us);
  if (l.small.gbps > 0) {
    std::fprintf(stderr, "; small messages %.1f GB/s, alpha %.2f us, call %.2f us", l.small.gbps, l.small.alpha_us,
                 l.small.call_us);
  }
  for (Collective c : kCollectives) {
    const double below = l.by_collective[static_cast<size_t>(c)].small_below_bytes;
    if (below > 0) std::fprintf(stderr, "; %s in the small regime below %.0f B", coll::to_string(c), below);
  }
  std::fprintf(stderr, "\n  model against measured: within %.0f%% from 1 MiB up, %.0f%% below\n",
               100 * f.calibration.max_error_large, 100 * f.calibration.max_error_small);
}

void add_calibration(const CollFigures& f, nlohmann::json* doc) {
  const coll::model::LinkFigures& l = f.calibration.link;
  auto protocol = [](const coll::model::Protocol& p) {
    return nlohmann::json{{"gbps", p.gbps}, {"alpha_us", p.alpha_us}, {"call_us", p.call_us}};
  };
  auto figures = [&](const coll::model::Protocol& bulk, const coll::model::Protocol& small) {
    nlohmann::json j = protocol(bulk);
    if (small.gbps > 0) j["small"] = protocol(small);
    return j;
  };
  nlohmann::json entry = figures(l.bulk(), l.small);
  for (Collective c : kCollectives) {
    const coll::model::LinkFigures::ForCollective& own = l.by_collective[static_cast<size_t>(c)];
    if (!own.set) continue;
    nlohmann::json& j = entry["collectives"][coll::to_string(c)];
    j = figures(own.bulk, own.small);
    if (own.small_below_bytes > 0) j["small_below_bytes"] = own.small_below_bytes;
  }
  (*doc)["links"]["device"][f.level] = entry;
  nlohmann::json rows = nlohmann::json::array();
  for (const coll::model::CollSample& s : f.samples) {
    rows.push_back({{"collective", coll::to_string(s.collective)}, {"bytes", s.bytes}, {"us", s.us}});
  }
  (*doc)["collectives"] = {{"level", f.level},
                           {"samples", rows},
                           {"max_error_from_1MiB", f.calibration.max_error_large},
                           {"max_error_below_1MiB", f.calibration.max_error_small}};
}

int collectives_only(MPI_Comm comm, const std::string& out, const CollGrid& grid) {
  int rank = 0, ranks = 0, devices = 0;
  real().MPI_Comm_rank(comm, &rank);
  real().MPI_Comm_size(comm, &ranks);
  int have = gpu::available() && gpu::device_count(&devices) == Status::ok && devices > 0 ? 1 : 0;
  real().MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, comm);
  if (!have || ranks < 2) {
    if (rank == 0) std::fprintf(stderr, "strata-measure: the collectives need a GPU on every rank and 2+ ranks\n");
    return 1;
  }
  gpu::set_device(rank % devices);
  if (rank == 0) std::fprintf(stderr, "strata-measure: device collectives (the library's), the cost model's fit\n");
  const CollFigures figures = measure_collectives(comm, grid);
  int status = figures.why.empty() ? 0 : 1;
  if (rank == 0) {
    print_calibration(figures);
    nlohmann::json doc = nlohmann::json::object();
    std::ifstream in(out);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
      if (!doc.is_object()) doc = nlohmann::json::object();
    }
    if (status == 0) add_calibration(figures, &doc);
    std::ofstream file(out);
    file << doc.dump(1) << "\n";
    if (!file) status = 1;
    std::fprintf(stderr, "strata-measure: %s %s\n", file ? "updated" : "cannot write", out.c_str());
  }
  real().MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  return status;
}

}  // namespace strata::measure
