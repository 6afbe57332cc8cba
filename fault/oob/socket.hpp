// TCP for the out-of-band channel: a listening socket per rank and framed,
// non-blocking connections (a frame: u32 length, u16 type, u16 zero, then
// the body). Only the agent thread uses a connection once it runs.
#pragma once

#include <strata/status.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace strata::fault::oob {

struct Endpoint {
  uint32_t ip = 0;    // IPv4, network order
  uint16_t port = 0;  // network order
};
std::string to_string(const Endpoint& e);

// A listening socket on every interface, on an ephemeral port.
Result<int> listen_any(Endpoint* bound_port);
// The address other ranks reach this host by: the interface named by
// `iface` if given, else the first non-loopback IPv4 interface that is up,
// else 127.0.0.1.
uint32_t local_address(const std::string& iface);

class Connection {
 public:
  Connection() = default;
  explicit Connection(int fd);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Blocking connect with a deadline, then non-blocking.
  static Result<int> connect_to(const Endpoint& e, int timeout_ms);

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  bool wants_write() const { return sent_ < out_.size(); }
  void close();

  // Queues a frame and writes what the socket takes now.
  void send(uint16_t type, const std::string& body);
  // Writes queued bytes; false when the connection broke.
  bool flush();
  // Reads what is there and calls `frame` for each complete frame; false
  // when the peer closed or the connection broke (frames read before that
  // are still delivered).
  bool receive(const std::function<void(uint16_t type, const char* body, size_t size)>& frame);

  int peer_rank = -1;  // set by HELLO

 private:
  int fd_ = -1;
  std::string out_;
  size_t sent_ = 0;
  std::string in_;
};

}  // namespace strata::fault::oob
