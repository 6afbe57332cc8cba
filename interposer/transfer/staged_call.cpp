#include "interposer/transfer/staged_call.hpp"

#include <strata/datatype.hpp>

#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/exact_write.hpp"
#include "interposer/transfer/sides.hpp"
#include "interposer/types/fast_types.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"

#include <algorithm>

namespace strata::interposer {

using mpi::real;

namespace {

using calls::Buf;
using calls::Dir;
using calls::Peers;
using calls::Shape;
using calls::Where;

int64_t count_at(const Buf& b, int i) {
  return b.counts_wide ? static_cast<int64_t>(static_cast<const MPI_Count*>(b.counts)[i])
                       : static_cast<int64_t>(static_cast<const int*>(b.counts)[i]);
}
int64_t displ_at(const Buf& b, int i) {
  return b.displs_wide ? static_cast<int64_t>(static_cast<const MPI_Aint*>(b.displs)[i])
                       : static_cast<int64_t>(static_cast<const int*>(b.displs)[i]);
}

// Sources and destinations of a neighbourhood collective.
void neighbours(MPI_Comm comm, int* sources, int* destinations) {
  *sources = 0;
  *destinations = 0;
  int kind = MPI_UNDEFINED;
  if (real().MPI_Topo_test(comm, &kind) != MPI_SUCCESS) return;
  if (kind == MPI_CART) {
    int dims = 0;
    real().MPI_Cartdim_get(comm, &dims);
    *sources = *destinations = 2 * dims;
  } else if (kind == MPI_GRAPH) {
    int rank = 0, n = 0;
    real().MPI_Comm_rank(comm, &rank);
    real().MPI_Graph_neighbors_count(comm, rank, &n);
    *sources = *destinations = n;
  } else if (kind == MPI_DIST_GRAPH) {
    int weighted = 0;
    real().MPI_Dist_graph_neighbors_count(comm, sources, destinations, &weighted);
  }
}

int peers_of(const CallShape& shape, Peers p) {
  if (p == Peers::group) return shape.group;
  int sources = 0, destinations = 0;
  neighbours(shape.comm, &sources, &destinations);
  return p == Peers::sources ? sources : destinations;
}

// Does the role matter on this rank, and does the call read or write it here?
bool matters(const CallShape& shape, const Buf& b) {
  switch (b.where) {
    case Where::all: return true;
    case Where::root: return shape.is_root;
    case Where::contrib: return shape.contributes;
  }
  return false;
}

struct RoleAccess {
  bool read = false;
  bool write = false;
};

RoleAccess access_of(const CallShape& shape, const Buf& b, bool in_place) {
  switch (b.dir) {
    case Dir::in: return {true, false};
    case Dir::inout: return {true, true};
    case Dir::out: return {true, true};  // read too: what the call leaves alone goes back unchanged
    case Dir::bcast: return shape.bcast_in ? RoleAccess{true, false} : RoleAccess{true, true};
  }
  (void)in_place;
  return {};
}

// A datatype that matters to this call, measured: its shape remembered for
// the pass-through tests (which never ask about a handle that may not
// matter on this rank, and so may be garbage).
void learn_shape(MPI_Datatype type, const TypeLayout& t) {
  if (fast_shape(type) != TypeShape::unknown) return;
  const bool contiguous = t.lb == 0 && t.true_lb == 0 && t.extent == t.size && t.true_extent == t.size;
  remember_shape(type, contiguous ? TypeShape::contiguous : TypeShape::other);
}

// Where a role's data lies: runs of `count` elements of `type` at byte
// `offset` from the role's pointer (one per block of a v or w buffer).
struct Part {
  int64_t offset;
  int64_t count;
  MPI_Datatype type;
};
using Parts = std::vector<Part>;

void widen(Span* into, const Span& s) {
  if (s.hi <= s.lo) return;
  if (into->hi <= into->lo) {
    *into = s;
    return;
  }
  into->lo = std::min(into->lo, s.lo);
  into->hi = std::max(into->hi, s.hi);
}

// The role's parts (for the exact write back) and the bytes they span.
Result<Span> layout_of_role(const CallShape& shape, const Buf& b, bool in_place, std::vector<Part>* parts) {
  auto one = [&](int64_t count) -> Result<Span> {
    Result<TypeLayout> t = measure_datatype(b.type);
    if (!t) return t.status();
    learn_shape(b.type, t.value());
    if (parts != nullptr) parts->push_back({0, count, b.type});
    return span_of(t.value(), count);
  };
  switch (b.shape) {
    case Shape::one: return one(b.count);
    case Shape::bytes:
      if (parts != nullptr) parts->push_back({0, std::max<int64_t>(0, b.count), MPI_BYTE});
      return Span{0, std::max<int64_t>(0, b.count)};
    case Shape::blocks: return one(b.count * peers_of(shape, b.peers));
    case Shape::block_of: return one(in_place ? b.count * shape.group : b.count);
    case Shape::sum_of:
    case Shape::mine_of: {
      if (b.shape == Shape::mine_of && !in_place) return one(count_at(b, shape.rank));
      int64_t total = 0;
      for (int i = 0; i < shape.group; ++i) total += count_at(b, i);
      return one(total);
    }
    case Shape::v:
    case Shape::w: {
      Span all;
      const int n = peers_of(shape, b.peers);
      for (int i = 0; i < n; ++i) {
        const int64_t c = count_at(b, i);
        if (c <= 0) continue;
        const MPI_Datatype type = b.shape == Shape::w ? b.types[i] : b.type;
        Result<TypeLayout> t = measure_datatype(type);
        if (!t) return t.status();
        learn_shape(type, t.value());
        const Span s = span_of(t.value(), c);
        const int64_t at = b.shape == Shape::w ? displ_at(b, i) : displ_at(b, i) * t.value().extent;
        if (parts != nullptr) parts->push_back({at, c, type});
        widen(&all, Span{at + s.lo, at + s.hi});
      }
      return all;
    }
  }
  return Status::invalid_argument;
}

bool is_device(const void* p) {
  const device::Pointer w = gpu::classify(p);
  return w.kind == device::MemoryKind::device || w.kind == device::MemoryKind::managed;
}

// MPI_IN_PLACE given for a buffer the call would read here.
bool in_place_call(const CallShape& shape, calls::Bufs bufs) {
  for (const Buf& b : bufs) {
    if (b.pointer() != MPI_IN_PLACE || !matters(shape, b)) continue;
    if (b.dir == Dir::in || b.dir == Dir::inout || (b.dir == Dir::bcast && shape.bcast_in)) return true;
  }
  return false;
}

// The role's first byte, where it has one that lies in GPU memory.
template <class Visit>
int for_each_device_role(const CallShape& shape, calls::Bufs bufs, Visit visit) {
  const bool in_place = in_place_call(shape, bufs);
  for (const Buf& b : bufs) {
    const void* p = b.pointer();
    if (p == nullptr || p == MPI_IN_PLACE || p == MPI_BOTTOM || !matters(shape, b)) continue;
    Result<Span> span = layout_of_role(shape, b, in_place, nullptr);
    if (!span) return MPI_ERR_TYPE;
    const Span s = span.value();
    if (s.hi <= s.lo) continue;
    if (!is_device(static_cast<const char*>(p) + s.lo)) continue;
    std::vector<Part> parts;  // only for buffers in device memory
    (void)layout_of_role(shape, b, in_place, &parts);
    if (int rc = visit(b, s, access_of(shape, b, in_place), parts); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace

int CallShape::of(MPI_Comm comm, int root, CallShape* out) {
  CallShape s;
  s.comm = comm;
  int inter = 0;
  if (comm == MPI_COMM_NULL || real().MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
      real().MPI_Comm_rank(comm, &s.rank) != MPI_SUCCESS) {
    return MPI_ERR_COMM;
  }
  s.inter = inter != 0;
  if (s.inter ? real().MPI_Comm_remote_size(comm, &s.group) != MPI_SUCCESS
              : real().MPI_Comm_size(comm, &s.group) != MPI_SUCCESS) {
    return MPI_ERR_COMM;
  }
  if (root != calls::roles::no_root) {
    if (s.inter) {
      s.is_root = root == MPI_ROOT;
      s.contributes = root != MPI_ROOT && root != MPI_PROC_NULL;
    } else {
      s.is_root = root == s.rank;
    }
    s.bcast_in = s.is_root;
  }
  *out = s;
  return MPI_SUCCESS;
}

CallShape CallShape::local() { return CallShape{}; }

bool StagedCall::all_host_at_a_glance(calls::Bufs bufs) noexcept {
  for (const Buf& b : bufs) {
    const void* p = b.pointer();
    if (p == nullptr || p == MPI_IN_PLACE) continue;
    if (!gpu::maybe_device(p) && (b.shape == Shape::bytes || (b.shape != Shape::v && b.shape != Shape::w &&
                                                              fast_shape(b.type) == TypeShape::contiguous))) {
      continue;
    }
    return false;
  }
  return true;
}

bool StagedCall::any_on_device(const CallShape& shape, calls::Bufs bufs) {
  bool found = false;
  for_each_device_role(shape, bufs, [&](const Buf&, const Span&, RoleAccess, const Parts&) {
    found = true;
    return MPI_ERR_LASTCODE;  // stop at the first
  });
  return found;
}

int StagedCall::stage(const CallShape& shape, calls::Bufs bufs, bool copy_now) {
  std::vector<Mirror> mirrors;
  std::vector<const Buf*> roles;
  const int rc = for_each_device_role(shape, bufs, [&](const Buf& b, const Span& s, RoleAccess a, const Parts& p) {
    Mirror m;
    for (const Part& part : p) m.parts.push_back({part.offset, part.count, part.type});
    m.user = static_cast<char*>(const_cast<void*>(b.pointer()));
    m.lo = s.lo;
    m.hi = s.hi;
    m.write = a.write;
    m.host = mover::Staging::acquire(mover::pinned_pool(), s.hi - s.lo);
    if (!m.host) return MPI_ERR_NO_MEM;
    mirrors.push_back(std::move(m));
    roles.push_back(&b);
    return MPI_SUCCESS;
  });
  if (rc != MPI_SUCCESS) return rc;
  mirrors_ = std::move(mirrors);
  if (copy_now) {
    if (int copied = copy_in(); copied != MPI_SUCCESS) {
      mirrors_.clear();
      return copied;
    }
  }
  for (size_t i = 0; i < roles.size(); ++i) roles[i]->replace(mirrors_[i].host.data() - mirrors_[i].lo);
  if (!mirrors_.empty()) counters().spans_copied.fetch_add(mirrors_.size(), std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int StagedCall::copy_in() {
  for (Mirror& m : mirrors_) {
    const Status s = mover::copy_bytes(m.host.data(), m.user + m.lo, m.hi - m.lo);
    if (s != Status::ok) return mpi::error_class(s);
  }
  return MPI_SUCCESS;
}

int StagedCall::copy_out() {
  for (Mirror& m : mirrors_) {
    if (!m.write) continue;
    const char* host = m.host.data() - m.lo;  // stands for m.user
    for (const Mirror::Part& part : m.parts) {
      const Status s = write_exactly(m.user + part.offset, host + part.offset, part.count, part.type);
      if (s != Status::ok) return mpi::error_class(s);
    }
  }
  return MPI_SUCCESS;
}

void* StagedCall::mirror_of(const void* user) const {
  for (const Mirror& m : mirrors_) {
    if (m.user == user) return m.host.data() - m.lo;
  }
  return nullptr;
}

}  // namespace strata::interposer
