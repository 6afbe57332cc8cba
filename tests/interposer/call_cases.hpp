// Cases of MPI calls on buffers that plain MPI test programs run through the
// interposer: each case makes one call (blocking, non-blocking or
// persistent, completed by any completion call) on buffers in host or
// device memory described by any of several datatypes of the same
// signature, per rank, and checks every byte of what it wrote against the
// same call made with PMPI_* on host buffers of plain ints (the library
// alone: the oracle). Used by test_mpi_every_call (every call of the
// interception table on device buffers) and test_mpi_divergence (ranks
// that describe one collective differently).
//
// Values: element j of the data rank r contributes on iteration it is
// value(r, j, it), small enough that sums and products over 8 ranks stay
// exact in int. Receive buffers are poisoned; the bytes a datatype skips
// must keep the poison.
#pragma once

#include <mpi.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace cases {

// How a rank describes a run of ints: every flavor holds `per()` ints per
// element, so n ints (n a multiple of 6) are n / per() elements.
enum class Flavor {
  named,       // MPI_INT
  contiguous,  // contiguous(2, INT)
  vector,      // vector(2, 1, 2, INT): a gap after each int
  indexed,     // indexed {2, 1} at {0, 3}: irregular (Strata cannot reduce it)
  structure,   // struct of one member: 2 ints at byte 4, extent 16
  resized,     // INT resized to extent 8
};
constexpr int kFlavors = 6;
const char* to_string(Flavor f);

// A committed datatype of one flavor (freed with the object).
class Type {
 public:
  explicit Type(Flavor f);
  ~Type();
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  MPI_Datatype get() const { return type_; }
  int per() const { return per_; }  // ints per element
  MPI_Aint extent() const { return extent_; }
  MPI_Aint reach() const { return reach_; }  // bytes one element touches from its start (true_lb + true_extent)

 private:
  MPI_Datatype type_ = MPI_INT;
  bool owned_ = false;
  int per_ = 1;
  MPI_Aint extent_ = 4;
  MPI_Aint reach_ = 4;
};

inline int value(int rank, int j, int it) { return 1 + (rank * 7 + j * 3 + it * 5) % 11; }

// Blocks of ints in one buffer, in host or device memory, each block
// `count` elements of its own Type at a byte offset. Poisoned on creation.
class Side {
 public:
  struct Block {
    const Type* type;
    int count;            // elements
    MPI_Aint offset = 0;  // bytes from the buffer's start (set by Side)
  };
  // Blocks laid out one after another, `gap` elements of their type apart.
  Side(bool device, std::vector<Block> blocks, int gap = 0);
  ~Side();
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;

  void* data() const { return data_; }
  bool device() const { return device_; }
  const std::vector<Block>& blocks() const { return blocks_; }
  // Displacement of block i in elements of its type (v forms).
  int displ(int i) const;
  MPI_Aint byte_displ(int i) const { return blocks_[static_cast<size_t>(i)].offset; }
  int ints() const;  // over all blocks

  // Writes `ints` (every block's, in order) into the blocks, keeping the
  // poison elsewhere.
  void fill(const std::vector<int>& ints);
  // The buffer's bytes as they should be if its blocks hold `ints` and
  // nothing else was touched, against what it holds: "" or what differs.
  std::string compare(const std::vector<int>& ints) const;
  // Poison again.
  void poison();
  // Every block's ints, read back.
  std::vector<int> read_ints() const;

 private:
  std::vector<char> image(const std::vector<int>& ints) const;
  bool device_;
  std::vector<Block> blocks_;
  size_t bytes_ = 0;
  char* data_ = nullptr;
};

enum class Form { blocking, nonblocking, persistent };
const char* to_string(Form f);
enum class Completion { wait, test, waitall, testall, waitany, testany, waitsome, testsome };
constexpr int kCompletions = 8;
const char* to_string(Completion c);

// What a case runs with, per rank.
struct Setting {
  Form form = Form::blocking;
  Completion completion = Completion::wait;
  std::function<bool(int rank)> device = [](int) { return true; };
  std::function<Flavor(int rank)> flavor = [](int) { return Flavor::named; };
  int n = 12;  // ints per block (a multiple of 6)
  // With an MPI-4 library: the large-count form of every call (MPI_Send_c,
  // MPI_Bcast_init_c, ...), with the same counts.
  bool large_count = false;
};

// Completes `request` with the setting's completion call (an extra
// MPI_REQUEST_NULL beside it in the array forms). Returns the call's code.
int complete(MPI_Request* request, Completion c);
// The same, with the request's status in `status` (or MPI_STATUS_IGNORE).
int complete(MPI_Request* request, Completion c, MPI_Status* status);

// One collective case on `comm`: returns "" or what went wrong on this rank.
using Case = std::function<std::string(MPI_Comm comm, const Setting& s)>;
struct Named {
  const char* call;  // the blocking call's name; the forms are its I and _init variants
  Case run;
  bool neighbourhood = false;  // needs a communicator with a topology
  bool reduction = false;      // every rank must use the same datatype
};
// Every collective case.
const std::vector<Named>& collectives();
// Is the persistent form available with this MPI?
bool have_persistent();
// Where the library alone fails a persistent collective (MPICH 4.0): the
// completion to use instead (`substituted` counts), whether `call`'s
// persistent form works at all, and rank 0's line saying what `test` did.
Completion for_persistent_collective(Completion c, int* substituted);
bool library_persistent_works(const char* call);
void report_library_workarounds(const char* test, int substituted, int left_out);

// Point to point, the forms as for the collectives (Setting::form): each
// send mode (MPI_Send: Send, Isend, Send_init; Bsend, Ssend, Rsend alike),
// MPI_Recv (Recv, Irecv, Recv_init), MPI_Mrecv (Mprobe + Mrecv, Improbe +
// Imrecv), MPI_Sendrecv and MPI_Sendrecv_replace (MPI-4: Isendrecv,
// Isendrecv_replace), on a ring: every rank sends to the next and receives
// from the previous, its send buffer in the flavor s.flavor(2 * rank), its
// receive buffer in s.flavor(2 * rank + 1) (MPI_Sendrecv_replace: the
// first). The other side of each case is an MPI_Irecv or MPI_Isend on the
// same memory kind.
const std::vector<Named>& point_to_point();

// The MPI calls the cases made (by name: "MPI_Send", "MPI_Bcast_init_c",
// the completion calls, MPI_Start, ...), for a coverage check. Cases written
// elsewhere note theirs with note_call (call_cases_detail.hpp: CASE_CALL).
void note_call(const char* name);
std::set<std::string> calls_made();

}  // namespace cases
