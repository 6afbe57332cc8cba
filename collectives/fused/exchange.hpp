// What the fused AllReduce-RMSNorm object runs its calls on: an Exchange is
// the memory every rank of the communicator can address (peer_exchange.cpp:
// GPU memory over CUDA/HIP IPC; shared_exchange.cpp: an MPI shared-memory
// window) with the protocol of protocol.hpp on top. Each is set up
// collectively, agreeing on every step, so that all ranks take the same
// path; where set-up fails, `why` says what failed and on which rank.
#pragma once

#include <strata/fused.hpp>

#include "collectives/fused/protocol.hpp"
#include "collectives/fused/row_math.hpp"

#include <memory>
#include <string>

namespace strata::fused {

struct Call {
  Tensors tensors;
  DataType type = DataType::bfloat16;
  size_t hidden = 0;
  proto::Kind kind = proto::Kind::one_shot;
  int blocks = 1;  // the budget; proto::blocks_for gives the launch's
  void* stream = nullptr;
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual Status run(const Call& call) noexcept = 0;
  // The error word the protocol published (proto::pack_error; 0: none).
  virtual uint64_t error_word() const noexcept = 0;
  // The block budget when the caller gives none.
  virtual int default_blocks() const noexcept = 0;
  // The largest message (bytes) a Lamport call takes (0: none).
  virtual size_t lamport_max() const noexcept = 0;
};

// Collective over comm. On failure (every rank fails alike) `why` says why.
Result<std::unique_ptr<Exchange>> make_peer_exchange(MPI_Comm comm, const Config& config, std::string* why) noexcept;
Result<std::unique_ptr<Exchange>> make_shared_exchange(MPI_Comm comm, const Config& config, std::string* why) noexcept;

// Calls f(T{}) with T the element type of `type` (float, math::Bf16, math::F16).
template <class F>
Status with_element(DataType type, F&& f) {
  switch (type) {
    case DataType::float32: return f(float{});
    case DataType::bfloat16: return f(math::Bf16{});
    case DataType::float16: return f(math::F16{});
    default: return Status::not_supported;
  }
}

// 16-byte accesses apply: every buffer 16-byte aligned and rows a multiple of 16 bytes.
bool vector_aligned(const Tensors& t, size_t hidden, size_t element) noexcept;

// Rows a Lamport block posts ahead of the row it takes
// (STRATA_FUSED_LAMPORT_LAG_ROWS).
int lamport_lag_rows() noexcept;

// The tensors of tokens [begin, begin + count) of t (rows of `row_bytes`).
Tensors rows_of(const Tensors& t, size_t begin, size_t count, size_t row_bytes) noexcept;

// The protocol's arguments of one call (regions as this rank addresses them).
template <class T>
proto::Args<T> args_of(const Call& call, char* const* regions, int rank, int nranks, const proto::Layout& layout,
                       uint64_t timeout_ticks, uint64_t* error) {
  proto::Args<T> a{};
  for (int q = 0; q < nranks; ++q) a.region[q] = regions[q];
  a.rank = rank;
  a.nranks = nranks;
  a.layout = layout;
  a.x = static_cast<const T*>(call.tensors.x);
  a.residual = static_cast<T*>(call.tensors.residual);
  a.weight = static_cast<const T*>(call.tensors.weight);
  a.out = static_cast<T*>(call.tensors.out);
  a.tokens = static_cast<int64_t>(call.tensors.tokens);
  a.hidden = static_cast<int64_t>(call.hidden);
  a.epsilon = call.tensors.epsilon;
  a.timeout = timeout_ticks;
  a.error = error;
  a.lag = lamport_lag_rows();
  a.post_slices = 1;
  return a;
}

// "rank R" of the lowest rank where `ok` is false, after all ranks agreed
// (collective); true when every rank is ok. `what` describes the failed
// step for the message: "<what> failed on rank R: <that rank's reason>".
bool agree(MPI_Comm comm, bool ok, const std::string& reason, const char* what, std::string* why) noexcept;

// Status::ok when every rank of comm is on one node (collective), else
// not_supported with `why` ("one node for all ranks (<reach>) failed on
// rank R: ..."), or mpi_error.
Status all_on_one_node(MPI_Comm comm, const char* reach, std::string* why) noexcept;

// The wait limit of the protocol (STRATA_FUSED_TIMEOUT_MS).
int64_t timeout_ms() noexcept;

// The largest message the Lamport kind is set up for (STRATA_FUSED_LAMPORT_MAX).
size_t lamport_max_bytes() noexcept;

}  // namespace strata::fused
