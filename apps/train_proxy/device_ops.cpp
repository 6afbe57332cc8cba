// The GPU side of strata-train-proxy's compute: cuBLAS GEMMs (bf16, fp16 or
// fp32 storage, fp32 accumulation), cuBLAS axpy for the update, two streams
// (compute, communication) and events for the timings. Compiled as C++
// against the CUDA headers (no kernels of its own); built where CUDA and
// cuBLAS are (the lent machines), else make_device_ops says why not.
#include "apps/train_proxy/ops.hpp"

#if defined(STRATA_PROXY_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

namespace strata_proxy {
namespace {

using strata::coll::DataType;

cudaDataType_t cuda_type(DataType t) {
  switch (t) {
    case DataType::bfloat16: return CUDA_R_16BF;
    case DataType::float16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

strata::Status ok_or(cudaError_t e) { return e == cudaSuccess ? strata::Status::ok : strata::Status::device_error; }
strata::Status ok_or(cublasStatus_t e) {
  return e == CUBLAS_STATUS_SUCCESS ? strata::Status::ok : strata::Status::device_error;
}

class DeviceOps : public Ops {
 public:
  explicit DeviceOps(DataType t) : type_(t), dt_(cuda_type(t)) {}
  bool init(std::string* why) {
    if (cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking) != cudaSuccess) {
      *why = std::string("cudaStreamCreate: ") + cudaGetErrorString(cudaGetLastError());
      return false;
    }
    if (cublasCreate(&blas_) != CUBLAS_STATUS_SUCCESS) {
      *why = "cublasCreate failed";
      return false;
    }
    return true;
  }
  ~DeviceOps() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (join_ != nullptr) cudaEventDestroy(join_);
    if (blas_ != nullptr) cublasDestroy(blas_);
    if (compute_ != nullptr) cudaStreamDestroy(compute_);
    if (comm_ != nullptr) cudaStreamDestroy(comm_);
  }
  bool device() const override { return true; }
  std::string describe() const override {
    int d = 0;
    cudaGetDevice(&d);
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, d);
    return std::string(p.name) + " (cuBLAS)";
  }
  void* alloc(size_t bytes) override {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes > 0 ? bytes : 1) != cudaSuccess) return nullptr;
    cudaMemset(p, 0, bytes);
    return p;
  }
  void release(void* p) override { cudaFree(p); }
  strata::Status upload(void* dst, const void* src, size_t bytes) override {
    return ok_or(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  }
  strata::Status download(void* dst, const void* src, size_t bytes) override {
    return ok_or(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  strata::Status gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const void* a, const void* b, void* c,
                      void* stream) override {
    if (m == 0 || n == 0) return strata::Status::ok;
    const float alpha = 1.0f, beta = 0.0f;
    cublasSetStream(blas_, static_cast<cudaStream_t>(stream));
    const auto M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
    return ok_or(cublasGemmEx(blas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, b,
                              dt_, tb ? K : N, a, dt_, ta ? M : K, &beta, c, dt_, N, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }

  strata::Status copy(void* dst, const void* src, size_t bytes, void* stream) override {
    return ok_or(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
  }

  strata::Status axpy(size_t n, float alpha, const void* x, void* y, void* stream) override {
    cublasSetStream(blas_, static_cast<cudaStream_t>(stream));
    return ok_or(cublasAxpyEx(blas_, static_cast<int>(n), &alpha, CUDA_R_32F, x, dt_, 1, y, dt_, 1, CUDA_R_32F));
  }

  void* compute_stream() override { return compute_; }
  void* comm_stream() override { return comm_; }
  strata::Status synchronize() override { return ok_or(cudaDeviceSynchronize()); }
  strata::Status join(void* waiter, void* other) override {
    if (join_ == nullptr && cudaEventCreateWithFlags(&join_, cudaEventDisableTiming) != cudaSuccess) {
      return strata::Status::device_error;
    }
    if (cudaEventRecord(join_, static_cast<cudaStream_t>(other)) != cudaSuccess) return strata::Status::device_error;
    return ok_or(cudaStreamWaitEvent(static_cast<cudaStream_t>(waiter), join_, 0));
  }
  int mark(void* stream) override {
    if (used_ == events_.size()) {
      cudaEvent_t e = nullptr;
      cudaEventCreate(&e);
      events_.push_back(e);
    }
    cudaEventRecord(events_[used_], static_cast<cudaStream_t>(stream));
    return static_cast<int>(used_++);
  }
  double ms(int from, int to) override {
    float t = 0;
    cudaEventElapsedTime(&t, events_[static_cast<size_t>(from)], events_[static_cast<size_t>(to)]);
    return t;
  }
  void reset_marks() override { used_ = 0; }

 private:
  DataType type_;
  cudaDataType_t dt_;
  cudaStream_t compute_ = nullptr;
  cudaStream_t comm_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
  cudaEvent_t join_ = nullptr;
};

}  // namespace

std::unique_ptr<Ops> make_device_ops(DataType type, std::string* why, int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    *why = "no GPU visible";
    return nullptr;
  }
  if (cudaSetDevice(local_rank % count) != cudaSuccess) {
    *why = std::string("cudaSetDevice: ") + cudaGetErrorString(cudaGetLastError());
    return nullptr;
  }
  auto ops = std::make_unique<DeviceOps>(type);
  if (!ops->init(why)) return nullptr;
  return ops;
}

}  // namespace strata_proxy

#else

namespace strata_proxy {
std::unique_ptr<Ops> make_device_ops(strata::coll::DataType, std::string* why, int) {
  *why = "built without CUDA and cuBLAS";
  return nullptr;
}
}  // namespace strata_proxy

#endif
