// calibrate_level: least squares on relative error over the model's own
// coefficients, two regimes split at the best measured size.
#include "collectives/model/calibrate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace strata::coll::model {
namespace {

constexpr double kNoBandwidthTerm = 1e6;  // GB/s standing for "bytes cost nothing measurable"

// A sample's prediction is c · (call_us, alpha_us, 1/gbps).
using Vec = std::array<double, 3>;

struct Row {
  Vec c;
  double us;
  double bytes;
};

// The level's figures replaced by (call, alpha, gbps), one regime.
Machine with_figures(const Machine& m, size_t level, double call, double alpha, double gbps) {
  Machine out = m;
  LinkFigures& f = out.levels[level].link;
  f.set_bulk(Protocol{alpha, gbps, call});
  f.small = Protocol{};
  return out;
}

// The sample's coefficients, from the model with unit figures.
bool coefficients(const Machine& m, size_t level, const CollSample& s, Vec* c) {
  auto at = [&](double call, double alpha, double gbps) {
    Result<double> t = predict_us(s.collective, Algorithm::library, s.bytes, with_figures(m, level, call, alpha, gbps));
    return t ? t.value() : std::numeric_limits<double>::quiet_NaN();
  };
  const double huge = 1e15;
  const double zero = at(0, 0, huge);
  *c = {at(1, 0, huge) - zero, at(0, 1, huge) - zero, at(0, 0, 1) - zero};
  return std::isfinite((*c)[0]) && std::isfinite((*c)[1]) && std::isfinite((*c)[2]);
}

double predicted(const Vec& c, const Vec& x) { return c[0] * x[0] + c[1] * x[1] + c[2] * x[2]; }

// Solves the normal equations over the `free` unknowns (the others 0),
// columns scaled to 1; false when singular.
bool solve(const std::vector<Row>& rows, const std::array<bool, 3>& free, Vec* x) {
  std::array<int, 3> idx{};
  int n = 0;
  for (int k = 0; k < 3; ++k) {
    if (free[k]) idx[n++] = k;
  }
  Vec scale{0, 0, 0};
  for (const Row& r : rows) {
    for (int k = 0; k < 3; ++k) scale[k] = std::max(scale[k], std::fabs(r.c[k] / r.us));
  }
  double a[3][4] = {};
  for (const Row& r : rows) {
    for (int i = 0; i < n; ++i) {
      const double ai = r.c[idx[i]] / r.us / scale[idx[i]];
      for (int j = 0; j < n; ++j) a[i][j] += ai * r.c[idx[j]] / r.us / scale[idx[j]];
      a[i][n] += ai;  // target: predicted / measured = 1
    }
  }
  for (int i = 0; i < n; ++i) {  // Gauss-Jordan with partial pivoting
    int p = i;
    for (int k = i + 1; k < n; ++k) {
      if (std::fabs(a[k][i]) > std::fabs(a[p][i])) p = k;
    }
    if (std::fabs(a[p][i]) < 1e-12) return false;
    for (int j = 0; j <= n; ++j) std::swap(a[i][j], a[p][j]);
    for (int k = 0; k < n; ++k) {
      if (k == i) continue;
      const double f = a[k][i] / a[i][i];
      for (int j = i; j <= n; ++j) a[k][j] -= f * a[i][j];
    }
  }
  *x = {0, 0, 0};
  for (int i = 0; i < n; ++i) (*x)[idx[i]] = a[i][n] / a[i][i] / scale[idx[i]];
  return true;
}

double squared_error(const std::vector<Row>& rows, const Vec& x) {
  double e = 0;
  for (const Row& r : rows) e += std::pow(predicted(r.c, x) / r.us - 1, 2);
  return e;
}

// The best non-negative fit over every subset of the unknowns (a figure
// the data drive below zero is pinned at zero instead); false when none.
bool fit(const std::vector<Row>& rows, Vec* best) {
  double best_error = std::numeric_limits<double>::infinity();
  for (int mask = 1; mask < 8; ++mask) {
    const std::array<bool, 3> free{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    Vec x;
    if (!solve(rows, free, &x) || x[0] < 0 || x[1] < 0 || x[2] < 0) continue;
    const double e = squared_error(rows, x);
    if (e < best_error) {
      best_error = e;
      *best = x;
    }
  }
  return best_error < std::numeric_limits<double>::infinity();
}

Protocol protocol_of(const Vec& x) { return Protocol{x[1], x[2] > 0 ? 1.0 / x[2] : kNoBandwidthTerm, x[0]}; }

double min_prediction(const Row& r, const Vec& large, const Vec* small) {
  const double l = predicted(r.c, large);
  return small != nullptr ? std::min(l, predicted(r.c, *small)) : l;
}

// Both regimes of one set of rows and the split between them.
struct Fit {
  Vec large{}, small{};
  bool has_small = false;
  double small_below = 0;  // > 0: the measured switch (LinkFigures::ForCollective::small_below_bytes)
  double predict(const Row& r) const {
    if (has_small && small_below > 0) return predicted(r.c, r.bytes < small_below ? small : large);
    return min_prediction(r, large, has_small ? &small : nullptr);
  }
};

double total_error(const std::vector<Row>& rows, const Fit& f) {
  double e = 0;
  for (const Row& r : rows) e += std::pow(f.predict(r) / r.us - 1, 2);
  return e;
}

size_t distinct_sizes(const std::vector<Row>& rows, std::vector<double>* sizes) {
  sizes->clear();
  for (const Row& r : rows) sizes->push_back(r.bytes);
  std::sort(sizes->begin(), sizes->end());
  sizes->erase(std::unique(sizes->begin(), sizes->end()), sizes->end());
  return sizes->size();
}

// Split j: sizes below sizes[j] in the low-latency regime (j = 0: none);
// each regime at least two distinct sizes. False when nothing fits.
bool fit_regimes(const std::vector<Row>& rows, Fit* out) {
  std::vector<double> sizes;
  if (distinct_sizes(rows, &sizes) < 2) return false;
  double best_error = std::numeric_limits<double>::infinity();
  for (size_t j = 0; j + 2 <= sizes.size(); ++j) {
    if (j == 1) continue;
    std::vector<Row> low, high;
    for (const Row& r : rows) (r.bytes < sizes[j] ? low : high).push_back(r);
    Fit f;
    f.has_small = j > 0;
    if (!fit(high, &f.large) || (f.has_small && !fit(low, &f.small))) continue;
    // Scored as predicted (the cheaper regime) or as fitted (each size in
    // the regime it was fitted to), whichever is closer: NCCL's switch need
    // not be where the figures cross, and is learnt per collective later.
    double e = total_error(rows, f);
    if (f.has_small) {
      Fit as_split = f;
      as_split.small_below = sizes[j];
      e = std::min(e, total_error(rows, as_split));
    }
    if (e < best_error) {
      best_error = e;
      *out = f;
    }
  }
  return best_error < std::numeric_limits<double>::infinity();
}

// NCCL's own switch between its protocols, from one collective's rows: the
// split of its measured sizes (at the geometric middle of two neighbours)
// that predicts them best with the small regime below it and the bulk one
// from it, where that beats taking the cheaper regime at every size (NCCL's
// tuner does not always pick what the fitted figures call cheaper); 0 where
// it does not.
double measured_switch(const std::vector<Row>& rows, Fit f) {
  std::vector<double> sizes;
  if (!f.has_small || distinct_sizes(rows, &sizes) < 2) return 0;
  f.small_below = 0;
  double best_error = total_error(rows, f), best = 0;
  for (size_t k = 1; k < sizes.size(); ++k) {
    f.small_below = std::sqrt(sizes[k - 1] * sizes[k]);
    const double e = total_error(rows, f);
    if (e < best_error) {
      best_error = e;
      best = f.small_below;
    }
  }
  return best;
}

}  // namespace

Result<Calibration> calibrate_level(const Machine& machine, const std::vector<CollSample>& samples) {
  size_t level = machine.levels.size();
  for (size_t i = 0; i < machine.levels.size(); ++i) {
    if (machine.levels[i].fanout <= 1) continue;
    if (level != machine.levels.size()) return Status::not_supported;  // two active levels
    level = i;
  }
  if (level == machine.levels.size()) return Status::not_supported;
  std::vector<Row> rows;
  std::array<std::vector<Row>, kCollectiveCount> by_collective;
  for (const CollSample& s : samples) {
    if (!(s.us > 0) || !std::isfinite(s.us) || !(s.bytes >= 0) || !std::isfinite(s.bytes)) {
      return Status::invalid_argument;
    }
    Row r{{}, s.us, s.bytes};
    if (!coefficients(machine, level, s, &r.c)) return Status::invalid_argument;
    rows.push_back(r);
    by_collective[static_cast<size_t>(s.collective)].push_back(r);
  }
  Fit joint;
  if (!fit_regimes(rows, &joint)) return Status::invalid_argument;

  Calibration out;
  out.link.set_bulk(protocol_of(joint.large));
  out.link.per_node = machine.levels[level].link.per_node;
  if (joint.has_small) out.link.small = protocol_of(joint.small);
  // Each collective's own bulk figures, from its sizes of 1 MiB and up (the
  // bandwidth NCCL reaches differs by collective); the small-message regime
  // stays the pooled one (small calls jitter by several µs from run to run:
  // five collectives' samples average that out, one collective's do not).
  for (size_t c = 0; c < kCollectiveCount; ++c) {
    std::vector<Row> large;
    for (const Row& r : by_collective[c]) {
      if (r.bytes >= Calibration::kLargeBytes) large.push_back(r);
    }
    Fit own = joint;
    std::vector<double> sizes;
    const bool fitted = distinct_sizes(large, &sizes) >= 2 && fit(large, &own.large);
    if (fitted) out.link.by_collective[c] = {true, protocol_of(own.large), out.link.small, 0};
    Fit used = fitted ? own : joint;
    used.small_below = measured_switch(by_collective[c], used);
    if (used.small_below > 0) {
      LinkFigures::ForCollective& f = out.link.by_collective[c];
      if (!f.set) f = {true, protocol_of(joint.large), out.link.small, 0};
      f.small_below_bytes = used.small_below;
    }
    for (const Row& r : by_collective[c]) {
      const double err = std::fabs(used.predict(r) / r.us - 1);
      double& worst = r.bytes >= Calibration::kLargeBytes ? out.max_error_large : out.max_error_small;
      worst = std::max(worst, err);
    }
  }
  return out;
}

}  // namespace strata::coll::model
