// Diagnoses as JSON (one line in STRATA_FAULT_DIR/<job>.diagnosis.jsonl,
// and the DIAGNOSIS message) and as one line of text.
#pragma once

#include <strata/fault.hpp>

#include <string>

namespace strata::fault {

std::string to_json(const Diagnosis& d);
bool from_json(const std::string& line, Diagnosis* d);
// "non-comm hang: allreduce #12 on comm 0: ranks {3} missing; ..." (the message, classed).
std::string to_text(const Diagnosis& d);
// "{3,5}" / "{2-3}".
std::string rank_set(const std::vector<int>& ranks);
std::string link_set(const std::vector<std::pair<int, int>>& links);
// "12.3 ms", "4.1 s", "250 us".
std::string duration_text(int64_t ns);

}  // namespace strata::fault
