// The watchdog: one thread per rank that never calls MPI. Each tick it
// scans the ring (scanner.hpp) and sends a heartbeat to the coordinator;
// it answers probes and pings, and obeys the coordinator's dump and
// terminate commands. On the coordinator's rank it also hosts the
// Coordinator and carries out the STRATA_FAULT_ACTION policy. When the
// coordinator's connection closes, the lowest rank not known dead takes
// over.
#pragma once

#include "fault/agent/coordinator.hpp"
#include "fault/agent/scanner.hpp"
#include "fault/oob/messages.hpp"
#include "fault/oob/socket.hpp"
#include "fault/settings.hpp"

#include <strata/fault.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <poll.h>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace strata::fault {

struct PeerAddress {
  oob::Endpoint endpoint;
  int64_t pid = 0;
  std::string host;
  std::string gpu;
};

class Agent {
 public:
  Agent(const Settings& settings, int rank, int size, std::vector<PeerAddress> peers, int listen_fd);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Connects to the coordinator (rank 0) and starts the thread.
  Status start();
  // With `final_exchange`, the last samples go to the coordinator and the
  // call waits (up to STRATA_FAULT_FINAL_TIMEOUT_MS) until every rank's did;
  // then the thread ends.
  void stop(bool final_exchange);

  std::vector<Diagnosis> diagnoses() const;

 private:
  struct Delayed {
    int64_t due_ns;
    int rank;
    std::string body;
  };
  void run();
  // The steps of run()'s loop.
  int poll_timeout_ms(int64_t now) const;
  void gather_polled(std::vector<pollfd>& fds, std::vector<oob::Connection*>& polled);
  void serve(const std::vector<pollfd>& fds, const std::vector<oob::Connection*>& polled);
  void serve_connection(oob::Connection& c, short revents);
  void send_delayed(int64_t now);
  void tick(int64_t now);
  void coordinate(int64_t now);
  void handle(oob::Connection& c, uint16_t type, const char* body, size_t size);
  // One answer per message (agent_messages.cpp); `now` is when handle() began.
  void on_hello(oob::Connection& c, const char* body, size_t size);
  void on_heartbeat(const char* body, size_t size, int64_t now);
  void on_comm_info(const char* body, size_t size);
  void on_dump();
  [[noreturn]] void on_terminate(oob::Connection& c, const char* body, size_t size);
  void on_probe_request(const char* body, size_t size);
  void on_ping(oob::Connection& c, const char* body, size_t size, int64_t now);
  void on_pong(oob::Connection& c, const char* body, size_t size, int64_t now);
  void on_clock_pong(oob::Connection& c, const oob::Ping& pong, int64_t rtt, int64_t now);
  void on_probe_pong(const oob::Ping& pong, int64_t rtt, int64_t now);
  void on_diagnosis(const char* body, size_t size, int64_t now);
  void on_clock(const char* body, size_t size);
  void on_lost(int rank);
  void become_coordinator();
  void connect_coordinator();
  oob::Connection* connection_to(int rank, bool connect);
  void send_heartbeat(oob::Heartbeat& hb, int64_t now);
  void probe(const std::vector<int>& peers);
  void diagnosed(const Diagnosis& d);
  void enforce(const Diagnosis& d);
  void remember(const Diagnosis& d);
  // A rank told to terminate: its record, then the coordinator's word
  // (its connection closing) before it exits.
  [[noreturn]] void terminate_told(oob::Connection& coordinator, int code);
  // The coordinator ending the job: until every peer's record is written
  // (its `dumped`) or its connection closed, or `deadline_ns`.
  void await_dumps(int64_t deadline_ns);
  void flush_all(int64_t deadline_ns);
  void write_links_file();

  Settings settings_;
  int rank_;
  int size_;
  std::vector<PeerAddress> peers_;
  int listen_fd_;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> stop_now_{false};
  std::atomic<bool> final_requested_{false};
  std::atomic<bool> final_done_{false};

  // Owned by the thread.
  std::vector<std::unique_ptr<oob::Connection>> conns_;
  std::map<int, oob::Connection*> by_rank_;
  int coordinator_rank_ = 0;
  std::set<int> dead_;
  std::unique_ptr<Coordinator> coordinator_;
  Scanner scanner_;
  oob::Heartbeat outgoing_;     // samples gathered since the last heartbeat
  uint32_t comms_sent_ = 1;     // communicator entries whose members were sent (0 is the world)
  uint64_t colls_entered_ = 0;  // over every communicator, at the last tick
  std::vector<Delayed> delayed_;
  std::map<uint64_t, std::pair<int, int64_t>> probes_out_;  // number -> (peer, sent)
  uint64_t probe_number_ = 0;
  std::map<int, std::pair<int64_t, int64_t>> clock_;  // rank -> (best rtt, offset)
  std::map<int, int> clock_samples_;
  std::map<int, int64_t> clock_next_;
  int64_t next_tick_ = 0;
  int64_t final_deadline_ = 0;
  bool final_sent_ = false;
  bool terminating_ = false;
  int64_t death_heard_ns_ = 0;  // when the first death diagnosis reached this rank (a takeover inherits it)

  mutable std::mutex diag_mutex_;
  std::vector<Diagnosis> diagnoses_;
};

}  // namespace strata::fault
