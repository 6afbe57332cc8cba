// IPC of the device stand-in (fake_device.hpp), across processes of one
// user on one machine. A device allocation is a memfd whose descriptor its
// owner keeps open (fake_memory.cpp); the handle names the owner's pid, that
// descriptor's number, the memfd's inode and the allocation's serial (its
// buffer id, also in the memfd's name). ipc_open opens
// /proc/<pid>/fd/<fd>, which gives the importer the same memfd, checks
// that it still is the allocation the handle named, and maps it twice as a
// local allocation is mapped (a PROT_NONE device view and guard page, a
// read/write shadow), so that copies, packs and host_view work on it.
//
// What can go wrong, and the answer (device_error, nothing mapped):
//  * The owner exited: /proc/<pid>/fd/<fd> does not exist (or <pid> is now
//    another process: the inode and name checks fail).
//  * The owner freed the allocation: the descriptor is closed, or its number
//    was reused by another file, another allocation's memfd included (a
//    different inode, and a different serial in the name).
//  * The handle is not one of ours (magic), or is this process's own: CUDA
//    refuses to open a handle in the process that exported it (its error:
//    invalid device context); so does the stand-in, so that code that works
//    here does not rely on it.
// /proc/<pid>/fd needs the owner to be readable by the importer (same user,
// dumpable): what ptrace access allows. Containers or hardening that forbid
// it make every open fail, as a runtime that refuses IPC would.
#include "portability/gpu/fake_device.hpp"

#include "base/log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace strata::gpu::fake {
namespace {

constexpr uint64_t kMagic = 0x5354524154414950ull;  // "STRATAIP"

// The handle's bytes (gpu::IpcHandle is 64).
struct Handle {
  uint64_t magic;
  int32_t pid;         // the exporting process, whose descriptor table holds fd
  int32_t fd;          // the memfd's descriptor there
  uint64_t bytes;      // the allocation's size asked for
  uint64_t mapped;     // the memfd's size (whole pages)
  uint64_t buffer_id;  // the allocation's serial in the process that made it
  uint64_t inode;      // the memfd's inode and device
  uint64_t dev;
  int32_t device;       // the device holding it
  int32_t creator_pid;  // the process that allocated it (in the memfd's name)
};
static_assert(sizeof(Handle) == sizeof(IpcHandle::bytes), "the stand-in's handle fills an IpcHandle");
static_assert(std::is_trivially_copyable<Handle>::value, "a handle travels as bytes");

// Opens the memfd a handle names and checks it is the allocation named;
// the descriptor, or -1 with `why` set.
int open_named(const Handle& h, const char** why) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", h.pid, h.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    STRATA_LOG(debug, kDevice, "fake: ipc_open: %s: %s", path, std::strerror(errno));
    *why = "invalid resource handle (the owner exited, freed the allocation, or cannot be read)";
    return -1;
  }
  struct stat st {};
  bool same = fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_ino) == h.inode &&
              static_cast<uint64_t>(st.st_dev) == h.dev && static_cast<uint64_t>(st.st_size) == h.mapped;
  if (same) {
    // Our descriptor's link names the memfd: "/memfd:<name> (deleted)".
    char self[64], target[256], want[160];
    std::snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(self, target, sizeof(target) - 1);
    if (n > 0) target[n] = '\0';
    std::snprintf(want, sizeof(want), "/memfd:strata-fake-device-%d-%" PRIu64 " ", h.creator_pid, h.buffer_id);
    same = n > 0 && std::strncmp(target, want, std::strlen(want)) == 0;
  }
  if (!same) {
    STRATA_LOG(debug, kDevice, "fake: ipc_open: %s is not the allocation %" PRIu64 " of process %d any more", path,
               h.buffer_id, h.creator_pid);
    close(fd);
    *why = "invalid resource handle (the allocation was freed)";
    return -1;
  }
  return fd;
}

}  // namespace

Status ipc_get_handle(void* device_ptr, IpcHandle* handle) noexcept {
  if (device_ptr == nullptr || handle == nullptr) return Status::invalid_argument;
  ExportedAllocation a;
  STRATA_TRY(exported_allocation(device_ptr, &a, "ipc_get_handle"));
  struct stat st {};
  if (fstat(a.fd, &st) != 0) return fail("ipc_get_handle", "the allocation's memfd cannot be read");
  Handle h{};
  h.magic = kMagic;
  h.pid = static_cast<int32_t>(getpid());
  h.fd = a.fd;
  h.bytes = a.bytes;
  h.mapped = a.mapped;
  h.buffer_id = a.buffer_id;
  h.inode = static_cast<uint64_t>(st.st_ino);
  h.dev = static_cast<uint64_t>(st.st_dev);
  h.device = a.device;
  h.creator_pid = a.creator_pid;
  IpcHandle out{};
  std::memcpy(out.bytes, &h, sizeof(h));
  *handle = out;
  return Status::ok;
}

Status ipc_open(const IpcHandle& handle, void** device_ptr) noexcept {
  if (device_ptr == nullptr) return Status::invalid_argument;
  Handle h{};
  std::memcpy(&h, handle.bytes, sizeof(h));
  if (h.magic != kMagic || h.bytes == 0 || h.mapped < h.bytes || h.pid <= 0 || h.fd < 0) {
    return fail("ipc_open", "invalid resource handle (not a handle of the stand-in)");
  }
  if (h.pid == static_cast<int32_t>(getpid())) {
    STRATA_LOG(error, kDevice, "fake: ipc_open: a handle exported by this process (CUDA refuses it too)");
    return fail("ipc_open", "invalid device context");
  }
  const char* why = nullptr;
  const int fd = open_named(h, &why);
  if (fd < 0) return fail("ipc_open", why);
  void* view = nullptr;
  const Status s = map_ipc(fd, h.bytes, h.mapped, h.device, &view);
  close(fd);  // the mappings keep the memory
  STRATA_TRY(s);
  *device_ptr = view;
  return Status::ok;
}

Status ipc_close(void* device_ptr) noexcept {
  if (device_ptr == nullptr) return Status::invalid_argument;
  return unmap_ipc(device_ptr);
}

}  // namespace strata::gpu::fake
