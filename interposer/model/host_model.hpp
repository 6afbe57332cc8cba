// When is Strata's host pack worth it? A measured model, compared per call.
//
// The model holds, over a grid of block lengths and packed sizes, measured
// times of the library and of Strata for two operations:
// - pack: MPI_Pack against Strata's pack; used for MPI_Pack/MPI_Unpack;
// - transfer: a derived-type message between two ranks of a node, sent and
//   received by the library against Strata's path (pack into a staging
//   buffer, contiguous MPI_PACKED message, unpack); used for sends,
//   receives and all-to-alls.
// Without transfer samples a transfer is modelled from the pack samples:
// Strata's staging buffer is copied once more by the library, which packs a
// derived type straight into its transport, so Strata wins where its pack
// plus one memcpy of the packed bytes beats the library's pack.
#pragma once

#include <strata/status.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::interposer {

enum class HostOp { pack, transfer };

struct HostSample {
  int64_t block = 0;  // bytes per contiguous block
  int64_t bytes = 0;  // packed bytes
  double library_ns = 0;
  double strata_ns = 0;
};

class HostModel {
 public:
  // Figures measured on the reference machine (bench/results/pack-host-*.md).
  static HostModel builtin();
  // A model.json written by strata-measure (its "host" section); any
  // malformed input is Status::invalid_argument.
  static Result<HostModel> from_json(const std::string& text) noexcept;
  // A whole model.json; `about` goes in as string fields (machine, MPI, date).
  std::string to_json(const std::vector<std::pair<std::string, std::string>>& about = {}) const;

  bool strata_wins(HostOp op, int64_t packed_bytes, int64_t block) const;
  // Does Strata win `op` anywhere on the grid?
  bool strata_wins_anywhere(HostOp op) const;

  double memcpy_gbps = 0;
  std::vector<HostSample> pack;
  std::vector<HostSample> transfer;
  std::string source;  // "built-in" or the file it came from

 private:
  static Result<HostModel> parse_model(const std::string& text);
  void build_grid();
  bool decide(HostOp op, int block_bucket, int bytes_bucket) const;
  static constexpr int kBlockBuckets = 24;  // log2(block)
  static constexpr int kBytesBuckets = 48;  // log2(bytes)
  bool wins_[2][kBlockBuckets][kBytesBuckets] = {};
};

// The reference model's JSON, embedded at build time.
const char* reference_host_model_json();

// The model in effect: model.json from the cache folder, else built-in (said
// once at debug level; the job's line at MPI_Init says which, init_line.hpp).
// Never fatal.
const HostModel& host_model();

// Applies STRATA_HOST_PACK (auto|always|never) on top of the model.
bool use_strata_host_pack(HostOp op, int64_t packed_bytes, int64_t block);

// For strata-measure, which times both paths in one process: overrides
// STRATA_HOST_PACK (1: always, 0: never, -1: back to the configuration).
void override_host_pack(int mode);

// 1 where use_strata_host_pack(HostOp::transfer, ...) is false at every size
// and block (STRATA_HOST_PACK=never; auto with the built-in model on a node
// with a core per rank; a measured model in which Strata wins no transfer):
// the exported functions then pass a point-to-point call on host data of
// any datatype they know straight to the library, as they do contiguous
// data (shim/enter.hpp), instead of asking the model on the general path.
// 0: not so, or not known yet (MPI_Init learns it; so does every override).
// Read with a plain load.
extern int g_host_transfers_to_library;
void learn_host_transfer_route() noexcept;

}  // namespace strata::interposer
