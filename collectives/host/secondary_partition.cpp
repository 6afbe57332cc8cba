// ZeRO++ hpZ secondary partition (strata/collectives.hpp).
//
// The full vector is the primary shards in rank order (shard_count elements
// per rank, p ranks). At level `level` every group G has g ranks; the rank at
// position q of its group (its rank in G) owns part q of the full vector:
// the m = p / g primary shards of ranks q*m .. q*m + m - 1. Positions come
// from the communicators (rank in G, groups told apart by their lowest
// member), never from rank arithmetic, so groups need not be contiguous
// (round-robin placements).
//
// build: every part q exists once per group, so each primary shard goes to
//   the m ranks at position r / m, one per group, in m steps of a
//   permutation on h.comm.
// gather: an all-gather within G of the secondary shards, in G's rank
//   order, is the full vector; only G is used (and h.comm's size).
#include "collectives/host/internal.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

#include <algorithm>

namespace strata::coll::host {

using mpi::real;

namespace {

using detail::Ctx;

struct Level {
  Ctx all;    // h.comm
  Ctx group;  // h.levels[level].group
  int m = 1;  // groups
};

Status level_of(DataType type, int level, const Hierarchy& h, Level* out) noexcept {
  if (!detail::valid_type(type) || level < 0 || static_cast<size_t>(level) >= h.levels.size()) {
    STRATA_LOG(error, kColl, "secondary partition: invalid data type %d or level %d (%zu levels)",
               static_cast<int>(type), level, h.levels.size());
    return Status::invalid_argument;
  }
  if (!h.uniform) {
    STRATA_LOG(error, kColl, "secondary partition: the hierarchy is uneven");
    return Status::not_supported;
  }
  STRATA_TRY(detail::make_ctx(h.comm, type, ReduceOp::sum, &out->all));
  STRATA_TRY(detail::make_ctx(h.levels[static_cast<size_t>(level)].group, type, ReduceOp::sum, &out->group));
  if (out->all.size % out->group.size != 0) {
    STRATA_LOG(error, kColl, "secondary partition: groups of %d ranks do not divide %d ranks", out->group.size,
               out->all.size);
    return Status::not_supported;
  }
  out->m = out->all.size / out->group.size;
  return Status::ok;
}

// The lowest rank in h.comm of my group's members.
Status group_id(const Level& l, int* id) noexcept {
  MPI_Group group = MPI_GROUP_NULL, all = MPI_GROUP_NULL;
  detail::Scratch mem;
  STRATA_TRY(mem.allocate(2 * sizeof(int) * static_cast<size_t>(l.group.size)));
  int* mine = reinterpret_cast<int*>(mem.data());
  int* theirs = mine + l.group.size;
  for (int i = 0; i < l.group.size; ++i) mine[i] = i;
  STRATA_MPI_TRY(real().MPI_Comm_group(l.group.comm, &group));
  Status s = detail::mpi_check(real().MPI_Comm_group(l.all.comm, &all), "MPI_Comm_group");
  if (s == Status::ok) {
    s = detail::mpi_check(real().MPI_Group_translate_ranks(group, l.group.size, mine, all, theirs),
                          "MPI_Group_translate_ranks");
  }
  real().MPI_Group_free(&group);
  if (all != MPI_GROUP_NULL) real().MPI_Group_free(&all);
  STRATA_TRY(s);
  *id = *std::min_element(theirs, theirs + l.group.size);
  return Status::ok;
}

// who[gi * g + q] = the rank in h.comm at position q of group gi (groups
// numbered by their lowest member); *my_group = my gi.
Status placement(const Level& l, detail::Scratch* mem, int** who, int* my_group) noexcept {
  const int p = l.all.size, g = l.group.size;
  STRATA_TRY(mem->allocate(sizeof(int) * static_cast<size_t>(4 * p)));
  int* table = reinterpret_cast<int*>(mem->data());  // (position, group id) per rank
  int* ids = table + 2 * static_cast<ptrdiff_t>(p);  // sorted distinct group ids
  int* w = ids + p;
  int mine[2] = {l.group.rank, 0};
  STRATA_TRY(group_id(l, &mine[1]));
  STRATA_MPI_TRY(real().MPI_Allgather(mine, 2, MPI_INT, table, 2, MPI_INT, l.all.comm));
  for (int x = 0; x < p; ++x) ids[x] = table[2 * x + 1];
  std::sort(ids, ids + p);
  const int groups = static_cast<int>(std::unique(ids, ids + p) - ids);
  if (groups != l.m) {
    STRATA_LOG(error, kColl, "secondary partition: %d groups, expected %d", groups, l.m);
    return Status::invalid_argument;
  }
  std::fill(w, w + p, -1);
  for (int x = 0; x < p; ++x) {
    const int gi =
        static_cast<int>(std::lower_bound(ids, ids + groups, table[2 * static_cast<ptrdiff_t>(x) + 1]) - ids);
    const int q = table[2 * static_cast<ptrdiff_t>(x)];
    if (q < 0 || q >= g || w[static_cast<ptrdiff_t>(gi) * g + q] != -1) {
      STRATA_LOG(error, kColl, "secondary partition: the level's groups overlap");
      return Status::invalid_argument;
    }
    w[static_cast<ptrdiff_t>(gi) * g + q] = x;
    if (x == l.all.rank) *my_group = gi;
  }
  *who = w;
  return Status::ok;
}

}  // namespace

Status build_secondary_partition(const void* primary, size_t shard_count, void* secondary, DataType type, int level,
                                 const Hierarchy& h) noexcept {
  Level l;
  STRATA_TRY(level_of(type, level, h, &l));
  if (shard_count == 0) return Status::ok;
  if (primary == nullptr || secondary == nullptr) return Status::invalid_argument;
  detail::Scratch mem;
  int* who = nullptr;
  int gi = 0;
  STRATA_TRY(placement(l, &mem, &who, &gi));
  const int r = l.all.rank, q = l.group.rank, m = l.m, g = l.group.size;
  const size_t shard = l.all.bytes(shard_count);
  // Step k: my shard goes to position r / m of group (r % m + k) % m; I get
  // the shard of rank q * m + t from the group (t + k) % m == gi names.
  for (int k = 0; k < m; ++k) {
    const int dest = who[((r % m + k) % m) * g + r / m];
    const int t = ((gi - k) % m + m) % m;
    STRATA_TRY(detail::sendrecv(primary, shard, dest, detail::at(secondary, shard * static_cast<size_t>(t)), shard,
                                q * m + t, l.all));
  }
  return Status::ok;
}

Status gather_from_secondary(const void* secondary, size_t shard_count, void* full, DataType type, int level,
                             const Hierarchy& h) noexcept {
  Level l;
  STRATA_TRY(level_of(type, level, h, &l));
  if (shard_count == 0) return Status::ok;
  if (secondary == nullptr || full == nullptr) return Status::invalid_argument;
  const detail::Split s{shard_count * static_cast<size_t>(l.all.size), l.group.size};
  return detail::kLibrary.allgather(secondary, full, s, l.group);
}

}  // namespace strata::coll::host
