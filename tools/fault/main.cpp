// strata-fault: merges the flight records a job's ranks wrote under
// STRATA_FAULT_DIR and prints the diagnosis and a timeline.
//
//   strata-fault                      the newest job in ./strata-fault
//   strata-fault DIR --job JOB        a given job
//   strata-fault --json               one JSON object instead of text
//   strata-fault --list               the jobs with records in DIR
//
// Exit code: 0 when the records were read (whatever they say), 2 on usage
// errors, 3 when there is no record to read.
#include "analysis.hpp"
#include "dumps.hpp"
#include "report.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/guarded_main.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

namespace {

int run(int argc, char** argv) {
  CLI::App app{"strata-fault: diagnosis and timeline from the flight records of a job (docs/fault.md)"};
  strata::tools::standard_options(app, "strata-fault");
  std::string dir = "strata-fault";
  std::string job;
  bool json = false, list = false;
  strata::fault::tool::ReportOptions options;
  int64_t hang_floor_ms = 3000, slow_min_us = 10000;
  app.add_option("dir", dir, "Folder of the records (STRATA_FAULT_DIR)");
  app.add_option("--job", job, "Job id (default: the newest in the folder)");
  app.add_flag("--json", json, "Print one JSON object");
  app.add_flag("--list", list, "List the jobs in the folder, newest first");
  app.add_option("--timeline", options.timeline, "Merged operations in the timeline (the latest)");
  app.add_option("--per-rank", options.per_rank, "Each rank's last operations in the text report");
  app.add_option("--hang-floor-ms", hang_floor_ms,
                 "Post-mortem: operations older than this (and 10x their typical "
                 "duration) at the dump are stuck (STRATA_FAULT_HANG_FLOOR_MS)");
  app.add_option("--slow-min-us", slow_min_us,
                 "Post-mortem fail-slow: largest tolerated shift (STRATA_FAULT_SLOW_MIN_US)");
  if (const int rc = strata::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  const std::vector<std::string> jobs = strata::fault::tool::jobs_in(dir);
  if (list) {
    for (const std::string& j : jobs) std::printf("%s\n", j.c_str());
    return jobs.empty() ? 3 : 0;
  }
  if (job.empty()) {
    if (jobs.empty()) {
      std::fprintf(stderr, "strata-fault: no flight record in %s\n", dir.c_str());
      return 3;
    }
    job = jobs.front();
  }
  strata::fault::tool::JobFiles files;
  std::string error;
  if (!strata::fault::tool::load_job(dir, job, &files, &error)) {
    std::fprintf(stderr, "strata-fault: %s\n", error.c_str());
    return 3;
  }
  strata::fault::Settings settings;
  settings.hang_floor_ns = hang_floor_ms * 1000000;
  settings.slow.min_shift_ns = static_cast<double>(slow_min_us) * 1000;
  const strata::fault::tool::Analysis a = strata::fault::tool::analyze(files, settings);
  const std::string out =
      json ? strata::fault::tool::json_report(files, a, options) : strata::fault::tool::text_report(files, a, options);
  std::fputs(out.c_str(), stdout);
  if (json) std::fputc('\n', stdout);
  return 0;
}

}  // namespace

// A record edited by hand (a field of the wrong type) must not end in
// std::terminate: guarded_main turns it into a message and exit code 70.
int main(int argc, char** argv) { return strata::tools::guarded_main("strata-fault", argc, argv, run); }
