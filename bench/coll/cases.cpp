// Buffer sizes, bus-bandwidth factors, inputs and the naive reference.
#include "bench/coll/bench_coll.hpp"

#include "collectives/host/float16.hpp"

#include <cstdint>
#include <cstring>

namespace strata_bench {

using strata::coll::Collective;
using strata::coll::DataType;
using strata::coll::ReduceOp;

size_t send_bytes(const Case& c, int ranks) {
  const size_t e = strata::coll::size_of(c.type);
  switch (c.collective) {
    case Collective::reduce_scatter: return c.count * e * static_cast<size_t>(ranks);
    default: return c.count * e;
  }
}

size_t recv_bytes(const Case& c, int ranks) {
  const size_t e = strata::coll::size_of(c.type);
  switch (c.collective) {
    case Collective::allgather: return c.count * e * static_cast<size_t>(ranks);
    default: return c.count * e;
  }
}

bool has_in_place(Collective c) {
  return c == Collective::allreduce || c == Collective::allgather || c == Collective::reduce_scatter;
}

size_t in_place_offset(const Case& c, int rank) {
  return c.collective == Collective::allgather ? c.count * strata::coll::size_of(c.type) * static_cast<size_t>(rank)
                                               : 0;
}

// nccl-tests: busbw = algbw * factor, so that it compares with the link rate.
double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::allreduce: return 2 * (n - 1) / n;
    case Collective::reduce_scatter:
    case Collective::allgather: return (n - 1) / n;
    case Collective::broadcast:
    case Collective::reduce: return 1;
  }
  return 1;
}

namespace {

// +-1 and +-2: sums of up to 128 ranks and products of up to 8 ranks'
// values (and any mix) are exact in every type, in any order.
double value(int rank, size_t i, unsigned salt) {
  static const double kValues[] = {1, -1, 2, -2, 1, 1, -1, 2};
  const uint64_t h = (static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull) ^ (i * 0xBF58476D1CE4E5B9ull) ^ salt;
  return kValues[(h >> 29) % 8];
}

void store(void* base, size_t i, DataType t, double v) {
  char* p = static_cast<char*>(base);
  switch (t) {
    case DataType::int32: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(p + i * 4, &x, 4);
      break;
    }
    case DataType::int64: {
      const int64_t x = static_cast<int64_t>(v);
      std::memcpy(p + i * 8, &x, 8);
      break;
    }
    case DataType::float32: {
      const float x = static_cast<float>(v);
      std::memcpy(p + i * 4, &x, 4);
      break;
    }
    case DataType::float64: std::memcpy(p + i * 8, &v, 8); break;
    case DataType::float16: {
      const uint16_t x = strata::coll::host::float_to_half(static_cast<float>(v));
      std::memcpy(p + i * 2, &x, 2);
      break;
    }
    case DataType::bfloat16: {
      const uint16_t x = strata::coll::host::float_to_bfloat16(static_cast<float>(v));
      std::memcpy(p + i * 2, &x, 2);
      break;
    }
  }
}

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::min: return a < b ? a : b;
    case ReduceOp::max: return a > b ? a : b;
  }
  return a;
}

double reduced(ReduceOp op, size_t i, int ranks, unsigned salt) {
  double acc = value(0, i, salt);
  for (int r = 1; r < ranks; ++r) acc = combine(op, acc, value(r, i, salt));
  return acc;
}

}  // namespace

void fill_input(void* host, size_t count, DataType type, int rank, unsigned salt) {
  for (size_t i = 0; i < count; ++i) store(host, i, type, value(rank, i, salt));
}

// Element i of rank r's input is value(r, i); the outputs follow from the
// collective's definition (broadcast from rank 0, reduce to rank 0).
std::vector<char> expected_output(const Case& c, int rank, int ranks, unsigned salt, bool) {
  std::vector<char> out(recv_bytes(c, ranks));
  const size_t n = c.count;
  switch (c.collective) {
    case Collective::allreduce:
    case Collective::reduce:
      for (size_t i = 0; i < n; ++i) store(out.data(), i, c.type, reduced(c.op, i, ranks, salt));
      break;
    case Collective::reduce_scatter:
      for (size_t i = 0; i < n; ++i) {
        store(out.data(), i, c.type, reduced(c.op, static_cast<size_t>(rank) * n + i, ranks, salt));
      }
      break;
    case Collective::allgather:
      for (int r = 0; r < ranks; ++r) {
        for (size_t i = 0; i < n; ++i) store(out.data(), static_cast<size_t>(r) * n + i, c.type, value(r, i, salt));
      }
      break;
    case Collective::broadcast:
      for (size_t i = 0; i < n; ++i) store(out.data(), i, c.type, value(0, i, salt));
      break;
  }
  return out;
}

}  // namespace strata_bench
