// Command-line options of strata-halo3d.
#pragma once

#include <array>

namespace halo3d {

enum class ElementType { Float, Double };
// AoS: [z][y][x][q] (quantities innermost); SoA: [q][z][y][x].
enum class Layout { AoS, SoA };
enum class MemoryKind { Host, Device };
// How device memory reaches MPI. None: the device pointer goes to MPI as is
// (needs a GPU-aware MPI, or the Strata interposer). App: application staging
// by hand, what a user without a GPU-aware MPI writes: the whole field is
// copied to a pinned host mirror before each exchange, exchanged there, and
// copied back (inside the timed region).
enum class Staging { None, App };

const char* to_string(ElementType type);
const char* to_string(Layout layout);
const char* to_string(MemoryKind memory);
const char* to_string(Staging staging);

// Axis order everywhere: 0 = x, 1 = y, 2 = z.
struct Options {
  std::array<int, 3> procs{0, 0, 0};    // 0: chosen by MPI_Dims_create
  std::array<int, 3> grid{64, 64, 64};  // owned cells per rank
  int radius = 3;                       // ghost shell width
  int quantities = 1;
  ElementType type = ElementType::Double;
  Layout layout = Layout::AoS;
  MemoryKind memory = MemoryKind::Host;
  Staging staging = Staging::None;  // App only with device memory
  int warmup = 5;
  int reps = 11;
  int iters = 20;  // exchanges per rep
  bool json = false;
  bool verbose = false;
  bool inject_error = false;  // hidden: corrupt one ghost cell after the exchanges
};

enum class ParseOutcome {
  Run,         // options are valid
  Exit,        // --help was asked for and printed: exit 0
  UsageError,  // invalid command line: exit 2
};

// Parses and checks the command line. Every rank parses the same arguments and
// so reaches the same outcome; only a rank with `print` set writes help and
// error messages. Never throws.
ParseOutcome parse_options(int argc, char** argv, bool print, Options& options);

}  // namespace halo3d
