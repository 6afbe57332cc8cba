// What every Strata tool, benchmark and app has on its command line, the same
// way everywhere: `--version` (Strata's version and git commit), defaults shown
// in `--help`, sizes with K/M/G suffixes, and exit codes 0 after `--help` or
// `--version` and 2 after a usage error (CLI11's own codes, 105-109, are not
// what shell scripts and job launchers expect).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace strata::tools {

// Exit code of a usage error (a wrong option or value), as getopt tools use.
constexpr int kUsageError = 2;

// "strata-topo 0.1.0 (git 1a2b3c4d5e6f)".
std::string version_line(const std::string& tool);

// Names the app `tool` (the usage line), adds --version and makes --help show
// the default of every option added after this call.
void standard_options(CLI::App& app, const std::string& tool);

// Parses the command line. Returns -1 when the tool goes on, else the code to
// exit with: 0 after --help or --version, kUsageError after a usage error.
// Help, version and the error are printed only where `print` (rank 0 of an
// MPI tool; the other ranks exit with the same code silently).
int parse_command_line(CLI::App& app, int argc, char** argv, bool print = true);

// A transform (`->transform(byte_sizes())`) for a byte-count option: 4096, 64K, 1M, 2G (binary: K = 1024).
CLI::Validator byte_sizes();

}  // namespace strata::tools
