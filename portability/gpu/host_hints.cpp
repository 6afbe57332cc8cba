#include "portability/gpu/host_hints.hpp"

namespace strata::gpu::hints {

std::atomic<uintptr_t> g_host[kSlots] = {};
std::atomic<int> g_backend{-1};

}  // namespace strata::gpu::hints
