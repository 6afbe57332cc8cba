#include "topology/emulate.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "mpi/real_mpi.hpp"
#include "topology/mpi_check.hpp"
#include "topology/numbering.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace strata::topo {

using mpi::real;

namespace detail {
namespace {

config::StringParam g_topology{
    "STRATA_TOPOLOGY", "",
    "Emulate a machine instead of discovering it: NxPxG (nodes x packages per node x GCDs per package, ranks fill it "
    "in order) or n.p.g,n.p.g,... (one node.package.gcd triple per rank); empty: discover"};

// Coordinates stay far below int overflow even when multiplied.
constexpr int64_t kMaxCount = 1 << 20;

std::string trim(const std::string& s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  return s.substr(begin, end - begin);
}

// Splits at every `sep`; empty pieces are kept (so "1..2" has an empty one).
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// A non-negative decimal number of digits only, at most kMaxCount.
bool parse_count(const std::string& text, int64_t* out) {
  std::string t = trim(text);
  if (t.empty() || t.size() > 7) return false;
  int64_t v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  if (v > kMaxCount) return false;
  *out = v;
  return true;
}

Status reject(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return Status::invalid_argument;
}

// "NxPxG": rank r sits at gcd r%G, package (r/G)%P, node r/(P*G).
Result<std::vector<Place>> parse_grid(const std::vector<std::string>& parts, int ranks, std::string* why) {
  int64_t n[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (!parse_count(parts[static_cast<size_t>(i)], &n[i]) || n[i] == 0) {
      return reject(why, "'" + parts[static_cast<size_t>(i)] + "' is not a positive count");
    }
  }
  if (n[0] * n[1] * n[2] < ranks) {
    return reject(why, std::to_string(n[0] * n[1] * n[2]) + " places for " + std::to_string(ranks) + " ranks");
  }
  std::vector<PlaceKey> keys(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    int64_t gcd = r % n[2];
    int64_t package = (r / n[2]) % n[1];
    int64_t node = r / (n[2] * n[1]);
    keys[static_cast<size_t>(r)] = {std::to_string(node), std::to_string(package), std::to_string(gcd)};
  }
  std::vector<Place> places;
  number_places(keys, &places);
  return places;
}

// "n.p.g,n.p.g,...": the numbers are labels, renumbered by first appearance.
Result<std::vector<Place>> parse_list(const std::string& spec, int ranks, std::string* why) {
  std::vector<std::string> entries = split(spec, ',');
  if (entries.size() != static_cast<size_t>(ranks)) {
    return reject(why, std::to_string(entries.size()) + " entries for " + std::to_string(ranks) + " ranks");
  }
  std::vector<PlaceKey> keys;
  keys.reserve(entries.size());
  for (const std::string& entry : entries) {
    std::vector<std::string> fields = split(entry, '.');
    int64_t v[3] = {0, 0, 0};
    bool ok = fields.size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) ok = parse_count(fields[i], &v[i]);
    if (!ok) {
      return reject(why, "entry '" + trim(entry) + "' is not node.package.gcd");
    }
    keys.push_back({std::to_string(v[0]), std::to_string(v[1]), std::to_string(v[2])});
  }
  std::vector<Place> places;
  number_places(keys, &places);
  return places;
}

// Rank 0's value of STRATA_TOPOLOGY on every rank.
Status broadcast_spec(MPI_Comm comm, int rank, std::string* spec) noexcept {
  int length = rank == 0 ? static_cast<int>(spec->size()) : 0;
  STRATA_TOPO_MPI(real().MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  if (length == 0) {
    spec->clear();
    return Status::ok;
  }
  spec->resize(static_cast<size_t>(length));
  STRATA_TOPO_MPI(real().MPI_Bcast(&(*spec)[0], length, MPI_CHAR, 0, comm));
  return Status::ok;
}

// The MPI_COMM_WORLD rank of every rank of `comm`, in comm rank order;
// empty when one is not in MPI_COMM_WORLD (a spawned process).
Status ranks_in_world(MPI_Comm comm, int size, std::vector<int>* out) noexcept {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  std::vector<int> in(static_cast<size_t>(size));
  out->assign(static_cast<size_t>(size), MPI_UNDEFINED);
  for (int i = 0; i < size; ++i) in[static_cast<size_t>(i)] = i;
  STRATA_TOPO_MPI(real().MPI_Comm_group(comm, &group));
  Status s = mpi_check(real().MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group(MPI_COMM_WORLD)");
  if (s == Status::ok) {
    s = mpi_check(real().MPI_Group_translate_ranks(group, size, in.data(), world, out->data()),
                  "MPI_Group_translate_ranks");
  }
  for (MPI_Group* g : {&group, &world}) {
    if (*g != MPI_GROUP_NULL) (void)mpi_check(real().MPI_Group_free(g), "MPI_Group_free");
  }
  STRATA_TRY(s);
  if (std::find(out->begin(), out->end(), MPI_UNDEFINED) != out->end()) out->clear();
  return Status::ok;
}

}  // namespace

Result<std::vector<Place>> parse_emulation(const std::string& spec_text, int ranks, std::string* why) {
  std::string spec = trim(spec_text);
  if (ranks <= 0) {
    return reject(why, "no ranks");
  }
  if (spec.empty()) {
    return reject(why, "empty");
  }
  if (spec.find('.') != std::string::npos || spec.find(',') != std::string::npos) {
    return parse_list(spec, ranks, why);
  }
  std::string lower = spec;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> parts = split(lower, 'x');
  if (parts.size() != 3) {
    return reject(why, "expected NxPxG or n.p.g,n.p.g,...");
  }
  return parse_grid(parts, ranks, why);
}

Result<bool> emulated_places(MPI_Comm comm, int rank, int size, std::vector<Place>* places) noexcept {
  try {
    std::string spec = rank == 0 ? g_topology.get() : std::string();
    STRATA_TRY(broadcast_spec(comm, rank, &spec));
    if (trim(spec).empty()) {
      return false;
    }
    int world_size = 0;
    STRATA_TOPO_MPI(real().MPI_Comm_size(MPI_COMM_WORLD, &world_size));
    std::vector<int> world_ranks;
    STRATA_TRY(ranks_in_world(comm, size, &world_ranks));
    std::string why;
    Result<std::vector<Place>> world = parse_emulation(spec, world_size, &why);
    if (world.ok() && world_ranks.empty()) {
      world = Status::invalid_argument;
      why = "the communicator has ranks outside MPI_COMM_WORLD";
    }
    if (!world.ok()) {
      if (rank == 0) {
        STRATA_LOG_ONCE(warn, kTopo,
                        "STRATA_TOPOLOGY='%s' is not usable for %d ranks (%s): discovering the machine instead",
                        spec.c_str(), world_size, why.c_str());
      }
      return false;
    }
    // Each rank takes its world rank's place; numbers are made dense again
    // for this communicator.
    std::vector<PlaceKey> keys;
    for (int w : world_ranks) {
      const Place& p = world.value()[static_cast<size_t>(w)];
      keys.push_back({std::to_string(p.node), std::to_string(p.package), std::to_string(p.gcd)});
    }
    number_places(keys, places);
    return true;
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
}

bool emulation_requested() noexcept { return !g_topology.get().empty(); }

}  // namespace detail

Result<std::vector<Place>> parse_emulated_topology(const std::string& spec, int ranks) {
  try {
    return detail::parse_emulation(spec, ranks, nullptr);
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
}

}  // namespace strata::topo
