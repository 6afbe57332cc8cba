// Launches of the fused kernels (kernels.cu, compiled by nvcc for CUDA and
// by hipcc for HIP; kernels_stub.cpp answers not_supported without either).
// No runtime types here: streams are void*.
#pragma once

#include <strata/status.hpp>

#include "collectives/fused/protocol.hpp"

#include <cstdint>

namespace strata::fused::kernels {

// The most threads of a block of the fused kernels.
constexpr int kMaxThreads = 1024;

// Elements of T a thread moves at once with 16-byte accesses.
template <class T>
constexpr int vector_of() {
  return static_cast<int>(16 / sizeof(T));
}

// Threads per block for rows of `hidden` elements moved `vector` at a time:
// one vector per thread up to 1024 threads, a multiple of 64 (a wavefront).
int threads_for(int64_t hidden, int vector);

// One call of the peer protocol: `blocks` blocks (proto::blocks_for).
// `vector`: 16-byte accesses (every pointer 16-byte aligned and the row a
// multiple of 16 bytes), else element by element. `overlap_launch` (CUDA,
// compute capability 9.0 and later; ignored elsewhere): a programmatic
// dependent launch, scheduled while the kernel before it on the stream
// runs (the kernel waits for that one's writes before it reads anything).
// `cluster` > 1 (Lamport only, at most cluster_max()): each of the `blocks`
// row groups is a cluster of that many blocks sharing its rows
// (proto::cluster_for). Lamport with args.post_slices = S > 1 and no
// cluster: each row group is S blocks, S x `blocks` in all (proto::lamport).
template <class T>
Status launch_peer(const proto::Args<T>& args, proto::Kind kind, int blocks, bool vector, void* stream,
                   bool overlap_launch = false, int cluster = 1) noexcept;

// Whether the current device takes overlap_launch (CUDA, sm_90 or later).
bool overlap_launch_supported() noexcept;

// The largest cluster the Lamport kernel takes on the current device: 8
// where it runs code built for compute capability 9.0 or later (CUDA), else 1.
int cluster_max() noexcept;

// `count` 32-bit words set to `value` (the empty Lamport sets at set-up).
Status launch_fill(void* words, size_t count, uint32_t value, void* stream) noexcept;

// residual = T(reduced + residual); out = rmsnorm(residual) * weight, for
// `tokens` rows (reduced may be out).
template <class T>
Status launch_local(const T* reduced, T* residual, const T* weight, T* out, int64_t tokens, int64_t hidden,
                    float epsilon, bool vector, void* stream) noexcept;

// The set-up transfer test of the peer path: reads word 0 of every peer's
// probe area (expecting probe_word(peer, 0)) and writes probe_word(rank, 1)
// into word 1 + rank of every peer's; `mismatches` (device memory) gets the
// number of words read that differ.
constexpr uint32_t probe_word(int rank, int which) { return 0x5f000000u | (uint32_t(which) << 16) | uint32_t(rank); }
Status launch_probe(char* const* regions, int nranks, int rank, size_t probe_offset, uint32_t* mismatches,
                    void* stream) noexcept;

// Ticks of the kernels' timeout clock per millisecond (CUDA: the global
// timer's nanoseconds; HIP: the wall clock's rate).
uint64_t ticks_per_ms() noexcept;

// Streaming multiprocessors (compute units) of the current device.
int multiprocessors() noexcept;

}  // namespace strata::fused::kernels
