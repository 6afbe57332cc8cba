// The STRATA_* configuration registry, as seen from tools and applications.
// Each variable is declared once, typed, with a default and a help line, next
// to the code that uses it (base/config.hpp); this header lists and loads them.
#pragma once

#include <strata/export.h>

#include <string>
#include <vector>

namespace strata::config {

struct ParameterInfo {
  std::string name;          // e.g. STRATA_LOG
  std::string type;          // bool, int, size, string, or "a|b|c" for choices
  std::string default_text;  // the default, as it would be written
  std::string value_text;    // the value in effect
  bool from_environment;     // set by the environment (and valid)
  std::string help;
};

// Parses every registered STRATA_* variable from the environment. Runs once;
// later calls do nothing unless `force` is set (tests change the environment).
// Invalid values and unknown STRATA_* names are reported as warnings.
STRATA_API void load(bool force = false);

// Every registered parameter, sorted by name.
STRATA_API std::vector<ParameterInfo> parameters();

// Warnings the last load produced (invalid values, unknown names).
STRATA_API std::vector<std::string> load_warnings();

}  // namespace strata::config
