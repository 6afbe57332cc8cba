// When is Strata's host pack worth it? A measured model, compared per call.
//
// The model holds measured pack times of the library (MPI_Pack) and of
// Strata over a grid of block lengths and packed sizes, and the machine's
// memcpy rate. For MPI_Pack/MPI_Unpack Strata is used where it packs faster.
// For a transfer (send, receive, all-to-all) Strata packs into a staging
// buffer that the library then copies once more, while the library packs a
// derived type straight into its transport; so Strata is used where its pack
// plus one memcpy of the packed bytes beats the library's pack.
#pragma once

#include <strata/status.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::interposer {

enum class HostOp { pack, transfer };

struct HostPackSample {
  int64_t block = 0;  // bytes per contiguous block
  int64_t bytes = 0;  // packed bytes
  double library_ns = 0;
  double strata_ns = 0;
};

class HostModel {
 public:
  // Figures measured on the reference machine (bench/results/pack-host-*.md).
  static HostModel builtin();
  // The "host" section of a model.json written by strata-measure.
  static Result<HostModel> from_json(const std::string& text);
  std::string to_json() const;

  bool strata_wins(HostOp op, int64_t packed_bytes, int64_t block) const;

  double memcpy_gbps = 0;
  std::vector<HostPackSample> samples;
  std::string source;  // "built-in" or the file it came from

 private:
  void build_grid();
  static constexpr int kBlockBuckets = 24;  // log2(block)
  static constexpr int kBytesBuckets = 48;  // log2(bytes)
  bool wins_[2][kBlockBuckets][kBytesBuckets] = {};
};

// The model in effect: model.json from the cache folder, else built-in (said
// once at info level). Never fatal.
const HostModel& host_model();

// Applies STRATA_HOST_PACK (auto|always|never) on top of the model.
bool use_strata_host_pack(HostOp op, int64_t packed_bytes, int64_t block);

}  // namespace strata::interposer
