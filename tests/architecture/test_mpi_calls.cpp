// The rule "Calling MPI from Strata" (docs/architecture.md), checked on the
// source tree:
//   - no PMPI_ outside mpi/ in the library, the tools and the benchmarks:
//     they call the library through strata::mpi::real();
//   - no call of an intercepted MPI_* name (the interception table,
//     mpi/calls/mpi_calls.hpp) in the library: inside the preloaded shim
//     those names are Strata's own wrappers. Tools, benchmarks and apps are
//     MPI programs and call MPI_* like any application;
//   - no plain call of the other functions Strata calls either
//     (mpi/calls/library_calls.hpp, MPI_Wtime, MPI_Wtick) in the library:
//     real().MPI_Comm_size, mpi::wtime(), so that every call into the
//     library goes through the one layer.
// Comments and string literals are left out (a log line may name a call).
// Each finding is a failure naming file:line. tests/ is not checked: tests
// use the library's PMPI_* entries as oracles.
#include "mpi/calls/library_calls.hpp"
#include "mpi/calls/mpi_calls.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Every function of the interception table, large-count forms included.
std::set<std::string> intercepted() {
  std::set<std::string> names;
#define STRATA_CALL(fn, kind, lc, params, args, roles) names.insert(#fn);
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
  return names;
}

// The functions Strata calls without intercepting them.
std::set<std::string> library_calls() {
  std::set<std::string> names = {"MPI_Wtime", "MPI_Wtick"};
#define STRATA_LIBRARY_CALL(fn) names.insert(#fn);
  STRATA_LIBRARY_CALLS(STRATA_LIBRARY_CALL)
#undef STRATA_LIBRARY_CALL
  return names;
}

// The folders of the library, and of the programs built over it.
const std::vector<std::string> kLibrary = {"base",  "mpi",         "portability", "topology",
                                           "fault", "collectives", "interposer",  "include"};
const std::vector<std::string> kPrograms = {"tools", "bench"};

// The folder that may name PMPI_*: the one that wraps the library.
const std::string kMpiServices = "mpi";

bool is_source(const fs::path& p) {
  static const std::set<std::string> kExtensions = {".c", ".h", ".cpp", ".hpp", ".cu", ".cuh", ".inc", ".in"};
  return kExtensions.count(p.extension().string()) != 0;
}

// The file with comments and string/character literals blanked (newlines
// kept, so line numbers stay right). Raw strings are not used in Strata.
std::string code_only(const std::string& text) {
  std::string out = text;
  enum { code, line_comment, block_comment, string, character } state = code;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && next == '/') state = line_comment;
        if (c == '/' && next == '*') state = block_comment;
        if (c == '"') state = string;
        if (c == '\'') state = character;
        if (state != code) out[i] = ' ';
        break;
      case line_comment:
        if (c == '\n')
          state = code;
        else
          out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case string:
      case character:
        if (c == '\\' && next != '\0') {
          out[i] = out[i + 1] == '\n' ? '\n' : ' ';
          out[i + 1] = out[i + 1] == '\n' ? '\n' : ' ';
          ++i;
        } else {
          if (c == (state == string ? '"' : '\'') || c == '\n') state = code;
          if (c != '\n') out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

struct Finding {
  std::string where;  // file:line
  std::string what;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Calls `visit(relative path, code, line number, line)` for every line of
// every source file under `folders` of the source tree.
template <class Visit>
void each_line(const std::vector<std::string>& folders, Visit visit) {
  const fs::path root = STRATA_SOURCE_DIR;
  for (const std::string& folder : folders) {
    ASSERT_TRUE(fs::is_directory(root / folder)) << (root / folder);
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (entry.is_regular_file() && is_source(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::istringstream lines(code_only(read(file)));
      std::string line;
      for (int number = 1; std::getline(lines, line); ++number) {
        visit(fs::relative(file, root).string(), number, line);
      }
    }
  }
}

void report(const std::vector<Finding>& findings, const char* rule) {
  for (const Finding& f : findings) ADD_FAILURE() << f.where << ": " << f.what << " (" << rule << ")";
}

TEST(Architecture, NoPmpiOutsideTheMpiLayer) {
  std::vector<std::string> folders = kLibrary;
  folders.insert(folders.end(), kPrograms.begin(), kPrograms.end());
  folders.erase(std::remove(folders.begin(), folders.end(), kMpiServices), folders.end());
  const std::regex pmpi(R"(\bPMPIX?_\w+)");
  std::vector<Finding> findings;
  size_t lines = 0;
  each_line(folders, [&](const std::string& file, int number, const std::string& line) {
    ++lines;
    for (std::sregex_iterator m(line.begin(), line.end(), pmpi), end; m != end; ++m) {
      findings.push_back({file + ":" + std::to_string(number), m->str()});
    }
  });
  EXPECT_GT(lines, 10000u) << "the source tree was not found at " << STRATA_SOURCE_DIR;
  report(findings, "call the library through strata::mpi::real(), mpi/real_mpi.hpp");
}

// Whether the name at line[at] is called, rather than a member
// (real().MPI_Send), a qualified name (special::MPI_Wait) or declared (the
// interposer's handlers are named after their calls: `int MPI_Allreduce(`).
bool is_plain_call(const std::string& line, size_t at) {
  size_t i = at;
  while (i > 0 && (line[i - 1] == ' ' || line[i - 1] == '\t')) --i;
  if (i == 0) return true;
  const char before = line[i - 1];
  if (before == '.' || before == '>' || before == ':') return false;
  if (before == '*' || before == '&') return false;  // a declarator: `int* MPI_x(`
  if (std::isalnum(static_cast<unsigned char>(before)) == 0 && before != '_') return true;
  size_t word = i;
  while (word > 0 && (std::isalnum(static_cast<unsigned char>(line[word - 1])) != 0 || line[word - 1] == '_')) --word;
  // `return MPI_x(` calls; `int MPI_x(` declares.
  const std::string before_word = line.substr(word, i - word);
  return before_word == "return" || before_word == "else" || before_word == "do";
}

// Every plain call, in the library, of a name in `names`.
std::vector<Finding> plain_calls(const std::set<std::string>& names) {
  const std::regex name(R"(\b(MPIX?_\w+)\s*\()");
  std::vector<Finding> findings;
  each_line(kLibrary, [&](const std::string& file, int number, const std::string& line) {
    for (std::sregex_iterator m(line.begin(), line.end(), name), end; m != end; ++m) {
      if (names.count((*m)[1]) != 0 && is_plain_call(line, static_cast<size_t>(m->position(1)))) {
        findings.push_back({file + ":" + std::to_string(number), (*m)[1]});
      }
    }
  });
  return findings;
}

TEST(Architecture, NoInterceptedMpiNameCalledByTheLibrary) {
  const std::set<std::string> names = intercepted();
  ASSERT_GT(names.size(), 100u);
  report(plain_calls(names), "inside the shim an intercepted name is Strata's own wrapper: call strata::mpi::real()");
}

TEST(Architecture, LibraryCallsGoThroughTheMpiLayer) {
  const std::set<std::string> names = library_calls();
  ASSERT_GT(names.size(), 20u);
  for (const std::string& n : intercepted()) EXPECT_EQ(names.count(n), 0u) << n << " is in both lists";
  report(plain_calls(names), "call strata::mpi::real() (mpi/calls/library_calls.hpp) or mpi::wtime()");
}

}  // namespace
