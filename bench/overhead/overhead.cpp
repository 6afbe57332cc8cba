// strata-bench-overhead-rank: what the interposer costs where it cannot
// help, timed in one configuration (the driver, strata-bench-overhead, runs
// it plain, preloaded and preloaded with STRATA_DISABLE=1, alternated, and
// compares). A plain MPI program: it knows nothing of Strata.
//
//   pingpong   one-way time of a 1-byte and an 8-byte MPI_Send/MPI_Recv ping-pong
//   vector     one-way time of a ping-pong of MPI_Type_vector(n, 8 B, 64 B stride), extent 64 B..4 MiB
//   allreduce  MPI_Allreduce of floats, 4 B..64 MiB (--min-allreduce, --max-allreduce), every rank
//   alltoall   MPI_Alltoall of bytes, 4 B..64 KiB to each rank, every rank
//              (an exchange: in a GPU program the interposer passes it to
//              the library between its agreements, as it does allreduce)
//   memory     no timing: one JSON line per rank on the process itself after
//              MPI_Init (threads, CPU, transparent huge pages in use, and
//              whether glibc serves 256 KiB..16 MiB from the heap or by
//              mmap), and whether the CUDA driver is loaded: what a
//              preloaded library may change for the program besides its
//              calls (run it after other cases too: "memory pingpong memory")
//   null       calls the library completes at once (peer MPI_PROC_NULL):
//              MPI_Send, MPI_Recv, MPI_Isend + MPI_Wait, MPI_Irecv + MPI_Wait;
//              the time per call is the library's few nanoseconds plus
//              what the preload adds, without the noise of a transfer;
//              and MPI_Allreduce over MPI_COMM_SELF (a collective's pass)
//
// Output: one JSON line per point on rank 0: {"case":..,"bytes":..,"us":..}
// with the median of --samples samples, each the mean of a batch sized to
// take about --sample-ms.
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

int rank_ = 0, size_ = 0;

// A page-aligned buffer filled with `fill`: every configuration moves the
// same bytes from the same alignment (a std::vector's address depends on
// what was allocated before it, and a preloaded library allocates at start;
// the copy loops' speed depends on that alignment).
struct PageBuffer {
  explicit PageBuffer(size_t bytes, unsigned char fill)
      : data(std::aligned_alloc(4096, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096)) {
    std::memset(data, fill, bytes);
  }
  ~PageBuffer() { std::free(data); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  void* data;
};
int samples = 11;
double sample_ms = 20;

double now() { return MPI_Wtime(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs `step` (one round trip or one call) in batches: the batch size is
// grown until two batches in a row take about sample_ms (rank 0 decides,
// every rank follows), then `samples` batches are timed. Returns the median
// seconds per step (rank 0's clock). Two in a row: a first call that sets
// something up (a preloaded library's first collective on a communicator,
// milliseconds) made one batch of a few calls look long enough, and the
// samples of the run's first point were then a few hundred calls each.
template <class Step>
double timed(Step step) {
  long batch = 1;
  for (int long_enough = 0; long_enough < 2;) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    for (long i = 0; i < batch; ++i) step();
    double t = now() - t0;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (t * 1e3 >= sample_ms || batch >= (1L << 24)) {
      ++long_enough;
    } else {
      batch *= 2;
      long_enough = 0;
    }
  }
  std::vector<double> per_step;
  for (int s = 0; s < samples; ++s) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    for (long i = 0; i < batch; ++i) step();
    per_step.push_back((now() - t0) / static_cast<double>(batch));
  }
  double m = median(per_step);
  MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return m;
}

void report(const char* which, long bytes, double seconds) {
  if (rank_ == 0) std::printf("{\"case\":\"%s\",\"bytes\":%ld,\"us\":%.6f}\n", which, bytes, seconds * 1e6);
  std::fflush(stdout);
}

// One-way time of a ping-pong between ranks 0 and 1 (the others idle).
// `irecv_first`: rank 0 posts its receive first (MPI_Irecv, then MPI_Send,
// then MPI_Wait), the path of a halo's non-blocking receives.
void pingpong(const char* which, const void* send, void* recv, int count, MPI_Datatype type, long bytes,
              bool irecv_first = false) {
  const int peer = rank_ == 0 ? 1 : 0;
  const bool active = rank_ < 2;
  const double rt = timed([&] {
    if (!active) return;
    if (rank_ == 0 && irecv_first) {
      MPI_Request r = MPI_REQUEST_NULL;
      MPI_Irecv(recv, count, type, peer, 7, MPI_COMM_WORLD, &r);
      MPI_Send(send, count, type, peer, 7, MPI_COMM_WORLD);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank_ == 0) {
      MPI_Send(send, count, type, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(recv, count, type, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(recv, count, type, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(send, count, type, peer, 7, MPI_COMM_WORLD);
    }
  });
  report(which, bytes, rt / 2);
}

// 1 and 8 bytes, and 1 KiB: a receive of 256 bytes or more is the one the
// device-direct transport checks at completion where it is on.
void run_pingpong() {
  PageBuffer a(1024, 1), b(1024, 0);
  pingpong("pingpong", a.data, b.data, 1, MPI_BYTE, 1);
  pingpong("pingpong", a.data, b.data, 8, MPI_BYTE, 8);
  pingpong("pingpong", a.data, b.data, 1024, MPI_BYTE, 1024);
  pingpong("ipingpong", a.data, b.data, 8, MPI_BYTE, 8, true);
  pingpong("ipingpong", a.data, b.data, 1024, MPI_BYTE, 1024, true);
}

void run_vector(long max_extent) {
  for (long extent = 64; extent <= max_extent; extent *= 4) {
    const int n = static_cast<int>(extent / 64);
    MPI_Datatype v;
    MPI_Type_vector(n, 8, 64, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    PageBuffer a(static_cast<size_t>(extent), 3), b(static_cast<size_t>(extent), 0);
    pingpong("vector", a.data, b.data, 1, v, extent);
    MPI_Type_free(&v);
  }
}

// The pass-through's cost alone: every rank times its own calls to
// MPI_PROC_NULL (no message moves; the library returns at once).
void run_null() {
  char byte = 1;
  MPI_Request r = MPI_REQUEST_NULL;
  report("null-send", 1, timed([&] { MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD); }));
  report("null-recv", 1,
         timed([&] { MPI_Recv(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }));
  report("null-isend-wait", 1, timed([&] {
           MPI_Isend(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r);
           MPI_Wait(&r, MPI_STATUS_IGNORE);
         }));
  report("null-irecv-wait", 1, timed([&] {
           MPI_Irecv(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r);
           MPI_Wait(&r, MPI_STATUS_IGNORE);
         }));
  // A collective the library completes alone: an allreduce over
  // MPI_COMM_SELF (a copy of 4 bytes): what the preload's collective
  // pass-through costs per call, without a peer's noise.
  float one = 1, out = 0;
  report("null-self-allreduce", 4, timed([&] { MPI_Allreduce(&one, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF); }));
  // The same with the data cache refilled between calls (64 KiB read, more
  // than a core's L1): what the pass costs where the library's own work
  // evicted what it reads (a real collective between two calls), which
  // the warm loop above hides. Every configuration reads the same bytes.
  static std::vector<unsigned char> other(64 << 10, 1);
  volatile unsigned sink = 0;
  report("null-self-allreduce-cold", 4, timed([&] {
           unsigned sum = 0;
           for (size_t i = 0; i < other.size(); i += 64) sum += other[i];
           sink = sink + sum;
           MPI_Allreduce(&one, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
         }));
}

void run_allreduce(long min_bytes, long max_bytes) {
  for (long bytes = 4; bytes <= max_bytes; bytes *= 4) {
    if (bytes < min_bytes) continue;
    const int n = static_cast<int>(bytes / 4);
    PageBuffer a(static_cast<size_t>(bytes), 0), b(static_cast<size_t>(bytes), 0);
    std::fill_n(static_cast<float*>(a.data), n, 1.0f);
    const double t = timed([&] { MPI_Allreduce(a.data, b.data, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    report("allreduce", bytes, t);
  }
}

void run_alltoall(long max_bytes) {
  for (long bytes = 4; bytes <= max_bytes; bytes *= 4) {
    const int n = static_cast<int>(bytes);
    const size_t total = static_cast<size_t>(bytes) * static_cast<size_t>(size_);
    PageBuffer a(total, 5), b(total, 0);
    report("alltoall", bytes, timed([&] { MPI_Alltoall(a.data, n, MPI_BYTE, b.data, n, MPI_BYTE, MPI_COMM_WORLD); }));
  }
}

// The first number on the line of `file` that starts with `key`, or -1.
long proc_value(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) return std::atol(line.c_str() + key.size());
  }
  return -1;
}

// glibc marks a chunk it mapped on its own (mmap, not the heap) with bit 1
// of the size word before the pointer.
bool glibc_mmapped(const void* p) { return (static_cast<const size_t*>(p)[-1] & 2) != 0; }

bool cuda_driver_loaded() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (driver != nullptr) dlclose(driver);
  return driver != nullptr;
}

// The loaded objects of GPU stacks and of hwloc (whose plugins may load
// them), by base name, comma-separated and quoted.
int add_gpu_object(struct dl_phdr_info* info, size_t, void* out) {
  const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const std::string base = path.substr(path.rfind('/') + 1);
  for (const char* key : {"cuda", "nvidia", "nccl", "hwloc", "amdhip", "hsa"}) {
    if (base.find(key) != std::string::npos) {
      auto* list = static_cast<std::string*>(out);
      *list += (list->empty() ? "\"" : ",\"") + base + "\"";
      break;
    }
  }
  return 0;
}
std::string gpu_objects() {
  std::string list;
  dl_iterate_phdr(add_gpu_object, &list);
  return list;
}

void run_memory() {
  std::string placement;
  for (long bytes = 256L << 10; bytes <= (16L << 20); bytes *= 4) {
    void* p = std::malloc(static_cast<size_t>(bytes));
    placement += (placement.empty() ? "" : ",") + std::string("\"") + std::to_string(bytes) + "\":\"" +
                 (glibc_mmapped(p) ? "mmap" : "heap") + "\"";
    std::free(p);
  }
  std::printf(
      "{\"case\":\"memory\",\"rank\":%d,\"cpu\":%d,\"threads\":%ld,\"vm_kb\":%ld,\"anon_huge_kb\":%ld,"
      "\"cuda_driver\":%s,\"objects\":[%s],\"malloc\":{%s}}\n",
      rank_, sched_getcpu(), proc_value("/proc/self/status", "Threads:"), proc_value("/proc/self/status", "VmSize:"),
      proc_value("/proc/self/smaps_rollup", "AnonHugePages:"), cuda_driver_loaded() ? "true" : "false",
      gpu_objects().c_str(), placement.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  std::vector<std::string> cases;
  long max_extent = 4L << 20, min_allreduce = 4, max_allreduce = 64L << 20, max_alltoall = 64L << 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--samples" && i + 1 < argc) {
      samples = std::atoi(argv[++i]);
    } else if (a == "--sample-ms" && i + 1 < argc) {
      sample_ms = std::atof(argv[++i]);
    } else if (a == "--max-extent" && i + 1 < argc) {
      max_extent = std::atol(argv[++i]);
    } else if (a == "--min-allreduce" && i + 1 < argc) {
      min_allreduce = std::atol(argv[++i]);
    } else if (a == "--max-allreduce" && i + 1 < argc) {
      max_allreduce = std::atol(argv[++i]);
    } else if (a == "--max-alltoall" && i + 1 < argc) {
      max_alltoall = std::atol(argv[++i]);
    } else {
      cases.push_back(a);
    }
  }
  if (cases.empty()) cases = {"pingpong", "vector", "allreduce"};
  if (size_ < 2) {
    if (rank_ == 0) std::fprintf(stderr, "strata-bench-overhead-rank: needs at least 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  for (const std::string& c : cases) {
    if (c == "pingpong") {
      run_pingpong();
    } else if (c == "vector") {
      run_vector(max_extent);
    } else if (c == "allreduce") {
      run_allreduce(min_allreduce, max_allreduce);
    } else if (c == "alltoall") {
      run_alltoall(max_alltoall);
    } else if (c == "null") {
      run_null();
    } else if (c == "memory") {
      run_memory();
    } else if (rank_ == 0) {
      std::fprintf(stderr, "strata-bench-overhead-rank: unknown case %s\n", c.c_str());
    }
  }
  MPI_Finalize();
  return 0;
}
