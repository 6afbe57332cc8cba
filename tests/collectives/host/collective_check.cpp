#include "collective_check.hpp"

#include "test_values.hpp"

#include <mpi.h>

#include <cmath>
#include <sstream>
#include <vector>

namespace strata_test {
namespace {

namespace host = strata::coll::host;
using strata::Status;
using strata::coll::Algorithm;

constexpr size_t kGuard = 64;
constexpr unsigned char kPoison = 0xA5;
constexpr unsigned char kGuardByte = 0x5A;

const char* name(Coll c) {
  switch (c) {
    case Coll::allreduce: return "allreduce";
    case Coll::reduce_scatter: return "reduce_scatter";
    case Coll::allgather: return "allgather";
    case Coll::broadcast: return "broadcast";
    case Coll::reduce: return "reduce";
  }
  return "?";
}

const char* name(Algorithm a) {
  switch (a) {
    case Algorithm::automatic: return "automatic";
    case Algorithm::library: return "library";
    case Algorithm::ring: return "ring";
    case Algorithm::recursive: return "recursive";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::two_level: return "two_level";
  }
  return "?";
}

// A buffer with poisoned guard bytes on both sides.
class Guarded {
 public:
  explicit Guarded(size_t bytes) : bytes_(bytes), mem_(bytes + 2 * kGuard, kGuardByte) {
    std::fill(mem_.begin() + kGuard, mem_.begin() + static_cast<std::ptrdiff_t>(kGuard + bytes), kPoison);
  }
  unsigned char* data() { return mem_.data() + kGuard; }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i) {
      if (mem_[i] != kGuardByte || mem_[kGuard + bytes_ + i] != kGuardByte) return false;
    }
    return true;
  }
  bool untouched(size_t from, size_t to) const {
    for (size_t i = from; i < to; ++i) {
      if (mem_[kGuard + i] != kPoison) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  std::vector<unsigned char> mem_;
};

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case DataType::int32: return MPI_INT32_T;
    case DataType::int64: return MPI_INT64_T;
    case DataType::float32: return MPI_FLOAT;
    case DataType::float64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    default: return MPI_MAX;
  }
}

uint64_t case_seed(const Case& c, int rank) {
  uint64_t s = test_seed();
  for (uint64_t v : {static_cast<uint64_t>(c.coll), static_cast<uint64_t>(c.type), static_cast<uint64_t>(c.op),
                     static_cast<uint64_t>(c.algorithm), static_cast<uint64_t>(c.in_place), c.count,
                     static_cast<uint64_t>(c.root), static_cast<uint64_t>(rank)}) {
    s = (s ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  return s;
}

// Collects the first few failures of one rank.
class Failures {
 public:
  template <class... A>
  void add(const A&... parts) {
    if (++count_ > 5) return;
    std::ostringstream s;
    (s << ... << parts);
    text_ += "\n  " + s.str();
  }
  bool any() const { return count_ > 0; }
  std::string text() const { return text_ + (count_ > 5 ? "\n  ... " + std::to_string(count_ - 5) + " more" : ""); }

 private:
  int count_ = 0;
  std::string text_;
};

}  // namespace

bool reduces(Coll c) { return c == Coll::allreduce || c == Coll::reduce_scatter || c == Coll::reduce; }

std::string describe(const Case& c) {
  std::ostringstream s;
  s << name(c.coll) << " " << name(c.algorithm) << " " << name(c.type);
  if (reduces(c.coll)) s << " " << name(c.op);
  s << " count=" << c.count << (c.in_place ? " in-place" : "");
  if (c.coll == Coll::broadcast || c.coll == Coll::reduce) s << " root=" << c.root;
  return s.str();
}

namespace {
// memcpy that accepts the null data() of an empty vector when n is 0.
void copy_bytes(void* dst, const void* src, size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}
}  // namespace

::testing::AssertionResult run_case(const Case& c, const host::Hierarchy& h) {
  MPI_Comm comm = h.comm;
  int p = 0, r = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  const size_t es = elem_size(c.type);
  const size_t P = static_cast<size_t>(p);
  const size_t n_in = c.coll == Coll::reduce_scatter ? P * c.count : c.count;
  const size_t n_out = c.coll == Coll::allgather ? P * c.count : c.count;
  const bool root = r == c.root;
  std::mt19937_64 rng(case_seed(c, r));
  std::vector<unsigned char> input(n_in * es);
  fill_random(c.type, c.op, input.data(), n_in, rng);

  // The call, with MPI_IN_PLACE set up as MPI defines it.
  const bool rs_in_place = c.coll == Coll::reduce_scatter && c.in_place;
  Guarded recv((rs_in_place ? n_in : n_out) * es);
  const void* send = input.data();
  Status s = Status::internal;
  switch (c.coll) {
    case Coll::allreduce:
      if (c.in_place) copy_bytes(recv.data(), input.data(), n_in * es), send = MPI_IN_PLACE;
      s = host::allreduce(send, recv.data(), c.count, c.type, c.op, c.algorithm, h);
      break;
    case Coll::reduce_scatter:
      if (c.in_place) copy_bytes(recv.data(), input.data(), n_in * es), send = MPI_IN_PLACE;
      s = host::reduce_scatter(send, recv.data(), c.count, c.type, c.op, c.algorithm, h);
      break;
    case Coll::allgather:
      if (c.in_place)
        copy_bytes(recv.data() + static_cast<size_t>(r) * c.count * es, input.data(), n_in * es), send = MPI_IN_PLACE;
      s = host::allgather(send, recv.data(), c.count, c.type, c.algorithm, h);
      break;
    case Coll::broadcast:
      if (root) copy_bytes(recv.data(), input.data(), n_in * es);
      s = host::broadcast(recv.data(), c.count, c.type, c.root, c.algorithm, h);
      break;
    case Coll::reduce:
      if (c.in_place && root) copy_bytes(recv.data(), input.data(), n_in * es), send = MPI_IN_PLACE;
      s = host::reduce(send, recv.data(), c.count, c.type, c.op, c.root, c.algorithm, h);
      break;
  }

  // The reference, computed by every rank alike.
  std::vector<unsigned char> ref(n_out * es);
  std::vector<double> exact(n_in), magnitude(n_in);
  const int n_int = static_cast<int>(n_in);
  if (reduces(c.coll)) {
    std::vector<double> decoded(n_in), absolute(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      decoded[i] = get(c.type, input.data(), i);
      absolute[i] = std::fabs(decoded[i]);
    }
    MPI_Allreduce(decoded.data(), exact.data(), n_int, MPI_DOUBLE, mpi_op(c.op), comm);
    MPI_Allreduce(absolute.data(), magnitude.data(), n_int, MPI_DOUBLE, c.op == ReduceOp::prod ? MPI_PROD : MPI_SUM,
                  comm);
    if (!is_16bit(c.type)) {
      const MPI_Datatype t = mpi_type(c.type);
      std::vector<unsigned char> copy = input;
      const int n = static_cast<int>(c.count);
      if (c.coll == Coll::allreduce) MPI_Allreduce(copy.data(), ref.data(), n, t, mpi_op(c.op), comm);
      if (c.coll == Coll::reduce_scatter) MPI_Reduce_scatter_block(copy.data(), ref.data(), n, t, mpi_op(c.op), comm);
      if (c.coll == Coll::reduce) MPI_Reduce(copy.data(), ref.data(), n, t, mpi_op(c.op), c.root, comm);
    }
  } else if (c.coll == Coll::allgather) {
    MPI_Allgather(input.data(), static_cast<int>(n_in * es), MPI_BYTE, ref.data(), static_cast<int>(n_in * es),
                  MPI_BYTE, comm);
  } else {
    ref = input;
    MPI_Bcast(ref.data(), static_cast<int>(n_in * es), MPI_BYTE, c.root, comm);
  }

  // Replicated results must be bit-identical on every rank.
  const bool replicated = c.coll == Coll::allreduce || c.coll == Coll::allgather || c.coll == Coll::broadcast;
  std::vector<unsigned char> first(recv.data(), recv.data() + n_out * es);
  if (replicated) MPI_Bcast(first.data(), static_cast<int>(n_out * es), MPI_BYTE, 0, comm);

  Failures f;
  if (s != Status::ok) f.add("returned ", strata::to_string(s));
  if (!recv.guards_intact()) f.add("guard bytes around recv overwritten");
  const bool has_output = c.coll != Coll::reduce || root;
  if (!has_output && !recv.untouched(0, n_out * es)) f.add("recv written on a non-root rank");
  if (has_output && s == Status::ok) {
    const size_t offset = c.coll == Coll::reduce_scatter ? static_cast<size_t>(r) * c.count : 0;
    for (size_t j = 0; j < n_out; ++j) {
      const unsigned char* ours = recv.data() + j * es;
      if (!reduces(c.coll) || (!is_float(c.type)) || c.op == ReduceOp::min || c.op == ReduceOp::max) {
        if (reduces(c.coll) && is_16bit(c.type)) {
          if (get(c.type, ours, 0) != exact[offset + j])
            f.add("element ", j, ": ", get(c.type, ours, 0), ", want ", exact[offset + j]);
        } else if (std::memcmp(ours, ref.data() + j * es, es) != 0) {
          f.add("element ", j, ": ", get(c.type, ours, 0), ", want ", get(c.type, ref.data(), j));
        }
        continue;
      }
      const double steps = static_cast<double>(p - 1);
      const double bound = steps * eps(c.type) * magnitude[offset + j] * 1.01 + steps * tiny(c.type);
      const double want = is_16bit(c.type) ? exact[offset + j] : get(c.type, ref.data(), j);
      const double got = get(c.type, ours, 0);
      if (!(std::fabs(got - want) <= bound)) {
        f.add("element ", j, ": ", got, ", want ", want, " +- ", bound);
      }
    }
  }
  if (replicated && n_out > 0 && std::memcmp(first.data(), recv.data(), n_out * es) != 0) {
    f.add("result differs from rank 0's");
  }
  if (!f.any()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(c) << " on rank " << r << " of " << p << ":" << f.text();
}

}  // namespace strata_test
