#include "fault/oob/socket.hpp"

#include "base/log.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace strata::fault::oob {
namespace {

constexpr size_t kMaxFrame = 64u << 20;

bool set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

std::string to_string(const Endpoint& e) {
  char ip[INET_ADDRSTRLEN] = "?";
  in_addr a{};
  a.s_addr = e.ip;
  inet_ntop(AF_INET, &a, ip, sizeof(ip));
  return std::string(ip) + ":" + std::to_string(ntohs(e.port));
}

Result<int> listen_any(Endpoint* bound) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    STRATA_LOG(warn, kFault, "out-of-band channel: socket: %s", std::strerror(errno));
    return Status::internal;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, SOMAXCONN) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || !set_nonblocking(fd)) {
    STRATA_LOG(warn, kFault, "out-of-band channel: bind/listen: %s", std::strerror(errno));
    ::close(fd);
    return Status::internal;
  }
  bound->port = addr.sin_port;
  return fd;
}

uint32_t local_address(const std::string& iface) {
  uint32_t found = htonl(INADDR_LOOPBACK);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
    const uint32_t ip = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    if (!iface.empty()) {
      if (iface == i->ifa_name) {
        found = ip;
        break;
      }
      continue;
    }
    if (!(i->ifa_flags & IFF_LOOPBACK)) {
      found = ip;
      break;
    }
  }
  freeifaddrs(list);
  return found;
}

Connection::Connection(int fd) : fd_(fd) {
  set_nonblocking(fd_);
  tune(fd_);
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  out_.clear();
  in_.clear();
  sent_ = 0;
}

Result<int> Connection::connect_to(const Endpoint& e, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::internal;
  set_nonblocking(fd);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = e.ip;
  addr.sin_port = e.port;
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, timeout_ms);
    int err = 0;
    socklen_t len = sizeof(err);
    if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      rc = 0;
    } else {
      errno = rc == 0 ? ETIMEDOUT : (err != 0 ? err : errno);
      rc = -1;
    }
  }
  if (rc != 0) {
    STRATA_LOG(debug, kFault, "out-of-band connect to %s: %s", to_string(e).c_str(), std::strerror(errno));
    ::close(fd);
    return Status::timeout;
  }
  tune(fd);
  return fd;
}

void Connection::send(uint16_t type, const std::string& body) {
  if (fd_ < 0) return;
  if (sent_ > 0 && sent_ == out_.size()) {
    out_.clear();
    sent_ = 0;
  }
  const uint32_t len = static_cast<uint32_t>(body.size());
  const uint16_t zero = 0;
  out_.append(reinterpret_cast<const char*>(&len), 4);
  out_.append(reinterpret_cast<const char*>(&type), 2);
  out_.append(reinterpret_cast<const char*>(&zero), 2);
  out_.append(body);
  flush();
}

bool Connection::flush() {
  while (fd_ >= 0 && sent_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;
  }
  if (sent_ == out_.size()) {
    out_.clear();
    sent_ = 0;
  }
  return fd_ >= 0;
}

bool Connection::receive(const std::function<void(uint16_t, const char*, size_t)>& frame) {
  bool alive = fd_ >= 0;
  char buf[65536];
  while (alive) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < sizeof(buf)) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    alive = false;  // closed or broken
  }
  size_t at = 0;
  while (in_.size() - at >= 8) {
    uint32_t len = 0;
    uint16_t type = 0;
    std::memcpy(&len, in_.data() + at, 4);
    std::memcpy(&type, in_.data() + at + 4, 2);
    if (len > kMaxFrame) {
      alive = false;
      at = in_.size();
      break;
    }
    if (in_.size() - at - 8 < len) break;
    frame(type, in_.data() + at + 8, len);
    at += 8 + len;
  }
  in_.erase(0, at);
  return alive;
}

}  // namespace strata::fault::oob
