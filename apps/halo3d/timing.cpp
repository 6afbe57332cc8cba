#include "timing.hpp"

#include "mpi_check.hpp"

#include <algorithm>

namespace halo3d {

namespace {

constexpr double kQuietSeconds = 2.0;  // without --verbose, progress only after this

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

bool exchange_field(HaloExchange& halo, FieldBuffer& field, Staging staging) {
  if (staging == Staging::App && field.on_device()) {
    return field.to_host() && halo.exchange(field.host_view()) && field.to_device();
  }
  return halo.exchange(field.data());
}

bool time_exchanges(HaloExchange& halo, FieldBuffer& field, const Options& options, MPI_Comm comm,
                    const ProgressOutput& progress, TimingResult& result) {
  for (int i = 0; i < options.warmup; ++i) {
    if (!exchange_field(halo, field, options.staging)) {
      return false;
    }
  }
  std::vector<double> per_exchange_us;
  per_exchange_us.reserve(static_cast<std::size_t>(options.reps));
  for (int rep = 0; rep < options.reps; ++rep) {
    HALO_MPI_CHECK(MPI_Barrier(comm));
    const double start = MPI_Wtime();
    for (int i = 0; i < options.iters; ++i) {
      if (!exchange_field(halo, field, options.staging)) {
        return false;
      }
    }
    const double mine = (MPI_Wtime() - start) / options.iters * 1e6;
    double slowest = 0;
    HALO_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
    per_exchange_us.push_back(slowest);
    if (progress.stream != nullptr && (progress.always || MPI_Wtime() - progress.start_time > kQuietSeconds)) {
      std::fprintf(progress.stream, "rep %d/%d: %.3f us per exchange (slowest rank)\n", rep + 1, options.reps, slowest);
      std::fflush(progress.stream);
    }
  }
  result.per_exchange_us = per_exchange_us;
  result.median_us = median(per_exchange_us);
  result.min_us = *std::min_element(per_exchange_us.begin(), per_exchange_us.end());
  result.max_us = *std::max_element(per_exchange_us.begin(), per_exchange_us.end());
  return true;
}

}  // namespace halo3d
