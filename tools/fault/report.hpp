// strata-fault's output: the ranks' states, the diagnoses made during the
// run and after it, and a merged timeline; as text or as one JSON object.
#pragma once

#include "analysis.hpp"
#include "dumps.hpp"

#include <string>

namespace strata::fault::tool {

struct ReportOptions {
  size_t timeline = 30;  // merged operations shown, the latest
  size_t per_rank = 3;   // each rank's last operations (text)
};

std::string text_report(const JobFiles& job, const Analysis& a, const ReportOptions& o);
std::string json_report(const JobFiles& job, const Analysis& a, const ReportOptions& o);

}  // namespace strata::fault::tool
