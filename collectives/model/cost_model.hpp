// The alpha-beta cost model of the collectives: per level, a latency alpha
// (µs per message step) and a bandwidth beta (GB/s per direction of one
// rank's link at that level); per algorithm, the steps and bytes each level
// carries. It picks Algorithm::automatic's algorithm and predicts times for
// benchmarks (measured next to predicted) and for docs/scaling.md (machines
// we do not have, from their link figures).
//
// Independent of MPI: a machine is a list of level shapes. The formulas and
// their assumptions are written out in docs/scaling.md ("The model").
#pragma once

#include <strata/collectives.hpp>
#include <strata/status.hpp>

#include <array>
#include <string>
#include <vector>

namespace strata::coll::model {

inline constexpr size_t kCollectiveCount = 5;  // the values of Collective

// One protocol regime of a link: per message step, per byte, per call.
struct Protocol {
  double alpha_us = 0;
  double gbps = 0;  // 0: no such regime
  double call_us = 0;
};

struct LinkFigures {
  double alpha_us = 0;  // per message step
  double gbps = 0;      // per direction, per rank (1e9 bytes/s); per node when per_node
  // Fixed cost of one collective call whose steps run on this level (kernel
  // launch and completion, proxy wake-up): a flat call pays the largest of
  // its levels once, a hierarchical call pays it for every step it runs.
  double call_us = 0;
  // gbps is the node's injection bandwidth (all its NICs, one direction),
  // shared by those of the node's ranks that cross this level at the same
  // time (the network level); see docs/scaling.md for who crosses when.
  bool per_node = false;
  // Device links: the regime of NCCL's low-latency protocols (LL, LL128),
  // which it picks for small messages (lower latency and call cost, lower
  // bandwidth); the figures above are then its bulk protocol's (Simple). A
  // device prediction takes the cheaper regime, as NCCL's tuner does.
  // Learnt by strata-measure (calibrate.hpp); gbps 0: one regime only.
  Protocol small;
  // Device links: figures fitted to one collective alone, which replace the
  // ones above for it. NCCL's efficiency differs by collective (2 H100,
  // 128 MiB: a broadcast's chain moved 321 GB/s, an allreduce's ring 268, a
  // reduce-scatter's 210 per byte the model counts), more than one set of
  // figures can follow. Indexed by Collective; learnt by strata-measure.
  // small_below_bytes: where NCCL's own switch between the regimes was
  // measured (strata-measure), calls below it are predicted in the small
  // regime and the rest in the bulk one, whatever the figures call cheaper
  // (2 H200, 2 MiB: NCCL's allreduce ran in its bulk protocol at 28 µs
  // where the small regime's figures said 21); 0: the cheaper regime.
  struct ForCollective {
    bool set = false;
    Protocol bulk, small;
    double small_below_bytes = 0;
  };
  std::array<ForCollective, kCollectiveCount> by_collective{};

  // The bulk figures (alpha_us, gbps, call_us) as one regime, and set from one.
  Protocol bulk() const { return Protocol{alpha_us, gbps, call_us}; }
  void set_bulk(const Protocol& p) {
    alpha_us = p.alpha_us;
    gbps = p.gbps;
    call_us = p.call_us;
  }
};

struct LevelShape {
  std::string name;  // "gcd", "package", "node"
  int fanout = 1;    // members of one group at this level (the largest group)
  LinkFigures link;
};

// Levels fastest first; the product of the fanouts is the rank count.
struct Machine {
  std::vector<LevelShape> levels;
  // Device buffers: `library` is NCCL/RCCL (a ring; for allreduce the better
  // of ring and tree; a pipelined chain for broadcast and reduce). Host
  // buffers: `library` is the MPI library, credited with the better of its
  // ring and recursive algorithms. choose() sets it from its `device`.
  bool device = false;
  int ranks() const;
};

// Link figures for a level from STRATA_COLL_LINKS ("name:GBps:us,..."), else
// the measured model file (strata-measure's "links" section), else defaults
// by link class name (die, gpu, pcie, shm, network), in that order.
// Keys are level names or link class names (the level name wins); the
// network class's figure (or any key's, when link_class is "network") is
// the node's injection bandwidth: the result has per_node set.
LinkFigures link_figures(const std::string& level_name, const std::string& link_class, bool device);

// Predicted time in µs of one call moving `bytes` (the per-rank buffer of the
// collective: allreduce/broadcast/reduce count*size, reduce_scatter the full
// input, allgather the full output) with `algorithm` on `machine`.
// not_supported when the algorithm does not apply (e.g. two_level on one node).
Result<double> predict_us(Collective collective, Algorithm algorithm, double bytes, const Machine& machine);

// The cheapest applicable algorithm; `device`: only library (flat NCCL),
// hierarchical and two_level are candidates.
Algorithm choose(Collective collective, double bytes, bool device, const Machine& machine);

// ---- additions to the interface above -------------------------------------

// A hierarchical algorithm is chosen only when predicted at least this much
// faster than the best flat one (the "no regression against flat" target:
// the model's error must not flip a near tie to the hierarchy).
inline constexpr double kHierarchyMargin = 0.05;

// As choose(), for calls the library cannot take (host float16/bfloat16:
// MPI has no such type): library_ok = false leaves it out.
Algorithm choose(Collective collective, double bytes, bool device, const Machine& machine, bool library_ok);

// The built-in figures for a link class name (die, gpu, pcie, shm, network);
// an unknown class gets the network's (the slowest). Sources in
// docs/scaling.md.
LinkFigures default_link_figures(const std::string& link_class, bool device);

// One entry of STRATA_COLL_LINKS: [host.|device.]key:GBps:alpha_us[:call_us].
struct LinkEntry {
  std::string scope;      // "", "host" or "device" ("": both)
  std::string key;        // level name or link class name
  LinkFigures link;       // per_node is not decided here (it depends on the class)
  bool has_call = false;  // call_us given (else the class default's)
};
// invalid_argument for anything malformed (an empty spec is valid: no entries).
Result<std::vector<LinkEntry>> parse_link_spec(const std::string& spec);

// The "links" section of a model file's JSON text, flattened into entries
// ({"links": {"host": {key: {"gbps":, "alpha_us":, "call_us":}}, "device": {...}}};
// a device entry may hold "small": {"gbps":, "alpha_us":, "call_us":}, the
// low-latency protocols' regime).
// not_supported when the text has no "links" section; invalid_argument when
// the text or the section is malformed.
Result<std::vector<LinkEntry>> parse_links_json(const std::string& text);

// The machine with the levels below the top merged into one (slowest link,
// largest latency and call cost, product of the fanouts): what two_level
// runs on. not_supported unless the top level is per_node and there are at
// least two levels.
Result<Machine> merge_within_node(const Machine& machine);

// The levels of one node (those below the first per_node level): where a
// ZeRO++ hpZ secondary partition lives.
Machine node_part(const Machine& machine);

}  // namespace strata::coll::model
