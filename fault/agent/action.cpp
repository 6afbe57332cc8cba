#include "fault/agent/action.hpp"

#include "base/log.hpp"
#include "fault/agent/coordinator.hpp"
#include "fault/detect/diagnosis.hpp"
#include "fault/recorder/state.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace strata::fault {
namespace {

bool write_file(const std::string& path, const std::string& text, bool append) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) {
    STRATA_LOG(warn, kFault, "cannot write %s: %s", path.c_str(), std::strerror(errno));
    return false;
  }
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  return off == text.size();
}

}  // namespace

std::string job_file(const Settings& settings, const ProcessState& p, const char* suffix) {
  return settings.dir + "/" + p.job + suffix;
}

void append_diagnosis(const Settings& settings, const ProcessState& p, const std::string& json) {
  write_file(job_file(settings, p, ".diagnosis.jsonl"), json + "\n", true);
}

void write_exclude(const Settings& settings, const ProcessState& p, const Diagnosis& d,
                   const std::vector<std::string>& gpus) {
  std::string text = "# strata-fault: leave these out when the job restarts\n# " + to_text(d) + "\n";
  std::set<std::string> hosts(d.hosts.begin(), d.hosts.end());
  for (const std::string& h : hosts) text += "host " + h + "\n";
  std::vector<int> ranks = d.ranks;
  for (const auto& l : d.links) {
    ranks.push_back(l.first);
    ranks.push_back(l.second);
  }
  std::set<int> unique(ranks.begin(), ranks.end());
  for (int r : unique) {
    if (r >= 0 && static_cast<size_t>(r) < gpus.size() && !gpus[static_cast<size_t>(r)].empty()) {
      text += "gpu rank " + std::to_string(r) + " " + gpus[static_cast<size_t>(r)] + "\n";
    }
  }
  const std::string path = job_file(settings, p, ".exclude");
  if (write_file(path, text, false)) STRATA_LOG(warn, kFault, "hosts to exclude written to %s", path.c_str());
}

void write_links(const Settings& settings, const ProcessState& p, const Coordinator& c) {
  nlohmann::json j;
  j["type"] = "links";
  j["collectives_evaluated"] = c.collectives_evaluated();
  j["messages_paired"] = c.messages_paired();
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : c.links()) {
    links.push_back({{"src", l.src},
                     {"dst", l.dst},
                     {"median_ns", static_cast<int64_t>(l.median_ns)},
                     {"samples", l.samples},
                     {"probe", l.probe},
                     {"flagged", l.flagged}});
  }
  j["links"] = links;
  write_file(job_file(settings, p, ".links.json"), j.dump() + "\n", false);
}

}  // namespace strata::fault
