// residual_rmsnorm: the residual add + RMSNorm of one rank's rows, without
// communication (the fallback path's second half, and the unfused
// baseline). Host buffers run protocol.hpp's local_rows on the calling
// thread; device buffers the local kernel of kernels.cu.
#include <strata/fused.hpp>

#include "base/log.hpp"
#include "collectives/fused/exchange.hpp"
#include "collectives/fused/host_platform.hpp"
#include "collectives/fused/kernels.hpp"

namespace strata::fused {
namespace {

template <int V, class T>
void host_rows(const Tensors& t, int64_t hidden) {
  HostPlatform p;
  proto::local_rows<V>(p, static_cast<const T*>(t.x), static_cast<T*>(t.residual), static_cast<const T*>(t.weight),
                       static_cast<T*>(t.out), static_cast<int64_t>(t.tokens), hidden, t.epsilon, 0, 1, nullptr);
}

}  // namespace

Status residual_rmsnorm(const Tensors& t, size_t hidden, DataType type, Memory memory, void* stream) noexcept {
  if (t.tokens == 0 || hidden == 0) return Status::ok;
  if (t.x == nullptr || t.residual == nullptr || t.weight == nullptr || t.out == nullptr || t.out == t.residual ||
      t.x == t.residual || !(t.epsilon >= 0.0f)) {
    STRATA_LOG(error, kColl, "residual_rmsnorm: a null or aliased buffer, or a bad epsilon");
    return Status::invalid_argument;
  }
  const auto h = static_cast<int64_t>(hidden);
  return with_element(type, [&](auto element) {
    using T = decltype(element);
    const bool vector = vector_aligned(t, hidden, sizeof(T));
    if (memory == Memory::device) {
      return kernels::launch_local<T>(static_cast<const T*>(t.x), static_cast<T*>(t.residual),
                                      static_cast<const T*>(t.weight), static_cast<T*>(t.out),
                                      static_cast<int64_t>(t.tokens), h, t.epsilon, vector, stream);
    }
    if (vector) {
      host_rows<kernels::vector_of<T>(), T>(t, h);
    } else {
      host_rows<1, T>(t, h);
    }
    return Status::ok;
  });
}

}  // namespace strata::fused
