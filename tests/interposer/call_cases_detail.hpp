// What the sources of the call cases share (call_cases*.cpp, and test
// programs that write cases of their own): how a call under test is made
// (its name noted for the coverage check, its large-count form chosen by
// the setting), count and displacement arrays for either form, and the
// driver that runs a case in its blocking, non-blocking or persistent form.
#pragma once

#include "call_cases.hpp"

#include <mpi.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

// CASE_CALL(fn, args...): calls fn, noting its name. CASE_CALL_LC(s, fn,
// args...): fn, or with an MPI-4 library and s.large_count its fn_c (the
// same arguments: scalar counts convert, arrays are cases::Counts).
#define CASE_CALL(fn, ...) (::cases::note_call(#fn), fn(__VA_ARGS__))
#if MPI_VERSION >= 4
#define CASE_CALL_LC(s, fn, ...) \
  ((s).large_count ? (::cases::note_call(#fn "_c"), fn##_c(__VA_ARGS__)) : CASE_CALL(fn, __VA_ARGS__))
#else
#define CASE_CALL_LC(s, fn, ...) CASE_CALL(fn, __VA_ARGS__)
#endif

// The persistent collectives: MPI-4's MPI_*_init (and MPI_*_init_c), Open
// MPI 4.1's MPIX_*_init. CASE_PCOLL(s, Bcast, args...).
#if MPI_VERSION >= 4
#define CASE_HAVE_PCOLL 1
#define CASE_PCOLL(s, name, ...)                                                                    \
  ((s).large_count ? (::cases::note_call("MPI_" #name "_init_c"), MPI_##name##_init_c(__VA_ARGS__)) \
                   : (::cases::note_call("MPI_" #name "_init"), MPI_##name##_init(__VA_ARGS__)))
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define CASE_HAVE_PCOLL 1
#define CASE_PCOLL(s, name, ...) (::cases::note_call("MPIX_" #name "_init"), MPIX_##name##_init(__VA_ARGS__))
#else
#define CASE_HAVE_PCOLL 0
#endif

namespace cases {

// An array of counts or displacements that a call takes as int[] or, in
// its large-count form, as MPI_Count[] or MPI_Aint[].
class Counts {
 public:
  Counts() = default;
  explicit Counts(const std::vector<int>& v) : i_(v), c_(v.begin(), v.end()), a_(v.begin(), v.end()) {}
  template <class T>
  operator const T*() const {  // NOLINT(google-explicit-constructor): stands in for the array
    if constexpr (std::is_same_v<T, int>) {
      return i_.data();
    } else if constexpr (std::is_same_v<T, MPI_Count>) {
      return c_.data();
    } else {
      static_assert(std::is_same_v<T, MPI_Aint>, "counts are int, MPI_Count or MPI_Aint");
      return a_.data();
    }
  }

 private:
  std::vector<int> i_;
  std::vector<MPI_Count> c_;
  std::vector<MPI_Aint> a_;
};

// The calls of one case in each form; `persistent` makes the request.
struct Calls {
  std::function<int()> blocking;
  std::function<int(MPI_Request*)> nonblocking;
  std::function<int(MPI_Request*)> persistent;
  // Where the completion call leaves the status of the request of the
  // non-blocking and persistent forms (null: MPI_STATUS_IGNORE).
  MPI_Status* status = nullptr;
};

// "<what> returned <the library's error string>".
std::string failed(const char* what, int rc);

// Runs a case in the setting's form: fill(it) writes the inputs and
// poisons the outputs, check(it) compares against the oracle. A persistent
// request runs twice, with new inputs for the second start (MPI_Start the
// first time, MPI_Startall the second). A form the case has no call for
// passes without running.
std::string drive(const Setting& s, const Calls& calls, const std::function<void(int)>& fill,
                  const std::function<std::string(int)>& check);

// Element j of what `rank` contributes on iteration `it`, for n elements.
std::vector<int> values(int rank, int n, int it, int first = 0);

int rank_of(MPI_Comm c);
int size_of(MPI_Comm c);

}  // namespace cases
