// strata-measure, collectives part: the library's collectives (flat NCCL or
// RCCL through strata::coll, Algorithm::library) timed on device buffers
// over every rank, and the cost model's level figures fitted to them
// (collectives/model/calibrate.hpp): what the model's device predictions and
// Algorithm::automatic then use (the model file's "links" section).
#pragma once

#include "collectives/model/calibrate.hpp"

#include <nlohmann/json.hpp>

#include <mpi.h>

#include <string>
#include <vector>

namespace strata::measure {

struct CollGrid {
  double min_bytes = 8;
  double max_bytes = 256.0 * (1 << 20);
  double factor = 4;
  int samples = 11;
  double min_sample_us = 1000;  // small calls jitter by several µs: long batches, many samples
  bool graph = false;           // each batch captured into a graph and its replay timed (--graph)
  static CollGrid quick() { return CollGrid{1024, 16 << 20, 16, 3, 300}; }  // for tests: a few seconds
};

struct CollFigures {
  std::string level;  // the level the fit is for ("" when none)
  std::string why;    // why there is no fit
  std::vector<coll::model::CollSample> samples;
  coll::model::Calibration calibration;
};

// Collective over `comm`; every rank must already use its GPU. Figures on
// rank 0.
CollFigures measure_collectives(MPI_Comm comm, const CollGrid& grid);

// The fit and its errors, or why there is none (stderr).
void print_calibration(const CollFigures& figures);

// Writes the fitted figures into a model file's document: "links" ->
// "device" -> the level's name (collectives/model/link_file.cpp reads it),
// and the samples under "collectives".
void add_calibration(const CollFigures& figures, nlohmann::json* doc);

// strata-measure --collectives-only: every rank on its GPU (rank % count),
// the collectives measured and fitted, and the fit written into the model
// file `out`, whose other sections (if it exists) are kept. The exit
// status, on every rank.
int collectives_only(MPI_Comm comm, const std::string& out, const CollGrid& grid);

}  // namespace strata::measure
