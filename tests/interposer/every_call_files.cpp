// MPI-IO cases (every_call.hpp: file_cases). Four files: two that the
// cases write (the calls under test on one, PMPI_File_* with host ints the
// same way on the other, then both read back and compared) and two of the
// same known contents that they read (the call under test into a poisoned
// buffer, PMPI_File_* into host ints, compared byte for byte). Each case
// has its own slot of the files, `ranks x n` ints: individual file pointers
// and explicit offsets put a rank's n ints at its place in the slot; shared
// file pointers start at the slot, the ranks taking turns (so the order is
// the same on both files), and ordered accesses go by rank anyway.
#include "call_cases_detail.hpp"
#include "every_call.hpp"

#include <cstdio>
#include <memory>
#include <unistd.h>

namespace every_call {
namespace {

using cases::Flavor;
using cases::Setting;
using cases::Side;
using cases::Type;

enum class Pos { individual, at, shared, ordered };
enum class How { blocking, nonblocking, split };

using Blocking = int (*)(const Setting&, MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Status*);
using Nonblocking = int (*)(const Setting&, MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Request*);
using Begin = int (*)(const Setting&, MPI_File, MPI_Offset, void*, int, MPI_Datatype);
using End = int (*)(MPI_File, void*, MPI_Status*);
using Oracle = int (*)(MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Status*);

// One family of data accesses: its forms (null where it has none) and the
// library's blocking call as the oracle.
struct Family {
  const char* name;
  Pos pos;
  bool write;
  Blocking blocking;
  Nonblocking nonblocking;
  Begin begin;
  End end;
  Oracle oracle;
};

// clang-format off
#define F_B(fn) [](const Setting& s, MPI_File f, MPI_Offset, void* b, int c, MPI_Datatype t, MPI_Status* st) { return CASE_CALL_LC(s, fn, f, b, c, t, st); }
#define F_B_AT(fn) [](const Setting& s, MPI_File f, MPI_Offset o, void* b, int c, MPI_Datatype t, MPI_Status* st) { return CASE_CALL_LC(s, fn, f, o, b, c, t, st); }
#define F_NB(fn) [](const Setting& s, MPI_File f, MPI_Offset, void* b, int c, MPI_Datatype t, MPI_Request* r) { return CASE_CALL_LC(s, fn, f, b, c, t, r); }
#define F_NB_AT(fn) [](const Setting& s, MPI_File f, MPI_Offset o, void* b, int c, MPI_Datatype t, MPI_Request* r) { return CASE_CALL_LC(s, fn, f, o, b, c, t, r); }
#define F_BEGIN(fn) [](const Setting& s, MPI_File f, MPI_Offset, void* b, int c, MPI_Datatype t) { return CASE_CALL_LC(s, fn, f, b, c, t); }
#define F_BEGIN_AT(fn) [](const Setting& s, MPI_File f, MPI_Offset o, void* b, int c, MPI_Datatype t) { return CASE_CALL_LC(s, fn, f, o, b, c, t); }
#define F_END(fn) [](MPI_File f, void* b, MPI_Status* st) { return CASE_CALL(fn, f, b, st); }
#define F_ORACLE(fn) [](MPI_File f, MPI_Offset, void* b, int c, MPI_Datatype t, MPI_Status* st) { return P##fn(f, b, c, t, st); }
#define F_ORACLE_AT(fn) [](MPI_File f, MPI_Offset o, void* b, int c, MPI_Datatype t, MPI_Status* st) { return P##fn(f, o, b, c, t, st); }
const Family kFamilies[] = {
  {"MPI_File_read", Pos::individual, false, F_B(MPI_File_read), F_NB(MPI_File_iread), nullptr, nullptr, F_ORACLE(MPI_File_read)},
  {"MPI_File_read_all", Pos::individual, false, F_B(MPI_File_read_all), F_NB(MPI_File_iread_all), F_BEGIN(MPI_File_read_all_begin), F_END(MPI_File_read_all_end), F_ORACLE(MPI_File_read_all)},
  {"MPI_File_read_at", Pos::at, false, F_B_AT(MPI_File_read_at), F_NB_AT(MPI_File_iread_at), nullptr, nullptr, F_ORACLE_AT(MPI_File_read_at)},
  {"MPI_File_read_at_all", Pos::at, false, F_B_AT(MPI_File_read_at_all), F_NB_AT(MPI_File_iread_at_all), F_BEGIN_AT(MPI_File_read_at_all_begin), F_END(MPI_File_read_at_all_end), F_ORACLE_AT(MPI_File_read_at_all)},
  {"MPI_File_read_shared", Pos::shared, false, F_B(MPI_File_read_shared), F_NB(MPI_File_iread_shared), nullptr, nullptr, F_ORACLE(MPI_File_read_shared)},
  {"MPI_File_read_ordered", Pos::ordered, false, F_B(MPI_File_read_ordered), nullptr, F_BEGIN(MPI_File_read_ordered_begin), F_END(MPI_File_read_ordered_end), F_ORACLE(MPI_File_read_ordered)},
  {"MPI_File_write", Pos::individual, true, F_B(MPI_File_write), F_NB(MPI_File_iwrite), nullptr, nullptr, F_ORACLE(MPI_File_write)},
  {"MPI_File_write_all", Pos::individual, true, F_B(MPI_File_write_all), F_NB(MPI_File_iwrite_all), F_BEGIN(MPI_File_write_all_begin), F_END(MPI_File_write_all_end), F_ORACLE(MPI_File_write_all)},
  {"MPI_File_write_at", Pos::at, true, F_B_AT(MPI_File_write_at), F_NB_AT(MPI_File_iwrite_at), nullptr, nullptr, F_ORACLE_AT(MPI_File_write_at)},
  {"MPI_File_write_at_all", Pos::at, true, F_B_AT(MPI_File_write_at_all), F_NB_AT(MPI_File_iwrite_at_all), F_BEGIN_AT(MPI_File_write_at_all_begin), F_END(MPI_File_write_at_all_end), F_ORACLE_AT(MPI_File_write_at_all)},
  {"MPI_File_write_shared", Pos::shared, true, F_B(MPI_File_write_shared), F_NB(MPI_File_iwrite_shared), nullptr, nullptr, F_ORACLE(MPI_File_write_shared)},
  {"MPI_File_write_ordered", Pos::ordered, true, F_B(MPI_File_write_ordered), nullptr, F_BEGIN(MPI_File_write_ordered_begin), F_END(MPI_File_write_ordered_end), F_ORACLE(MPI_File_write_ordered)},
};
// clang-format on
constexpr int kSlots = 3 * static_cast<int>(sizeof kFamilies / sizeof kFamilies[0]);  // at most, per file

// The four files, opened on every rank (collectively) and closed and
// deleted with the last case.
class Files {
 public:
  Files(MPI_Comm comm, const std::string& dir, int n) : comm_(comm), dir_(dir), n_(n) {
    rank_ = cases::rank_of(comm);
    size_ = cases::size_of(comm);
    // The files read: every slot's ints, rank after rank, written by rank 0.
    if (rank_ == 0) {
      for (const char* name : {"/dev_read", "/host_read"}) {
        std::FILE* f = std::fopen((dir + name).c_str(), "wb");
        for (int slot = 0; f != nullptr && slot < kSlots; ++slot) {
          for (int r = 0; r < size_; ++r) {
            const std::vector<int> v = cases::values(r, n, slot);
            std::fwrite(v.data(), sizeof(int), v.size(), f);
          }
        }
        if (f != nullptr) std::fclose(f);
      }
    }
    PMPI_Barrier(comm);
    const int create = MPI_MODE_CREATE | MPI_MODE_RDWR;
    rc_ = CASE_CALL(MPI_File_open, comm, (dir + "/dev_read").c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &dev_read);
    if (rc_ == MPI_SUCCESS) {
      rc_ = PMPI_File_open(comm, (dir + "/host_read").c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &host_read);
    }
    if (rc_ == MPI_SUCCESS) {
      rc_ = CASE_CALL(MPI_File_open, comm, (dir + "/dev_write").c_str(), create, MPI_INFO_NULL, &dev_write);
    }
    if (rc_ == MPI_SUCCESS) {
      rc_ = PMPI_File_open(comm, (dir + "/host_write").c_str(), create, MPI_INFO_NULL, &host_write);
    }
  }
  ~Files() {
    for (MPI_File* f : {&dev_read, &dev_write}) {
      if (*f != MPI_FILE_NULL) CASE_CALL(MPI_File_close, f);
    }
    for (MPI_File* f : {&host_read, &host_write}) {
      if (*f != MPI_FILE_NULL) PMPI_File_close(f);
    }
    PMPI_Barrier(comm_);
    if (rank_ == 0) {
      for (const char* name : {"/dev_read", "/host_read", "/dev_write", "/host_write"}) unlink((dir_ + name).c_str());
    }
    PMPI_Barrier(comm_);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;

  int rc() const { return rc_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  int n() const { return n_; }
  MPI_Offset slot_bytes() const { return static_cast<MPI_Offset>(size_) * n_ * static_cast<MPI_Offset>(sizeof(int)); }
  MPI_Offset mine(int slot) const {
    return slot * slot_bytes() + static_cast<MPI_Offset>(rank_) * n_ * static_cast<MPI_Offset>(sizeof(int));
  }

  MPI_File dev_read = MPI_FILE_NULL, host_read = MPI_FILE_NULL;
  MPI_File dev_write = MPI_FILE_NULL, host_write = MPI_FILE_NULL;

 private:
  MPI_Comm comm_;
  std::string dir_;
  int n_;
  int rank_ = 0, size_ = 1;
  int rc_ = MPI_SUCCESS;
};

// Moves a file's pointers to the slot: a rank's place in it for the
// individual pointer, the slot's start for the shared one. Returns the
// explicit offset of the _at calls.
MPI_Offset position(const Files& files, MPI_File f, Pos pos, int slot) {
  switch (pos) {
    case Pos::individual: PMPI_File_seek(f, files.mine(slot), MPI_SEEK_SET); break;
    case Pos::shared:
    case Pos::ordered: PMPI_File_seek_shared(f, slot * files.slot_bytes(), MPI_SEEK_SET); break;
    case Pos::at: break;
  }
  return files.mine(slot);
}

// `access` on every rank; with a shared file pointer one rank after the
// other, in rank order.
template <class Access>
int in_turn(const Files& files, Pos pos, Access access) {
  if (pos != Pos::shared) return access();
  int rc = MPI_SUCCESS;
  for (int r = 0; r < files.size(); ++r) {
    if (r == files.rank()) rc = access();
    PMPI_Barrier(files.comm());
  }
  return rc;
}

// The access under test on `f` in one of its forms; the status of the
// access in *st.
int access_under_test(const Setting& s, const Family& fam, How how, MPI_File f, MPI_Offset off, void* buf, int count,
                      MPI_Datatype type, MPI_Status* st) {
  switch (how) {
    case How::blocking: return fam.blocking(s, f, off, buf, count, type, st);
    case How::nonblocking: {
      MPI_Request r = MPI_REQUEST_NULL;
      const int rc = fam.nonblocking(s, f, off, buf, count, type, &r);
      return rc != MPI_SUCCESS ? rc : cases::complete(&r, s.completion, st);
    }
    case How::split: {
      const int rc = fam.begin(s, f, off, buf, count, type);
      return rc != MPI_SUCCESS ? rc : fam.end(f, buf, st);
    }
  }
  return MPI_ERR_OTHER;
}

std::string check_count(const MPI_Status& st, MPI_Datatype type, int count) {
  int got = -1;
  PMPI_Get_count(&st, type, &got);
  return got == count ? "" : "the status counts " + std::to_string(got) + " elements, not " + std::to_string(count);
}

std::string read_case(const Files& files, const Setting& s, const Family& fam, How how, Flavor flavor, int slot) {
  Type t(flavor);
  const int count = files.n() / t.per();
  Side out(s.device(files.rank()), {{&t, count}});
  std::vector<int> ref(static_cast<size_t>(files.n()), -1);
  MPI_Status st, host_st;
  const MPI_Offset off = position(files, files.dev_read, fam.pos, slot);
  position(files, files.host_read, fam.pos, slot);
  int rc = in_turn(files, fam.pos, [&] {
    return access_under_test(s, fam, how, files.dev_read, off, out.data(), count, t.get(), &st);
  });
  if (rc != MPI_SUCCESS) return cases::failed("the read", rc);
  rc = in_turn(files, fam.pos,
               [&] { return fam.oracle(files.host_read, off, ref.data(), files.n(), MPI_INT, &host_st); });
  if (rc != MPI_SUCCESS) return cases::failed("the library's read", rc);
  const std::string why = out.compare(ref);
  return why.empty() ? check_count(st, t.get(), count) : why;
}

std::string write_case(const Files& files, const Setting& s, const Family& fam, How how, Flavor flavor, int slot) {
  Type t(flavor);
  const int count = files.n() / t.per();
  Side in(s.device(files.rank()), {{&t, count}});
  const std::vector<int> data = cases::values(files.rank(), files.n(), slot);
  in.fill(data);
  MPI_Status st, host_st;
  const MPI_Offset off = position(files, files.dev_write, fam.pos, slot);
  position(files, files.host_write, fam.pos, slot);
  int rc = in_turn(files, fam.pos, [&] {
    return access_under_test(s, fam, how, files.dev_write, off, in.data(), count, t.get(), &st);
  });
  if (rc != MPI_SUCCESS) return cases::failed("the write", rc);
  std::vector<int> host = data;
  rc = in_turn(files, fam.pos,
               [&] { return fam.oracle(files.host_write, off, host.data(), files.n(), MPI_INT, &host_st); });
  if (rc != MPI_SUCCESS) return cases::failed("the library's write", rc);
  std::string why = check_count(st, t.get(), count);
  if (why.empty()) why = in.compare(data);
  // Every rank's writes visible (sync, barrier, sync), then the slot of both files.
  for (MPI_File f : {files.dev_write, files.host_write}) {
    rc = f == files.dev_write ? CASE_CALL(MPI_File_sync, f) : PMPI_File_sync(f);
    if (rc == MPI_SUCCESS) rc = PMPI_Barrier(files.comm());
    if (rc == MPI_SUCCESS) rc = PMPI_File_sync(f);
    if (rc != MPI_SUCCESS) return cases::failed("MPI_File_sync", rc);
  }
  const int all = files.size() * files.n();
  std::vector<int> got(static_cast<size_t>(all), -1), want(static_cast<size_t>(all), -2);
  rc = PMPI_File_read_at(files.dev_write, slot * files.slot_bytes(), got.data(), all, MPI_INT, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) {
    rc = PMPI_File_read_at(files.host_write, slot * files.slot_bytes(), want.data(), all, MPI_INT, MPI_STATUS_IGNORE);
  }
  if (rc != MPI_SUCCESS) return cases::failed("reading the slot back", rc);
  for (int i = 0; i < all && why.empty(); ++i) {
    if (got[static_cast<size_t>(i)] != want[static_cast<size_t>(i)]) {
      why = "the file differs from the library's at int " + std::to_string(i) +
            " of the slot: " + std::to_string(got[static_cast<size_t>(i)]) + ", expected " +
            std::to_string(want[static_cast<size_t>(i)]);
    }
  }
  return why;
}

const char* to_string(How h) {
  switch (h) {
    case How::blocking: return "blocking";
    case How::nonblocking: return "non-blocking";
    case How::split: return "split collective";
  }
  return "?";
}

}  // namespace

std::vector<Case> file_cases(MPI_Comm comm, const std::string& dir, const Setting& s) {
  auto files = std::make_shared<Files>(comm, dir, s.n);
  std::vector<Case> all;
  const Flavor read_flavors[] = {Flavor::indexed, Flavor::vector, Flavor::named};
  const Flavor write_flavors[] = {Flavor::vector, Flavor::named, Flavor::indexed};
  int read_slot = 0, write_slot = 0, nonblocking = 0;
  for (const Family& fam : kFamilies) {
    for (How how : {How::blocking, How::nonblocking, How::split}) {
      if ((how == How::nonblocking && fam.nonblocking == nullptr) || (how == How::split && fam.begin == nullptr)) {
        continue;
      }
      Setting c = s;
      if (how == How::nonblocking) c.completion = static_cast<cases::Completion>(nonblocking++ % cases::kCompletions);
      int& slot = fam.write ? write_slot : read_slot;
      const int mine = slot++;
      const Flavor flavor = fam.write ? write_flavors[mine % 3] : read_flavors[mine % 3];
      std::string name = std::string(fam.name) + (s.large_count ? " (_c)" : "") + ", " + to_string(how);
      if (how == How::nonblocking) name += std::string(" (") + cases::to_string(c.completion) + ")";
      name += std::string(", ") + cases::to_string(flavor);
      all.push_back({name, [files, c, &fam, how, flavor, mine]() -> std::string {
                       if (files->rc() != MPI_SUCCESS) return cases::failed("MPI_File_open", files->rc());
                       return fam.write ? write_case(*files, c, fam, how, flavor, mine)
                                        : read_case(*files, c, fam, how, flavor, mine);
                     }});
    }
  }
  return all;
}

}  // namespace every_call
