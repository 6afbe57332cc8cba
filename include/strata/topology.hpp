// Where the ranks of a communicator run, and communicators for each level of
// the machine's bandwidth hierarchy.
//
// Every rank gets three coordinates, fastest link first:
//   gcd      the die within its GPU package (the two GCDs of an MI250X share
//            a 200 GB/s link); 0 for single-die GPUs
//   package  the GPU package (board) within the node; without a GPU, the
//            NUMA domain of the rank's cores
//   node     the host
// A level is one of these groupings that has more than one member somewhere:
// on an H200 node with one die per GPU the gcd level is dropped, on one node
// the node level is. Levels are numbered from 0, the fastest.
//
// Precisely: the gcd level's groups are the ranks of one package, the
// package level's the ranks of one node, the node level's all ranks. A level
// is kept when some group of it holds more than one unit of the level below
// (two dies, two packages, two nodes). Ranks sharing one GPU share its
// package and gcd: they count as one unit (so four ranks on one die give no
// level at all) and are ordinary members of the groups above. Dropping a
// level changes no group of the others, and the top kept level's group is
// always every rank.
//
// Coordinates are numbered 0, 1, ... in order of first appearance in rank
// order within their parent: nodes by their lowest rank, packages within the
// node, dies within the package. Discovery (docs/topology.md): nodes from
// MPI_COMM_TYPE_SHARED; packages from the GPU runtime's multi-GPU board group
// (else each GPU is a package; without GPUs, the NUMA node of the rank's
// cores, from hwloc); dies from the GPU's PCI address. The device of a rank
// is its current device when create() runs.
//
// STRATA_TOPOLOGY replaces discovery by an emulated layout (so every level
// runs in CI on one CPU machine):
//   "NxPxG"            nodes x packages per node x GCDs per package; ranks
//                      fill it in order (rank r: gcd r%G, package (r/G)%P,
//                      node r/(P*G)); fewer ranks than N*P*G leave the last
//                      groups short (an uneven topology)
//   "n.p.g,n.p.g,..."  one node.package.gcd triple per rank, in rank order
//                      (the numbers are labels, renumbered as above)
// The spec describes the ranks of MPI_COMM_WORLD: a Topology of another
// communicator gives each rank the place of its world rank. A spec that is
// malformed or has too few places for the world's ranks is reported (one
// warning) and discovery is used instead.
#pragma once

#include <strata/export.h>
#include <strata/status.hpp>

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace strata::topo {

// Where one rank runs.
struct Place {
  int rank = 0;         // in the topology's communicator
  std::string host;     // host name
  int node = 0;         // 0..nodes-1, numbered by the lowest rank on each node
  int package = 0;      // 0..packages-1 within the node
  int gcd = 0;          // 0..dies-1 within the package
  int device = -1;      // GPU runtime ordinal; -1: none
  std::string pci_bus;  // the GPU's PCI address, "" when none
  int numa = -1;        // NUMA node of the rank's cores; -1: unknown
  std::string nic;      // the nearest network interface, "" when unknown
};

// What connects the members of one group of a level.
enum class LinkClass {
  die,      // dies of one package (MI250X GCD pair: Infinity Fabric)
  gpu,      // GPUs of one node over a peer link (NVLink, xGMI)
  pcie,     // GPUs of one node without a peer link
  shm,      // ranks of one node without GPUs (host shared memory)
  network,  // nodes
};
STRATA_API const char* to_string(LinkClass link) noexcept;

// One level of the hierarchy, as seen from the calling rank.
struct Level {
  std::string name;  // "gcd", "package" or "node"
  LinkClass link = LinkClass::network;
  int groups = 0;          // groups at this level within the whole communicator
  int max_group_size = 0;  // largest group
  int min_group_size = 0;  // smallest group (== max when the level is even)
};

class STRATA_API Topology {
 public:
  // Discovers (or, with STRATA_TOPOLOGY, emulates) where the ranks of `comm`
  // run and builds the level communicators. Collective over `comm`. The
  // communicators are freed with the object (before MPI_Finalize; an object
  // destroyed after it frees nothing). invalid_argument outside
  // MPI_Init..MPI_Finalize or for MPI_COMM_NULL; mpi_error when an MPI call
  // fails (logged).
  static Result<std::shared_ptr<const Topology>> create(MPI_Comm comm) noexcept;
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // A duplicate of the communicator given, with MPI_ERRORS_RETURN (the level
  // communicators inherit it): Strata checks every return code itself.
  MPI_Comm comm() const noexcept;
  int rank() const noexcept;
  int size() const noexcept;
  bool emulated() const noexcept;
  const std::vector<Place>& places() const noexcept;  // every rank, in rank order
  const Place& self() const noexcept;

  int num_levels() const noexcept;  // 0 when all ranks share one die, else 1..3
  // For i outside 0..num_levels()-1: an empty Level; group, cross and
  // leaders answer MPI_COMM_NULL and is_leader false.
  const Level& level(int i) const noexcept;

  // The ranks of my group at level i: my package's dies (the gcd level), my
  // node's packages, or everyone (the top level), ordered by rank.
  MPI_Comm group(int i) const noexcept;
  // The ranks of my group at level i+1 (everyone for the top level) that
  // have my position vector up to level i: the communicator a hierarchical
  // algorithm runs its next step on. Positions are defined recursively so
  // that any rank placement works: p_0 = my index (by rank) in group(0);
  // cross(0) = the ranks of group(1) with my p_0; p_1 = my index in
  // cross(0); cross(1) = the ranks of group(2) with my (p_0, p_1); and so
  // on. (Not "my index in group(i)": with a round-robin placement that
  // index does not say which shard a rank holds.) Ranks whose position does
  // not exist in every group (uneven levels) still get one, smaller.
  // At the top level the group is everyone, so cross(top) holds only me.
  MPI_Comm cross(int i) const noexcept;
  // The first rank of each level-i group within my level-(i+1) group;
  // MPI_COMM_NULL on the ranks that are not first in their level-i group.
  // (The leaders are the ranks whose p_0..p_i are all 0: leaders(i) has the
  // members of their cross(i).) At the top level: rank 0 of comm() alone.
  MPI_Comm leaders(int i) const noexcept;
  bool is_leader(int i) const noexcept;
  // Every group of every level has the same size.
  bool uniform() const noexcept;

  // The tree, the levels and their link classes.
  std::string to_text() const;
  std::string to_json() const;  // one JSON object

  struct Impl;

 private:
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses a STRATA_TOPOLOGY value for `ranks` ranks into one place per rank
// (node, package, gcd set; nothing else). invalid_argument when malformed.
STRATA_API Result<std::vector<Place>> parse_emulated_topology(const std::string& spec, int ranks);

}  // namespace strata::topo
