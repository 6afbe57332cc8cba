#include "interposer/transfer/plan.hpp"

#include "base/config.hpp"
#include "interposer/transfer/gpu_aware.hpp"
#include "interposer/types/fast_types.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <climits>

namespace strata::interposer {
namespace {
config::BoolParam g_disable{
    "STRATA_DISABLE", false,
    "Turn the interposer into a pure pass-through: every MPI call goes to the library untouched"};

Plan library(const char* reason) {
  Plan p;
  p.reason = reason;
  return p;
}

Plan library_host_contiguous(const char* reason) {
  Plan p = library(reason);
  p.host_contiguous = true;
  return p;
}

// GPU data. A GPU-aware library takes contiguous data as it is; otherwise
// nothing may reach the library with a device pointer.
Plan plan_device(const void* buf, int64_t count, std::shared_ptr<const TypeInfo> info, int device, Access access) {
  const bool aware = mpi_is_gpu_aware();
  Plan p;
  p.device = device;
  p.span = span_of(info->layout, count);
  if (!info->reducible) {
    if (aware) return library("GPU-aware library, irreducible datatype");
    p.path = Path::device_span;
    p.reason = "an irreducible datatype in GPU memory";
    return p;
  }
  p.layout = BufferLayout(std::move(info), count);
  const StridedBlock& layout = p.layout.block();
  p.bytes = layout.packed_bytes();
  if (aware && layout.contiguous()) return library("GPU-aware library, contiguous data");
  if (p.bytes > INT_MAX) {  // beyond an MPI_PACKED count: the library packs the host copy
    p.path = Path::device_span;
    p.reason = "more than INT_MAX packed bytes in GPU memory";
    return p;
  }
  p.method = choose_method(p.bytes, layout.contiguous() ? p.bytes : layout.block, p.span.hi - p.span.lo);
  if (p.method == Method::span && access == Access::write) p.method = Method::oneshot;  // see device_span
  p.path = p.method == Method::span ? Path::device_span : Path::device_pack;
  return p;
}

}  // namespace

Plan isend_plan(Plan plan) {
  if (plan.path == Path::device_span && plan.method == Method::span && plan.layout.block().contiguous()) {
    plan.method = Method::oneshot;
    plan.path = Path::device_pack;
  }
  return plan;
}

const char* to_string(Path path) {
  switch (path) {
    case Path::library: return "library";
    case Path::host_pack: return "strata host pack";
    case Path::device_pack: return "strata device pack";
    case Path::device_span: return "device span copy";
  }
  return "?";
}

int g_disabled = -1;

int read_disable_switch() noexcept {
  const int d = g_disable.get() ? 1 : 0;
  __atomic_store_n(&g_disabled, d, __ATOMIC_RELAXED);
  return d;
}

Plan plan_buffer(const void* buf, int64_t count, MPI_Datatype type, HostOp op, Access access) {
  if (count <= 0) return library("count <= 0");
  if (buf == MPI_BOTTOM) return library("MPI_BOTTOM (absolute addresses)");
  // The pass-through path: no lock, no allocation (fast_types.hpp).
  const FastType fast = fast_type(type);
  if (fast.shape != TypeShape::unknown && !gpu::maybe_device(buf)) {
    if (fast.shape == TypeShape::contiguous) return library_host_contiguous("contiguous host data");
    if (!fast.reducible) return library("irreducible datatype");
    if (fast.block > 0 && fast.size > 0 && count <= INT_MAX / fast.size &&
        !use_strata_host_pack(op, fast.size * count, fast.block)) {
      return library("the model prefers the library");
    }
  }
  std::shared_ptr<const TypeInfo> info = type_cache().find_usable(type);
  if (!info) return library("not a committed datatype (the library reports any error)");
  // Classify the first byte the data touches, not the buffer pointer: with a
  // negative lower bound the pointer itself may lie outside the allocation.
  const Span span = span_of(info->layout, count);
  const device::Pointer where = gpu::classify(static_cast<const char*>(buf) + span.lo);
  if (where.kind == device::MemoryKind::device || where.kind == device::MemoryKind::managed) {
    return plan_device(buf, count, std::move(info), where.device, access);
  }
  if (!info->reducible) return library("irreducible datatype");
  Plan p;
  p.layout = BufferLayout(std::move(info), count);
  const StridedBlock& layout = p.layout.block();
  p.bytes = layout.packed_bytes();
  if (layout.contiguous()) return library_host_contiguous("contiguous");
  if (p.bytes > INT_MAX) return library("more than INT_MAX packed bytes");
  if (!use_strata_host_pack(op, p.bytes, layout.block)) return library("the model prefers the library");
  p.path = Path::host_pack;
  return p;
}

}  // namespace strata::interposer
