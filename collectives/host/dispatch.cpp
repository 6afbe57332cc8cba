// The entry points of host_collectives.hpp: argument checks, MPI_IN_PLACE
// resolved into plain buffers (as MPI defines it for each collective), and
// the algorithm's code chosen: a flat family on h.comm, or the hierarchical
// forms over h.levels with the library inside each level.
#include "collectives/host/internal.hpp"

#include "base/log.hpp"

#include <cstdint>

namespace strata::coll::host {
namespace {

using detail::Ctx;
using detail::Flat;
using detail::Split;

// Where a call goes: `flat` on h.comm, or the hierarchical code with `inner`.
struct Route {
  const Flat* flat = nullptr;
  const Flat* inner = nullptr;
};

bool library_reduces(DataType type) noexcept {
  MPI_Datatype t;
  return mpi_type_of(type, &t);
}

Status route(Algorithm algorithm, const Hierarchy& h, DataType type, bool reduces, Route* r) noexcept {
  switch (algorithm) {
    case Algorithm::library:
      if (reduces && !library_reduces(type)) {
        STRATA_LOG(error, kColl, "the MPI library has no %s reductions",
                   type == DataType::float16 ? "float16" : "bfloat16");
        return Status::not_supported;
      }
      r->flat = &detail::kLibrary;
      return Status::ok;
    case Algorithm::ring:
    case Algorithm::recursive: r->flat = detail::flat_of(algorithm); return Status::ok;
    case Algorithm::hierarchical:
    case Algorithm::two_level:
      if (h.levels.empty()) {  // no hierarchy: flat, the library where it can
        r->flat = !reduces || library_reduces(type) ? &detail::kLibrary : &detail::kRing;
      } else {
        r->inner = &detail::kLibrary;
      }
      return Status::ok;
    case Algorithm::automatic: break;
  }
  STRATA_LOG(error, kColl, "host collective: algorithm %d is not a concrete algorithm", static_cast<int>(algorithm));
  return Status::invalid_argument;
}

// Type, op and communicator valid; *ctx describes h.comm; the largest buffer
// (count * size elements for reduce_scatter and allgather) fits a size_t of
// bytes with room to spare.
Status check(DataType type, ReduceOp op, const Hierarchy& h, size_t count, Ctx* ctx) noexcept {
  if (!detail::valid_type(type) || !detail::valid_op(op)) {
    STRATA_LOG(error, kColl, "host collective: invalid data type %d or op %d", static_cast<int>(type),
               static_cast<int>(op));
    return Status::invalid_argument;
  }
  STRATA_TRY(detail::make_ctx(h.comm, type, op, ctx));
  if (count > SIZE_MAX / 4 / ctx->element / static_cast<size_t>(ctx->size)) {
    STRATA_LOG(error, kColl, "host collective: count %zu too large", count);
    return Status::invalid_argument;
  }
  return Status::ok;
}

Status check_root(int root, const Ctx& c) noexcept {
  if (root < 0 || root >= c.size) {
    STRATA_LOG(error, kColl, "host collective: root %d outside the communicator of %d ranks", root, c.size);
    return Status::invalid_argument;
  }
  return Status::ok;
}

Status check_buffers(const void* a, const void* b) noexcept {
  if (a == nullptr || b == nullptr) {
    STRATA_LOG(error, kColl, "host collective: null buffer with a non-zero count");
    return Status::invalid_argument;
  }
  return Status::ok;
}

}  // namespace

Status allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, Algorithm algorithm,
                 const Hierarchy& h) noexcept {
  Ctx c;
  STRATA_TRY(check(type, op, h, count, &c));
  Route r;
  STRATA_TRY(route(algorithm, h, type, true, &r));
  if (count == 0) return Status::ok;
  STRATA_TRY(check_buffers(send, recv));
  const void* in = send == MPI_IN_PLACE ? recv : send;
  if (r.flat != nullptr) return r.flat->allreduce(in, recv, count, c);
  return detail::hier_allreduce(in, recv, count, type, op, h, *r.inner);
}

Status reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op, Algorithm algorithm,
                      const Hierarchy& h) noexcept {
  Ctx c;
  STRATA_TRY(check(type, op, h, recv_count, &c));
  Route r;
  STRATA_TRY(route(algorithm, h, type, true, &r));
  if (recv_count == 0) return Status::ok;
  STRATA_TRY(check_buffers(send, recv));
  // In place, the whole input is in recv and my block goes to its start.
  const void* in = send == MPI_IN_PLACE ? recv : send;
  const Split s{recv_count * static_cast<size_t>(c.size), c.size};
  if (r.flat != nullptr) return r.flat->reduce_scatter(in, recv, s, c);
  return detail::hier_reduce_scatter(in, recv, recv_count, type, op, h, *r.inner);
}

Status allgather(const void* send, void* recv, size_t send_count, DataType type, Algorithm algorithm,
                 const Hierarchy& h) noexcept {
  Ctx c;
  STRATA_TRY(check(type, ReduceOp::sum, h, send_count, &c));
  Route r;
  STRATA_TRY(route(algorithm, h, type, false, &r));
  if (send_count == 0) return Status::ok;
  STRATA_TRY(check_buffers(send, recv));
  // In place, my block is already at recv + rank * send_count.
  const void* mine = send == MPI_IN_PLACE ? detail::at(recv, c.bytes(send_count) * static_cast<size_t>(c.rank)) : send;
  const Split s{send_count * static_cast<size_t>(c.size), c.size};
  if (r.flat != nullptr) return r.flat->allgather(mine, recv, s, c);
  return detail::hier_allgather(mine, recv, send_count, type, h, *r.inner);
}

Status broadcast(void* buffer, size_t count, DataType type, int root, Algorithm algorithm,
                 const Hierarchy& h) noexcept {
  Ctx c;
  STRATA_TRY(check(type, ReduceOp::sum, h, count, &c));
  STRATA_TRY(check_root(root, c));
  Route r;
  STRATA_TRY(route(algorithm, h, type, false, &r));
  if (count == 0) return Status::ok;
  STRATA_TRY(check_buffers(buffer, buffer));
  if (r.flat != nullptr) return r.flat->broadcast(buffer, count, root, c);
  return detail::hier_broadcast(buffer, count, type, root, h, *r.inner);
}

Status reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root, Algorithm algorithm,
              const Hierarchy& h) noexcept {
  Ctx c;
  STRATA_TRY(check(type, op, h, count, &c));
  STRATA_TRY(check_root(root, c));
  Route r;
  STRATA_TRY(route(algorithm, h, type, true, &r));
  if (count == 0) return Status::ok;
  const bool is_root = c.rank == root;
  if (send == MPI_IN_PLACE && !is_root) {
    STRATA_LOG(error, kColl, "reduce: MPI_IN_PLACE is only valid at the root");
    return Status::invalid_argument;
  }
  // recv is significant at the root only; in place, the root's input is recv.
  const void* in = send == MPI_IN_PLACE ? recv : send;
  void* out = is_root ? recv : nullptr;
  STRATA_TRY(check_buffers(in, is_root ? recv : in));
  if (r.flat != nullptr) return r.flat->reduce(in, out, count, root, c);
  return detail::hier_reduce(in, out, count, type, op, root, h, *r.inner);
}

}  // namespace strata::coll::host
