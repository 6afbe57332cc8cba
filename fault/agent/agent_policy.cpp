// The coordinator's side of a diagnosis: log it, file it, tell every
// rank, and carry out STRATA_FAULT_ACTION (agent.hpp).
#include "fault/agent/agent.hpp"

#include "base/log.hpp"
#include "fault/agent/action.hpp"
#include "fault/clock.hpp"
#include "fault/detect/diagnosis.hpp"
#include "fault/oob/wire.hpp"
#include "fault/recorder/dump.hpp"
#include "fault/recorder/state.hpp"
#include "fault/terminate_hooks.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <set>
#include <sys/socket.h>
#include <unistd.h>

namespace strata::fault {
namespace {

using oob::Msg;
uint16_t type_of(Msg m) { return static_cast<uint16_t>(m); }

// How long the coordinator waits for every rank's record before ending the job.
constexpr int64_t kTeardownWaitNs = 3000000000;

}  // namespace

void Agent::diagnosed(const Diagnosis& d) {
  STRATA_LOG(warn, kFault, "FAULT %s", to_text(d).c_str());
  remember(d);
  const std::string json = to_json(d);
  append_diagnosis(settings_, process(), json);
  for (auto& [rank, conn] : by_rank_) conn->send(type_of(Msg::diagnosis), json);
  if (!final_requested_.load()) enforce(d);
}

void Agent::enforce(const Diagnosis& d) {
  if (settings_.action == Action::report) {
    for (auto& [rank, conn] : by_rank_) conn->send(type_of(Msg::dump), std::string());
    const int rc = write_dump("fault");
    if (rc != 0) STRATA_LOG(warn, kFault, "flight record dump failed: %s", std::strerror(rc));
    return;
  }
  if (settings_.action == Action::exclude) {
    std::vector<std::string> gpus;
    for (const PeerAddress& p : peers_) gpus.push_back(p.gpu);
    write_exclude(settings_, process(), d, gpus);
  }
  STRATA_LOG(warn, kFault, "STRATA_FAULT_ACTION=%s: ending the job with exit code %d", to_string(settings_.action),
             settings_.exit_code);
  write_dump("fault");
  oob::Packer m;
  m.put(static_cast<int32_t>(settings_.exit_code));
  for (auto& [rank, conn] : by_rank_) conn->send(type_of(Msg::terminate), m.bytes());
  // The launcher ends the whole job at the first rank that exits with an
  // error, and a rank killed while writing its record leaves none: so no
  // rank exits before every record is written (or a few seconds passed).
  await_dumps(now_ns() + kTeardownWaitNs);
  terminating_ = true;
  flush_all(now_ns() + 2000000000);
  // Its record was written above: a second one now could be cut short by
  // the launcher, which is ending the ranks that have exited.
  STRATA_LOG(warn, kFault, "the fault policy ends the job: exit code %d", settings_.exit_code);
  run_terminate_hooks();         // e.g. NCCL communicators aborted: nothing left spinning on a GPU
  ::_exit(settings_.exit_code);  // the user asked for it (STRATA_FAULT_ACTION)
}

void Agent::await_dumps(int64_t deadline_ns) {
  std::set<int> waiting;
  for (auto& [rank, conn] : by_rank_) {
    if (conn->open()) waiting.insert(rank);
  }
  std::vector<pollfd> fds;
  std::vector<oob::Connection*> polled;
  while (!waiting.empty() && now_ns() < deadline_ns) {
    fds.clear();
    polled.clear();
    for (int rank : waiting) {
      oob::Connection* c = by_rank_[rank];
      fds.push_back({c->fd(), static_cast<short>(POLLIN | (c->wants_write() ? POLLOUT : 0)), 0});
      polled.push_back(c);
    }
    if (::poll(fds.data(), fds.size(), 10) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < polled.size(); ++i) {
      oob::Connection& c = *polled[i];
      bool alive = !(fds[i].revents & POLLOUT) || c.flush();
      if (alive && (fds[i].revents & (POLLIN | POLLERR | POLLHUP))) {
        alive = c.receive([&](uint16_t type, const char*, size_t) {
          if (type == type_of(Msg::dumped)) waiting.erase(c.peer_rank);
        });
      }
      if (!alive) waiting.erase(c.peer_rank);  // gone: nothing to wait for
    }
  }
  if (!waiting.empty()) {
    STRATA_LOG(warn, kFault, "%zu rank(s) did not confirm their flight record before the job ends", waiting.size());
  }
}

void Agent::terminate_told(oob::Connection& coordinator, int code) {
  STRATA_LOG(warn, kFault, "the fault coordinator ended the job (STRATA_FAULT_ACTION): exit code %d", code);
  write_dump("terminate");
  // Say so, then wait for the coordinator to close (it does once every
  // rank has said so): exiting now could get a slower rank killed by the
  // launcher before its record is written.
  coordinator.send(type_of(Msg::dumped), std::string());
  const int64_t deadline = now_ns() + kTeardownWaitNs + 2000000000;
  while (coordinator.open() && coordinator.wants_write() && now_ns() < deadline) {
    pollfd fd{coordinator.fd(), POLLOUT, 0};
    ::poll(&fd, 1, 10);
    if (!coordinator.flush()) break;
  }
  while (coordinator.open() && now_ns() < deadline) {
    pollfd fd{coordinator.fd(), POLLIN, 0};
    if (::poll(&fd, 1, 10) < 0 && errno != EINTR) break;
    char buf[4096];
    const ssize_t n = ::recv(coordinator.fd(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
  }
  // The one place Strata ends a process: the user asked for it (STRATA_FAULT_ACTION).
  run_terminate_hooks();
  ::_exit(code);
}

void Agent::flush_all(int64_t deadline_ns) {
  // Write what is queued, then half-close and wait for the peers to close,
  // so the last frames are not lost to a reset.
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    bool pending = false;
    for (auto& c : conns_) {
      if (!c->open()) continue;
      if (c->wants_write()) pending = true;
      fds.push_back({c->fd(), static_cast<short>(c->wants_write() ? POLLOUT : 0), 0});
    }
    if (!pending || now_ns() > deadline_ns) break;
    ::poll(fds.data(), fds.size(), 10);
    for (auto& c : conns_) {
      if (c->open() && c->wants_write()) c->flush();
    }
  }
  if (!terminating_) return;
  for (auto& c : conns_) {
    if (c->open()) ::shutdown(c->fd(), SHUT_WR);
  }
  while (now_ns() < deadline_ns) {
    fds.clear();
    for (auto& c : conns_) {
      if (c->open()) fds.push_back({c->fd(), POLLIN, 0});
    }
    if (fds.empty() || ::poll(fds.data(), fds.size(), 10) < 0) break;
    for (auto& c : conns_) {
      if (!c->open()) continue;
      char buf[4096];
      const ssize_t n = ::recv(c->fd(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) c->close();
    }
  }
}

}  // namespace strata::fault
