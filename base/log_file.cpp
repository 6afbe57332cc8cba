#include "base/log_file.hpp"

#include "base/log.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace strata::log {
namespace {

std::atomic<int> g_fd{STDERR_FILENO};
std::string g_open_name;  // the file g_fd is, "" for stderr

}  // namespace

std::string host_name() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  return host;
}

std::string expand_file_name(const std::string& pattern, const std::string& host, int pid, int rank) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'h': out += host; break;
      case 'p': out += std::to_string(pid); break;
      case 'r': out += rank >= 0 ? std::to_string(rank) : std::string("x"); break;
      case '%': out += '%'; break;
      default: out += '%'; out += pattern[i];
    }
  }
  return out;
}

void open_destination(const std::string& pattern, int rank) {
  const std::string name = pattern.empty() ? std::string() : expand_file_name(pattern, host_name(), getpid(), rank);
  if (name == g_open_name) return;
  int fd = STDERR_FILENO;
  if (!name.empty()) {
    fd = open(name.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      emit(Level::warn, kBase, "STRATA_LOG_FILE: cannot open %s (%s); the log stays where it was", name.c_str(),
           std::strerror(errno));
      return;
    }
  }
  const int old = g_fd.exchange(fd);
  if (old != STDERR_FILENO) close(old);
  g_open_name = name;
}

int destination() { return g_fd.load(std::memory_order_relaxed); }

}  // namespace strata::log
