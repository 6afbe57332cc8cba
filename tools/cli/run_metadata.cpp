#include "tools/cli/run_metadata.hpp"

#include "tools/cli/version.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

namespace strata::tools {

nlohmann::json run_metadata(const std::string& tool, int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {{"tool", tool}, {"version", kStrataVersion}, {"git_commit", kStrataGitCommit}, {"command", command},
          {"host", host}, {"time_utc", when}};
}

bool write_json_file(const std::string& path, const nlohmann::json& document) {
  std::ofstream out(path);
  out << document.dump(2) << '\n';
  if (!out) {
    std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace strata::tools
