// Post-mortem diagnosis from the dumps alone (the coordinator may have died
// with the job): the same detectors as the coordinator's, on the records.
#pragma once

#include "dumps.hpp"

#include "fault/detect/rank_view.hpp"
#include "fault/settings.hpp"

#include <strata/fault.hpp>

#include <vector>

namespace strata::fault::tool {

struct Analysis {
  std::vector<RankView> views;       // each rank at its dump
  std::vector<Diagnosis> diagnoses;  // hang (from the states), skew and links (from the records)
  uint64_t collectives = 0;          // collectives every member recorded
  uint64_t messages = 0;             // messages both ends recorded
};

Analysis analyze(const JobFiles& job, const Settings& settings);

}  // namespace strata::fault::tool
