// What every JSON a tool or benchmark writes starts with, so that a result
// file says where it came from: the tool, Strata's version and git commit,
// the command line, the host and the UTC time of the run.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace strata::tools {

nlohmann::json run_metadata(const std::string& tool, int argc, char** argv);

// Writes `document` to `path` (pretty-printed); false with a message on
// stderr when the file cannot be written.
bool write_json_file(const std::string& path, const nlohmann::json& document);

}  // namespace strata::tools
