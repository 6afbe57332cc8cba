// The calls Strata refuses for device memory (every_call.hpp:
// refused_cases): one-sided calls with a device origin (or result) buffer
// on a window of host memory, windows created on or attached to device
// memory, a device buffer for buffered sends, partitioned requests on
// device memory. Each must return an error of class MPI_ERR_BUFFER through
// the window's or communicator's handler (set to MPI_ERRORS_RETURN) and
// touch nothing; the same calls on host memory then work as usual.
#include "call_cases_detail.hpp"
#include "every_call.hpp"

#include "support/test_device_memory.hpp"

#include <cstdio>
#include <cstring>

namespace every_call {
namespace {

using cases::Flavor;
using cases::Setting;
using cases::Side;
using cases::Type;

// Collects the calls that did not fail with MPI_ERR_BUFFER.
class Refusals {
 public:
  void expect(const char* call, int rc) {
    const int c = error_class(rc);
    if (c == MPI_ERR_BUFFER) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    PMPI_Error_string(rc, text, &length);
    why_ += std::string(why_.empty() ? "" : "; ") + call + " returned " + (rc == MPI_SUCCESS ? "MPI_SUCCESS" : text) +
            ", not an error of class MPI_ERR_BUFFER";
  }
  const std::string& why() const { return why_; }

 private:
  std::string why_;
};

// The library has no one-sided component for this configuration (Open MPI
// 4.1 without UCX under MPI_THREAD_MULTIPLE): the one-sided cases cannot
// run; said once, not a failure of Strata.
bool g_windows_missing = false;

std::string no_windows() {
  if (!g_windows_missing && cases::rank_of(MPI_COMM_WORLD) == 0) {
    std::printf("[every call] MPI_Win_allocate fails in this MPI configuration: one-sided cases skipped\n");
  }
  g_windows_missing = true;
  return "";
}

// Is `ok` true on every rank of `comm`?
bool all_ranks(MPI_Comm comm, bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all != 0;
}

// A window of host memory (MPI_Win_allocate, n ints per rank and a few
// more), its errors returned, every rank's memory zeroed, all locked.
class HostWindow {
 public:
  HostWindow(MPI_Comm comm, int n) : comm_(comm), n_(n) {
    MPI_Errhandler previous = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(comm, &previous);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    rc_ = CASE_CALL(MPI_Win_allocate, static_cast<MPI_Aint>((2 * n + 4) * sizeof(int)), static_cast<int>(sizeof(int)),
                    MPI_INFO_NULL, comm, &base_, &win_);
    MPI_Comm_set_errhandler(comm, previous);
    MPI_Errhandler_free(&previous);
    if (!all_ranks(comm, rc_ == MPI_SUCCESS)) {
      if (rc_ == MPI_SUCCESS) MPI_Win_free(&win_);
      win_ = MPI_WIN_NULL;
      rc_ = MPI_ERR_WIN;
      return;
    }
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    std::memset(base_, 0, (2 * n + 4) * sizeof(int));
    PMPI_Barrier(comm);
    rc_ = CASE_CALL(MPI_Win_lock_all, 0, win_);
  }
  ~HostWindow() {
    if (win_ == MPI_WIN_NULL) return;
    CASE_CALL(MPI_Win_unlock_all, win_);
    CASE_CALL(MPI_Win_free, &win_);
  }
  HostWindow(const HostWindow&) = delete;
  HostWindow& operator=(const HostWindow&) = delete;
  int rc() const { return rc_; }
  MPI_Win get() const { return win_; }
  int flush(int rank) const { return CASE_CALL(MPI_Win_flush, rank, win_); }

 private:
  MPI_Comm comm_;
  int n_;
  int rc_ = MPI_SUCCESS;
  int* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

// Every one-sided call with a device origin buffer (and the two with a
// result buffer, with a device result): refused, the window still usable.
std::string one_sided_device(MPI_Comm comm, const Setting& s) {
  const int rank = cases::rank_of(comm), size = cases::size_of(comm);
  const int dest = (rank + 1) % size, n = s.n;
  HostWindow window(comm, n);
  if (window.get() == MPI_WIN_NULL) return no_windows();
  if (window.rc() != MPI_SUCCESS) return cases::failed("MPI_Win_allocate or MPI_Win_lock_all", window.rc());
  const MPI_Win win = window.get();
  Type named(Flavor::named);
  Side dev(true, {{&named, n}});
  const std::vector<int> in = cases::values(rank, n, 0);
  dev.fill(in);
  std::vector<int> host(static_cast<size_t>(n), 0), result(static_cast<size_t>(n), 0);
  void* d = dev.data();
  Refusals r;
  MPI_Request q = MPI_REQUEST_NULL;
  r.expect("MPI_Put", CASE_CALL_LC(s, MPI_Put, d, n, MPI_INT, dest, 0, n, MPI_INT, win));
  r.expect("MPI_Get", CASE_CALL_LC(s, MPI_Get, d, n, MPI_INT, dest, 0, n, MPI_INT, win));
  r.expect("MPI_Accumulate", CASE_CALL_LC(s, MPI_Accumulate, d, n, MPI_INT, dest, 0, n, MPI_INT, MPI_SUM, win));
  r.expect("MPI_Get_accumulate", CASE_CALL_LC(s, MPI_Get_accumulate, d, n, MPI_INT, result.data(), n, MPI_INT, dest, 0,
                                              n, MPI_INT, MPI_SUM, win));
  r.expect("MPI_Get_accumulate (device result)", CASE_CALL_LC(s, MPI_Get_accumulate, host.data(), n, MPI_INT, d, n,
                                                              MPI_INT, dest, 0, n, MPI_INT, MPI_SUM, win));
  r.expect("MPI_Fetch_and_op", CASE_CALL(MPI_Fetch_and_op, d, result.data(), MPI_INT, dest, 0, MPI_SUM, win));
  r.expect("MPI_Fetch_and_op (device result)",
           CASE_CALL(MPI_Fetch_and_op, host.data(), d, MPI_INT, dest, 0, MPI_SUM, win));
  r.expect("MPI_Compare_and_swap",
           CASE_CALL(MPI_Compare_and_swap, d, host.data(), result.data(), MPI_INT, dest, 0, win));
  r.expect("MPI_Rput", CASE_CALL_LC(s, MPI_Rput, d, n, MPI_INT, dest, 0, n, MPI_INT, win, &q));
  r.expect("MPI_Rget", CASE_CALL_LC(s, MPI_Rget, d, n, MPI_INT, dest, 0, n, MPI_INT, win, &q));
  r.expect("MPI_Raccumulate", CASE_CALL_LC(s, MPI_Raccumulate, d, n, MPI_INT, dest, 0, n, MPI_INT, MPI_SUM, win, &q));
  r.expect("MPI_Rget_accumulate", CASE_CALL_LC(s, MPI_Rget_accumulate, d, n, MPI_INT, result.data(), n, MPI_INT, dest,
                                               0, n, MPI_INT, MPI_SUM, win, &q));
  if (!r.why().empty()) return r.why();
  // Nothing reached the target: its window still holds zeros.
  const int rc = CASE_CALL(MPI_Get, host.data(), n, MPI_INT, dest, 0, n, MPI_INT, win);
  if (rc != MPI_SUCCESS || window.flush(dest) != MPI_SUCCESS) return cases::failed("MPI_Get (host)", rc);
  for (int v : host) {
    if (v != 0) return "a refused call changed the target window";
  }
  return dev.compare(in);
}

// The same calls with host buffers work: put and get back, accumulate and
// read back, fetch-and-op and compare-and-swap, each request-based form.
std::string one_sided_host(MPI_Comm comm, const Setting& s) {
  const int rank = cases::rank_of(comm), size = cases::size_of(comm);
  const int dest = (rank + 1) % size, n = s.n;
  HostWindow window(comm, n);
  if (window.get() == MPI_WIN_NULL) return no_windows();
  if (window.rc() != MPI_SUCCESS) return cases::failed("MPI_Win_allocate or MPI_Win_lock_all", window.rc());
  const MPI_Win win = window.get();
  const std::vector<int> a = cases::values(rank, n, 1), b = cases::values(rank, n, 2);
  const std::vector<int> ones(static_cast<size_t>(n), 1);
  std::vector<int> got(static_cast<size_t>(n), -1);
  auto plus_one = [](std::vector<int> v) {
    for (int& x : v) ++x;
    return v;
  };
  auto step = [&](const char* what, int rc) {
    if (rc == MPI_SUCCESS) rc = window.flush(dest);
    return rc == MPI_SUCCESS ? std::string() : cases::failed(what, rc);
  };
  auto wait = [](MPI_Request* q) { return MPI_Wait(q, MPI_STATUS_IGNORE); };
  MPI_Request q = MPI_REQUEST_NULL;
  std::string why = step("MPI_Put", CASE_CALL_LC(s, MPI_Put, a.data(), n, MPI_INT, dest, 0, n, MPI_INT, win));
  if (why.empty()) why = step("MPI_Get", CASE_CALL_LC(s, MPI_Get, got.data(), n, MPI_INT, dest, 0, n, MPI_INT, win));
  if (why.empty() && got != a) why = "MPI_Put then MPI_Get: other values";
  int rc = MPI_SUCCESS;
  if (why.empty()) {
    rc = CASE_CALL_LC(s, MPI_Rput, b.data(), n, MPI_INT, dest, n, n, MPI_INT, win, &q);
    why = step("MPI_Rput", rc == MPI_SUCCESS ? wait(&q) : rc);
  }
  if (why.empty()) {
    rc = CASE_CALL_LC(s, MPI_Rget, got.data(), n, MPI_INT, dest, n, n, MPI_INT, win, &q);
    why = step("MPI_Rget", rc == MPI_SUCCESS ? wait(&q) : rc);
  }
  if (why.empty() && got != b) why = "MPI_Rput then MPI_Rget: other values";
  if (why.empty()) {
    why = step("MPI_Accumulate",
               CASE_CALL_LC(s, MPI_Accumulate, ones.data(), n, MPI_INT, dest, 0, n, MPI_INT, MPI_SUM, win));
  }
  if (why.empty()) {
    why = step("MPI_Get_accumulate", CASE_CALL_LC(s, MPI_Get_accumulate, ones.data(), n, MPI_INT, got.data(), n,
                                                  MPI_INT, dest, 0, n, MPI_INT, MPI_NO_OP, win));
  }
  if (why.empty() && got != plus_one(a)) why = "MPI_Accumulate then MPI_Get_accumulate: other values";
  if (why.empty()) {
    rc = CASE_CALL_LC(s, MPI_Raccumulate, ones.data(), n, MPI_INT, dest, n, n, MPI_INT, MPI_SUM, win, &q);
    why = step("MPI_Raccumulate", rc == MPI_SUCCESS ? wait(&q) : rc);
  }
  if (why.empty()) {
    rc = CASE_CALL_LC(s, MPI_Rget_accumulate, ones.data(), n, MPI_INT, got.data(), n, MPI_INT, dest, n, n, MPI_INT,
                      MPI_NO_OP, win, &q);
    why = step("MPI_Rget_accumulate", rc == MPI_SUCCESS ? wait(&q) : rc);
  }
  if (why.empty() && got != plus_one(b)) why = "MPI_Raccumulate then MPI_Rget_accumulate: other values";
  // The atomics on the zeroed int after the two blocks.
  int five = 5, seven = 7, old = -1;
  if (why.empty()) {
    why = step("MPI_Fetch_and_op", CASE_CALL(MPI_Fetch_and_op, &five, &old, MPI_INT, dest, 2 * n, MPI_SUM, win));
  }
  if (why.empty() && old != 0) why = "MPI_Fetch_and_op fetched " + std::to_string(old);
  if (why.empty()) {
    why = step("MPI_Compare_and_swap", CASE_CALL(MPI_Compare_and_swap, &seven, &five, &old, MPI_INT, dest, 2 * n, win));
  }
  if (why.empty() && old != 5) why = "MPI_Compare_and_swap found " + std::to_string(old);
  if (why.empty()) why = step("MPI_Get", MPI_Get(&old, 1, MPI_INT, dest, 2 * n, 1, MPI_INT, win));
  if (why.empty() && old != 7) why = "MPI_Compare_and_swap left " + std::to_string(old);
  return why;
}

// A duplicate of `comm` whose errors are returned.
struct ReturningComm {
  explicit ReturningComm(MPI_Comm comm) {
    PMPI_Comm_dup(comm, &c);
    PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  }
  ~ReturningComm() { PMPI_Comm_free(&c); }
  ReturningComm(const ReturningComm&) = delete;
  ReturningComm& operator=(const ReturningComm&) = delete;
  MPI_Comm c = MPI_COMM_NULL;
};

// MPI_Win_create on device memory: refused on the communicator's handler;
// then a window of host memory, a put and a get through it (fences).
std::string win_create(MPI_Comm comm, const Setting& s, bool device) {
  const int rank = cases::rank_of(comm), size = cases::size_of(comm);
  const int dest = (rank + 1) % size, n = s.n;
  ReturningComm rc_comm(comm);
  if (device) {
    Type named(Flavor::named);
    Side dev(true, {{&named, n}});
    MPI_Win win = MPI_WIN_NULL;
    Refusals r;
    r.expect("MPI_Win_create", CASE_CALL(MPI_Win_create, dev.data(), static_cast<MPI_Aint>(n * sizeof(int)),
                                         static_cast<int>(sizeof(int)), MPI_INFO_NULL, rc_comm.c, &win));
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    if (!r.why().empty()) return r.why();
  }
  std::vector<int> memory(static_cast<size_t>(n), 0), got(static_cast<size_t>(n), -1);
  const std::vector<int> a = cases::values(rank, n, 4);
  MPI_Win win = MPI_WIN_NULL;
  int rc = CASE_CALL(MPI_Win_create, memory.data(), static_cast<MPI_Aint>(n * sizeof(int)),
                     static_cast<int>(sizeof(int)), MPI_INFO_NULL, rc_comm.c, &win);
  if (!all_ranks(comm, rc == MPI_SUCCESS)) {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    return no_windows();
  }
  rc = MPI_Win_fence(0, win);
  if (rc == MPI_SUCCESS) rc = MPI_Put(a.data(), n, MPI_INT, dest, 0, n, MPI_INT, win);
  if (rc == MPI_SUCCESS) rc = MPI_Win_fence(0, win);
  if (rc == MPI_SUCCESS) rc = MPI_Get(got.data(), n, MPI_INT, dest, 0, n, MPI_INT, win);
  if (rc == MPI_SUCCESS) rc = MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  if (rc != MPI_SUCCESS) return cases::failed("the put and get on the host window", rc);
  return got == a ? "" : "the put and get on the host window: other values";
}

// MPI_Win_attach of device memory to a dynamic window: refused on the
// window's handler; host memory attaches and detaches.
std::string win_attach(MPI_Comm comm, const Setting& s, bool device) {
  ReturningComm rc_comm(comm);
  MPI_Win win = MPI_WIN_NULL;
  int rc = CASE_CALL(MPI_Win_create_dynamic, MPI_INFO_NULL, rc_comm.c, &win);
  if (!all_ranks(comm, rc == MPI_SUCCESS)) {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    return no_windows();
  }
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  std::string why;
  if (device) {
    Type named(Flavor::named);
    Side dev(true, {{&named, s.n}});
    Refusals r;
    rc = CASE_CALL(MPI_Win_attach, win, dev.data(), static_cast<MPI_Aint>(s.n * sizeof(int)));
    r.expect("MPI_Win_attach", rc);
    if (rc == MPI_SUCCESS) MPI_Win_detach(win, dev.data());
    why = r.why();
  }
  std::vector<int> host(static_cast<size_t>(s.n));
  rc = CASE_CALL(MPI_Win_attach, win, host.data(), static_cast<MPI_Aint>(s.n * sizeof(int)));
  if (rc == MPI_SUCCESS) rc = MPI_Win_detach(win, host.data());
  if (rc != MPI_SUCCESS && why.empty()) why = cases::failed("MPI_Win_attach (host)", rc);
  CASE_CALL(MPI_Win_free, &win);
  return why;
}

// MPI_Buffer_attach of device memory: refused on the default handler
// (MPI_COMM_SELF's from MPI-4 on, MPI_COMM_WORLD's before; both return
// errors for the call); host memory attaches and detaches.
std::string buffer_attach(const Setting& s, bool device) {
  std::string why;
  if (device) {
    Type named(Flavor::named);
    Side dev(true, {{&named, 64 * s.n}});
    MPI_Errhandler world = MPI_ERRHANDLER_NULL, self = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    Refusals r;
    const int rc = CASE_CALL(MPI_Buffer_attach, dev.data(), static_cast<int>(64 * s.n * sizeof(int)));
    r.expect("MPI_Buffer_attach", rc);
    if (rc == MPI_SUCCESS) {
      void* p = nullptr;
      int size = 0;
      MPI_Buffer_detach(&p, &size);
    }
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, self);
    PMPI_Errhandler_free(&world);
    PMPI_Errhandler_free(&self);
    why = r.why();
  }
  std::vector<char> host(static_cast<size_t>(MPI_BSEND_OVERHEAD + 1024));
  int rc = CASE_CALL(MPI_Buffer_attach, host.data(), static_cast<int>(host.size()));
  void* p = nullptr;
  int size = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Buffer_detach(&p, &size);
  if (rc != MPI_SUCCESS && why.empty()) why = cases::failed("MPI_Buffer_attach (host)", rc);
  if (why.empty() && (p != host.data() || size != static_cast<int>(host.size())))
    why = "MPI_Buffer_detach: other buffer";
  return why;
}

#if MPI_VERSION >= 4
// MPI_Psend_init / MPI_Precv_init on device memory: refused on the
// communicator's handler; on host memory a partitioned ring exchange.
std::string partitioned(MPI_Comm comm, const Setting& s, bool device) {
  const int rank = cases::rank_of(comm), size = cases::size_of(comm);
  const int dest = (rank + 1) % size, source = (rank + size - 1) % size, n = s.n, tag = 70;
  ReturningComm rc_comm(comm);
  if (device) {
    Type named(Flavor::named);
    Side dev(true, {{&named, n}});
    MPI_Request q = MPI_REQUEST_NULL;
    Refusals r;
    int rc = CASE_CALL(MPI_Psend_init, dev.data(), 2, n / 2, MPI_INT, dest, tag, rc_comm.c, MPI_INFO_NULL, &q);
    r.expect("MPI_Psend_init", rc);
    if (rc == MPI_SUCCESS) MPI_Request_free(&q);
    rc = CASE_CALL(MPI_Precv_init, dev.data(), 2, n / 2, MPI_INT, source, tag, rc_comm.c, MPI_INFO_NULL, &q);
    r.expect("MPI_Precv_init", rc);
    if (rc == MPI_SUCCESS) MPI_Request_free(&q);
    if (!r.why().empty()) return r.why();
  }
  const std::vector<int> a = cases::values(rank, n, 5);
  std::vector<int> got(static_cast<size_t>(n), -1), ref(static_cast<size_t>(n));
  PMPI_Sendrecv(a.data(), n, MPI_INT, dest, tag + 1, ref.data(), n, MPI_INT, source, tag + 1, comm, MPI_STATUS_IGNORE);
  MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = CASE_CALL(MPI_Precv_init, got.data(), 2, n / 2, MPI_INT, source, tag, rc_comm.c, MPI_INFO_NULL, &q[0]);
  if (rc == MPI_SUCCESS) {
    rc = CASE_CALL(MPI_Psend_init, a.data(), 2, n / 2, MPI_INT, dest, tag, rc_comm.c, MPI_INFO_NULL, &q[1]);
  }
  if (rc == MPI_SUCCESS) rc = MPI_Startall(2, q);
  for (int p = 0; p < 2 && rc == MPI_SUCCESS; ++p) rc = MPI_Pready(p, q[1]);
  if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  for (MPI_Request& r : q) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  if (rc != MPI_SUCCESS) return cases::failed("the partitioned exchange on host memory", rc);
  return got == ref ? "" : "the partitioned exchange on host memory: other values";
}
#endif

}  // namespace

bool windows_missing() { return g_windows_missing; }

std::vector<Case> refused_cases(MPI_Comm comm, const Setting& s) {
  const bool device = s.device(cases::rank_of(comm));
  const std::string lc = s.large_count ? " (_c)" : "";
  std::vector<Case> all;
  if (device) {
    all.push_back(
        {"one-sided calls with device buffers (refused)" + lc, [comm, s] { return one_sided_device(comm, s); }});
  }
  all.push_back({"one-sided calls with host buffers" + lc, [comm, s] { return one_sided_host(comm, s); }});
  if (s.large_count) return all;  // the others have no large-count form
  all.push_back({"MPI_Win_create", [comm, s, device] { return win_create(comm, s, device); }});
  all.push_back({"MPI_Win_attach", [comm, s, device] { return win_attach(comm, s, device); }});
  all.push_back({"MPI_Buffer_attach", [s, device] { return buffer_attach(s, device); }});
#if MPI_VERSION >= 4
  all.push_back({"MPI_Psend_init/MPI_Precv_init", [comm, s, device] { return partitioned(comm, s, device); }});
#endif
  return all;
}

}  // namespace every_call
