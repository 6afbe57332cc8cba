// The exchanges Strata routes (routed.hpp): MPI_Alltoall, MPI_Alltoallv,
// MPI_Gather(v), MPI_Scatter(v) and MPI_Allgatherv. Where every rank's
// buffers are in device memory and NCCL runs the communicator
// (coll::decide_exchange, agreed by all ranks) they run as one NCCL group of
// sends and receives (collectives/exchange.hpp); otherwise as the library's
// call, device buffers staged (MPI_Alltoallv: Strata's packed all-to-all).
//
// A rank votes for NCCL when its blocks are contiguous device memory on the
// current device, needing no copy; between two agreements a rank whose
// buffers changed kind still joins the NCCL group, its blocks packed or
// copied (ExchangeSide) and staged through device memory.
#include "interposer/handlers/routed.hpp"

#include <strata/datatype.hpp>

#include "collectives/exchange.hpp"
#include "collectives/job_facts.hpp"
#include "collectives/settings.hpp"
#include "fault/hooks.hpp"
#include "interposer/transfer/all_to_all.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/exchange_side.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/staged_call.hpp"
#include "mpi/error_class.hpp"
#include "mpi/helpers.hpp"

#include <initializer_list>

namespace strata::interposer::routed {
namespace {

using coll::Exchange;

bool contiguous(MPI_Datatype type) {
  Result<TypeLayout> t = measure_datatype(type);
  if (!t) return false;
  const TypeLayout& l = t.value();
  return l.lb == 0 && l.true_lb == 0 && l.extent == l.size && l.true_extent == l.size;
}

int64_t sum(const int counts[], int n) {
  int64_t s = 0;
  for (int i = 0; i < n; ++i) s += counts[i];
  return s;
}

// A buffer of this rank's part of the call, for its vote.
struct Part {
  const void* buffer;
  int64_t count;  // elements it holds (0: it does not count)
  MPI_Datatype type;
};

// The vote: every part with data is a contiguous type in memory of the
// current device (a rank with nothing to move does not stand in the way).
bool direct(std::initializer_list<Part> parts) {
  for (const Part& p : parts) {
    if (p.count <= 0) continue;
    if (p.buffer == MPI_IN_PLACE || !contiguous(p.type) || !coll::on_current_device({p.buffer})) return false;
  }
  return true;
}

// Decides, and on the NCCL route opens both sides (`open(sends, recvs)`),
// runs the exchange and writes the received blocks back. `library` runs
// the call otherwise.
template <typename Open, typename Library>
int exchange(Exchange kind, MPI_Comm comm, bool mine, const char* name, const Library& library, const Open& open) {
  Result<coll::Decision> d = coll::decide_exchange(kind, comm, mine);
  if (!d) return raise_error(comm, mpi::error_class(d.status()), name);
  if (d.value().route != coll::Route::nccl) return library();
  const int n = mpi::size(comm);
  ExchangeSide sends(n), recvs(n);
  if (const int rc = open(sends, recvs); rc != MPI_SUCCESS) return raise_error(comm, rc, name);
  const Status s = coll::run_exchange(d.value(), sends.blocks(), recvs.blocks());
  if (s != Status::ok) return raise_error(comm, mpi::error_class(s), name);
  if (const int rc = recvs.flush(); rc != MPI_SUCCESS) return raise_error(comm, rc, name);
  counters().collectives_by_strata.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

// One rank's block of an MPI_Gather in bytes: the same on every rank (the
// signatures match), so a route chosen by it agrees.
int64_t gather_block_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                           MPI_Datatype recvtype) {
  const bool in_place = sendbuf == MPI_IN_PLACE;  // the root's own block is its receive type's
  return in_place ? signature_bytes(recvtype, recvcount) : signature_bytes(sendtype, sendcount);
}

// As routed.cpp's: MPI_COMM_NULL is the library's error, whatever the buffers.
bool quick_library(const LibraryRoute& library, MPI_Comm comm) {
  return comm == MPI_COMM_NULL || (coll::surely_library_only(comm) && StagedCall::all_host_at_a_glance(library.bufs));
}

}  // namespace

int MPI_Alltoall(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (quick_library(library, comm)) return library.library();
  fault::CollScope rec(fault::OpKind::alltoallv, comm, uint64_t{0}, -1, nullptr);
  const int n = mpi::size(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const bool mine =
      !in_place && direct({{sendbuf, int64_t{sendcount} * n, sendtype}, {recvbuf, int64_t{recvcount} * n, recvtype}});
  return exchange(Exchange::all_to_all, comm, mine, "MPI_Alltoall", library, [&](ExchangeSide& s, ExchangeSide& r) {
    if (const int rc = r.every_peer(recvbuf, recvcount, recvtype, in_place); rc != MPI_SUCCESS) return rc;
    return in_place ? s.copy_of(r) : s.every_peer(const_cast<void*>(sendbuf), sendcount, sendtype, true);
  });
}

int alltoallv_exchange(const LibraryRoute& library, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm) {
  const int n = mpi::size(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const bool mine =
      !in_place && direct({{sendbuf, sum(sendcounts, n), sendtype}, {recvbuf, sum(recvcounts, n), recvtype}});
  auto packed = [&] {
    const int rc = alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return rc == kStageWholeCall ? library() : rc;
  };
  return exchange(Exchange::all_to_all, comm, mine, "MPI_Alltoallv", packed, [&](ExchangeSide& s, ExchangeSide& r) {
    if (const int rc = r.every_peer_v(recvbuf, recvcounts, rdispls, recvtype, in_place); rc != MPI_SUCCESS) return rc;
    return in_place ? s.copy_of(r) : s.every_peer_v(const_cast<void*>(sendbuf), sendcounts, sdispls, sendtype, true);
  });
}

int MPI_Gather(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (quick_library(library, comm)) return library.library();
  if (gather_block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype) < coll::gather_nccl_min_bytes()) {
    return library();  // small blocks: the library's call measured faster (collectives/settings.cpp)
  }
  const int n = mpi::size(comm), me = mpi::rank(comm);
  const bool is_root = me == root, in_place = sendbuf == MPI_IN_PLACE;
  const bool mine = direct({{in_place ? nullptr : sendbuf, in_place ? 0 : int64_t{sendcount}, sendtype},
                            {recvbuf, is_root ? int64_t{recvcount} * n : 0, recvtype}});
  return exchange(Exchange::gather, comm, mine, "MPI_Gather", library, [&](ExchangeSide& s, ExchangeSide& r) {
    if (is_root) {
      if (const int rc = r.every_peer(recvbuf, recvcount, recvtype, false); rc != MPI_SUCCESS) return rc;
      if (in_place) r.clear(me);
    }
    return in_place ? MPI_SUCCESS : s.one_peer(root, const_cast<void*>(sendbuf), sendcount, sendtype, true);
  });
}

int MPI_Gatherv(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (quick_library(library, comm)) return library.library();
  const int n = mpi::size(comm), me = mpi::rank(comm);
  const bool is_root = me == root, in_place = sendbuf == MPI_IN_PLACE;
  const bool mine = direct({{in_place ? nullptr : sendbuf, in_place ? 0 : int64_t{sendcount}, sendtype},
                            {recvbuf, is_root ? sum(recvcounts, n) : 0, recvtype}});
  return exchange(Exchange::gather, comm, mine, "MPI_Gatherv", library, [&](ExchangeSide& s, ExchangeSide& r) {
    if (is_root) {
      if (const int rc = r.every_peer_v(recvbuf, recvcounts, displs, recvtype, false); rc != MPI_SUCCESS) return rc;
      if (in_place) r.clear(me);
    }
    return in_place ? MPI_SUCCESS : s.one_peer(root, const_cast<void*>(sendbuf), sendcount, sendtype, true);
  });
}

int MPI_Scatter(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (quick_library(library, comm)) return library.library();
  const int n = mpi::size(comm), me = mpi::rank(comm);
  const bool is_root = me == root, in_place = recvbuf == MPI_IN_PLACE;
  const bool mine = direct({{sendbuf, is_root ? int64_t{sendcount} * n : 0, sendtype},
                            {in_place ? nullptr : recvbuf, in_place ? 0 : int64_t{recvcount}, recvtype}});
  return exchange(Exchange::scatter, comm, mine, "MPI_Scatter", library, [&](ExchangeSide& s, ExchangeSide& r) {
    if (is_root) {
      if (const int rc = s.every_peer(const_cast<void*>(sendbuf), sendcount, sendtype, true); rc != MPI_SUCCESS) {
        return rc;
      }
      if (in_place) s.clear(me);
    }
    return in_place ? MPI_SUCCESS : r.one_peer(root, recvbuf, recvcount, recvtype, false);
  });
}

int MPI_Scatterv(const LibraryRoute& library, const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (quick_library(library, comm)) return library.library();
  const int n = mpi::size(comm), me = mpi::rank(comm);
  const bool is_root = me == root, in_place = recvbuf == MPI_IN_PLACE;
  const bool mine = direct({{sendbuf, is_root ? sum(sendcounts, n) : 0, sendtype},
                            {in_place ? nullptr : recvbuf, in_place ? 0 : int64_t{recvcount}, recvtype}});
  return exchange(Exchange::scatter, comm, mine, "MPI_Scatterv", library, [&](ExchangeSide& s, ExchangeSide& r) {
    if (is_root) {
      const int rc = s.every_peer_v(const_cast<void*>(sendbuf), sendcounts, displs, sendtype, true);
      if (rc != MPI_SUCCESS) return rc;
      if (in_place) s.clear(me);
    }
    return in_place ? MPI_SUCCESS : r.one_peer(root, recvbuf, recvcount, recvtype, false);
  });
}

int MPI_Allgatherv(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (quick_library(library, comm)) return library.library();
  const int n = mpi::size(comm), me = mpi::rank(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const bool mine = direct({{in_place ? nullptr : sendbuf, in_place ? 0 : int64_t{sendcount}, sendtype},
                            {recvbuf, sum(recvcounts, n), recvtype}});
  return exchange(Exchange::allgather_v, comm, mine, "MPI_Allgatherv", library, [&](ExchangeSide& s, ExchangeSide& r) {
    if (const int rc = r.every_peer_v(recvbuf, recvcounts, displs, recvtype, in_place); rc != MPI_SUCCESS) return rc;
    if (!in_place) return s.same_for_every_peer(const_cast<void*>(sendbuf), sendcount, sendtype);
    // My block is already in place: sent to every other rank from there.
    const coll::Block mine_in_recv = r.blocks()[me];
    r.clear(me);
    s.same_block_for_every_peer(mine_in_recv, me);
    return MPI_SUCCESS;
  });
}

bool Passes<calls::Id::MPI_Alltoall>::test(const void*, int, MPI_Datatype, void*, int, MPI_Datatype,
                                           MPI_Comm comm) noexcept {
  return coll::library_between_agreements(Exchange::all_to_all, comm);
}
bool Passes<calls::Id::MPI_Gather>::test(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                                         int recvcount, MPI_Datatype recvtype, int, MPI_Comm comm) noexcept {
  return gather_block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype) < coll::gather_nccl_min_bytes() ||
         coll::library_between_agreements(Exchange::gather, comm);
}
bool Passes<calls::Id::MPI_Gatherv>::test(const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype,
                                          int, MPI_Comm comm) noexcept {
  return coll::library_between_agreements(Exchange::gather, comm);
}
bool Passes<calls::Id::MPI_Scatter>::test(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int,
                                          MPI_Comm comm) noexcept {
  return coll::library_between_agreements(Exchange::scatter, comm);
}
bool Passes<calls::Id::MPI_Scatterv>::test(const void*, const int[], const int[], MPI_Datatype, void*, int,
                                           MPI_Datatype, int, MPI_Comm comm) noexcept {
  return coll::library_between_agreements(Exchange::scatter, comm);
}
bool Passes<calls::Id::MPI_Allgatherv>::test(const void*, int, MPI_Datatype, void*, const int[], const int[],
                                             MPI_Datatype, MPI_Comm comm) noexcept {
  return coll::library_between_agreements(Exchange::allgather_v, comm);
}

}  // namespace strata::interposer::routed
