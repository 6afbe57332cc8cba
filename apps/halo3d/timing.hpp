// The timed part: warm-up exchanges, then repetitions of a fixed number of
// exchanges, each starting after a barrier. A repetition's time per exchange
// is the slowest rank's. With --staging app, an exchange includes the copies of
// the whole field to the host mirror and back.
#pragma once

#include "field_buffer.hpp"
#include "halo_exchange.hpp"
#include "options.hpp"

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace halo3d {

struct TimingResult {
  std::vector<double> per_exchange_us;  // one per repetition, max over ranks
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
};

struct ProgressOutput {
  std::FILE* stream = nullptr;  // where rank 0 writes progress; null on other ranks
  bool always = false;          // --verbose: a line per repetition from the start
  double start_time = 0;        // MPI_Wtime() at program start: lines begin after ~2 s
};

// One exchange as options.staging asks: on field.data() (Staging::None), or
// by hand through the host mirror (Staging::App: to_host(), exchange on
// host_view(), to_device()). False on an MPI or device error.
bool exchange_field(HaloExchange& halo, FieldBuffer& field, Staging staging);

// Runs the warm-up and the timed repetitions on `field`. False on an MPI or
// device error.
bool time_exchanges(HaloExchange& halo, FieldBuffer& field, const Options& options, MPI_Comm comm,
                    const ProgressOutput& progress, TimingResult& result);

// The median of `values` (mean of the middle two for an even count); 0 if empty.
double median(std::vector<double> values);

}  // namespace halo3d
