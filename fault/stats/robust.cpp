#include "fault/stats/robust.hpp"

#include <algorithm>
#include <cmath>

namespace strata::fault::stats {

double median_inplace(std::vector<double>& values) {
  const size_t n = values.size();
  if (n == 0) return 0;
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), mid, values.end());
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), mid);
  return (lower + upper) / 2;
}

double median(std::vector<double> values) { return median_inplace(values); }

double mad(const std::vector<double>& values, double center) {
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::fabs(v - center));
  return median_inplace(dev);
}

Robust robust(const std::vector<double>& values) {
  Robust r;
  r.median = median(values);
  r.mad = mad(values, r.median);
  return r;
}

double robust_z(double x, const Robust& ref, double min_shift, double z_at_min_shift, double clip) {
  double scale = ref.sigma();
  if (min_shift > 0 && z_at_min_shift > 0) scale = std::max(scale, min_shift / z_at_min_shift);
  if (scale <= 0) return x > ref.median ? clip : (x < ref.median ? -clip : 0);
  return std::clamp((x - ref.median) / scale, -clip, clip);
}

}  // namespace strata::fault::stats
