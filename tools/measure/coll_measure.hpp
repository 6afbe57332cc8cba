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
  int samples = 7;
  double min_sample_us = 300;
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

}  // namespace strata::measure
