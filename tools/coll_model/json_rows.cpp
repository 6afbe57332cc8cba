#include "tools/coll_model/json_rows.hpp"

#include "tools/coll_model/tables.hpp"

namespace strata::tools {

using coll::Algorithm;
using coll::Collective;
namespace model = coll::model;

nlohmann::json sweep_rows(const std::vector<Collective>& collectives, const MachineSpec& spec,
                          const std::vector<int>& ranks, const std::vector<double>& sizes, bool device) {
  std::vector<Algorithm> algorithms = flat_algorithms(device);
  algorithms.push_back(Algorithm::hierarchical);
  algorithms.push_back(Algorithm::two_level);
  nlohmann::json rows = nlohmann::json::array();
  for (Collective c : collectives) {
    for (int n : ranks) {
      Result<model::Machine> m = build(spec, n, device);
      if (!m) {
        rows.push_back({{"collective", name_of(c)}, {"ranks", n}, {"fits", false}});
        continue;
      }
      const std::string shape = shape_of(m.value());
      for (double bytes : sizes) {
        const Algorithm choice = model::choose(c, bytes, device, m.value());
        for (Algorithm a : algorithms) {
          nlohmann::json row = {{"collective", name_of(c)}, {"ranks", n},           {"shape", shape}, {"bytes", bytes},
                                {"algorithm", name_of(a)},  {"chosen", a == choice}};
          if (Result<double> t = model::predict_us(c, a, bytes, m.value())) row["predicted_us"] = t.value();
          rows.push_back(row);
        }
      }
    }
  }
  return rows;
}

nlohmann::json zero_rows(const model::ZeroModel& zm, const MachineSpec& spec, const std::vector<int>& ranks,
                         bool device) {
  using model::ZeroScheme;
  nlohmann::json rows = nlohmann::json::array();
  for (int n : ranks) {
    Result<model::Machine> m = build(spec, n, device);
    for (ZeroScheme s :
         {ZeroScheme::zero3, ZeroScheme::zeropp, ZeroScheme::two_level, ZeroScheme::three_level, ZeroScheme::chosen}) {
      nlohmann::json row = {
          {"ranks", n}, {"shape", m ? shape_of(m.value()) : "(does not fit)"}, {"scheme", model::to_string(s)}};
      if (m) {
        if (Result<model::ZeroStepTimes> t = model::predict_zero_step(zm, s, m.value())) {
          row["total_us"] = t.value().total_us();
          row["forward_gather_us"] = t.value().forward_gather_us;
          row["backward_gather_us"] = t.value().backward_gather_us;
          row["reduce_scatter_us"] = t.value().reduce_scatter_us;
        }
      }
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace strata::tools
