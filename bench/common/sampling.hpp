// The measurement loop of the benchmarks (strata-bench-coll,
// strata-bench-fused): verify the first result, warm up, pick a call count
// per sample, take samples, report the median.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace strata_bench {

struct SampleOptions {
  int warmup = 3;
  int samples = 9;
  double sample_us = 300;  // each sample times enough calls to last about this long
};

struct Timing {
  double us = 0;  // median time per call
  bool verified = false;
  bool ran = false;
  bool wrong = false;  // the first result failed verification (then not timed: note "wrong result")
  std::string note;    // why it did not run
};

// `sample(iters)` returns the seconds per call of `iters` back-to-back calls
// (the slowest rank's), or a negative value on failure; `verify()` runs one
// call on fresh inputs and checks the output.
template <class Sample, class Verify>
Timing measure(const SampleOptions& options, Sample sample, Verify verify) {
  Timing t;
  t.verified = verify();
  if (!t.verified) {
    t.wrong = true;
    t.note = "wrong result";
    return t;
  }
  if (sample(options.warmup) < 0) {
    t.note = "call failed";
    return t;
  }
  const double one = sample(1);
  if (one < 0) {
    t.note = "call failed";
    return t;
  }
  const int iters =
      std::max(1, std::min(10000, static_cast<int>(std::ceil(options.sample_us * 1e-6 / std::max(one, 1e-9)))));
  std::vector<double> per_call;
  for (int s = 0; s < options.samples; ++s) {
    const double v = sample(iters);
    if (v < 0) {
      t.note = "call failed";
      return t;
    }
    per_call.push_back(v);
  }
  std::sort(per_call.begin(), per_call.end());
  t.us = per_call[per_call.size() / 2] * 1e6;
  t.ran = true;
  return t;
}

}  // namespace strata_bench
