#include "tools/cli/command_line.hpp"

#include "tools/cli/version.hpp"

namespace strata::tools {

std::string version_line(const std::string& tool) {
  return tool + " " + kStrataVersion + " (git " + kStrataGitCommit + ")";
}

void standard_options(CLI::App& app, const std::string& tool) {
  app.name(tool);
  app.set_version_flag("--version", version_line(tool));
  app.option_defaults()->always_capture_default();
}

int parse_command_line(CLI::App& app, int argc, char** argv, bool print) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::Success& done) {  // --help (CallForHelp) and --version (CallForVersion)
    return print ? app.exit(done) : 0;
  } catch (const CLI::ParseError& e) {
    if (print) app.exit(e);
    return kUsageError;
  }
}

CLI::Validator byte_sizes() { return CLI::AsSizeValue(false); }

}  // namespace strata::tools
