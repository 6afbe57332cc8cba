#include "interposer/transfer/plan.hpp"

#include "base/config.hpp"

#include <climits>

namespace strata::interposer {
namespace {
config::BoolParam g_disable{"STRATA_DISABLE", false,
                            "Turn the interposer into a pure pass-through: every MPI call goes to the library untouched"};

Plan library(const char* reason) {
  Plan p;
  p.reason = reason;
  return p;
}
}  // namespace

bool disabled() { return g_disable.get(); }

Plan plan_buffer(const void* buf, int64_t count, MPI_Datatype type, HostOp op) {
  if (count <= 0) return library("count <= 0");
  if (buf == MPI_BOTTOM) return library("MPI_BOTTOM (absolute addresses)");
  std::shared_ptr<const TypeInfo> info = type_cache().find(type);
  if (!info) return library("not a committed reducible derived datatype");
  Plan p;
  p.layout = BufferLayout(std::move(info), count);
  const StridedBlock& layout = p.layout.block();
  p.bytes = layout.packed_bytes();
  if (layout.contiguous()) return library("contiguous");
  if (p.bytes > INT_MAX) return library("more than INT_MAX packed bytes");
  if (!use_strata_host_pack(op, p.bytes, layout.block)) return library("the model prefers the library");
  p.path = Path::host_pack;
  return p;
}

}  // namespace strata::interposer
