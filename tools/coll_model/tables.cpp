#include "tools/coll_model/tables.hpp"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace strata::tools {
namespace {

using coll::Algorithm;
using coll::Collective;
namespace model = coll::model;

std::string cell(const Result<double>& t) { return t ? format_time(t.value()) : std::string("—"); }

std::string ratio(const Result<double>& num, const Result<double>& den) {
  if (!num || !den || !(den.value() > 0)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", num.value() / den.value());
  return buf;
}

}  // namespace

const char* name_of(Algorithm a) {
  switch (a) {
    case Algorithm::automatic: return "auto";
    case Algorithm::library: return "library";
    case Algorithm::ring: return "ring";
    case Algorithm::recursive: return "recursive";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::two_level: return "two_level";
  }
  return "?";
}

const char* name_of(Collective c) {
  switch (c) {
    case Collective::allreduce: return "allreduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::allgather: return "allgather";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
  }
  return "?";
}

std::vector<Algorithm> flat_algorithms(bool device) {
  if (device) return {Algorithm::library};
  return {Algorithm::library, Algorithm::ring, Algorithm::recursive};
}

std::string shape_of(const model::Machine& m) {
  std::string out;
  for (const model::LevelShape& l : m.levels) {
    if (l.fanout <= 1) continue;
    out += (out.empty() ? "" : " · ") + l.name + " " + std::to_string(l.fanout);
  }
  return out.empty() ? "one rank" : out;
}

std::string format_time(double us) {
  char buf[32];
  if (us < 1e3) {
    std::snprintf(buf, sizeof buf, "%.3g µs", us);
  } else if (us < 1e6) {
    std::snprintf(buf, sizeof buf, "%.3g ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", us / 1e6);
  }
  return buf;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
  return buf;
}

void print_sweep(Collective collective, const MachineSpec& spec, const std::vector<int>& ranks,
                 const std::vector<double>& sizes, bool device) {
  const std::vector<Algorithm> flat = flat_algorithms(device);
  std::printf("\n### %s (%s buffers)\n\n| ranks | shape | bytes |", name_of(collective), device ? "device" : "host");
  for (Algorithm a : flat) std::printf(" %s |", name_of(a));
  std::printf(" hierarchical | two_level | flat / hier | flat / two_level | choice |\n|");
  for (size_t i = 0; i < flat.size() + 8; ++i) std::printf(i < 3 ? " --- |" : " ---: |");
  std::printf("\n");
  for (int n : ranks) {
    Result<model::Machine> m = build(spec, n, device);
    if (!m) {
      std::printf("| %d | (does not fit the levels) |\n", n);
      continue;
    }
    for (double bytes : sizes) {
      std::printf("| %d | %s | %s |", n, shape_of(m.value()).c_str(), format_bytes(bytes).c_str());
      Result<double> best_flat = Status::not_supported;
      for (Algorithm a : flat) {
        Result<double> t = model::predict_us(collective, a, bytes, m.value());
        if (t && (!best_flat || t.value() < best_flat.value())) best_flat = t;
        std::printf(" %s |", cell(t).c_str());
      }
      Result<double> hier = model::predict_us(collective, Algorithm::hierarchical, bytes, m.value());
      Result<double> two = model::predict_us(collective, Algorithm::two_level, bytes, m.value());
      std::printf(" %s | %s | %s | %s | %s |\n", cell(hier).c_str(), cell(two).c_str(), ratio(best_flat, hier).c_str(),
                  ratio(best_flat, two).c_str(), name_of(model::choose(collective, bytes, device, m.value())));
    }
  }
}

void print_zero(const model::ZeroModel& zm, const MachineSpec& spec, const std::vector<int>& ranks, bool device) {
  using model::ZeroScheme;
  const ZeroScheme schemes[] = {ZeroScheme::zero3, ZeroScheme::zeropp, ZeroScheme::two_level, ZeroScheme::three_level,
                                ZeroScheme::chosen};
  constexpr size_t kFlat = 0, kZeroPP = 1, kThree = 3, kChosen = 4;
  const double layer = zm.params / zm.layers;
  std::printf(
      "\nModel: %.4g parameters in %d layers; per layer one parameter gather of %s (forward), one of %s "
      "(backward), one gradient reduce-scatter of %s; communication only, no overlap.\n",
      zm.params, zm.layers, format_bytes(layer * zm.param_bytes).c_str(), format_bytes(layer * zm.param_bytes).c_str(),
      format_bytes(layer * zm.grad_bytes).c_str());
  std::printf("\n### One step's communication\n\n| ranks | shape |");
  for (ZeroScheme s : schemes) std::printf(" %s |", model::to_string(s));
  std::printf(" ZeRO-3 / 3-level | ZeRO++ / 3-level | ZeRO++ / choice |\n| --- | --- |");
  for (size_t i = 0; i < std::size(schemes) + 3; ++i) std::printf(" ---: |");
  std::printf("\n");
  std::vector<std::vector<model::ZeroStepTimes>> all;
  for (int n : ranks) {
    Result<model::Machine> m = build(spec, n, device);
    std::vector<model::ZeroStepTimes> row;
    std::vector<Result<double>> totals;
    for (ZeroScheme s : schemes) {
      Result<model::ZeroStepTimes> t =
          m ? model::predict_zero_step(zm, s, m.value()) : Result<model::ZeroStepTimes>(m.status());
      row.push_back(t ? t.value() : model::ZeroStepTimes{});
      totals.push_back(t ? Result<double>(t.value().total_us()) : Result<double>(t.status()));
    }
    all.push_back(row);
    std::printf("| %d | %s |", n, m ? shape_of(m.value()).c_str() : "(does not fit)");
    for (const Result<double>& t : totals) std::printf(" %s |", cell(t).c_str());
    std::printf(" %s | %s | %s |\n", ratio(totals[kFlat], totals[kThree]).c_str(),
                ratio(totals[kZeroPP], totals[kThree]).c_str(), ratio(totals[kZeroPP], totals[kChosen]).c_str());
  }
  std::printf("\n### Breakdown: forward gathers / backward gathers / gradient reduce-scatters\n\n| ranks |");
  for (ZeroScheme s : schemes) std::printf(" %s |", model::to_string(s));
  std::printf("\n| --- |");
  for (size_t i = 0; i < std::size(schemes); ++i) std::printf(" --- |");
  std::printf("\n");
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::printf("| %d |", ranks[r]);
    for (const model::ZeroStepTimes& t : all[r]) {
      std::printf(" %s / %s / %s |", format_time(t.forward_gather_us).c_str(),
                  format_time(t.backward_gather_us).c_str(), format_time(t.reduce_scatter_us).c_str());
    }
    std::printf("\n");
  }
}

}  // namespace strata::tools
