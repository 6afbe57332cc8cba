// "Did you mean ...?": the known name closest to a misspelt one, for the
// warnings about unknown STRATA_* variables and STRATA_LOG_SUBSYS words.
#pragma once

#include <string>
#include <vector>

namespace strata {

// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word` if it is fewer than `max_distance` edits
// away, else "" (a far match helps nobody).
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates, size_t max_distance = 4);

}  // namespace strata
