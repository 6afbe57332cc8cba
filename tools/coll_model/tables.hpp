// The markdown tables strata-coll-model prints.
#pragma once

#include "collectives/model/zero_step.hpp"
#include "tools/coll_model/machine_spec.hpp"

#include <string>
#include <vector>

namespace strata::tools {

// "allreduce", "two_level": the names the command line and the output use.
const char* name_of(coll::Collective collective);
const char* name_of(coll::Algorithm algorithm);
// The algorithms a sweep predicts: the flat ones (the library's; on host
// buffers also ring and recursive), then hierarchical and two_level.
std::vector<coll::Algorithm> flat_algorithms(bool device);
// The shape as levels x fanouts, e.g. "gcd 2 · package 4 · node 48".
std::string shape_of(const coll::model::Machine& machine);

// "35.2 µs", "1.23 ms", "2.45 s".
std::string format_time(double us);
// "1 MiB", "868 MiB", "37.3 GiB".
std::string format_bytes(double bytes);

// Predicted time of every algorithm per rank count and size for one
// collective, with flat / hierarchical, flat / two_level and the choice.
void print_sweep(coll::Collective collective, const MachineSpec& spec, const std::vector<int>& ranks,
                 const std::vector<double>& sizes, bool device);

// One ZeRO step per rank count and scheme: totals and ratios, then the
// breakdown into forward gathers, backward gathers and reduce-scatters.
void print_zero(const coll::model::ZeroModel& model, const MachineSpec& spec, const std::vector<int>& ranks,
                bool device);

}  // namespace strata::tools
