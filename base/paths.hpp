// Where Strata keeps files between runs.
#pragma once

#include <string>

namespace strata {

// STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else $HOME/.cache/strata
// (empty when none of them is set).
std::string cache_dir();

// cache_dir()/model.json: the performance model strata-measure writes.
std::string model_file_path();

}  // namespace strata
