// The fused kernels in a build without CUDA or HIP: every launch answers
// not_supported (the peer path is never set up; device objects are refused).
#include "collectives/fused/kernels.hpp"

namespace strata::fused::kernels {

int threads_for(int64_t /*hidden*/, int /*vector*/) { return 0; }

template <class T>
Status launch_peer(const proto::Args<T>& /*args*/, bool /*two_shot*/, int /*blocks*/, bool /*vector*/,
                   void* /*stream*/) noexcept {
  return Status::not_supported;
}

template <class T>
Status launch_local(const T* /*reduced*/, T* /*residual*/, const T* /*weight*/, T* /*out*/, int64_t /*tokens*/,
                    int64_t /*hidden*/, float /*epsilon*/, bool /*vector*/, void* /*stream*/) noexcept {
  return Status::not_supported;
}

Status launch_probe(char* const* /*regions*/, int /*nranks*/, int /*rank*/, size_t /*probe_offset*/,
                    uint32_t* /*mismatches*/, void* /*stream*/) noexcept {
  return Status::not_supported;
}

uint64_t ticks_per_ms() noexcept { return 1000000; }
int multiprocessors() noexcept { return 1; }

#define STRATA_FUSED_INSTANTIATE(T)                                                       \
  template Status launch_peer<T>(const proto::Args<T>&, bool, int, bool, void*) noexcept; \
  template Status launch_local<T>(const T*, T*, const T*, T*, int64_t, int64_t, float, bool, void*) noexcept;
STRATA_FUSED_INSTANTIATE(float)
STRATA_FUSED_INSTANTIATE(math::Bf16)
STRATA_FUSED_INSTANTIATE(math::F16)
#undef STRATA_FUSED_INSTANTIATE

}  // namespace strata::fused::kernels
