// All-to-all with derived datatypes.
//
// Alltoallv: one side whose datatype Strata packs is packed, peer by peer,
// into one staging buffer laid out densely in peer order, and the library
// moves it with a contiguous "element of N packed bytes" type (counts stay in
// elements, displacements become the dense prefix sums).
// Neighbor_alltoallw: per neighbour; packed neighbours point into a staging
// buffer, the others at the user's buffer, all by absolute address from
// MPI_BOTTOM.
#include "interposer/transfer/all_to_all.hpp"

#include "base/log.hpp"
#include "fault/hooks.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/gpu_aware.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/trace.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"
#include "portability/mover/device_transfer.hpp"
#include "portability/mover/staging.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <vector>

namespace strata::interposer {
namespace {

using mpi::real;

// Contiguous types of N packed bytes, created once per N.
std::mutex g_byte_types_mutex;
std::map<int64_t, MPI_Datatype> g_byte_types;

MPI_Datatype byte_type(int64_t bytes) {
  std::lock_guard<std::mutex> lock(g_byte_types_mutex);
  auto it = g_byte_types.find(bytes);
  if (it != g_byte_types.end()) return it->second;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (real().MPI_Type_contiguous(static_cast<int>(bytes), MPI_PACKED, &t) != MPI_SUCCESS ||
      real().MPI_Type_commit(&t) != MPI_SUCCESS) {
    return MPI_DATATYPE_NULL;
  }
  g_byte_types.emplace(bytes, t);
  return t;
}

// One side (send or receive) of a v-collective over `peers` peers with one
// datatype, as the plan for all its elements says:
//   host_pack / device_pack: every peer's part packed densely in peer order
//     (displacements become prefix sums of the counts) and moved by the
//     library as elements of a contiguous "N packed bytes" type;
//   device_span: the bytes all parts span copied to pinned host memory, where
//     the library works with the user's own type and displacements.
struct VSide {
  Path path = Path::library;
  std::shared_ptr<const TypeInfo> type;
  std::vector<int> dense;  // packed: dense displacements, in elements
  MPI_Datatype byte_type = MPI_DATATYPE_NULL;
  mover::Staging host;          // host_pack: the packed bytes; device_span: the span's copy
  mover::DeviceMessage device;  // device_pack
  std::vector<StridedBlock> layouts;
  std::vector<mover::DevicePart> parts;  // device_pack: one per peer with elements
  Span span;                             // device_span

  const void* buffer(const void* user) const {
    switch (path) {
      case Path::host_pack: return host.data();
      case Path::device_pack: return device.mpi_buffer();
      case Path::device_span: return host.data() - span.lo;
      case Path::library: break;
    }
    return user;
  }
  const int* displs(const int* user) const { return dense.empty() ? user : dense.data(); }
  MPI_Datatype datatype(MPI_Datatype user) const { return byte_type == MPI_DATATYPE_NULL ? user : byte_type; }
};

// The bytes all parts of a v-side can touch.
Span union_span(const TypeLayout& t, int peers, const int counts[], const int displs[]) {
  Span all{INT64_MAX, INT64_MIN};
  for (int i = 0; i < peers; ++i) {
    const Span one = span_of(t, counts[i]);
    if (one.hi <= one.lo) continue;
    const int64_t at = static_cast<int64_t>(displs[i]) * t.extent;
    all.lo = std::min(all.lo, at + one.lo);
    all.hi = std::max(all.hi, at + one.hi);
  }
  return all.hi > all.lo ? all : Span{};
}

// Decides and prepares one side (packs the send side). Returns an MPI error
// code when a Strata step failed; the side stays on the library path when
// the library should do it.
int prepare_vside(const char* call, const char* side, const void* buf, int peers, const int counts[],
                  const int displs[], MPI_Datatype type, bool sending, VSide* s) {
  if (buf == MPI_IN_PLACE || buf == MPI_BOTTOM || peers <= 0) return MPI_SUCCESS;
  int64_t total = 0;
  for (int i = 0; i < peers; ++i) {
    if (counts[i] < 0) return MPI_SUCCESS;  // the library reports it
    total += counts[i];
  }
  Plan plan = plan_buffer(buf, total, type, HostOp::transfer, sending ? Access::read : Access::write);
  trace_plan(call, side, plan);
  if (!sending && plan.path == Path::device_span) return kStageWholeCall;  // written exactly only by the staged call
  if (plan.path == Path::library) return MPI_SUCCESS;
  std::shared_ptr<const TypeInfo> info = type_cache().find_usable(type);
  if (!info) return MPI_SUCCESS;
  if (plan.path == Path::device_span) {
    s->span = union_span(info->layout, peers, counts, displs);
    const Status st =
        mover::copy_span_to_host(plan.device, static_cast<const char*>(buf), s->span.lo, s->span.hi, &s->host);
    if (st != Status::ok) return mpi::error_class(st);
    s->path = Path::device_span;
    return MPI_SUCCESS;
  }
  const int64_t bytes = total * info->layout.size;
  if (total > INT_MAX) return MPI_SUCCESS;
  s->byte_type = byte_type(info->layout.size);
  if (s->byte_type == MPI_DATATYPE_NULL) return MPI_SUCCESS;
  s->dense.resize(static_cast<size_t>(peers));
  int running = 0;
  for (int i = 0; i < peers; ++i) {
    s->dense[static_cast<size_t>(i)] = running;
    running += counts[i];
  }
  s->type = info;
  if (plan.path == Path::host_pack) {
    s->host = mover::Staging::host(bytes);
    if (!s->host) return MPI_SUCCESS;
    s->path = Path::host_pack;
    return MPI_SUCCESS;
  }
  // device_pack: one part per peer with elements.
  s->layouts.reserve(static_cast<size_t>(peers));
  for (int i = 0; i < peers; ++i) {
    if (counts[i] == 0) continue;
    s->layouts.push_back(repeat(info->layout.element, counts[i]));
    char* at = static_cast<char*>(const_cast<void*>(buf)) + static_cast<int64_t>(displs[i]) * info->layout.extent;
    s->parts.push_back(mover::DevicePart{&s->layouts.back(), at, s->dense[static_cast<size_t>(i)] * info->layout.size});
  }
  s->device = mover::DeviceMessage(plan.device, plan.method);  // the plan's: never span for data written
  Status st = s->device.reserve(bytes);
  if (st == Status::ok && sending) st = mover::device_pack(s->device, s->parts.data(), s->parts.size());
  if (st != Status::ok) return mpi::error_class(st);
  s->path = Path::device_pack;
  return MPI_SUCCESS;
}

// Packs (before the exchange) or unpacks (after it) a host_pack side.
void move_host_side(const VSide& s, const void* user, int peers, const int counts[], const int displs[], bool pack) {
  const TypeLayout& t = s.type->layout;
  for (int i = 0; i < peers; ++i) {
    if (counts[i] == 0) continue;
    StridedBlock part = repeat(t.element, counts[i]);
    char* base = static_cast<char*>(const_cast<void*>(user)) + static_cast<int64_t>(displs[i]) * t.extent;
    char* packed = s.host.data() + static_cast<int64_t>(s.dense[static_cast<size_t>(i)]) * t.size;
    if (pack) {
      pack_host(part, base, packed);
    } else {
      unpack_host(part, packed, base);
    }
  }
}

// After a successful exchange: the receive side's bytes into the user's buffer.
int finish_recv_vside(VSide& s, void* user, int peers, const int counts[], const int displs[], int64_t bytes) {
  switch (s.path) {
    case Path::library: return MPI_SUCCESS;
    case Path::host_pack: move_host_side(s, user, peers, counts, displs, false); break;
    case Path::device_pack:
      if (const Status st = mover::device_unpack(s.device, s.parts.data(), s.parts.size(), bytes); st != Status::ok) {
        return mpi::error_class(st);
      }
      break;
    case Path::device_span:  // only planned for the send side
      return MPI_SUCCESS;
  }
  counters().recvs_unpacked.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

// Neighbour counts of a topology communicator: (indegree, outdegree).
bool neighbor_counts(MPI_Comm comm, int* in, int* out) {
  int topo = MPI_UNDEFINED;
  if (real().MPI_Topo_test(comm, &topo) != MPI_SUCCESS) return false;
  if (topo == MPI_CART) {
    int ndims = 0;
    if (real().MPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS) return false;
    *in = *out = 2 * ndims;
    return true;
  }
  if (topo == MPI_GRAPH) {
    int rank = 0, n = 0;
    if (real().MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
        real().MPI_Graph_neighbors_count(comm, rank, &n) != MPI_SUCCESS) {
      return false;
    }
    *in = *out = n;
    return true;
  }
  if (topo == MPI_DIST_GRAPH) {
    int weighted = 0;
    return real().MPI_Dist_graph_neighbors_count(comm, in, out, &weighted) == MPI_SUCCESS;
  }
  return false;
}

using VCall = int (*)(const void*, const int[], const int[], MPI_Datatype, void*, const int[], const int[],
                      MPI_Datatype, MPI_Comm);

int alltoallv_like(const char* call, VCall library, int send_peers, int recv_peers, const void* sendbuf,
                   const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  // MPI_IN_PLACE sends what the receive buffer holds: a packed receive side
  // would hand the library a staging buffer it never filled. The staged
  // library call does it on the user's bytes (host memory: the library's
  // call as it is).
  if (sendbuf == MPI_IN_PLACE) return kStageWholeCall;
  VSide send, recv;
  if (int rc = prepare_vside(call, "recv", recvbuf, recv_peers, recvcounts, rdispls, recvtype, false, &recv);
      rc != MPI_SUCCESS) {
    return rc == kStageWholeCall ? rc : raise_error(comm, rc, call);
  }
  if (int rc = prepare_vside(call, "send", sendbuf, send_peers, sendcounts, sdispls, sendtype, true, &send);
      rc != MPI_SUCCESS) {
    return raise_error(comm, rc, call);
  }
  if (send.path == Path::library && recv.path == Path::library) {
    return library(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  if (send.path == Path::host_pack) move_host_side(send, sendbuf, send_peers, sendcounts, sdispls, true);
  if (send.path == Path::host_pack || send.path == Path::device_pack) {
    counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
  }
  int rc =
      library(send.buffer(sendbuf), sendcounts, send.displs(sdispls), send.datatype(sendtype),
              const_cast<void*>(recv.buffer(recvbuf)), recvcounts, recv.displs(rdispls), recv.datatype(recvtype), comm);
  if (rc == MPI_SUCCESS && recv.path != Path::library) {
    int64_t bytes = 0;
    for (int i = 0; i < recv_peers; ++i) bytes += recvcounts[i];
    bytes *= recv.type ? recv.type->layout.size : 0;
    if (int done = finish_recv_vside(recv, recvbuf, recv_peers, recvcounts, rdispls, bytes); done != MPI_SUCCESS) {
      rc = raise_error(comm, done, call);
    }
  }
  return rc;
}

}  // namespace

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::alltoallv, comm, uint64_t{0}, -1, nullptr);
  int inter = 0, peers = 0;
  if (comm == MPI_COMM_NULL || real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
      real().MPI_Comm_size(comm, &peers) != MPI_SUCCESS) {
    return real().MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  if (inter) return kStageWholeCall;  // the library's call on an intercommunicator, device buffers staged
  return alltoallv_like("MPI_Alltoallv", real().MPI_Alltoallv, peers, peers, sendbuf, sendcounts, sdispls, sendtype,
                        recvbuf, recvcounts, rdispls, recvtype, comm);
}

int neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::neighbor_alltoall, comm, uint64_t{0}, -1, nullptr);
  int in = 0, out = 0;
  if (comm == MPI_COMM_NULL || !neighbor_counts(comm, &in, &out)) {
    return real().MPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                         comm);
  }
  return alltoallv_like("MPI_Neighbor_alltoallv", real().MPI_Neighbor_alltoallv, out, in, sendbuf, sendcounts, sdispls,
                        sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

namespace {

// One side of a Neighbor_alltoallw: per neighbour, either the user's type at
// the user's address, or packed bytes in the staging buffer; every address
// absolute, for MPI_BOTTOM.
struct WSide {
  bool any = false;  // some neighbour's data is packed
  mover::Staging staging;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
  std::vector<BufferLayout> layouts;
  std::vector<int64_t> offsets;  // into staging; -1 where the library handles it
};

void prepare_w(const char* side, const void* buf, int peers, const int counts[], const MPI_Aint displs[],
               const MPI_Datatype types[], WSide& w) {
  const size_t n = static_cast<size_t>(peers);
  w.addresses.resize(n);
  w.types.assign(types, types + peers);
  w.layouts.resize(n);
  w.offsets.assign(n, -1);
  int64_t total = 0;
  for (size_t k = 0; k < n; ++k) {
    Plan p = plan_buffer(static_cast<const char*>(buf) + displs[k], counts[k], types[k], HostOp::transfer,
                         side[0] == 's' ? Access::read : Access::write);
    trace_plan("MPI_Neighbor_alltoallw", side, p);
    if (p.path != Path::host_pack) continue;
    w.layouts[k] = std::move(p.layout);
    w.offsets[k] = total;
    total += p.bytes;
  }
  if (total > 0 && total <= INT_MAX) w.staging = mover::Staging::host(total);
  for (size_t k = 0; k < n; ++k) {
    if (w.offsets[k] >= 0 && w.staging) {
      w.types[k] = byte_type(w.layouts[k].block().packed_bytes() / counts[k]);
    }
    if (w.types[k] == MPI_DATATYPE_NULL || !w.staging) {  // the library's after all
      w.types[k] = types[k];
      w.offsets[k] = -1;
    }
    w.any = w.any || w.offsets[k] >= 0;
    const char* where = w.offsets[k] >= 0 ? w.staging.data() + w.offsets[k] : static_cast<const char*>(buf) + displs[k];
    real().MPI_Get_address(where, &w.addresses[k]);
  }
}

}  // namespace

namespace {

// The send side of a Neighbor_alltoallw in GPU memory: the bytes all
// neighbours' parts span are copied to pinned host memory and the library
// reads there with the user's own types and displacements (reading a span
// is safe; writing one back is not, see plan.hpp).
struct WSpan {
  bool active = false;
  mover::Staging host;
  Span span;
};

bool on_gpu(const void* buf, const Span& span, int* device) {
  const device::Pointer where = gpu::classify(static_cast<const char*>(buf) + span.lo);
  *device = where.device;
  return where.kind == device::MemoryKind::device || where.kind == device::MemoryKind::managed;
}

// The bytes all parts of one side can touch; false when a type is unknown.
bool w_span(int peers, const int counts[], const MPI_Aint displs[], const MPI_Datatype types[], Span* all) {
  *all = Span{INT64_MAX, INT64_MIN};
  for (int i = 0; i < peers; ++i) {
    std::shared_ptr<const TypeInfo> info = type_cache().find_usable(types[i]);
    if (!info) return false;  // an unknown type: the library reports it
    const Span one = span_of(info->layout, counts[i]);
    if (one.hi <= one.lo) continue;
    all->lo = std::min(all->lo, displs[i] + one.lo);
    all->hi = std::max(all->hi, displs[i] + one.hi);
  }
  if (all->hi <= all->lo) *all = Span{};
  return true;
}

int prepare_wspan(const void* buf, int peers, const int counts[], const MPI_Aint displs[], const MPI_Datatype types[],
                  WSpan* w) {
  Span all;
  int device = -1;
  if (!w_span(peers, counts, displs, types, &all) || all.hi <= all.lo || !on_gpu(buf, all, &device) ||
      mpi_is_gpu_aware()) {
    return MPI_SUCCESS;
  }
  w->span = all;
  if (mover::copy_span_to_host(device, static_cast<const char*>(buf), all.lo, all.hi, &w->host) != Status::ok) {
    return MPI_ERR_INTERN;
  }
  w->active = true;
  return MPI_SUCCESS;
}

// The receive side in GPU memory: every neighbour's part (reducible types
// only) is unpacked by the kernels from one packed message, received as
// contiguous byte types at absolute addresses.
struct WDevice {
  bool active = false;
  mover::DeviceMessage message;
  std::vector<StridedBlock> layouts;
  std::vector<mover::DevicePart> parts;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
  int64_t bytes = 0;
};

int prepare_wdevice(void* buf, int peers, const int counts[], const MPI_Aint displs[], const MPI_Datatype types[],
                    WDevice* w) {
  Span all;
  int device = -1;
  if (!w_span(peers, counts, displs, types, &all) || all.hi <= all.lo || !on_gpu(buf, all, &device) ||
      mpi_is_gpu_aware()) {
    return MPI_SUCCESS;
  }
  const size_t n = static_cast<size_t>(peers);
  w->layouts.reserve(n);
  w->addresses.assign(n, 0);
  w->types.assign(types, types + peers);
  std::vector<int64_t> offsets(n, 0);
  int64_t block = INT64_MAX;
  for (size_t k = 0; k < n; ++k) {
    std::shared_ptr<const TypeInfo> info = type_cache().find_usable(types[k]);
    if (!info->reducible) return kStageWholeCall;  // written exactly only by the staged call
    offsets[k] = w->bytes;
    if (counts[k] == 0) continue;
    w->layouts.push_back(repeat(info->layout.element, counts[k]));
    w->parts.push_back(mover::DevicePart{&w->layouts.back(), static_cast<char*>(buf) + displs[k], w->bytes});
    w->types[k] = byte_type(info->layout.size);
    if (w->types[k] == MPI_DATATYPE_NULL) return MPI_ERR_INTERN;
    w->bytes += w->layouts.back().packed_bytes();
    block = std::min(block, w->layouts.back().block);
  }
  if (w->bytes > INT_MAX) return kStageWholeCall;
  Method method = choose_method(w->bytes, block == INT64_MAX ? 1 : block);
  if (method == Method::span) method = Method::oneshot;
  w->message = mover::DeviceMessage(device, method);
  if (w->message.reserve(std::max<int64_t>(w->bytes, 1)) != Status::ok) return MPI_ERR_NO_MEM;
  for (size_t k = 0; k < n; ++k) real().MPI_Get_address(w->message.mpi_buffer() + offsets[k], &w->addresses[k]);
  w->active = true;
  return MPI_SUCCESS;
}

// Neighbor_alltoallw with a side in GPU memory; host sides go to the library
// as they are.
int neighbor_alltoallw_device(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, int in, int out,
                              bool* handled) {
  WSpan send;
  WDevice recv;
  if (int rc = prepare_wspan(sendbuf, out, sendcounts, sdispls, sendtypes, &send); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, "MPI_Neighbor_alltoallw");
  }
  if (int rc = prepare_wdevice(recvbuf, in, recvcounts, rdispls, recvtypes, &recv); rc != MPI_SUCCESS) {
    *handled = true;
    return rc == kStageWholeCall ? rc : raise_error(comm, rc, "MPI_Neighbor_alltoallw");
  }
  *handled = send.active || recv.active;
  if (!*handled) return MPI_SUCCESS;
  STRATA_LOG(debug, kP2p, "MPI_Neighbor_alltoallw: GPU memory (send: span copy %s, recv: device unpack %s)",
             send.active ? "yes" : "no", recv.active ? "yes" : "no");
  int rc = real().MPI_Neighbor_alltoallw(send.active ? send.host.data() - send.span.lo : sendbuf, sendcounts, sdispls,
                                         sendtypes, recv.active ? MPI_BOTTOM : recvbuf, recvcounts,
                                         recv.active ? recv.addresses.data() : rdispls,
                                         recv.active ? recv.types.data() : recvtypes, comm);
  if (rc == MPI_SUCCESS && recv.active &&
      mover::device_unpack(recv.message, recv.parts.data(), recv.parts.size(), recv.bytes) != Status::ok) {
    rc = raise_error(comm, MPI_ERR_INTERN, "MPI_Neighbor_alltoallw");
  }
  return rc;
}

}  // namespace

int neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm) {
  fault::CollScope rec(fault::OpKind::neighbor_alltoall, comm, uint64_t{0}, -1, nullptr);
  auto library = [&] {
    return real().MPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                         recvtypes, comm);
  };
  int in = 0, out = 0;
  if (comm == MPI_COMM_NULL || sendbuf == MPI_BOTTOM || recvbuf == MPI_BOTTOM || !neighbor_counts(comm, &in, &out)) {
    return library();
  }
  for (int i = 0; i < out; ++i) {
    if (sendcounts[i] < 0) return library();
  }
  for (int i = 0; i < in; ++i) {
    if (recvcounts[i] < 0) return library();
  }
  bool on_device = false;
  const int device_rc = neighbor_alltoallw_device(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                                  recvtypes, comm, in, out, &on_device);
  if (on_device || device_rc != MPI_SUCCESS) return device_rc;
  WSide send, recv;
  prepare_w("send", sendbuf, out, sendcounts, sdispls, sendtypes, send);
  prepare_w("recv", recvbuf, in, recvcounts, rdispls, recvtypes, recv);
  if (!send.any && !recv.any) return library();
  for (int i = 0; i < out; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (send.offsets[k] >= 0) {
      pack_host(send.layouts[k].block(), static_cast<const char*>(sendbuf) + sdispls[i],
                send.staging.data() + send.offsets[k]);
    }
  }
  if (send.any) counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
  int rc = real().MPI_Neighbor_alltoallw(MPI_BOTTOM, sendcounts, send.addresses.data(), send.types.data(), MPI_BOTTOM,
                                         recvcounts, recv.addresses.data(), recv.types.data(), comm);
  if (rc == MPI_SUCCESS) {
    for (int i = 0; i < in; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (recv.offsets[k] >= 0) {
        unpack_host(recv.layouts[k].block(), recv.staging.data() + recv.offsets[k],
                    static_cast<char*>(recvbuf) + rdispls[i]);
      }
    }
    if (recv.any) counters().recvs_unpacked.fetch_add(1, std::memory_order_relaxed);
  }
  return rc;
}

void free_byte_types() {
  std::lock_guard<std::mutex> lock(g_byte_types_mutex);
  for (auto& [bytes, t] : g_byte_types) real().MPI_Type_free(&t);
  g_byte_types.clear();
}

}  // namespace strata::interposer
