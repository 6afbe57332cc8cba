// Robust location and scale: the median and the median absolute deviation
// (MAD). 1.4826 * MAD estimates the standard deviation of normal data and
// ignores up to half of the sample being outliers, which is why the
// detectors use it instead of the mean and the standard deviation.
#pragma once

#include <cstddef>
#include <vector>

namespace strata::fault::stats {

inline constexpr double kMadToSigma = 1.4826;

// The median of `values` (reordered in place); 0 for none. For an even
// count, the mean of the two middle values.
double median_inplace(std::vector<double>& values);
double median(std::vector<double> values);
// median(|x - center|).
double mad(const std::vector<double>& values, double center);

struct Robust {
  double median = 0;
  double mad = 0;
  double sigma() const { return kMadToSigma * mad; }
};
Robust robust(const std::vector<double>& values);

// A score of `x` against a robust reference: (x - median) / scale, the
// scale being sigma() but never below `min_shift / z_at_min_shift`, so
// that a deviation of min_shift scores at most z_at_min_shift however
// quiet the reference is. With z_at_min_shift equal to the CUSUM allowance
// (2), shifts up to min_shift never accumulate: min_shift is the largest
// shift that is tolerated. Clipped to [-clip, clip] so that one huge value
// cannot raise an alarm alone.
double robust_z(double x, const Robust& ref, double min_shift, double z_at_min_shift = 2.0, double clip = 4.0);

}  // namespace strata::fault::stats
