#include "options.hpp"

#include <CLI/CLI.hpp>

#include "tools/cli/command_line.hpp"

#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace halo3d {

const char* to_string(ElementType type) { return type == ElementType::Float ? "float" : "double"; }

const char* to_string(Layout layout) { return layout == Layout::AoS ? "aos" : "soa"; }

const char* to_string(MemoryKind memory) { return memory == MemoryKind::Host ? "host" : "device"; }

const char* to_string(Staging staging) { return staging == Staging::None ? "none" : "app"; }

namespace {

// Checks what CLI11's validators cannot express; returns an empty string when
// the options make sense together.
std::string check_consistency(const Options& o) {
  static const char* const kAxis = "xyz";
  for (int a = 0; a < 3; ++a) {
    if (o.grid[a] < o.radius) {
      return std::string("--grid: the ") + kAxis[a] + " extent " + std::to_string(o.grid[a]) +
             " is smaller than --radius " + std::to_string(o.radius) +
             " (a ghost region may only mirror the nearest neighbour's cells)";
    }
  }
  if (o.staging == Staging::App && o.memory != MemoryKind::Device) {
    return "--staging app stages device memory through the host: it needs --memory device";
  }
  return {};
}

// An option whose value is one of `names` (case-insensitive), stored as the
// matching enumerator once parsing succeeded.
template <typename Enum>
struct Choice {
  std::map<std::string, Enum> names;
  std::string given;

  CLI::Option* add(CLI::App& app, const std::string& flag, const std::string& help) {
    std::vector<std::string> keys;
    for (const auto& entry : names) {
      keys.push_back(entry.first);
    }
    return app.add_option(flag, given, help)->check(CLI::IsMember(keys, CLI::ignore_case));
  }
  void store(Enum& value) const {
    if (!given.empty()) {
      value = names.at(CLI::detail::to_lower(given));
    }
  }
};

}  // namespace

ParseOutcome parse_options(int argc, char** argv, bool print, Options& options) {
  try {
    CLI::App app{
        "strata-halo3d: a periodic 3D stencil halo exchange (26 neighbours) with one\n"
        "MPI subarray datatype per direction. A plain MPI program: run it as is, or\n"
        "with LD_PRELOAD=libstrata_preload.so to measure the Strata interposer.",
        "strata-halo3d"};
    strata::tools::standard_options(app, "strata-halo3d");
    std::vector<int> procs;
    std::vector<int> grid;
    app.add_option("--procs", procs, "process grid PX PY PZ (0: let MPI_Dims_create choose)")
        ->expected(3)
        ->check(CLI::NonNegativeNumber);
    app.add_option("--grid", grid, "owned cells per rank NX NY NZ (default 64 64 64)")
        ->expected(3)
        ->check(CLI::PositiveNumber);
    app.add_option("--radius", options.radius, "ghost shell width (default 3)")->check(CLI::PositiveNumber);
    app.add_option("--quantities", options.quantities, "values per cell (default 1)")->check(CLI::PositiveNumber);
    Choice<ElementType> type{{{"float", ElementType::Float}, {"double", ElementType::Double}}, {}};
    Choice<Layout> layout{{{"aos", Layout::AoS}, {"soa", Layout::SoA}}, {}};
    Choice<MemoryKind> memory{{{"host", MemoryKind::Host}, {"device", MemoryKind::Device}}, {}};
    Choice<Staging> staging{{{"none", Staging::None}, {"app", Staging::App}}, {}};
    type.add(app, "--type", "element type (default double)");
    layout.add(app, "--layout", "aos = [z][y][x][q], soa = [q][z][y][x] (default aos)");
    memory.add(app, "--memory", "where the field lives (default host)");
    staging.add(app, "--staging",
                "with --memory device: none = device pointers to MPI (GPU-aware MPI or the\n"
                "Strata interposer), app = copy the field to pinned host memory, exchange\n"
                "there, copy back, each exchange (default none)");
    app.add_option("--warmup", options.warmup, "untimed exchanges first (default 5)")->check(CLI::NonNegativeNumber);
    app.add_option("--reps", options.reps, "timed repetitions (default 11)")->check(CLI::PositiveNumber);
    app.add_option("--iters", options.iters, "exchanges per repetition (default 20)")->check(CLI::PositiveNumber);
    app.add_flag("--json", options.json, "print one JSON line on stdout (the summary goes to stderr)");
    app.add_flag("--verbose,-v", options.verbose, "print a line per repetition");
    // Hidden (empty group): proves that verification can fail.
    app.add_flag("--inject-error", options.inject_error, "corrupt one ghost cell before verifying")->group("");

    if (const int rc = strata::tools::parse_command_line(app, argc, argv, print); rc >= 0) {
      return rc == 0 ? ParseOutcome::Exit : ParseOutcome::UsageError;
    }
    type.store(options.type);
    layout.store(options.layout);
    memory.store(options.memory);
    staging.store(options.staging);
    if (!procs.empty()) {
      options.procs = {procs[0], procs[1], procs[2]};
    }
    if (!grid.empty()) {
      options.grid = {grid[0], grid[1], grid[2]};
    }
    const std::string problem = check_consistency(options);
    if (!problem.empty()) {
      if (print) {
        std::fprintf(stderr, "strata-halo3d: %s\nRun with --help for more information.\n", problem.c_str());
      }
      return ParseOutcome::UsageError;
    }
    return ParseOutcome::Run;
  } catch (const std::exception& e) {
    if (print) {
      std::fprintf(stderr, "strata-halo3d: cannot parse the command line: %s\n", e.what());
    }
    return ParseOutcome::UsageError;
  }
}

}  // namespace halo3d
