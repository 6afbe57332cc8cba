#include "interposer/transfer/init_line.hpp"

#include "base/log.hpp"
#include "collectives/job_facts.hpp"
#include "interposer/model/host_model.hpp"
#include "interposer/transfer/gpu_aware.hpp"
#include "interposer/transfer/job_flags.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <cctype>
#include <string>

#ifndef STRATA_VERSION_TEXT
#define STRATA_VERSION_TEXT "unknown"
#endif

namespace strata::interposer {
namespace {

using mpi::real;

// MPI_Get_library_version's text; `whole`: all of it on one line, else its
// first clause ("Open MPI v4.1.6", "MPICH Version: 4.1.2") with runs of
// blanks made one space.
std::string library_version(bool whole) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  if (real().MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "an MPI library";
  std::string out;
  for (int i = 0; i < length && text[i] != '\0'; ++i) {
    const char c = text[i];
    if (!whole && (c == ',' || c == '\n')) break;
    const bool blank = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "an MPI library" : out;
}

// "all 8", "3 of 8": how many ranks, of the job's.
std::string of_ranks(int some, int ranks) {
  return some == ranks ? "all " + std::to_string(ranks) : std::to_string(some) + " of " + std::to_string(ranks);
}

std::string gpus_part(const coll::JobCensus& c) {
  if (c.ranks_with_gpu == 0) return "GPUs: none in use";  // none seen, or a host program (gpu_code.hpp, uses_gpus)
  std::string out =
      "GPUs: " + (c.ranks_with_gpu == c.ranks ? std::to_string(c.ranks) : of_ranks(c.ranks_with_gpu, c.ranks)) +
      " ranks see " + std::to_string(c.fewest_devices);
  if (c.most_devices != c.fewest_devices) out += "-" + std::to_string(c.most_devices);
  out += c.most_devices == 1 ? " device" : " devices";
  out += std::string(" (") + gpu::backend_name() + ")";
  if (c.ranks_with_nccl == 0) {
    out += ", no NCCL";
  } else {
    out +=
        ", NCCL on " + (c.ranks_with_nccl == c.ranks_with_gpu ? std::string("all") : std::to_string(c.ranks_with_nccl));
  }
  const int aware = ranks_with(c, kGpuAwareFlag);
  if (aware == 0) {
    out += ", MPI not GPU-aware";
  } else if (aware == c.ranks) {
    out += ", MPI GPU-aware";
  } else {
    out += ", MPI GPU-aware on " + of_ranks(aware, c.ranks) + " ranks";
  }
  return out;
}

std::string model_part(const coll::JobCensus& c) {
  const int measured = ranks_with(c, kMeasuredHostModelFlag);
  const std::string& mine = host_model().source;
  if (measured == 0) return "host model: reference";
  std::string out = "host model: measured";
  if (measured != c.ranks) out += " on " + of_ranks(measured, c.ranks) + " ranks, reference elsewhere";
  if (mine != "built-in") out += " (rank 0: " + mine + ")";
  return out;
}

}  // namespace

uint8_t init_line_flags() {
  uint8_t flags = mpi_is_gpu_aware() ? kGpuAwareFlag : 0;
  if (host_model().source != "built-in") flags |= kMeasuredHostModelFlag;
  return flags;
}

void log_rank_details() {
  if (!log::enabled(log::Level::debug, log::kShim | log::kDevice)) return;
  STRATA_LOG(debug, kShim, "interposer active over %s", library_version(true).c_str());
  int devices = 0;
  gpu::device_count(&devices);
  STRATA_LOG(debug, kDevice, "GPU backend %s, %d devices visible; the MPI library %s GPU buffers", gpu::backend_name(),
             devices, mpi_is_gpu_aware() ? "accepts" : "does not accept");
}

void log_init_line(int rank) {
  if (rank != 0 || !log::enabled(log::Level::info, log::kShim)) return;
  const coll::JobCensus c = coll::job_census();
  const std::string mpi = library_version(false);
  if (c.ranks == 0) {  // learn_job failed (warned): this rank's own facts only
    STRATA_LOG(info, kShim, "strata %s: interposer active over %s (the other ranks' facts are unknown)",
               STRATA_VERSION_TEXT, mpi.c_str());
    return;
  }
  STRATA_LOG(info, kShim, "strata %s: interposer active on %d rank%s (%d host%s) over %s; %s; %s", STRATA_VERSION_TEXT,
             c.ranks, c.ranks == 1 ? "" : "s", c.hosts, c.hosts == 1 ? "" : "s", mpi.c_str(), gpus_part(c).c_str(),
             model_part(c).c_str());
}

}  // namespace strata::interposer
