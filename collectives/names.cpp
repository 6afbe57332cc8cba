// Names and sizes of the public collectives enums.
#include <strata/collectives.hpp>

#include "base/config.hpp"

namespace strata::coll {

size_t size_of(DataType type) noexcept {
  switch (type) {
    case DataType::int32: return 4;
    case DataType::int64: return 8;
    case DataType::float32: return 4;
    case DataType::float64: return 8;
    case DataType::float16: return 2;
    case DataType::bfloat16: return 2;
  }
  return 0;
}

const char* to_string(DataType type) noexcept {
  switch (type) {
    case DataType::int32: return "int32";
    case DataType::int64: return "int64";
    case DataType::float32: return "float32";
    case DataType::float64: return "float64";
    case DataType::float16: return "float16";
    case DataType::bfloat16: return "bfloat16";
  }
  return "?";
}

const char* to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
  }
  return "?";
}

namespace {
constexpr std::pair<const char*, Algorithm> kAlgorithms[] = {
    {"auto", Algorithm::automatic},      {"library", Algorithm::library},           {"ring", Algorithm::ring},
    {"recursive", Algorithm::recursive}, {"hierarchical", Algorithm::hierarchical}, {"two_level", Algorithm::two_level},
};
}  // namespace

const char* to_string(Algorithm algorithm) noexcept {
  for (const auto& [name, a] : kAlgorithms) {
    if (a == algorithm) return name;
  }
  return "?";
}

Result<Algorithm> parse_algorithm(const char* name) noexcept {
  if (name == nullptr) return Status::invalid_argument;
  for (const auto& [word, a] : kAlgorithms) {
    if (config::equals_ignore_case(word, name)) return a;
  }
  return Status::invalid_argument;
}

const char* to_string(Collective collective) noexcept {
  switch (collective) {
    case Collective::allreduce: return "allreduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::allgather: return "allgather";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
  }
  return "?";
}

}  // namespace strata::coll
