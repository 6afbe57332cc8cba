// What the arguments of an intercepted call are to its handler: the
// `roles` column of mpi/calls/mpi_calls.hpp, evaluated inside the
// call's wrapper where the parameters are in scope. A buffer role holds the
// address of the wrapper's pointer parameter (and, for point-to-point, of
// its count and datatype), so that a handler can hand the library a staged
// copy in place of the user's buffer and then call the real function with
// the wrapper's own argument list.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <array>
#include <cstddef>

namespace strata::calls {

// in: read by the call; out: written; inout: both; bcast: read at the root,
// written elsewhere.
enum class Dir : uint8_t { in, out, inout, bcast };
// Where the buffer matters: every rank; the root only (an intercommunicator's
// root passes MPI_ROOT); the ranks that contribute to or receive from the
// root (intracommunicator: every rank; intercommunicator: the remote group).
enum class Where : uint8_t { all, root, contrib };
// How many blocks a per-peer buffer has: the group (the remote group of an
// intercommunicator), or a neighbourhood's sources (in-degree) or
// destinations (out-degree).
enum class Peers : uint8_t { none, group, sources, destinations };
enum class Shape : uint8_t {
  one,       // count elements of type
  blocks,    // count elements per peer
  v,         // counts[i] elements at displs[i] elements, per peer
  w,         // counts[i] elements of types[i] at displs[i] bytes, per peer
  bytes,     // count bytes
  sum_of,    // sum(counts) elements (a reduce-scatter's input)
  mine_of,   // counts[rank] elements; sum(counts), read and written, in place
  block_of,  // count elements; count per peer, read and written, in place
};

struct Buf {
  void** ptr = nullptr;  // the wrapper's pointer parameter
  Shape shape = Shape::one;
  Dir dir = Dir::in;
  Where where = Where::all;
  Peers peers = Peers::none;
  int64_t count = 0;          // one, blocks (per peer), bytes, block_of
  void* count_ref = nullptr;  // point to point: the count parameter, to hand the library another
  bool count_wide = false;    // ... an MPI_Count (else an int)
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Datatype* type_ref = nullptr;     // point to point: the datatype parameter
  const void* counts = nullptr;         // v, w, sum_of, mine_of
  bool counts_wide = false;             // MPI_Count[] (else int[])
  const void* displs = nullptr;         // v (elements), w (bytes)
  bool displs_wide = false;             // MPI_Aint[] (else int[])
  const MPI_Datatype* types = nullptr;  // w

  const void* pointer() const { return *ptr; }
  void replace(const void* p) const { *ptr = const_cast<void*>(p); }
  // Point to point: the library gets `count` elements of `t` instead.
  void replace_count(int64_t n) const;
  void replace_type(MPI_Datatype t) const {
    if (type_ref != nullptr) *type_ref = t;
  }
};

// Where a failed step is reported: a communicator's, window's or file's
// error handler, or (none) the default one.
struct ErrorTarget {
  enum class On : uint8_t { none, comm, win, file } on = On::none;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  MPI_File file = MPI_FILE_NULL;
};

// A call's buffer roles: a view of the array roles::bufs(...) returns (a
// temporary of the wrapper's full expression).
class Bufs {
 public:
  template <size_t N>
  Bufs(const std::array<Buf, N>& a) : begin_(a.data()), end_(a.data() + N) {}  // NOLINT: implicit, as a list
  const Buf* begin() const { return begin_; }
  const Buf* end() const { return end_; }
  size_t size() const { return static_cast<size_t>(end_ - begin_); }

 private:
  const Buf* begin_;
  const Buf* end_;
};

// The factories and constants the table's roles column is written with.
namespace roles {

constexpr Dir IN = Dir::in;
constexpr Dir OUT = Dir::out;
constexpr Dir INOUT = Dir::inout;
constexpr Dir BCAST = Dir::bcast;
constexpr Where ALL = Where::all;
constexpr Where ROOT = Where::root;
constexpr Where CONTRIB = Where::contrib;
constexpr Peers GROUP = Peers::group;
constexpr Peers SOURCES = Peers::sources;
constexpr Peers DESTINATIONS = Peers::destinations;
// A collective without a root.
constexpr int no_root = INT_MIN;
const ErrorTarget no_comm{};

inline ErrorTarget on_comm(MPI_Comm c) {
  ErrorTarget t;
  t.on = ErrorTarget::On::comm;
  t.comm = c;
  return t;
}
inline ErrorTarget on_win(MPI_Win w) {
  ErrorTarget t;
  t.on = ErrorTarget::On::win;
  t.win = w;
  return t;
}
inline ErrorTarget on_file(MPI_File f) {
  ErrorTarget t;
  t.on = ErrorTarget::On::file;
  t.file = f;
  return t;
}

template <class P>
void** address_of(P& ptr) {
  return reinterpret_cast<void**>(const_cast<void**>(reinterpret_cast<const void* const*>(&ptr)));
}
template <class C>
constexpr bool wide() {
  return sizeof(C) > sizeof(int);
}

inline int peer(int rank) { return rank; }
template <class P>
void** ref(P& ptr) {
  return address_of(ptr);
}

// One block of `count` elements whose count and type the handler may replace
// (point to point, packing, files, one-sided).
template <class P, class C>
Buf point(Dir dir, P& ptr, C& count, MPI_Datatype& type) {
  Buf b;
  b.ptr = address_of(ptr);
  b.dir = dir;
  b.count = static_cast<int64_t>(count);
  b.count_ref = &count;
  b.count_wide = wide<C>();
  b.type = type;
  b.type_ref = &type;
  return b;
}
template <class P, class C>
Buf in(P& ptr, C& count, MPI_Datatype& type) {
  return point(IN, ptr, count, type);
}
template <class P, class C>
Buf out(P& ptr, C& count, MPI_Datatype& type) {
  return point(OUT, ptr, count, type);
}
template <class P, class C>
Buf inout(P& ptr, C& count, MPI_Datatype& type) {
  return point(INOUT, ptr, count, type);
}

// The buffer roles of a call, as a list (the table writes bufs(a, b) rather
// than {a, b}: parentheses keep the commas inside one macro argument).
template <class... B>
std::array<Buf, sizeof...(B)> bufs(B... b) {
  return {b...};
}

// Collective buffers (nothing is replaced but the pointer).
template <class P, class C>
Buf one(Dir dir, Where where, P& ptr, C count, MPI_Datatype type) {
  Buf b;
  b.ptr = address_of(ptr);
  b.dir = dir;
  b.where = where;
  b.count = static_cast<int64_t>(count);
  b.type = type;
  return b;
}
template <class P, class C>
Buf blocks(Dir dir, Where where, P& ptr, C count, MPI_Datatype type, Peers peers) {
  Buf b = one(dir, where, ptr, count, type);
  b.shape = Shape::blocks;
  b.peers = peers;
  return b;
}
template <class P, class C, class D>
Buf vbuf(Dir dir, Where where, P& ptr, const C* counts, const D* displs, MPI_Datatype type, Peers peers) {
  Buf b = one(dir, where, ptr, 0, type);
  b.shape = Shape::v;
  b.peers = peers;
  b.counts = counts;
  b.counts_wide = wide<C>();
  b.displs = displs;
  b.displs_wide = wide<D>();
  return b;
}
template <class P, class C, class D>
Buf wbuf(Dir dir, Where where, P& ptr, const C* counts, const D* displs, const MPI_Datatype* types, Peers peers) {
  Buf b = vbuf(dir, where, ptr, counts, displs, MPI_DATATYPE_NULL, peers);
  b.shape = Shape::w;
  b.types = types;
  return b;
}
template <class P, class N>
Buf bytes(Dir dir, P& ptr, N n) {
  Buf b = one(dir, ALL, ptr, n, MPI_BYTE);
  b.shape = Shape::bytes;
  return b;
}
template <class P, class C>
Buf sum_of(Dir dir, P& ptr, const C* counts, MPI_Datatype type) {
  Buf b = vbuf(dir, ALL, ptr, counts, static_cast<const int*>(nullptr), type, GROUP);
  b.shape = Shape::sum_of;
  return b;
}
template <class P, class C>
Buf mine_of(P& ptr, const C* counts, MPI_Datatype type) {
  Buf b = sum_of(OUT, ptr, counts, type);
  b.shape = Shape::mine_of;
  return b;
}
template <class P, class C>
Buf block_of(P& ptr, C count, MPI_Datatype type) {
  Buf b = blocks(OUT, ALL, ptr, count, type, GROUP);
  b.shape = Shape::block_of;
  return b;
}

}  // namespace roles

inline void Buf::replace_count(int64_t n) const {
  if (count_ref == nullptr) return;
  if (count_wide) {
    *static_cast<MPI_Count*>(count_ref) = static_cast<MPI_Count>(n);
  } else {
    *static_cast<int*>(count_ref) = static_cast<int>(n);
  }
}

}  // namespace strata::calls
