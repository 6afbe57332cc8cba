// strata-config: every STRATA_* variable, its type, default, current value
// and help line (UCX's ucx_info -c, NCCL's parameter dump).
//
//   strata-config              a table of all variables and their values
//   strata-config --markdown   the same as a markdown table (docs/configuration.md)
//   strata-config --names      one name per line (for scripts and tests)
//   strata-config --calls      the interposer's interception table as markdown (docs/interposer.md)
#include "tools/cli/command_line.hpp"
#include "tools/guarded_main.hpp"

#include <strata/calls.hpp>
#include <strata/config.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

static int run_tool(int argc, char** argv) {
  CLI::App app{"Print Strata's STRATA_* configuration variables"};
  strata::tools::standard_options(app, "strata-config");
  bool markdown = false;
  bool names = false;
  bool calls = false;
  app.add_flag("--markdown", markdown, "Print a markdown table");
  app.add_flag("--names", names, "Print only the variable names");
  app.add_flag("--calls", calls, "Print the MPI calls the interposer intercepts, as a markdown table");
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  if (calls) {
    std::printf("%s", strata::calls::calls_markdown().c_str());
    return 0;
  }
  strata::config::load();
  const auto params = strata::config::parameters();
  if (names) {
    for (const auto& p : params) std::printf("%s\n", p.name.c_str());
    return 0;
  }
  if (markdown) {
    auto cell = [](std::string text) {  // a pipe would end the table cell
      for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
      return text;
    };
    std::printf("| variable | type | default | description |\n| --- | --- | --- | --- |\n");
    for (const auto& p : params) {
      std::printf("| `%s` | %s | %s | %s |\n", p.name.c_str(), cell(p.type).c_str(),
                  p.default_text.empty() ? "(empty)" : ("`" + p.default_text + "`").c_str(), cell(p.help).c_str());
    }
    return 0;
  }
  for (const auto& p : params) {
    std::printf("%-26s = %-12s (%s, default '%s'%s)\n    %s\n", p.name.c_str(), p.value_text.c_str(), p.type.c_str(),
                p.default_text.c_str(), p.from_environment ? ", from the environment" : "", p.help.c_str());
  }
  for (const auto& w : strata::config::load_warnings()) std::printf("warning: %s\n", w.c_str());
  return 0;
}

int main(int argc, char** argv) { return strata::tools::guarded_main("strata-config", argc, argv, run_tool); }
