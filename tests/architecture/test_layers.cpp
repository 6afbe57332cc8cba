// The layering of docs/architecture.md checked on the source tree's
// includes:
//   - a library folder includes headers of its own folder and of the
//     folders to its left only (base <- mpi <- portability <- topology,
//     fault <- collectives <- interposer; topology and fault do not use
//     each other);
//   - portability's core (everything but the Kokkos layer,
//     portability/kokkos) uses no MPI: no mpi/ header, no <mpi.h>. The
//     device data mover (portability/mover) is part of it: the interposer
//     reads its counters, never the other way round.
// Each finding is a failure naming file:line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Each library folder's place in the chain, read from docs/architecture.md
// (the line "base  <-  mpi  <-  ...  <-  apps, tools, bench" of its first
// code block: folders of one group share a place and do not use each
// other); the library ends before the group that holds apps.
std::map<std::string, int> layer_ranks() {
  std::ifstream in(fs::path(STRATA_SOURCE_DIR) / "docs" / "architecture.md");
  std::string line;
  while (std::getline(in, line) && !(line.rfind("base ", 0) == 0 && line.find("<-") != std::string::npos)) {
  }
  std::map<std::string, int> out;
  const std::regex arrow(R"(\s*<-\s*)"), comma(R"(\s*,\s*)");
  int rank = 0;
  for (std::sregex_token_iterator g(line.begin(), line.end(), arrow, -1), end; g != end; ++g, ++rank) {
    const std::string group = *g;
    if (group.find("apps") != std::string::npos) break;
    for (std::sregex_token_iterator f(group.begin(), group.end(), comma, -1); f != end; ++f) {
      if (!f->str().empty()) out[*f] = rank;
    }
  }
  return out;
}

const std::map<std::string, int>& ranks() {
  static const std::map<std::string, int> r = layer_ranks();
  return r;
}

// The part of portability that may use MPI.
const std::string kKokkosLayer = "portability/kokkos/";

bool is_layered_source(const fs::path& p) {
  static const std::set<std::string> kExtensions = {".c", ".h", ".cpp", ".hpp", ".cu", ".cuh", ".inc", ".in"};
  return kExtensions.count(p.extension().string()) != 0;
}

struct Include {
  std::string where;  // file:line
  std::string file;   // relative to the source tree
  std::string header;
  bool quoted;
};

// Every #include of every source file of the library folders.
std::vector<Include> library_includes() {
  const fs::path root = STRATA_SOURCE_DIR;
  const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> out;
  for (const auto& [folder, rank] : ranks()) {
    EXPECT_TRUE(fs::is_directory(root / folder)) << (root / folder);
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (entry.is_regular_file() && is_layered_source(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::ifstream in(file);
      std::string line;
      const std::string relative = fs::relative(file, root).string();
      for (int number = 1; std::getline(in, line); ++number) {
        std::smatch m;
        if (std::regex_search(line, m, include)) {
          out.push_back({relative + ":" + std::to_string(number), relative, m[2].str(), m[1].str() == "\""});
        }
      }
    }
  }
  return out;
}

std::string folder_of(const std::string& path) { return path.substr(0, path.find('/')); }

// The chain as docs/architecture.md draws it today; a change there is a
// change of the rule, and this says so.
TEST(Layers, TheDocsDrawTheChain) {
  const std::map<std::string, int> want = {{"base", 0},  {"mpi", 1},         {"portability", 2}, {"topology", 3},
                                           {"fault", 3}, {"collectives", 4}, {"interposer", 5}};
  EXPECT_EQ(ranks(), want) << "docs/architecture.md's chain changed: update this test with the rule";
}

TEST(Layers, IncludesPointLeft) {
  const std::vector<Include> includes = library_includes();
  EXPECT_GT(includes.size(), 1000u) << "the source tree was not found at " << STRATA_SOURCE_DIR;
  for (const Include& i : includes) {
    if (!i.quoted) continue;
    const auto target = ranks().find(folder_of(i.header));
    if (target == ranks().end()) continue;  // a header of the build tree or a third party
    const std::string own = folder_of(i.file);
    if (target->first == own) continue;
    EXPECT_LT(target->second, ranks().at(own))
        << i.where << ": " << own << "/ includes " << i.header << " (docs/architecture.md: a folder uses the folders "
        << "to its left only)";
  }
}

TEST(Layers, PortabilityCoreUsesNoMpi) {
  size_t core_includes = 0;
  for (const Include& i : library_includes()) {
    if (folder_of(i.file) != "portability" || i.file.rfind(kKokkosLayer, 0) == 0) continue;
    ++core_includes;
    const bool mpi = i.quoted ? folder_of(i.header) == "mpi" : i.header == "mpi.h";
    EXPECT_FALSE(mpi) << i.where << ": " << i.header
                      << " (portability's core uses no MPI; only portability/kokkos does, docs/architecture.md)";
  }
  EXPECT_GT(core_includes, 100u);
}

}  // namespace
