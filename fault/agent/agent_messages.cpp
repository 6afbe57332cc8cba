// The agent's answers to each out-of-band frame (agent.hpp).
#include "fault/agent/agent.hpp"

#include "base/log.hpp"
#include "fault/clock.hpp"
#include "fault/detect/diagnosis.hpp"
#include "fault/inject/inject.hpp"
#include "fault/oob/wire.hpp"
#include "fault/recorder/dump.hpp"
#include "fault/recorder/state.hpp"

#include <cstring>

namespace strata::fault {
namespace {

constexpr uint64_t kClockBit = uint64_t{1} << 63;  // pings of the clock-offset estimate (agent.cpp)

using oob::Msg;
uint16_t type_of(Msg m) { return static_cast<uint16_t>(m); }

}  // namespace

void Agent::handle(oob::Connection& c, uint16_t type, const char* body, size_t size) {
  const int64_t now = now_ns();
  switch (static_cast<Msg>(type)) {
    case Msg::hello: on_hello(c, body, size); return;
    case Msg::heartbeat: on_heartbeat(body, size, now); return;
    case Msg::comm_info: on_comm_info(body, size); return;
    case Msg::dump: on_dump(); return;
    case Msg::terminate: on_terminate(c, body, size);
    case Msg::probe_request: on_probe_request(body, size); return;
    case Msg::ping: on_ping(c, body, size, now); return;
    case Msg::pong: on_pong(c, body, size, now); return;
    case Msg::diagnosis: on_diagnosis(body, size, now); return;
    case Msg::clock: on_clock(body, size); return;
    case Msg::final_ack: final_done_.store(true); return;
    case Msg::dumped: return;  // counted by await_dumps, the only time it is sent
  }
}

void Agent::on_hello(oob::Connection& c, const char* body, size_t size) {
  oob::Hello hello;
  if (!oob::decode(body, size, &hello) || hello.rank < 0 || hello.rank >= size_ || hello.size != size_) {
    STRATA_LOG(warn, kFault, "out-of-band: a connection that is not from this job; closed");
    c.close();
    return;
  }
  c.peer_rank = hello.rank;
  by_rank_[hello.rank] = &c;
}

void Agent::on_heartbeat(const char* body, size_t size, int64_t now) {
  oob::Heartbeat hb;
  if (!oob::decode(body, size, &hb)) return;
  if (!coordinator_ && hb.rank > rank_) {  // the old coordinator is gone: the sender saw it first
    for (int r = 0; r < rank_; ++r) dead_.insert(r);
    become_coordinator();
  }
  if (coordinator_) coordinator_->on_heartbeat(hb, now);
}

void Agent::on_comm_info(const char* body, size_t size) {
  oob::CommInfo info;
  if (coordinator_ && oob::decode(body, size, &info)) coordinator_->on_comm_info(info);
}

void Agent::on_dump() {
  const int rc = write_dump("fault");
  if (rc != 0) STRATA_LOG(warn, kFault, "flight record dump failed: %s", std::strerror(rc));
}

void Agent::on_terminate(oob::Connection& c, const char* body, size_t size) {
  oob::Unpacker u(body, size);
  int32_t code = settings_.exit_code;
  u.get(&code);
  terminate_told(c, code);
}

void Agent::on_probe_request(const char* body, size_t size) {
  oob::Unpacker u(body, size);
  uint32_t n = 0;
  std::vector<int> peers;
  if (u.get(&n)) {
    for (uint32_t i = 0; i < n && u.ok(); ++i) {
      int32_t peer = -1;
      if (u.get(&peer)) peers.push_back(peer);
    }
  }
  probe(peers);
}

void Agent::on_ping(oob::Connection& c, const char* body, size_t size, int64_t now) {
  oob::Ping ping;
  if (!oob::decode(body, size, &ping)) return;
  const int64_t delay_ms = inject::any() ? inject::probe_delay_ms(c.peer_rank) : 0;
  if (delay_ms < 0) return;  // an injected cut link drops it
  oob::Ping pong = ping;
  pong.replied_ns = now;
  pong.from = rank_;
  pong.padding = 0;
  if (delay_ms == 0) {
    c.send(type_of(Msg::pong), oob::encode(pong));
  } else {
    delayed_.push_back({now + delay_ms * 1000000, c.peer_rank, oob::encode(pong)});
  }
}

void Agent::on_pong(oob::Connection& c, const char* body, size_t size, int64_t now) {
  oob::Ping pong;
  if (!oob::decode(body, size, &pong)) return;
  const int64_t rtt = now - pong.sent_ns;
  if (pong.number & kClockBit) {
    on_clock_pong(c, pong, rtt, now);
  } else {
    on_probe_pong(pong, rtt, now);
  }
}

void Agent::on_clock_pong(oob::Connection& c, const oob::Ping& pong, int64_t rtt, int64_t now) {
  if (!coordinator_) return;
  const int64_t offset = pong.replied_ns - (pong.sent_ns + now) / 2;
  auto& best = clock_[pong.from];
  if (best.first == 0 || rtt < best.first) best = {rtt, offset};
  coordinator_->set_offset(pong.from, best.second);
  oob::Packer m;
  m.put(best.second);
  c.send(type_of(Msg::clock), m.bytes());
}

void Agent::on_probe_pong(const oob::Ping& pong, int64_t rtt, int64_t now) {
  auto it = probes_out_.find(pong.number);
  if (it == probes_out_.end()) return;
  oob::ProbeSample s;
  s.peer = it->second.first;
  s.number = pong.number;
  s.rtt_ns = rtt;
  s.t_ns = now;
  probes_out_.erase(it);
  outgoing_.probes.push_back(s);
}

void Agent::on_diagnosis(const char* body, size_t size, int64_t now) {
  Diagnosis d;
  if (from_json(std::string(body, size), &d)) {
    STRATA_LOG(info, kFault, "fault diagnosed: %s", to_text(d).c_str());
    if (d.detector == "death" && death_heard_ns_ == 0) death_heard_ns_ = now;
    remember(d);
  }
}

void Agent::on_clock(const char* body, size_t size) {
  oob::Unpacker u(body, size);
  int64_t offset = 0;
  if (u.get(&offset)) process().clock_offset_ns.store(offset);
}

}  // namespace strata::fault
