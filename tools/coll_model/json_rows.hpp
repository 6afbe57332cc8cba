// strata-coll-model --json: the predictions its tables print, as rows a
// script can read (the file starts with the run's metadata, as every
// tool's JSON; tools/cli/run_metadata.hpp).
#pragma once

#include "collectives/model/zero_step.hpp"
#include "tools/coll_model/machine_spec.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace strata::tools {

// One row per collective, rank count, size and algorithm: "collective",
// "ranks", "shape", "bytes", "algorithm", "predicted_us" (absent where the
// model has no prediction), "chosen" (the model's choice); a rank count
// that does not fit the levels: one row with "fits": false.
nlohmann::json sweep_rows(const std::vector<coll::Collective>& collectives, const MachineSpec& spec,
                          const std::vector<int>& ranks, const std::vector<double>& sizes, bool device);

// One row per rank count and ZeRO scheme: "ranks", "shape", "scheme",
// "total_us", "forward_gather_us", "backward_gather_us", "reduce_scatter_us"
// (the times absent where the model has no prediction).
nlohmann::json zero_rows(const coll::model::ZeroModel& model, const MachineSpec& spec, const std::vector<int>& ranks,
                         bool device);

}  // namespace strata::tools
