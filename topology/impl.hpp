// Topology::Impl: what a Topology holds (shared by topology.cpp and print.cpp).
#pragma once

#include <strata/topology.hpp>

#include "topology/level_comms.hpp"
#include "topology/levels.hpp"

#include <vector>

namespace strata::topo {

struct Topology::Impl {
  MPI_Comm comm = MPI_COMM_NULL;  // the duplicate; errors return (MPI_ERRORS_RETURN)
  int rank = 0;
  int size = 0;
  bool emulated = false;
  bool hwloc = false;  // discovery had hwloc
  std::vector<Place> places;
  std::vector<detail::LevelPlan> plans;   // the kept levels, fastest first
  std::vector<detail::LevelComms> comms;  // one per plan (possibly fewer after a failure)

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // Frees the communicators, unless MPI is already finalized.
  ~Impl();
};

}  // namespace strata::topo
