// The main of a command-line tool or benchmark: runs the tool and turns an
// exception that would escape it (out of memory, a library's throw) into one
// line on stderr and exit code 70 (EX_SOFTWARE) instead of std::terminate.
#pragma once

#include <cstdio>
#include <exception>

namespace strata::tools {

template <class Run>
int guarded_main(const char* tool, int argc, char** argv, Run run) noexcept {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: unknown exception\n", tool);
  }
  return 70;
}

}  // namespace strata::tools
