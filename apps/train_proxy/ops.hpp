// The compute of strata-train-proxy behind one interface: host loops (the
// CPU run CI makes, small sizes) or the GPU (cuBLAS GEMMs in bf16/fp32 with
// fp32 accumulation, two streams, events). Matrices are row-major.
#pragma once

#include <strata/collectives.hpp>
#include <strata/fused.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace strata_proxy {

class Ops {
 public:
  virtual ~Ops() = default;
  virtual bool device() const = 0;
  virtual std::string describe() const = 0;
  virtual void* alloc(size_t bytes) = 0;  // null on failure
  virtual void release(void* p) = 0;
  virtual strata::Status upload(void* dst, const void* src, size_t bytes) = 0;    // synchronous
  virtual strata::Status download(void* dst, const void* src, size_t bytes) = 0;  // synchronous
  // C[m][n] = op(A) * op(B) with op(A) m x k (A is k x m when ta), op(B) k x n
  // (B is n x k when tb); float accumulation; queued on `stream`.
  virtual strata::Status gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const void* a, const void* b, void* c,
                              void* stream) = 0;
  // dst = src (bytes), queued on `stream`.
  virtual strata::Status copy(void* dst, const void* src, size_t bytes, void* stream) = 0;
  // y += alpha * x over n elements, on `stream`.
  virtual strata::Status axpy(size_t n, float alpha, const void* x, void* y, void* stream) = 0;
  // The compute and the communication streams (null on the host).
  virtual void* compute_stream() = 0;
  virtual void* comm_stream() = 0;
  virtual strata::Status synchronize() = 0;
  // `waiter`'s later work waits for what is queued on `other` now.
  virtual strata::Status join(void* waiter, void* other) = 0;
  // Timestamps: mark() queues one on `stream`; ms() the time between two
  // marks once synchronize() returned.
  virtual int mark(void* stream) = 0;
  virtual double ms(int from, int to) = 0;
  virtual void reset_marks() = 0;
};

std::unique_ptr<Ops> make_host_ops(strata::coll::DataType type);
// On GPU local_rank % (GPUs visible); null (and `why`) without a GPU or in a
// build without CUDA.
std::unique_ptr<Ops> make_device_ops(strata::coll::DataType type, std::string* why, int local_rank);

}  // namespace strata_proxy
