#include "fault/agent/agent.hpp"

#include "base/log.hpp"
#include "fault/agent/action.hpp"
#include "fault/clock.hpp"
#include "fault/detect/diagnosis.hpp"
#include "fault/inject/inject.hpp"
#include "fault/oob/wire.hpp"
#include "fault/recorder/dump.hpp"
#include "fault/recorder/state.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <csignal>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

namespace strata::fault {
namespace {

constexpr uint64_t kClockBit = uint64_t{1} << 63;
constexpr int kClockSamples = 8;
constexpr int64_t kClockRefreshNs = 10000000000;
constexpr int kConnectTimeoutMs = 5000;
constexpr int kProbeConnectTimeoutMs = 200;

using oob::Msg;

uint16_t type_of(Msg m) { return static_cast<uint16_t>(m); }

}  // namespace

Agent::Agent(const Settings& settings, int rank, int size, std::vector<PeerAddress> peers, int listen_fd)
    : settings_(settings),
      rank_(rank),
      size_(size),
      peers_(std::move(peers)),
      listen_fd_(listen_fd),
      scanner_(settings) {
  if (pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  outgoing_.rank = rank;
}

Agent::~Agent() {
  if (thread_.joinable()) stop(false);
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status Agent::start() {
  if (rank_ == 0) {
    become_coordinator();
  } else {
    connect_coordinator();
  }
  next_tick_ = now_ns() + settings_.tick_ns;
  try {
    // The watchdog thread never takes SIGTERM: the handler (recorder/signals.cpp)
    // waits for a dump in progress, which this thread may be writing.
    sigset_t term, previous;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &previous);
    try {
      thread_ = std::thread([this] { run(); });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      throw;
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  } catch (...) {
    STRATA_LOG(warn, kFault, "could not start the watchdog thread: fault detection is off");
    return Status::internal;
  }
  return Status::ok;
}

void Agent::stop(bool final_exchange) {
  if (!thread_.joinable()) return;
  if (final_exchange) {
    final_requested_.store(true);
  } else {
    stop_now_.store(true);
  }
  if (wake_[1] >= 0) {
    const char c = 1;
    (void)!::write(wake_[1], &c, 1);
  }
  thread_.join();
}

std::vector<Diagnosis> Agent::diagnoses() const {
  std::lock_guard<std::mutex> lock(diag_mutex_);
  return diagnoses_;
}

void Agent::remember(const Diagnosis& d) {
  std::lock_guard<std::mutex> lock(diag_mutex_);
  diagnoses_.push_back(d);
}

void Agent::become_coordinator() {
  std::vector<std::string> hosts, gpus;
  for (const PeerAddress& p : peers_) {
    hosts.push_back(p.host);
    gpus.push_back(p.gpu);
  }
  const int64_t now = now_ns();
  coordinator_rank_ = rank_;
  coordinator_ = std::make_unique<Coordinator>(settings_, size_, rank_, std::move(hosts), std::move(gpus), now);
  // After a death the launcher ends the job: the old coordinator's end may be that.
  if (death_heard_ns_ != 0) coordinator_->note_earlier_death(death_heard_ns_);
  for (int d : dead_) coordinator_->on_lost(d, now);
  // Communicators already described went to the old coordinator: describe them again.
  comms_sent_ = 1;
  if (rank_ != 0) STRATA_LOG(warn, kFault, "rank %d takes over as the fault coordinator", rank_);
}

void Agent::connect_coordinator() {
  while (true) {
    int next = 0;
    while (dead_.count(next)) ++next;
    coordinator_rank_ = next;
    if (next == rank_) {
      become_coordinator();
      return;
    }
    if (connection_to(next, true) != nullptr) {
      comms_sent_ = 1;
      return;
    }
    STRATA_LOG(warn, kFault, "cannot reach the fault coordinator (rank %d); trying the next rank", next);
    dead_.insert(next);
  }
}

oob::Connection* Agent::connection_to(int rank, bool connect) {
  auto it = by_rank_.find(rank);
  if (it != by_rank_.end()) return it->second;
  if (!connect || rank < 0 || rank >= size_) return nullptr;
  const int timeout = rank == coordinator_rank_ ? kConnectTimeoutMs : kProbeConnectTimeoutMs;
  Result<int> fd = oob::Connection::connect_to(peers_[static_cast<size_t>(rank)].endpoint, timeout);
  if (!fd) return nullptr;
  conns_.push_back(std::make_unique<oob::Connection>(fd.value()));
  oob::Connection* c = conns_.back().get();
  c->peer_rank = rank;
  by_rank_[rank] = c;
  oob::Hello hello;
  hello.rank = rank_;
  hello.size = size_;
  c->send(type_of(Msg::hello), oob::encode(hello));
  return c;
}

void Agent::run() {
  std::vector<pollfd> fds;
  std::vector<oob::Connection*> polled;
  while (!stop_now_.load()) {
    int64_t now = now_ns();
    if (final_requested_.load() && final_deadline_ == 0) {
      final_deadline_ = now + settings_.final_timeout_ns;
      next_tick_ = now;  // the final heartbeat now
    }
    const int timeout_ms = poll_timeout_ms(now);
    gather_polled(fds, polled);
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) break;
    now = now_ns();
    if (n > 0) serve(fds, polled);
    send_delayed(now);
    if (now >= next_tick_) {
      tick(now);
      next_tick_ = now + settings_.tick_ns;
    }
    if (final_done_.load()) break;
    if (final_deadline_ != 0 && now > final_deadline_ + (coordinator_ ? 0 : 1000000000)) {
      if (coordinator_) {
        STRATA_LOG(warn, kFault, "not every rank finished within STRATA_FAULT_FINAL_TIMEOUT_MS; stopping anyway");
        coordinate(now);
      }
      break;
    }
  }
  if (coordinator_) write_links_file();
  flush_all(now_ns() + 500000000);
}

int Agent::poll_timeout_ms(int64_t now) const {
  int64_t wake_at = next_tick_;
  for (const Delayed& d : delayed_) wake_at = std::min(wake_at, d.due_ns);
  return static_cast<int>(std::clamp<int64_t>((wake_at - now + 999999) / 1000000, 0, 1000));
}

void Agent::gather_polled(std::vector<pollfd>& fds, std::vector<oob::Connection*>& polled) {
  fds.clear();
  polled.clear();
  fds.push_back({wake_[0], POLLIN, 0});
  fds.push_back({listen_fd_, POLLIN, 0});
  for (auto& c : conns_) {
    if (!c->open()) continue;
    fds.push_back({c->fd(), static_cast<short>(POLLIN | (c->wants_write() ? POLLOUT : 0)), 0});
    polled.push_back(c.get());
  }
}

void Agent::serve(const std::vector<pollfd>& fds, const std::vector<oob::Connection*>& polled) {
  if (fds[0].revents & POLLIN) {
    char buf[64];
    while (::read(wake_[0], buf, sizeof(buf)) > 0) {
    }
  }
  if (fds[1].revents & POLLIN) {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) break;
      conns_.push_back(std::make_unique<oob::Connection>(fd));
    }
  }
  for (size_t i = 0; i < polled.size(); ++i) serve_connection(*polled[i], fds[i + 2].revents);
  conns_.erase(std::remove_if(conns_.begin(), conns_.end(), [](const auto& c) { return !c->open(); }), conns_.end());
}

void Agent::serve_connection(oob::Connection& c, short revents) {
  bool alive = true;
  if (revents & POLLOUT) alive = c.flush();
  if (alive && (revents & (POLLIN | POLLERR | POLLHUP))) {
    alive = c.receive([&](uint16_t type, const char* body, size_t size) { handle(c, type, body, size); });
  }
  if (!alive) {
    const int peer = c.peer_rank;
    const bool current = peer >= 0 && by_rank_.count(peer) && by_rank_[peer] == &c;
    c.close();
    if (current) {
      by_rank_.erase(peer);
      on_lost(peer);
    }
  }
}

void Agent::send_delayed(int64_t now) {
  // Delayed answers (injected slow links).
  for (size_t i = 0; i < delayed_.size();) {
    if (delayed_[i].due_ns > now) {
      ++i;
      continue;
    }
    if (oob::Connection* c = connection_to(delayed_[i].rank, false)) c->send(type_of(Msg::pong), delayed_[i].body);
    delayed_.erase(delayed_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Agent::tick(int64_t now) {
  ProcessState& p = process();
  refine_ticks();
  oob::Heartbeat& hb = outgoing_;
  hb.rank = rank_;
  hb.now_ns = now;
  scanner_.scan(p, now, &hb);
  hb.comms.clear();
  const uint32_t ncomms = p.comms.count();
  uint64_t entered = 0;
  for (uint32_t i = 0; i < ncomms; ++i) {
    const CommEntry* e = p.comms.entry(i);
    const uint64_t started = e->coll_started.load(std::memory_order_relaxed);
    entered += started;
    if (started == 0) continue;
    oob::CommProgress c;
    c.comm = e->id;
    c.size = e->size;
    c.entered = started;
    c.left = e->coll_left.load(std::memory_order_relaxed);
    hb.comms.push_back(c);
  }
  p.stream_stride.store(Scanner::stream_stride(entered - std::min(entered, colls_entered_)), std::memory_order_relaxed);
  colls_entered_ = entered;
  for (; comms_sent_ < ncomms; ++comms_sent_) {
    const CommEntry* e = p.comms.entry(comms_sent_);
    oob::CommInfo info;
    info.comm = e->id;
    info.ranks.assign(e->world_ranks, e->world_ranks + e->size);
    if (coordinator_) {
      coordinator_->on_comm_info(info);
    } else if (oob::Connection* c = connection_to(coordinator_rank_, false)) {
      c->send(type_of(Msg::comm_info), oob::encode(info));
    }
  }
  if (final_requested_.load() && !final_sent_) {
    hb.flags |= oob::Heartbeat::kFinal;
    final_sent_ = true;
  }
  send_heartbeat(hb, now);
  if (coordinator_) coordinate(now);
}

void Agent::send_heartbeat(oob::Heartbeat& hb, int64_t now) {
  if (coordinator_) {
    coordinator_->on_heartbeat(hb, now);
  } else if (oob::Connection* c = connection_to(coordinator_rank_, false)) {
    c->send(type_of(Msg::heartbeat), oob::encode(hb));
  }
  hb.colls.clear();
  hb.p2p.clear();
  hb.probes.clear();
}

void Agent::coordinate(int64_t now) {
  // Clocks of ranks on other hosts (one host shares CLOCK_MONOTONIC).
  for (auto& [rank, conn] : by_rank_) {
    if (rank == rank_ || peers_[static_cast<size_t>(rank)].host == peers_[static_cast<size_t>(rank_)].host) continue;
    int& samples = clock_samples_[rank];
    int64_t& next = clock_next_[rank];
    if (samples >= kClockSamples && now < next) continue;
    if (samples >= kClockSamples) next = now + kClockRefreshNs;
    ++samples;
    oob::Ping ping;
    ping.number = kClockBit | ++probe_number_;
    ping.sent_ns = now;
    ping.from = rank_;
    conn->send(type_of(Msg::ping), oob::encode(ping));
  }
  Coordinator::Actions acts = coordinator_->tick(now);
  for (const Diagnosis& d : acts.diagnoses) diagnosed(d);
  for (auto& [rank, peers] : acts.probes) {
    if (rank == rank_) {
      probe(peers);
    } else if (oob::Connection* c = connection_to(rank, false)) {
      oob::Packer body;
      body.put(static_cast<uint32_t>(peers.size()));
      for (int peer : peers) body.put(static_cast<int32_t>(peer));
      c->send(type_of(Msg::probe_request), body.bytes());
    }
  }
  if (final_requested_.load() && final_sent_ && (coordinator_->all_final() || now > final_deadline_)) {
    for (auto& [rank, conn] : by_rank_) conn->send(type_of(Msg::final_ack), std::string());
    final_done_.store(true);
  }
}

void Agent::probe(const std::vector<int>& peers) {
  const int64_t now = now_ns();
  for (auto it = probes_out_.begin(); it != probes_out_.end();) {
    it = now - it->second.second > 10000000000 ? probes_out_.erase(it) : std::next(it);
  }
  for (int peer : peers) {
    oob::Connection* c = connection_to(peer, true);
    if (c == nullptr) continue;
    oob::Ping ping;
    ping.number = ++probe_number_;
    ping.sent_ns = now_ns();
    ping.from = rank_;
    ping.padding = settings_.probe_bytes;
    probes_out_[ping.number] = {peer, ping.sent_ns};
    c->send(type_of(Msg::ping), oob::encode(ping));
  }
}

void Agent::on_lost(int rank) {
  const int64_t now = now_ns();
  if (coordinator_) {
    coordinator_->on_lost(rank, now);
    return;
  }
  if (rank != coordinator_rank_) return;
  dead_.insert(rank);
  if (final_requested_.load()) {
    final_done_.store(true);  // nobody left to wait for
    return;
  }
  STRATA_LOG(warn, kFault, "the fault coordinator (rank %d) is gone", rank);
  connect_coordinator();
}

void Agent::write_links_file() { write_links(settings_, process(), *coordinator_); }

}  // namespace strata::fault
