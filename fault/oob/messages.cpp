#include "fault/oob/messages.hpp"

#include "fault/oob/wire.hpp"

namespace strata::fault::oob {
namespace {

template <class T>
void put_vector(Packer& p, const std::vector<T>& v) {
  p.put(static_cast<uint32_t>(v.size()));
  for (const T& x : v) p.put(x);
}

template <class T>
bool get_vector(Unpacker& u, std::vector<T>* v) {
  uint32_t n = 0;
  if (!u.get(&n) || static_cast<size_t>(n) * sizeof(T) > u.left()) return false;
  v->resize(n);
  for (T& x : *v) u.get(&x);
  return u.ok();
}

}  // namespace

std::string encode(const Hello& m) {
  Packer p;
  p.put(kMagic).put(kVersion).put(kByteOrderMark).put(m.rank).put(m.size).put_string(m.host).put_string(m.gpu);
  return std::move(p.bytes());
}

bool decode(const char* data, size_t size, Hello* m) {
  Unpacker u(data, size);
  uint32_t magic = 0;
  uint16_t version = 0, bom = 0;
  u.get(&magic);
  u.get(&version);
  u.get(&bom);
  if (!u.ok() || magic != kMagic || version != kVersion || bom != kByteOrderMark) return false;
  u.get(&m->rank);
  u.get(&m->size);
  u.get_string(&m->host, 256);
  u.get_string(&m->gpu, 256);
  return u.ok();
}

std::string encode(const Heartbeat& m) {
  Packer p;
  p.put(m.rank).put(m.flags).put(m.now_ns).put(m.ops_done).put(m.current).put(m.threshold_ns).put(m.last);
  put_vector(p, m.pending);
  put_vector(p, m.comms);
  put_vector(p, m.colls);
  put_vector(p, m.p2p);
  put_vector(p, m.probes);
  return std::move(p.bytes());
}

bool decode(const char* data, size_t size, Heartbeat* m) {
  Unpacker u(data, size);
  u.get(&m->rank);
  u.get(&m->flags);
  u.get(&m->now_ns);
  u.get(&m->ops_done);
  u.get(&m->current);
  u.get(&m->threshold_ns);
  u.get(&m->last);
  return u.ok() && get_vector(u, &m->pending) && get_vector(u, &m->comms) && get_vector(u, &m->colls) &&
         get_vector(u, &m->p2p) && get_vector(u, &m->probes);
}

std::string encode(const CommInfo& m) {
  Packer p;
  p.put(m.comm);
  put_vector(p, m.ranks);
  return std::move(p.bytes());
}

bool decode(const char* data, size_t size, CommInfo* m) {
  Unpacker u(data, size);
  u.get(&m->comm);
  return u.ok() && get_vector(u, &m->ranks);
}

std::string encode(const Ping& m) {
  Packer p;
  p.put(m.number).put(m.sent_ns).put(m.replied_ns).put(m.from).put(m.padding);
  p.bytes().append(m.padding, '\0');
  return std::move(p.bytes());
}

bool decode(const char* data, size_t size, Ping* m) {
  Unpacker u(data, size);
  u.get(&m->number);
  u.get(&m->sent_ns);
  u.get(&m->replied_ns);
  u.get(&m->from);
  u.get(&m->padding);
  return u.ok();
}

}  // namespace strata::fault::oob
