#include "base/log.hpp"

#include "base/closest_name.hpp"
#include "base/config.hpp"
#include "base/log_file.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>
#include <vector>

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
config::StringParam g_file_param{"STRATA_LOG_FILE", "",
                                 "Write the log to this file instead of stderr: %h host, %p pid, %r MPI rank (x "
                                 "before it is known), as NCCL_DEBUG_FILE; one file per process"};

struct SubsysName {
  uint32_t bit;
  const char* name;
};
constexpr SubsysName kNames[] = {{kBase, "base"},   {kLayout, "layout"}, {kTypes, "types"}, {kModel, "model"},
                                 {kP2p, "p2p"},     {kShim, "shim"},     {kColl, "coll"},   {kTopo, "topo"},
                                 {kFault, "fault"}, {kDevice, "device"}, {kApp, "app"}};

char g_prefix[128] = "strata";

// The mask of a STRATA_LOG_SUBSYS value; words that name no subsystem are
// added to `unknown`.
uint32_t parse_mask(const std::string& text, std::vector<std::string>* unknown) {
  if (text.empty() || text == "all") return kAll;
  bool exclude = text[0] == '^';
  uint32_t mask = 0;
  size_t start = exclude ? 1 : 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool known = word == "all";
    for (const auto& n : kNames) {
      if (word == n.name) {
        mask |= n.bit;
        known = true;
      }
    }
    if (word == "all") mask = kAll;
    if (!known) unknown->push_back(word);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return exclude ? ~mask : mask;
}

// Warns once per configure() about each word of STRATA_LOG_SUBSYS that names
// no subsystem (a typo would otherwise silence the log without a word).
void warn_unknown_subsystems(const std::vector<std::string>& unknown) {
  // Past the mask: the typo may have emptied it.
  if (unknown.empty() || static_cast<int>(Level::warn) > g_level.load(std::memory_order_relaxed)) return;
  std::vector<std::string> names;
  std::string list;
  for (const auto& n : kNames) {
    names.emplace_back(n.name);
    list += (list.empty() ? "" : ",") + std::string(n.name);
  }
  for (const std::string& word : unknown) {
    const std::string best = closest_name(word, names, 3);
    const std::string hint = best.empty() ? std::string() : "; did you mean '" + best + "'?";
    emit(Level::warn, kBase, "STRATA_LOG_SUBSYS: unknown subsystem '%s'%s (known: %s, all)", word.c_str(), hint.c_str(),
         list.c_str());
  }
}

int g_rank = -1;
bool g_configured = false;  // configure() ran: STRATA_LOG_FILE may be read

void set_prefix(int rank);

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
  // Only the prefix: reading STRATA_LOG_FILE here, during static
  // initialisation, would load the configuration before every variable of
  // the other translation units has registered.
  PrefixInit() {
    g_rank = rank_from_launcher();
    set_prefix(g_rank);
  }
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
  g_rank = rank;
  set_prefix(rank);
  if (!g_configured) return;
  const std::string& pattern = g_file_param.get();
  if (pattern.find("%r") != std::string::npos) open_destination(pattern, rank);
}

namespace {

void set_prefix(int rank) {
  const std::string host = host_name();
  if (rank >= 0) {
    std::snprintf(g_prefix, sizeof g_prefix, "strata %s:%d:%d", host.c_str(), static_cast<int>(getpid()), rank);
  } else {
    std::snprintf(g_prefix, sizeof g_prefix, "strata %s:%d:?", host.c_str(), static_cast<int>(getpid()));
  }
}

}  // namespace

void configure() {
  g_configured = true;
  open_destination(g_file_param.get(), g_rank);
  g_level.store(static_cast<int>(g_level_param.get()), std::memory_order_relaxed);
  std::vector<std::string> unknown;
  g_mask.store(parse_mask(g_subsys_param.get(), &unknown), std::memory_order_relaxed);
  warn_unknown_subsystems(unknown);
}

void emit(Level level, uint32_t subsys, const char* fmt, ...) {
  // Wall-clock seconds with microseconds, as UCX prints them: lines of all
  // ranks sort into one timeline (clock_gettime is async-signal-safe).
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  char line[1024];
  int n = std::snprintf(line, sizeof line, "[%lld.%06ld %s %s %s] ", static_cast<long long>(now.tv_sec),
                        static_cast<long>(now.tv_nsec / 1000), g_prefix, level_name(level), subsys_name(subsys));
  if (n < 0) return;
  size_t used = static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1;
  va_list args;
  va_start(args, fmt);
  int m = std::vsnprintf(line + used, sizeof line - used, fmt, args);
  va_end(args);
  if (m > 0) used += static_cast<size_t>(m) < sizeof line - used ? static_cast<size_t>(m) : sizeof line - used - 1;
  if (used >= sizeof line - 1) used = sizeof line - 2;
  line[used++] = '\n';
  ssize_t ignored = write(destination(), line, used);
  (void)ignored;
}

}  // namespace strata::log
