// Strata for Kokkos applications (Strata::kokkos): pack and unpack of
// non-contiguous Views through the canonical strided block
// (strata/layout.hpp), MPI send and receive of Views with requests that keep
// their temporaries alive, and the RMSNorm / residual-add / reduction kernels
// of the fused collectives, all on the caller's execution-space instance.
//
// The templates here only translate Views into plain descriptions (a
// StridedBlock and a pointer, or a strided matrix); the kernels are compiled
// once into the library for every execution space the Kokkos build enables
// (Serial, OpenMP, Threads, Cuda, HIP). Nothing here throws; every call
// returns a Status. docs/kokkos.md has the details and the measurements.
//
// Packed order. A View packs in the order of a contiguous View of its array
// layout: LayoutLeft first index fastest, LayoutRight last index fastest (C
// order), i.e. exactly the bytes Kokkos::deep_copy into a contiguous
// LayoutLeft / LayoutRight View holds. A LayoutStride View (what most
// subviews are) packs left when its strides grow with the index (over the
// dimensions of extent > 1: a subview of a LayoutLeft View), else right (a
// subview of a LayoutRight View, or any other order). Both ends of a message
// must agree, as with MPI; Order::left / Order::right force one.
#pragma once

#include <strata/export.h>
#include <strata/layout.hpp>
#include <strata/status.hpp>

#include <Kokkos_Core.hpp>

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

// Half precision: only where Kokkos has real 16-bit types (Kokkos 4 with
// CUDA, HIP or SYCL; Kokkos 3.x and host-only builds map half_t to float).
#if defined(KOKKOS_HALF_T_IS_FLOAT) && !KOKKOS_HALF_T_IS_FLOAT
#define STRATA_KOKKOS_HAVE_HALF 1
#else
#define STRATA_KOKKOS_HAVE_HALF 0
#endif
#if defined(KOKKOS_BHALF_T_IS_FLOAT) && !KOKKOS_BHALF_T_IS_FLOAT
#define STRATA_KOKKOS_HAVE_BFLOAT16 1
#else
#define STRATA_KOKKOS_HAVE_BFLOAT16 0
#endif

namespace strata::kokkos {

// Which order a View's elements are packed in (see the top of the file).
enum class Order {
  layout,  // by the View's array layout (LayoutStride: by its strides), see above
  right,   // last index fastest (C)
  left,    // first index fastest (Fortran)
};

// Which pack kernel runs.
enum class Kernel {
  automatic,    // host spaces: host_engine; CUDA/HIP spaces: the native kernels on the space's stream (else words)
  host_engine,  // Strata's host pack engine in parallel chunks (host-executed spaces only)
  words,        // the device kernel: one word per work item, the shared index math (any space)
};

struct PackOptions {
  Kernel kernel = Kernel::automatic;
};

// ---------------------------------------------------------------------------
// Views as canonical strided blocks.

// The packed bytes of `view` in `order`, as a canonical block relative to
// view.data(). Unit extents drop out and contiguous runs merge, so a
// contiguous View is one block and a 2D column slab of a LayoutRight View is
// one dimension of rows. Rank 0 to 8, any layout with strides.
template <class View>
Result<StridedBlock> describe(const View& view, Order order = Order::layout);

// Bytes `view` packs into.
template <class View>
int64_t packed_bytes(const View& view) {
  return static_cast<int64_t>(view.size()) * static_cast<int64_t>(sizeof(typename View::value_type));
}

// ---------------------------------------------------------------------------
// Pack and unpack, queued on `space` (asynchronous where the space is: fence
// it, or wait on a Request, before reading the result on the host).
//
// Byte level: the packed bytes of `layout` applied at `base` into `packed`
// (which holds layout.packed_bytes() bytes), and back. Both pointers must be
// accessible from `space`. Defined in the library for every enabled space.
template <class ExecSpace>
STRATA_API Status pack(const ExecSpace& space, const StridedBlock& layout, const void* base, void* packed,
                       const PackOptions& options = {}) noexcept;
template <class ExecSpace>
STRATA_API Status unpack(const ExecSpace& space, const StridedBlock& layout, const void* packed, void* base,
                         const PackOptions& options = {}) noexcept;

// View level: `packed` is a rank-1 contiguous View (of any element type)
// with room for packed_bytes(view) bytes.
template <class ExecSpace, class View, class PackedView>
Status pack_view(const ExecSpace& space, const View& view, const PackedView& packed, Order order = Order::layout,
                 const PackOptions& options = {});
template <class ExecSpace, class View, class PackedView>
Status unpack_view(const ExecSpace& space, const PackedView& packed, const View& view, Order order = Order::layout,
                   const PackOptions& options = {});

// ---------------------------------------------------------------------------
// MPI. A message is the View's packed bytes (MPI_BYTE; over 1 GiB in pieces
// of 1 GiB with the same tag, which Strata's receive reassembles). Host
// Views go to MPI in place when contiguous, else packed on `space` into a
// temporary. Device Views are packed on the device; the packed buffer goes
// to MPI when the library takes GPU memory, else through a host staging
// buffer (Strata's staging pools: pinned where there is a GPU). The calls go to
// the library's own entries (PMPI_*, through Strata's MPI layer), like the
// rest of Strata: a preloaded interposer does not see them twice.
enum class DevicePath {
  automatic,  // ask the library (MPIX_Query_*_support; STRATA_MPI_GPU_AWARE overrides)
  device,     // hand device memory to MPI
  staged,     // always through a host buffer (also for host Views: a test path)
};

struct CommOptions {
  DevicePath device_path = DevicePath::automatic;
  Kernel kernel = Kernel::automatic;
  Order order = Order::layout;
};

namespace detail {
struct RequestState;

// How a request completes when its transfer is ordered on an execution
// space rather than tracked by MPI (the transports of
// strata/kokkos_nccl.hpp). `poll` runs first in wait() (blocking = true)
// and test(): a failure is returned and leaves the request active (e.g. its
// group is still open, so it cannot complete yet); *finished = false means
// not finished yet (test() reports not done). `finish` then runs once:
// it waits for the transfer and what follows it (a receive's unpack) on
// the space. `keep` lives until then: the View and the temporaries.
struct OnSpace {
  std::function<Status(bool blocking, bool* finished)> poll;
  std::function<Status()> finish;
  std::vector<std::shared_ptr<const void>> keep;
};
}  // namespace detail

// A pending send or receive. It owns what the transfer needs until it
// completes: the user's View (a reference-counted copy), the packed and
// staging temporaries, and for a receive the unpack that follows. Move
// only; destroying an active request waits for it (a request that cannot
// complete then, e.g. destroyed inside its own group, keeps its temporaries
// for good rather than free memory a transfer will still use; logged).
class STRATA_API Request {
 public:
  Request() noexcept;
  explicit Request(std::shared_ptr<detail::RequestState> state) noexcept;
  // A request completed on an execution space (detail::OnSpace).
  static Result<Request> on_space(detail::OnSpace completion) noexcept;
  Request(Request&&) noexcept;
  Request& operator=(Request&&) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  // Completes the transfer: MPI completion, then (receive) the copy-in and
  // unpack on the space, fenced. After this the View may be used.
  Status wait() noexcept;
  // *done = true once complete (then as after wait()).
  Status test(bool* done) noexcept;
  bool active() const noexcept;

 private:
  void release() noexcept;
  std::shared_ptr<detail::RequestState> state_;
  std::function<Status(bool, bool*)> poll_;  // on_space requests only
};

// Waits for all; returns the first failure (every request is still waited for).
STRATA_API Status wait_all(Request* requests, size_t count) noexcept;

template <class ExecSpace, class View>
Result<Request> isend(const ExecSpace& space, const View& view, int dest, int tag, MPI_Comm comm,
                      const CommOptions& options = {});
template <class ExecSpace, class View>
Result<Request> irecv(const ExecSpace& space, const View& view, int source, int tag, MPI_Comm comm,
                      const CommOptions& options = {});
template <class ExecSpace, class View>
Status send(const ExecSpace& space, const View& view, int dest, int tag, MPI_Comm comm,
            const CommOptions& options = {});
template <class ExecSpace, class View>
Status recv(const ExecSpace& space, const View& view, int source, int tag, MPI_Comm comm,
            const CommOptions& options = {});

// ---------------------------------------------------------------------------
// Kernels of the fused collectives, on rank-2 Views [rows][hidden] (or
// rank-1 Views, one row) of float or double (and Kokkos::Experimental::half_t
// / bhalf_t where STRATA_KOKKOS_HAVE_HALF / _BFLOAT16), any layout. Sums
// accumulate in double for double and in float otherwise.

// y[r][i] = x[r][i] / sqrt(mean_i(x[r][i]^2) + eps) * weight[i].
template <class ExecSpace, class XView, class WView, class YView>
Status rms_norm(const ExecSpace& space, const XView& x, const WView& weight, const YView& y, double eps = 1e-6);
// residual += x; y = rms_norm(residual) (one pass over the row).
template <class ExecSpace, class XView, class RView, class WView, class YView>
Status fused_add_rms_norm(const ExecSpace& space, const XView& x, const RView& residual, const WView& weight,
                          const YView& y, double eps = 1e-6);
// residual += x.
template <class ExecSpace, class XView, class RView>
Status residual_add(const ExecSpace& space, const XView& x, const RView& residual);

enum class ReduceOp { sum, prod, min, max };
// inout[i] = inout[i] op in[i].
template <class ExecSpace, class InView, class InOutView>
Status reduce(const ExecSpace& space, ReduceOp op, const InView& in, const InOutView& inout);
// out[i] = in_0[i] + ... + in_{n-1}[i], accumulated, rounded once; n <= kMaxReduceInputs.
inline constexpr int kMaxReduceInputs = 16;
template <class ExecSpace, class InView, class OutView>
Status reduce_sum(const ExecSpace& space, const InView* inputs, int count, const OutView& out);

// ===========================================================================
// Implementation of the templates: translation to plain descriptions.
namespace detail {

template <class View>
constexpr int rank_of() {
  return static_cast<int>(View::rank);
}

template <class View>
constexpr bool host_accessible() {
  return Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, typename View::memory_space>::accessible;
}

template <class ExecSpace, class View>
constexpr void check_access() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value, "the first argument must be a Kokkos execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "the View's memory is not accessible from this execution space");
}

// Keeps a View's allocation alive (a reference-counted copy of the handle).
template <class View>
std::shared_ptr<const void> keep_alive(const View& view) {
  return std::make_shared<const View>(view);
}

// What a transfer moves: the packed bytes of `layout` at `base`.
struct Buffer {
  StridedBlock layout;
  void* base = nullptr;
  bool host_accessible = true;
  std::shared_ptr<const void> keep;
};

template <class ExecSpace>
STRATA_API Result<Request> isend(const ExecSpace& space, Buffer buffer, int dest, int tag, MPI_Comm comm,
                                 const CommOptions& options) noexcept;
template <class ExecSpace>
STRATA_API Result<Request> irecv(const ExecSpace& space, Buffer buffer, int source, int tag, MPI_Comm comm,
                                 const CommOptions& options) noexcept;

template <class View>
Result<Buffer> buffer_of(const View& view, Order order) {
  Result<StridedBlock> layout = describe(view, order);
  if (!layout) return layout.status();
  Buffer b;
  b.layout = std::move(layout).value();
  b.base = const_cast<void*>(static_cast<const void*>(view.data()));
  b.host_accessible = host_accessible<View>();
  b.keep = keep_alive(view);
  return b;
}

// A rank-1 or rank-2 View as rows x cols with element strides.
template <class T>
struct Matrix {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// LayoutStride: do the strides grow with the index (ignoring extents <= 1)?
template <class View>
bool strides_grow(const View& view) {
  int64_t previous = -1;
  for (int d = 0; d < rank_of<View>(); ++d) {
    if (view.extent(d) <= 1) continue;
    const int64_t stride = static_cast<int64_t>(view.stride(d));
    if (stride <= previous) return false;
    previous = stride;
  }
  return true;
}

template <class View>
bool packs_left(const View& view, Order order) {
  if (order != Order::layout) return order == Order::left;
  if (std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value) return true;
  if (std::is_same<typename View::array_layout, Kokkos::LayoutRight>::value) return false;
  return strides_grow(view);
}

template <class View>
Matrix<typename View::value_type> matrix_of(const View& v) {
  static_assert(rank_of<View>() == 1 || rank_of<View>() == 2, "kernels take rank-1 or rank-2 Views");
  Matrix<typename View::value_type> m;
  m.data = v.data();
  if constexpr (rank_of<View>() == 1) {
    m.rows = 1;
    m.cols = static_cast<int64_t>(v.extent(0));
    m.col_stride = static_cast<int64_t>(v.stride(0));
  } else {
    m.rows = static_cast<int64_t>(v.extent(0));
    m.cols = static_cast<int64_t>(v.extent(1));
    m.row_stride = static_cast<int64_t>(v.stride(0));
    m.col_stride = static_cast<int64_t>(v.stride(1));
  }
  return m;
}

template <class ExecSpace, class T>
STRATA_API Status rms_norm(const ExecSpace& space, Matrix<const T> x, Matrix<T> residual, Matrix<const T> weight,
                           Matrix<T> y, double eps) noexcept;
template <class ExecSpace, class T>
STRATA_API Status residual_add(const ExecSpace& space, Matrix<const T> x, Matrix<T> residual) noexcept;
template <class ExecSpace, class T>
STRATA_API Status reduce(const ExecSpace& space, ReduceOp op, Matrix<const T> in, Matrix<T> inout) noexcept;
template <class ExecSpace, class T>
STRATA_API Status reduce_sum(const ExecSpace& space, const Matrix<const T>* inputs, int count, Matrix<T> out) noexcept;

template <class View>
using value_of = typename View::non_const_value_type;

template <class A, class B>
constexpr void check_same_value() {
  static_assert(std::is_same<value_of<A>, value_of<B>>::value, "the Views must hold the same value type");
}

template <class View>
Matrix<const value_of<View>> const_matrix_of(const View& v) {
  const auto m = matrix_of(v);
  return Matrix<const value_of<View>>{m.data, m.rows, m.cols, m.row_stride, m.col_stride};
}

}  // namespace detail

template <class View>
Result<StridedBlock> describe(const View& view, Order order) {
  constexpr int rank = detail::rank_of<View>();
  static_assert(rank >= 0 && rank <= 8, "Views of rank 0 to 8");
  const int64_t element = static_cast<int64_t>(sizeof(typename View::value_type));
  if (view.size() > 0 && view.data() == nullptr) return Status::invalid_argument;
  const bool left = detail::packs_left(view, order);
  LayoutIR ir = LayoutIR::dense(element);
  ir.streams.reserve(static_cast<size_t>(rank));  // one allocation: this runs per message
  for (int k = 0; k < rank; ++k) {                // innermost first
    const int d = left ? k : rank - 1 - k;
    ir.repeat(static_cast<int64_t>(view.extent(d)), static_cast<int64_t>(view.stride(d)) * element);
  }
  return canonicalize(std::move(ir), static_cast<int64_t>(view.span()) * element);
}

template <class ExecSpace, class View, class PackedView>
Status pack_view(const ExecSpace& space, const View& view, const PackedView& packed, Order order,
                 const PackOptions& options) {
  detail::check_access<ExecSpace, View>();
  detail::check_access<ExecSpace, PackedView>();
  static_assert(detail::rank_of<PackedView>() == 1, "the packed View must have rank 1");
  Result<StridedBlock> layout = describe(view, order);
  if (!layout) return layout.status();
  if (!packed.span_is_contiguous() || packed_bytes(packed) < layout->packed_bytes()) return Status::invalid_argument;
  return pack(space, *layout, view.data(), packed.data(), options);
}

template <class ExecSpace, class View, class PackedView>
Status unpack_view(const ExecSpace& space, const PackedView& packed, const View& view, Order order,
                   const PackOptions& options) {
  detail::check_access<ExecSpace, View>();
  detail::check_access<ExecSpace, PackedView>();
  static_assert(detail::rank_of<PackedView>() == 1, "the packed View must have rank 1");
  static_assert(!std::is_const<typename View::value_type>::value, "cannot unpack into a View of const");
  Result<StridedBlock> layout = describe(view, order);
  if (!layout) return layout.status();
  if (!packed.span_is_contiguous() || packed_bytes(packed) < layout->packed_bytes()) return Status::invalid_argument;
  return unpack(space, *layout, packed.data(), view.data(), options);
}

template <class ExecSpace, class View>
Result<Request> isend(const ExecSpace& space, const View& view, int dest, int tag, MPI_Comm comm,
                      const CommOptions& options) {
  detail::check_access<ExecSpace, View>();
  Result<detail::Buffer> buffer = detail::buffer_of(view, options.order);
  if (!buffer) return buffer.status();
  return detail::isend(space, std::move(buffer).value(), dest, tag, comm, options);
}

template <class ExecSpace, class View>
Result<Request> irecv(const ExecSpace& space, const View& view, int source, int tag, MPI_Comm comm,
                      const CommOptions& options) {
  detail::check_access<ExecSpace, View>();
  static_assert(!std::is_const<typename View::value_type>::value, "cannot receive into a View of const");
  Result<detail::Buffer> buffer = detail::buffer_of(view, options.order);
  if (!buffer) return buffer.status();
  return detail::irecv(space, std::move(buffer).value(), source, tag, comm, options);
}

template <class ExecSpace, class View>
Status send(const ExecSpace& space, const View& view, int dest, int tag, MPI_Comm comm, const CommOptions& options) {
  Result<Request> r = isend(space, view, dest, tag, comm, options);
  if (!r) return r.status();
  return r.value().wait();
}

template <class ExecSpace, class View>
Status recv(const ExecSpace& space, const View& view, int source, int tag, MPI_Comm comm, const CommOptions& options) {
  Result<Request> r = irecv(space, view, source, tag, comm, options);
  if (!r) return r.status();
  return r.value().wait();
}

template <class ExecSpace, class XView, class WView, class YView>
Status rms_norm(const ExecSpace& space, const XView& x, const WView& weight, const YView& y, double eps) {
  detail::check_access<ExecSpace, XView>();
  detail::check_access<ExecSpace, WView>();
  detail::check_access<ExecSpace, YView>();
  detail::check_same_value<XView, WView>();
  detail::check_same_value<XView, YView>();
  static_assert(detail::rank_of<WView>() == 1, "weight is a rank-1 View");
  using T = detail::value_of<XView>;
  return detail::rms_norm<ExecSpace, T>(space, detail::const_matrix_of(x), detail::Matrix<T>{},
                                        detail::const_matrix_of(weight), detail::matrix_of(y), eps);
}

template <class ExecSpace, class XView, class RView, class WView, class YView>
Status fused_add_rms_norm(const ExecSpace& space, const XView& x, const RView& residual, const WView& weight,
                          const YView& y, double eps) {
  detail::check_access<ExecSpace, XView>();
  detail::check_access<ExecSpace, RView>();
  detail::check_access<ExecSpace, WView>();
  detail::check_access<ExecSpace, YView>();
  detail::check_same_value<XView, RView>();
  detail::check_same_value<XView, WView>();
  detail::check_same_value<XView, YView>();
  static_assert(detail::rank_of<WView>() == 1, "weight is a rank-1 View");
  using T = detail::value_of<XView>;
  return detail::rms_norm<ExecSpace, T>(space, detail::const_matrix_of(x), detail::matrix_of(residual),
                                        detail::const_matrix_of(weight), detail::matrix_of(y), eps);
}

template <class ExecSpace, class XView, class RView>
Status residual_add(const ExecSpace& space, const XView& x, const RView& residual) {
  detail::check_access<ExecSpace, XView>();
  detail::check_access<ExecSpace, RView>();
  detail::check_same_value<XView, RView>();
  using T = detail::value_of<XView>;
  return detail::residual_add<ExecSpace, T>(space, detail::const_matrix_of(x), detail::matrix_of(residual));
}

template <class ExecSpace, class InView, class InOutView>
Status reduce(const ExecSpace& space, ReduceOp op, const InView& in, const InOutView& inout) {
  detail::check_access<ExecSpace, InView>();
  detail::check_access<ExecSpace, InOutView>();
  detail::check_same_value<InView, InOutView>();
  using T = detail::value_of<InView>;
  return detail::reduce<ExecSpace, T>(space, op, detail::const_matrix_of(in), detail::matrix_of(inout));
}

template <class ExecSpace, class InView, class OutView>
Status reduce_sum(const ExecSpace& space, const InView* inputs, int count, const OutView& out) {
  detail::check_access<ExecSpace, InView>();
  detail::check_access<ExecSpace, OutView>();
  detail::check_same_value<InView, OutView>();
  using T = detail::value_of<InView>;
  if (count < 0 || count > kMaxReduceInputs || (count > 0 && inputs == nullptr)) return Status::invalid_argument;
  detail::Matrix<const T> in[kMaxReduceInputs];
  for (int i = 0; i < count; ++i) in[i] = detail::const_matrix_of(inputs[i]);
  return detail::reduce_sum<ExecSpace, T>(space, in, count, detail::matrix_of(out));
}

}  // namespace strata::kokkos
