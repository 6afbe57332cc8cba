# Run at build time (cmake -P) by tools/CMakeLists.txt: writes OUT, the
# definitions of tools/cli/version.hpp, with VERSION and the source tree's git
# commit (a "+" marks uncommitted changes), and rewrites it only when that
# changes, so that a build after a new commit relinks the tools and nothing
# else.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit unknown)
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND commit "+")
  endif()
endif()
set(text "// Written by cmake/StrataWriteVersion.cmake at build time.
#include \"tools/cli/version.hpp\"

namespace strata::tools {

const char* const kStrataVersion = \"${VERSION}\";
const char* const kStrataGitCommit = \"${commit}\";

}  // namespace strata::tools
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
