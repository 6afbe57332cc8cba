// The host side of strata-train-proxy's compute: plain loops, float
// accumulation, bfloat16/float16 stored as bits (portability/numeric).
#include "apps/train_proxy/ops.hpp"

#include "portability/numeric/float16.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace strata_proxy {
namespace {

using strata::coll::DataType;

class HostOps : public Ops {
 public:
  explicit HostOps(DataType t) : type_(t) {}
  bool device() const override { return false; }
  std::string describe() const override { return "host (loops)"; }
  void* alloc(size_t bytes) override { return std::calloc(bytes > 0 ? bytes : 1, 1); }
  void release(void* p) override { std::free(p); }
  strata::Status upload(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return strata::Status::ok;
  }
  strata::Status download(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return strata::Status::ok;
  }

  strata::Status gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const void* a, const void* b, void* c,
                      void* /*stream*/) override {
    std::vector<float> row(n);
    for (size_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0f);
      for (size_t p = 0; p < k; ++p) {
        const float av = get(a, ta ? p * m + i : i * k + p);
        if (av == 0.0f) continue;
        for (size_t j = 0; j < n; ++j) row[j] += av * get(b, tb ? j * k + p : p * n + j);
      }
      for (size_t j = 0; j < n; ++j) put(c, i * n + j, row[j]);
    }
    return strata::Status::ok;
  }

  strata::Status copy(void* dst, const void* src, size_t bytes, void* /*stream*/) override {
    std::memcpy(dst, src, bytes);
    return strata::Status::ok;
  }

  strata::Status axpy(size_t n, float alpha, const void* x, void* y, void* /*stream*/) override {
    for (size_t i = 0; i < n; ++i) put(y, i, get(y, i) + alpha * get(x, i));
    return strata::Status::ok;
  }

  void* compute_stream() override { return nullptr; }
  void* comm_stream() override { return nullptr; }
  strata::Status synchronize() override { return strata::Status::ok; }
  strata::Status join(void* /*waiter*/, void* /*other*/) override { return strata::Status::ok; }
  int mark(void* /*stream*/) override {
    marks_.push_back(std::chrono::steady_clock::now());
    return static_cast<int>(marks_.size()) - 1;
  }
  double ms(int from, int to) override {
    return std::chrono::duration<double, std::milli>(marks_[static_cast<size_t>(to)] -
                                                     marks_[static_cast<size_t>(from)])
        .count();
  }
  void reset_marks() override { marks_.clear(); }

 private:
  float get(const void* p, size_t i) const {
    const auto* b = static_cast<const unsigned char*>(p);
    if (type_ == DataType::float32) {
      float f;
      std::memcpy(&f, b + 4 * i, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, b + 2 * i, 2);
    return type_ == DataType::bfloat16 ? strata::numeric::bfloat16_to_float(h) : strata::numeric::half_to_float(h);
  }
  void put(void* p, size_t i, float v) const {
    auto* b = static_cast<unsigned char*>(p);
    if (type_ == DataType::float32) {
      std::memcpy(b + 4 * i, &v, 4);
      return;
    }
    const uint16_t h =
        type_ == DataType::bfloat16 ? strata::numeric::float_to_bfloat16(v) : strata::numeric::float_to_half(v);
    std::memcpy(b + 2 * i, &h, 2);
  }

  DataType type_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

std::unique_ptr<Ops> make_host_ops(DataType type) { return std::make_unique<HostOps>(type); }

}  // namespace strata_proxy
