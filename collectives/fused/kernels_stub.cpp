// The fused kernels in a build without CUDA or HIP: every launch answers
// not_supported (the peer path is never set up; device objects are refused).
#include "collectives/fused/kernels.hpp"

namespace strata::fused::kernels {

int threads_for(int64_t /*hidden*/, int /*vector*/) { return 0; }

template <class T>
Status launch_peer(const proto::Args<T>& /*args*/, proto::Kind /*kind*/, int /*blocks*/, bool /*vector*/,
                   void* /*stream*/, bool /*overlap_launch*/, int /*cluster*/) noexcept {
  return Status::not_supported;
}

bool overlap_launch_supported() noexcept { return false; }
int cluster_max() noexcept { return 1; }

Status launch_fill(void* /*words*/, size_t /*count*/, uint32_t /*value*/, void* /*stream*/) noexcept {
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

template Status launch_peer<float>(const proto::Args<float>&, proto::Kind, int, bool, void*, bool, int) noexcept;
template Status launch_peer<math::Bf16>(const proto::Args<math::Bf16>&, proto::Kind, int, bool, void*, bool,
                                        int) noexcept;
template Status launch_peer<math::F16>(const proto::Args<math::F16>&, proto::Kind, int, bool, void*, bool,
                                       int) noexcept;
template Status launch_local<float>(const float*, float*, const float*, float*, int64_t, int64_t, float, bool,
                                    void*) noexcept;
template Status launch_local<math::Bf16>(const math::Bf16*, math::Bf16*, const math::Bf16*, math::Bf16*, int64_t,
                                         int64_t, float, bool, void*) noexcept;
template Status launch_local<math::F16>(const math::F16*, math::F16*, const math::F16*, math::F16*, int64_t, int64_t,
                                        float, bool, void*) noexcept;

}  // namespace strata::fused::kernels
