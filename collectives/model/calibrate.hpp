// Calibration of a level's link figures from measured collective times
// (strata-measure times flat NCCL on device buffers; docs/scaling.md, "Calibrated
// on the machine at hand").
//
// For a machine of one active level every prediction of the library's
// algorithm is linear in the level's (call_us, alpha_us, 1/gbps): the model
// itself gives each sample's three coefficients (predicted with unit
// figures), so the fit follows whatever the formulas say. Two regimes, as
// NCCL switches protocols (LL/LL128 for small messages, Simple for large):
// for every split of the measured sizes the small sizes fit the low-latency
// regime and the rest the bulk one, each by least squares on relative error
// with non-negative figures; a prediction is the cheaper regime, and the
// split with the smallest total squared relative error wins (no split: one
// regime). Then each collective with two or more sizes of 1 MiB and up
// gets bulk figures of its own, fitted to those sizes alone
// (LinkFigures::by_collective: NCCL's efficiency differs by collective);
// the small-message regime stays pooled (fitted to one collective alone it
// followed that run's jitter, and predicted a second run worse). Last,
// each collective's switch between the regimes where NCCL's differs from
// "the cheaper one" (ForCollective::small_below_bytes): the split of its
// measured sizes that predicts them best, where it beats that rule.
#pragma once

#include "collectives/model/cost_model.hpp"

#include <vector>

namespace strata::coll::model {

struct CollSample {
  Collective collective = Collective::allreduce;
  double bytes = 0;  // as predict_us takes them
  double us = 0;     // measured, one call
};

struct Calibration {
  LinkFigures link;  // the bulk regime; link.small the low-latency one (gbps 0: none)
  // Largest |predicted / measured - 1| over the samples, each collective
  // predicted by its own figures where it has them.
  double max_error_large = 0;  // from kLargeBytes up
  double max_error_small = 0;  // below kLargeBytes
  static constexpr double kLargeBytes = 1 << 20;
};

// Fits the one level of `machine` with more than one member (others:
// not_supported; calibrate a node's level from a run on one node) from
// `samples` of Algorithm::library on that machine; invalid_argument when
// fewer than two distinct sizes or a sample is not positive and finite.
Result<Calibration> calibrate_level(const Machine& machine, const std::vector<CollSample>& samples);

}  // namespace strata::coll::model
