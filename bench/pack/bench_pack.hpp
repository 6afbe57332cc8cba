// strata-bench-pack: host pack throughput of Strata's engine (strata::pack_host)
// next to the MPI library's own MPI_Pack, on the same data in the same run.
// See docs/bench-pack.md.
#pragma once

#include <strata/layout.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata_bench {

enum class Kind { vector, hvector, subarray };

const char* to_string(Kind kind);
bool parse_kind(const std::string& name, Kind* kind);

// One point of the grid: `packed` bytes made of blocks of `block` bytes whose
// starts are `stride` bytes apart in the source.
struct Point {
  Kind kind = Kind::vector;
  int64_t block = 0;
  int64_t packed = 0;
  int64_t stride = 0;
  int64_t rows = 64;  // subarray: rows per plane
};

// The MPI datatype of a point (one element packs `packed` bytes) and the
// canonical strided block built directly from what we constructed.
struct Layout {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  strata::StridedBlock block;
  int64_t span = 0;  // source bytes from the buffer pointer to the last byte touched
  std::string what;  // the MPI constructor call, for messages
};

// Rounds `packed` down to whole blocks (and whole subarray planes).
void normalize_point(Point* p);
// Builds the layout of `p` (false with a message on an MPI error).
bool make_layout(const Point& p, Layout* out, std::string* error);
void free_layout(Layout* layout);
// Source bytes a point needs without building its type.
int64_t source_span(const Point& p);

// ---------------------------------------------------------------------------
// Measurement.
struct Sample {
  double median_ns = 0;  // per pack
  double p25_ns = 0;
  double p75_ns = 0;
  int samples = 0;  // timed samples (each of `reps` packs)
  int reps = 0;
};

struct TimingOptions {
  double min_total_ms = 20;    // per side, across all samples of a point
  double max_point_ms = 3000;  // cap on one point's measuring time (both sides)
  int min_samples = 7;
  int max_samples = 501;
  double min_sample_us = 20;   // packs are batched until one sample lasts this long
  double noisy_spread = 0.15;  // (p75 - p25) / median above which a point is re-measured
  int max_remeasure = 2;
};

struct Result {
  Point point;
  Sample library;
  Sample strata;
  int attempts = 1;
  bool noisy = false;
};

// Fills `bytes` bytes with random non-zero bytes.
void fill_random_nonzero(void* buffer, size_t bytes, uint64_t seed);
double now_ns();
// Median rate of a large memcpy, GB/s (1e9 bytes/s) of copied bytes.
double measure_memcpy_gbps(size_t bytes, int repeats);
// Times MPI_Pack and pack_host of `layout` alternately; false on an MPI error.
bool measure_point(const Layout& layout, const char* src, char* out_library, char* out_strata, const TimingOptions& opt,
                   Result* result, std::string* error);

// ---------------------------------------------------------------------------
// Correctness (--check).
struct CheckStats {
  int64_t cases = 0;
  int64_t failures = 0;               // Strata differs from the reference: a bug of ours
  int64_t library_disagreements = 0;  // MPI_Pack differs from the MPI type map (a library bug)
};
// pack_host against MPI_Pack for one benchmarked point, full stream and
// sub-ranges; unpack_host against MPI_Unpack when the span is small enough.
void check_point(const Layout& layout, const char* src, char* out_library, char* out_strata, uint64_t seed,
                 CheckStats* stats);
// Random strided blocks (any number of dims, negative and zero strides,
// partial ranges) against a brute-force byte map and against MPI_Pack.
void check_random_corpus(int cases, uint64_t seed, CheckStats* stats);

// ---------------------------------------------------------------------------
// Reporting.
struct RunInfo {
  std::string command;
  std::string cpu;
  std::string mpi;
  std::string date;
  double memcpy_gbps = 0;
  int64_t memcpy_bytes = 0;
  std::vector<std::string> skipped;
  std::vector<std::string> notes;
};

double bound_gbps(double memcpy_gbps, int64_t block);
void print_table(const RunInfo& info, const std::vector<Result>& results, bool markdown);
void print_summary(const RunInfo& info, const std::vector<Result>& results, bool markdown);
bool write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& results);
// --osu: per datatype shape, OSU micro-benchmark columns (tools/cli/osu_table.hpp):
// the packed size, the library's and Strata's time per pack and MB/s, the ratio.
void print_osu(const RunInfo& info, const std::vector<Result>& results);
std::string format_bytes(int64_t bytes);

// ---------------------------------------------------------------------------
// Device mode (--device, bench/pack/device.cpp; built when CUDA is): Strata's
// device pack/unpack kernels on device memory, next to the device-to-device
// copy rate, the 32-byte-sector bound and the path a user has without Strata
// (copy the span to the host, the library's MPI_Pack, copy the packed bytes
// back). PyTorch's column comes from bench/pack/bench_pack_device.py.
struct DeviceOptions {
  std::vector<Kind> kinds;
  std::vector<int64_t> blocks;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // 0: tight (2 * block)
  int64_t subarray_rows = 64;
  int64_t max_source = int64_t{9} << 30;       // skip points whose source spans more
  int64_t copy_bytes = int64_t{1} << 30;       // the device-to-device copy that sets the rate
  int64_t host_path_max = int64_t{256} << 20;  // user path only for spans up to this
  int64_t check_max = int64_t{256} << 20;      // byte check only for spans up to this
  int64_t rotate_bytes = int64_t{256} << 20;   // sources rotate over at least this much memory
  bool latency = false;
  bool markdown = false;
  bool quick = false;
  std::string json;
  uint64_t seed = 12345;
  double min_total_ms = 30;    // per point and side
  double max_point_ms = 2000;  // per point and side
  int min_samples = 7;
  int max_samples = 201;
  double min_sample_us = 200;  // launches per sample until the sample lasts this long
};

// Runs the device mode; exit status (0, 1 on a mismatch, 2 on an error; 0
// with a message when there is no GPU).
int run_device(const DeviceOptions& options, const std::string& command);

// ---------------------------------------------------------------------------
// Kokkos mode (--kokkos, bench/pack/kokkos.cpp; built when Kokkos is):
// Strata's Kokkos pack of 2D and 3D subviews against Kokkos::deep_copy into
// a contiguous View (kokkos-comm's pack) and the native kernels, on the
// default execution space.
struct KokkosBenchOptions {
  std::vector<int64_t> blocks;  // bytes; empty: the default grid
  std::vector<int64_t> sizes;   // packed bytes; empty: the default grid
  bool quick = false;
  bool markdown = false;
  bool no_timing = false;    // check only
  double min_total_ms = 30;  // per point and method
  double min_sample_us = 200;
  int min_samples = 7;
  int max_samples = 201;
};

// Exit status: 0, 1 on a mismatch, 2 on an error.
int run_kokkos(const KokkosBenchOptions& options, const std::string& command);

}  // namespace strata_bench
