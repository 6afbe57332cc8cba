#include "interposer/transfer/probed.hpp"

#include "base/log.hpp"
#include "collectives/job_facts.hpp"
#include "interposer/transfer/direct_active.hpp"
#include "mpi/real_mpi.hpp"

#include <cstring>
#include <deque>
#include <mutex>
#include <type_traits>
#include <unordered_map>

namespace strata::interposer::probed {

using mpi::real;

std::atomic<int64_t> g_kept{0};

namespace {

struct Kept {
  std::mutex mutex;
  std::deque<std::unique_ptr<Message>> queue;                         // arrival order
  std::unordered_map<uintptr_t, std::unique_ptr<Message>> by_handle;  // given out by MPI_Mprobe
  uint32_t serial = 0;
};
Kept& kept() {
  static auto* k = new Kept();  // never destroyed: wrappers may run during exit
  return *k;
}

bool matches(const Message& m, MPI_Comm comm, int source, int tag) {
  return m.comm == comm && (source == MPI_ANY_SOURCE || source == m.source) && (tag == MPI_ANY_TAG || tag == m.tag);
}

bool descriptor_sized(const MPI_Status& status) {
  int bytes = 0;
  return real().MPI_Get_count(&status, MPI_BYTE, &bytes) == MPI_SUCCESS &&
         bytes == static_cast<int>(kDirectDescriptorBytes);
}

// Receives the matched message `handle` into a Message of Strata's.
int receive(MPI_Comm comm, MPI_Message* handle, std::unique_ptr<Message>* out) {
  auto m = std::make_unique<Message>();
  MPI_Status st;
  const int rc = real().MPI_Mrecv(m->bytes, static_cast<int>(kDirectDescriptorBytes), MPI_BYTE, handle, &st);
  if (rc != MPI_SUCCESS) return rc;
  m->comm = comm;
  m->source = st.MPI_SOURCE;
  m->tag = st.MPI_TAG;
  DirectFields fields;
  m->descriptor =
      check_descriptor(m->bytes, sizeof m->bytes, coll::job_token(), &fields) == DescriptorCheck::descriptor;
  m->size = m->descriptor ? static_cast<int64_t>(fields.bytes) : static_cast<int64_t>(kDirectDescriptorBytes);
  *out = std::move(m);
  return MPI_SUCCESS;
}

// The message a library probe saw (`seen`), taken out of the library's
// queue and kept.
int keep_seen(MPI_Comm comm, const MPI_Status& seen, MPI_Status* status) {
  MPI_Message handle = MPI_MESSAGE_NULL;
  MPI_Status again;
  int rc = real().MPI_Mprobe(seen.MPI_SOURCE, seen.MPI_TAG, comm, &handle, &again);
  std::unique_ptr<Message> m;
  if (rc == MPI_SUCCESS) rc = receive(comm, &handle, &m);
  if (rc != MPI_SUCCESS) return rc;
  fill_status(*m, status);
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  k.queue.push_back(std::move(m));
  g_kept.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

// A kept message that (comm, source, tag) matches: its status; false if none.
bool peek(MPI_Comm comm, int source, int tag, MPI_Status* status) {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  for (const auto& m : k.queue) {
    if (matches(*m, comm, source, tag)) {
      fill_status(*m, status);
      return true;
    }
  }
  return false;
}

// Strata's handle for a message MPI_Mprobe gives out: its address where the
// library's handles are pointers (Open MPI), else an integer of a handle
// kind the library never makes (MPICH: a built-in of object kind 0xf).
template <class Handle>
Handle make_handle(Message* m, uint32_t serial) {
  if constexpr (std::is_pointer<Handle>::value) {
    return reinterpret_cast<Handle>(m);
  } else {
    return static_cast<Handle>(0x7c000000 | (serial & 0x03ffffff));
  }
}
template <class Handle>
uintptr_t key_of(Handle h) {
  if constexpr (std::is_pointer<Handle>::value) {
    return reinterpret_cast<uintptr_t>(h);
  } else {
    return static_cast<uintptr_t>(static_cast<uint32_t>(h));
  }
}

MPI_Message give_handle(std::unique_ptr<Message> m) {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  const MPI_Message handle = make_handle<MPI_Message>(m.get(), ++k.serial);
  k.by_handle[key_of(handle)] = std::move(m);
  g_kept.fetch_add(1, std::memory_order_relaxed);
  return handle;
}

// MPI_Mprobe/MPI_Improbe after the library matched `*message`: a message of
// a descriptor's size is received now and handed out under Strata's handle.
int adopt(MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (*message == MPI_MESSAGE_NO_PROC || !descriptor_sized(*status)) return MPI_SUCCESS;
  std::unique_ptr<Message> m;
  if (int rc = receive(comm, message, &m); rc != MPI_SUCCESS) return rc;
  fill_status(*m, status);
  *message = give_handle(std::move(m));
  return MPI_SUCCESS;
}

// MPI_Mprobe/MPI_Improbe: the first kept message (comm, source, tag)
// matches, taken out and handed out under Strata's handle; false if none.
bool hand_out_kept(MPI_Comm comm, int source, int tag, MPI_Message* message, MPI_Status* status) {
  if (!any_kept()) return false;
  std::unique_ptr<Message> m = take(comm, source, tag);
  if (!m) return false;
  fill_status(*m, status);
  *message = give_handle(std::move(m));
  return true;
}

}  // namespace

void fill_status(const Message& m, MPI_Status* status) {
  status->MPI_SOURCE = m.source;
  status->MPI_TAG = m.tag;
  status->MPI_ERROR = MPI_SUCCESS;
  real().MPI_Status_set_elements(status, MPI_BYTE, static_cast<int>(m.size));
  real().MPI_Status_set_cancelled(status, 0);
}

int probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!device_direct::active()) return real().MPI_Probe(source, tag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if (any_kept() && peek(comm, source, tag, st)) return MPI_SUCCESS;
  const int rc = real().MPI_Probe(source, tag, comm, st);
  if (rc != MPI_SUCCESS || source == MPI_PROC_NULL || !descriptor_sized(*st)) return rc;
  return keep_seen(comm, *st, st);
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (!device_direct::active()) return real().MPI_Iprobe(source, tag, comm, flag, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if (any_kept() && peek(comm, source, tag, st)) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  const int rc = real().MPI_Iprobe(source, tag, comm, flag, st);
  if (rc != MPI_SUCCESS || !*flag || source == MPI_PROC_NULL || !descriptor_sized(*st)) return rc;
  return keep_seen(comm, *st, st);
}

int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!device_direct::active()) return real().MPI_Mprobe(source, tag, comm, message, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if (hand_out_kept(comm, source, tag, message, st)) return MPI_SUCCESS;
  const int rc = real().MPI_Mprobe(source, tag, comm, message, st);
  return rc != MPI_SUCCESS ? rc : adopt(comm, message, st);
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  if (!device_direct::active()) return real().MPI_Improbe(source, tag, comm, flag, message, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if (hand_out_kept(comm, source, tag, message, st)) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  const int rc = real().MPI_Improbe(source, tag, comm, flag, message, st);
  return rc != MPI_SUCCESS || !*flag ? rc : adopt(comm, message, st);
}

std::unique_ptr<Message> take(MPI_Comm comm, int source, int tag) {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  for (auto it = k.queue.begin(); it != k.queue.end(); ++it) {
    if (matches(**it, comm, source, tag)) {
      std::unique_ptr<Message> m = std::move(*it);
      k.queue.erase(it);
      g_kept.fetch_sub(1, std::memory_order_relaxed);
      return m;
    }
  }
  return nullptr;
}

std::unique_ptr<Message> take_handle(MPI_Message* handle) {
  if (!any_kept() || handle == nullptr) return nullptr;
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  auto it = k.by_handle.find(key_of(*handle));
  if (it == k.by_handle.end()) return nullptr;
  std::unique_ptr<Message> m = std::move(it->second);
  k.by_handle.erase(it);
  g_kept.fetch_sub(1, std::memory_order_relaxed);
  *handle = MPI_MESSAGE_NULL;
  return m;
}

void clear() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  if (!k.queue.empty() || !k.by_handle.empty()) {
    STRATA_LOG(warn, kP2p, "MPI_Finalize: %zu probed message(s) never received", k.queue.size() + k.by_handle.size());
  }
  k.queue.clear();
  k.by_handle.clear();
  g_kept.store(0, std::memory_order_relaxed);
}

}  // namespace strata::interposer::probed
