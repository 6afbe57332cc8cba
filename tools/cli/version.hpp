// Strata's version (CMake's project version) and the git commit the tools were
// built from ("unknown" outside a git checkout). Defined in the version.cpp
// that cmake/StrataWriteVersion.cmake writes at every build.
#pragma once

namespace strata::tools {

extern const char* const kStrataVersion;
extern const char* const kStrataGitCommit;

}  // namespace strata::tools
