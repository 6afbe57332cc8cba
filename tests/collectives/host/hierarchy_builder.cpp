#include "hierarchy_builder.hpp"

#include <mpi.h>

#include <sstream>

namespace strata_test {
namespace {

// The group a rank belongs to at level kind 0 (gcd), 1 (package), 2 (node).
int group_key(const Coord& c, int kind) {
  switch (kind) {
    case 0: return c.node * 1000 + c.package;
    case 1: return c.node;
    default: return 0;
  }
}

int rank_in(MPI_Comm comm) {
  int r = -1;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &r);
  return r;
}

int size_of(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

}  // namespace

std::vector<Coord> fill_in_order(int nodes, int packages, int gcds, int ranks) {
  std::vector<Coord> out;
  for (int r = 0; r < ranks && r < nodes * packages * gcds; ++r) {
    out.push_back({r / (packages * gcds), (r / gcds) % packages, r % gcds});
  }
  return out;
}

std::vector<Coord> round_robin(int nodes, int packages, int gcds, int ranks) {
  std::vector<Coord> out;
  for (int r = 0; r < ranks && r < nodes * packages * gcds; ++r) {
    out.push_back({r % nodes, (r / nodes) % packages, r / (nodes * packages)});
  }
  return out;
}

std::vector<Coord> merge_node_levels(const std::vector<Coord>& coords, int gcds) {
  std::vector<Coord> out;
  for (const Coord& c : coords) out.push_back({c.node, c.package * gcds + c.gcd, 0});
  return out;
}

OwnedHierarchy::~OwnedHierarchy() {
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Comm& c : owned_) MPI_Comm_free(&c);
}

void OwnedHierarchy::build(MPI_Comm comm, const std::vector<Coord>& coords) {
  MPI_Comm all = MPI_COMM_NULL;
  MPI_Comm_dup(comm, &all);
  owned_.push_back(all);
  h_.comm = all;
  const int rank = rank_in(all);
  const int size = size_of(all);
  if (coords.empty()) return;

  // Levels kept: a grouping that merges groups of the level below somewhere.
  std::vector<int> kinds;
  for (int kind = 0; kind < 3; ++kind) {
    bool merges = false;
    for (int a = 0; a < size && !merges; ++a) {
      for (int b = 0; b < size && !merges; ++b) {
        if (group_key(coords[a], kind) != group_key(coords[b], kind)) continue;
        merges = kinds.empty() ? a != b : group_key(coords[a], kinds.back()) != group_key(coords[b], kinds.back());
      }
    }
    if (merges) kinds.push_back(kind);
  }

  const Coord& me = coords[rank];
  std::vector<int> position;  // p_0, p_1, ...
  h_.uniform = true;
  for (size_t i = 0; i < kinds.size(); ++i) {
    strata::coll::host::LevelComms level;
    MPI_Comm_split(all, group_key(me, kinds[i]), rank, &level.group);
    owned_.push_back(level.group);
    if (i == 0) position.push_back(rank_in(level.group));
    const int next_key = i + 1 < kinds.size() ? group_key(me, kinds[i + 1]) : 0;
    // cross(i): same next-level group and the same position vector so far.
    int color = next_key;
    for (int p : position) color = color * 64 + p;
    MPI_Comm_split(all, color, rank, &level.cross);
    owned_.push_back(level.cross);
    position.push_back(rank_in(level.cross));
    const bool first = rank_in(level.group) == 0;
    MPI_Comm_split(all, first ? next_key : MPI_UNDEFINED, rank, &level.leaders);
    if (level.leaders != MPI_COMM_NULL) owned_.push_back(level.leaders);

    const int mine = size_of(level.group);
    int lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, all);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, all);
    h_.uniform = h_.uniform && lo == hi;
    group_sizes_.push_back(hi);
    h_.levels.push_back(level);
  }
}

std::string OwnedHierarchy::describe() const {
  std::ostringstream s;
  s << h_.levels.size() << " levels (largest groups";
  for (int g : group_sizes_) s << " " << g;
  s << ")" << (h_.uniform ? " uniform" : " uneven");
  return s.str();
}

}  // namespace strata_test
