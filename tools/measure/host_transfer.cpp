#include "tools/measure/host_transfer.hpp"

#include "interposer/handlers/direct.hpp"
#include "interposer/types/type_cache.hpp"
#include "mpi/real_mpi.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

namespace strata::measure {

using mpi::real;

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void fill(std::vector<unsigned char>& buf, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& b : buf) b = static_cast<unsigned char>(1 + rng() % 255);  // never zeros
}

// A committed hvector of `block`-byte blocks known to the interposer's cache.
MPI_Datatype make_type(int64_t blocks, int64_t block, int64_t stride) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  real().MPI_Type_create_hvector(static_cast<int>(blocks), static_cast<int>(block), stride, MPI_BYTE, &t);
  real().MPI_Type_commit(&t);
  interposer::type_cache().on_commit(t);
  return t;
}

void free_type(MPI_Datatype* t) {
  interposer::type_cache().on_free(*t);
  real().MPI_Type_free(t);
}

// Time of one exchange, in ns, with the interposer forced to `strata`
// (true: Strata's path, false: the library's): every rank sends one message
// to its partner and receives one from it at the same time, as in a halo
// exchange, so that the measurement sees the contention of the job it is
// launched like (e.g. 8 ranks on 2 cores). Each sample is the slowest
// rank's; the result is the median sample.
double exchange_ns(MPI_Comm comm, int partner, MPI_Datatype type, std::vector<unsigned char>& a,
                   std::vector<unsigned char>& b, bool strata, const GridOptions& grid) {
  interposer::override_host_pack(strata ? 1 : 0);
  auto exchanges = [&](int n) {
    for (int i = 0; i < n; ++i) {
      MPI_Request requests[2];
      interposer::direct::irecv(b.data(), 1, type, partner, 7, comm, &requests[0]);
      interposer::direct::isend(a.data(), 1, type, partner, 7, comm, &requests[1]);
      interposer::waitall(2, requests, MPI_STATUSES_IGNORE);
    }
  };
  exchanges(2);  // warm-up: staging buffers, pages, caches
  double t0 = now_us();
  exchanges(1);
  double one = std::max(now_us() - t0, 0.1);
  real().MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, comm);
  const int batch = static_cast<int>(std::clamp(grid.min_sample_us / one, 1.0, 10000.0));
  std::vector<double> samples;
  for (int s = 0; s < grid.samples; ++s) {
    real().MPI_Barrier(comm);
    double t1 = now_us();
    exchanges(batch);
    double ns = (now_us() - t1) * 1000.0 / batch;
    real().MPI_Allreduce(MPI_IN_PLACE, &ns, 1, MPI_DOUBLE, MPI_MAX, comm);
    samples.push_back(ns);
  }
  interposer::override_host_pack(-1);
  return median(samples);
}

// Calls fn(block, blocks, stride, span) for every grid point whose source
// fits in max_source_bytes.
template <class Fn>
void for_each_point(const GridOptions& grid, Fn fn) {
  for (int64_t block : grid.blocks) {
    for (int64_t bytes : grid.sizes) {
      const int64_t blocks = bytes / block;
      const int64_t stride = stride_for(block);
      const int64_t span = (blocks - 1) * stride + block;
      if (blocks >= 2 && span <= grid.max_source_bytes) fn(block, blocks, stride, span);
    }
  }
}

}  // namespace

int64_t stride_for(int64_t block) { return std::max<int64_t>(512, 2 * block); }

std::vector<interposer::HostSample> measure_transfers(MPI_Comm comm, const GridOptions& grid) {
  int rank = 0, size = 0;
  real().MPI_Comm_rank(comm, &rank);
  real().MPI_Comm_size(comm, &size);
  // Pairs (0,1), (2,3), ...; an odd last rank exchanges with itself.
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  std::vector<interposer::HostSample> out;
  for_each_point(grid, [&](int64_t block, int64_t blocks, int64_t stride, int64_t span) {
    std::vector<unsigned char> a(static_cast<size_t>(span)), b(static_cast<size_t>(span));
    fill(a, static_cast<uint64_t>(block * 131 + blocks + rank));
    fill(b, 99);
    MPI_Datatype type = make_type(blocks, block, stride);
    interposer::HostSample s;
    s.block = block;
    s.bytes = blocks * block;
    // Alternate the two paths so drift on a noisy machine hits both.
    double lib1 = exchange_ns(comm, partner, type, a, b, false, grid);
    double ours1 = exchange_ns(comm, partner, type, a, b, true, grid);
    double lib2 = exchange_ns(comm, partner, type, a, b, false, grid);
    double ours2 = exchange_ns(comm, partner, type, a, b, true, grid);
    s.library_ns = std::min(lib1, lib2);
    s.strata_ns = std::min(ours1, ours2);
    free_type(&type);
    if (rank == 0) {
      out.push_back(s);
      std::fprintf(stderr, "  exchange block %4lld B, %8lld B: library %10.0f ns, strata %10.0f ns (x%.2f)\n",
                   static_cast<long long>(block), static_cast<long long>(s.bytes), s.library_ns, s.strata_ns,
                   s.library_ns / s.strata_ns);
    }
  });
  return out;
}

std::vector<interposer::HostSample> measure_packs(const GridOptions& grid) {
  std::vector<interposer::HostSample> out;
  for_each_point(grid, [&](int64_t block, int64_t blocks, int64_t stride, int64_t span) {
    std::vector<unsigned char> src(static_cast<size_t>(span)), dst(static_cast<size_t>(blocks * block));
    fill(src, static_cast<uint64_t>(block + blocks));
    fill(dst, 5);
    MPI_Datatype type = make_type(blocks, block, stride);
    std::shared_ptr<const interposer::TypeInfo> info = interposer::type_cache().find(type);
    auto time_ns = [&](bool strata) {
      auto once = [&] {
        if (strata) {
          pack_host(info->layout.element, src.data(), dst.data());
        } else {
          int position = 0;
          real().MPI_Pack(src.data(), 1, type, dst.data(), static_cast<int>(dst.size()), &position, MPI_COMM_SELF);
        }
      };
      once();
      double t0 = now_us();
      once();
      const int batch = static_cast<int>(std::clamp(grid.min_sample_us / std::max(now_us() - t0, 0.05), 1.0, 1e5));
      std::vector<double> samples;
      for (int s = 0; s < grid.samples; ++s) {
        double t1 = now_us();
        for (int i = 0; i < batch; ++i) once();
        samples.push_back((now_us() - t1) * 1000.0 / batch);
      }
      return median(samples);
    };
    interposer::HostSample s;
    s.block = block;
    s.bytes = blocks * block;
    s.library_ns = std::min(time_ns(false), time_ns(false));
    s.strata_ns = std::min(time_ns(true), time_ns(true));
    free_type(&type);
    out.push_back(s);
    std::fprintf(stderr, "  pack     block %4lld B, %8lld B: library %10.0f ns, strata %10.0f ns (x%.2f)\n",
                 static_cast<long long>(block), static_cast<long long>(s.bytes), s.library_ns, s.strata_ns,
                 s.library_ns / s.strata_ns);
  });
  return out;
}

double measure_memcpy_gbps(int64_t bytes) {
  std::vector<unsigned char> a(static_cast<size_t>(bytes)), b(static_cast<size_t>(bytes));
  fill(a, 1);
  fill(b, 2);
  std::vector<double> rates;
  for (int i = 0; i < 9; ++i) {
    double t0 = now_us();
    std::memcpy(b.data(), a.data(), a.size());
    double us = now_us() - t0;
    rates.push_back(static_cast<double>(bytes) / (us * 1000.0));
  }
  return median(rates);
}

}  // namespace strata::measure
