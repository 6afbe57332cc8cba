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
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/host_staging.hpp"
#include "interposer/transfer/trace.hpp"

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
  if (PMPI_Type_contiguous(static_cast<int>(bytes), MPI_PACKED, &t) != MPI_SUCCESS ||
      PMPI_Type_commit(&t) != MPI_SUCCESS) {
    return MPI_DATATYPE_NULL;
  }
  g_byte_types.emplace(bytes, t);
  return t;
}

// One side (send or receive) of an all-to-all over `peers` peers with one
// datatype, after packing: staging, the byte type, and dense displacements.
struct PackedSide {
  bool active = false;
  std::shared_ptr<const TypeInfo> type;
  HostStaging staging;
  MPI_Datatype byte_type = MPI_DATATYPE_NULL;
  std::vector<int> displs;  // in elements, dense
};

// Decides and prepares one side; inactive when the library should do it.
PackedSide prepare_side(const char* call, const char* side, const void* buf, int peers, const int counts[],
                        MPI_Datatype type) {
  PackedSide s;
  if (buf == MPI_IN_PLACE || buf == MPI_BOTTOM || peers <= 0) return s;
  std::shared_ptr<const TypeInfo> info = type_cache().find(type);
  if (!info || info->layout.element.contiguous() || info->layout.size <= 0) return s;
  int64_t total = 0;
  for (int i = 0; i < peers; ++i) {
    if (counts[i] < 0) return s;  // the library reports it
    total += counts[i];
  }
  const int64_t bytes = total * info->layout.size;
  if (total == 0 || total > INT_MAX || bytes > INT_MAX) return s;
  Plan plan;
  plan.layout = BufferLayout(info, total);
  plan.bytes = bytes;
  plan.path = use_strata_host_pack(HostOp::transfer, bytes, info->layout.element.block) ? Path::host_pack
                                                                                        : Path::library;
  plan.reason = "the model prefers the library";
  trace_plan(call, side, plan);
  if (plan.path == Path::library) return s;
  s.byte_type = byte_type(info->layout.size);
  s.staging = HostStaging::acquire(bytes);
  if (s.byte_type == MPI_DATATYPE_NULL || !s.staging) return PackedSide{};
  s.displs.resize(static_cast<size_t>(peers));
  int running = 0;
  for (int i = 0; i < peers; ++i) {
    s.displs[static_cast<size_t>(i)] = running;
    running += counts[i];
  }
  s.type = std::move(info);
  s.active = true;
  return s;
}

// Packs (or, after the exchange, unpacks) every peer's part of one side.
void pack_side(const PackedSide& s, const void* user, int peers, const int counts[], const int displs[], bool pack) {
  const TypeLayout& t = s.type->layout;
  for (int i = 0; i < peers; ++i) {
    if (counts[i] == 0) continue;
    StridedBlock part = repeat(t.element, counts[i]);
    char* base = static_cast<char*>(const_cast<void*>(user)) + static_cast<int64_t>(displs[i]) * t.extent;
    char* packed = s.staging.data() + static_cast<int64_t>(s.displs[static_cast<size_t>(i)]) * t.size;
    if (pack) {
      pack_host(part, base, packed);
    } else {
      unpack_host(part, packed, base);
    }
  }
}

// Neighbour counts of a topology communicator: (indegree, outdegree).
bool neighbor_counts(MPI_Comm comm, int* in, int* out) {
  int topo = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return false;
  if (topo == MPI_CART) {
    int ndims = 0;
    if (PMPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS) return false;
    *in = *out = 2 * ndims;
    return true;
  }
  if (topo == MPI_GRAPH) {
    int rank = 0, n = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, rank, &n) != MPI_SUCCESS) {
      return false;
    }
    *in = *out = n;
    return true;
  }
  if (topo == MPI_DIST_GRAPH) {
    int weighted = 0;
    return PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted) == MPI_SUCCESS;
  }
  return false;
}

using VCall = int (*)(const void*, const int[], const int[], MPI_Datatype, void*, const int[], const int[],
                      MPI_Datatype, MPI_Comm);

int alltoallv_like(const char* call, VCall library, int send_peers, int recv_peers, const void* sendbuf,
                   const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  PackedSide send = prepare_side(call, "send", sendbuf, send_peers, sendcounts, sendtype);
  PackedSide recv = prepare_side(call, "recv", recvbuf, recv_peers, recvcounts, recvtype);
  if (!send.active && !recv.active) {
    return library(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  if (send.active) {
    pack_side(send, sendbuf, send_peers, sendcounts, sdispls, true);
    counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
  }
  int rc = library(send.active ? send.staging.data() : sendbuf, sendcounts,
                   send.active ? send.displs.data() : sdispls, send.active ? send.byte_type : sendtype,
                   recv.active ? recv.staging.data() : recvbuf, recvcounts,
                   recv.active ? recv.displs.data() : rdispls, recv.active ? recv.byte_type : recvtype, comm);
  if (rc == MPI_SUCCESS && recv.active) {
    pack_side(recv, recvbuf, recv_peers, recvcounts, rdispls, false);
    counters().recvs_unpacked.fetch_add(1, std::memory_order_relaxed);
  }
  return rc;
}

}  // namespace

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  int inter = 0, peers = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_size(comm, &peers) != MPI_SUCCESS) {
    return real().Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  return alltoallv_like("MPI_Alltoallv", real().Alltoallv, peers, peers, sendbuf, sendcounts, sdispls, sendtype,
                        recvbuf, recvcounts, rdispls, recvtype, comm);
}

int neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm) {
  int in = 0, out = 0;
  if (comm == MPI_COMM_NULL || !neighbor_counts(comm, &in, &out)) {
    return real().Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                     comm);
  }
  return alltoallv_like("MPI_Neighbor_alltoallv", real().Neighbor_alltoallv, out, in, sendbuf, sendcounts, sdispls,
                        sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

namespace {

// One side of a Neighbor_alltoallw: per neighbour, either the user's type at
// the user's address, or packed bytes in the staging buffer; every address
// absolute, for MPI_BOTTOM.
struct WSide {
  bool any = false;  // some neighbour's data is packed
  HostStaging staging;
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
    Plan p = plan_buffer(static_cast<const char*>(buf) + displs[k], counts[k], types[k], HostOp::transfer);
    trace_plan("MPI_Neighbor_alltoallw", side, p);
    if (p.path != Path::host_pack) continue;
    w.layouts[k] = std::move(p.layout);
    w.offsets[k] = total;
    total += p.bytes;
  }
  if (total > 0 && total <= INT_MAX) w.staging = HostStaging::acquire(total);
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
    PMPI_Get_address(where, &w.addresses[k]);
  }
}

}  // namespace

int neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm) {
  auto library = [&] {
    return real().Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
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
  WSide send, recv;
  prepare_w("send", sendbuf, out, sendcounts, sdispls, sendtypes, send);
  prepare_w("recv", recvbuf, in, recvcounts, rdispls, recvtypes, recv);
  if (!send.any && !recv.any) return library();
  for (int i = 0; i < out; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (send.offsets[k] >= 0) {
      pack_host(send.layouts[k].block(), static_cast<const char*>(sendbuf) + sdispls[i], send.staging.data() + send.offsets[k]);
    }
  }
  if (send.any) counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
  int rc = real().Neighbor_alltoallw(MPI_BOTTOM, sendcounts, send.addresses.data(), send.types.data(), MPI_BOTTOM,
                                     recvcounts, recv.addresses.data(), recv.types.data(), comm);
  if (rc == MPI_SUCCESS) {
    for (int i = 0; i < in; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (recv.offsets[k] >= 0) {
        unpack_host(recv.layouts[k].block(), recv.staging.data() + recv.offsets[k], static_cast<char*>(recvbuf) + rdispls[i]);
      }
    }
    if (recv.any) counters().recvs_unpacked.fetch_add(1, std::memory_order_relaxed);
  }
  return rc;
}

void free_byte_types() {
  std::lock_guard<std::mutex> lock(g_byte_types_mutex);
  for (auto& [bytes, t] : g_byte_types) PMPI_Type_free(&t);
  g_byte_types.clear();
}

}  // namespace strata::interposer
