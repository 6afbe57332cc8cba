// The tools the build made (STRATA_TOOLS: "name=path,..." from
// tests/tools/CMakeLists.txt) and a way to run one and read what it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace strata_test {

struct Tool {
  std::string name;  // the file name, e.g. strata-topo
  std::string path;
};

inline std::vector<Tool> built_tools() {
  std::vector<Tool> tools;
  const std::string list = STRATA_TOOLS;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(at, end - at);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) tools.push_back({entry.substr(0, eq), entry.substr(eq + 1)});
    at = end + 1;
  }
  return tools;
}

inline const Tool* find(const std::vector<Tool>& tools, const std::string& name) {
  for (const Tool& t : tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell (MPI programs as singletons).
inline Outcome run(const std::string& command) {
  Outcome o;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return o;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) o.output.append(buffer, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

}  // namespace strata_test
