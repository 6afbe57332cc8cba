#include "base/log.hpp"

#include "base/config.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace strata::log {

std::atomic<int> g_level{static_cast<int>(Level::warn)};
std::atomic<uint32_t> g_mask{kAll};

namespace {

config::ChoiceParam<Level> g_level_param{"STRATA_LOG",
                                         Level::warn,
                                         {{"off", Level::off},
                                          {"error", Level::error},
                                          {"warn", Level::warn},
                                          {"info", Level::info},
                                          {"debug", Level::debug},
                                          {"trace", Level::trace}},
                                         "Log level. info: one line per decision; debug: the path every MPI call took"};
config::StringParam g_subsys_param{"STRATA_LOG_SUBSYS", "all",
                                   "Comma-separated subsystems to log (base,layout,types,model,p2p,shim,coll,topo,"
                                   "fault,device,app), or all; a leading ^ excludes the listed ones"};

struct SubsysName {
  uint32_t bit;
  const char* name;
};
constexpr SubsysName kNames[] = {{kBase, "base"},   {kLayout, "layout"}, {kTypes, "types"}, {kModel, "model"},
                                 {kP2p, "p2p"},     {kShim, "shim"},     {kColl, "coll"},   {kTopo, "topo"},
                                 {kFault, "fault"}, {kDevice, "device"}, {kApp, "app"}};

char g_prefix[128] = "strata";

uint32_t parse_mask(const std::string& text) {
  if (text.empty() || text == "all") return kAll;
  bool exclude = text[0] == '^';
  uint32_t mask = 0;
  size_t start = exclude ? 1 : 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (const auto& n : kNames) {
      if (word == n.name) mask |= n.bit;
    }
    if (word == "all") mask = kAll;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return exclude ? ~mask : mask;
}

int rank_from_launcher() {
  // Before MPI_Init the launcher's variables are all we have.
  static const char* const kVars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
  for (const char* v : kVars) {
    const char* text = std::getenv(v);
    if (text != nullptr && *text != '\0') return std::atoi(text);
  }
  return -1;
}

struct PrefixInit {
  PrefixInit() { set_rank(rank_from_launcher()); }
} g_prefix_init;

const char* level_name(Level level) {
  switch (level) {
    case Level::error: return "ERROR";
    case Level::warn: return "WARN";
    case Level::info: return "INFO";
    case Level::debug: return "DEBUG";
    case Level::trace: return "TRACE";
    case Level::off: break;
  }
  return "";
}

}  // namespace

const char* subsys_name(uint32_t subsys) {
  for (const auto& n : kNames) {
    if (subsys == n.bit) return n.name;
  }
  return "?";
}

void set_rank(int rank) {
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  if (rank >= 0) {
    std::snprintf(g_prefix, sizeof g_prefix, "strata %s:%d:%d", host, static_cast<int>(getpid()), rank);
  } else {
    std::snprintf(g_prefix, sizeof g_prefix, "strata %s:%d:?", host, static_cast<int>(getpid()));
  }
}

void configure() {
  g_level.store(static_cast<int>(g_level_param.get()), std::memory_order_relaxed);
  g_mask.store(parse_mask(g_subsys_param.get()), std::memory_order_relaxed);
}

void emit(Level level, uint32_t subsys, const char* fmt, ...) {
  char line[1024];
  int n = std::snprintf(line, sizeof line, "[%s %s %s] ", g_prefix, level_name(level), subsys_name(subsys));
  if (n < 0) return;
  size_t used = static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1;
  va_list args;
  va_start(args, fmt);
  int m = std::vsnprintf(line + used, sizeof line - used, fmt, args);
  va_end(args);
  if (m > 0) used += static_cast<size_t>(m) < sizeof line - used ? static_cast<size_t>(m) : sizeof line - used - 1;
  if (used >= sizeof line - 1) used = sizeof line - 2;
  line[used++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, used);
  (void)ignored;
}

}  // namespace strata::log
