#include "base/paths.hpp"

#include "base/config.hpp"

#include <cstdlib>

namespace strata {
namespace {
config::StringParam g_cache_dir{"STRATA_CACHE_DIR", "",
                                "Folder of the measured performance model (model.json); default "
                                "$XDG_CACHE_HOME/strata, then $HOME/.cache/strata"};
}  // namespace

std::string cache_dir() {
  if (!g_cache_dir.get().empty()) return g_cache_dir.get();
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/strata";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/strata";
  }
  return std::string();
}

std::string model_file_path() {
  std::string dir = cache_dir();
  return dir.empty() ? std::string() : dir + "/model.json";
}

}  // namespace strata
