// The IR simplification passes and the canonical strided block.
#include <strata/layout.hpp>

#include <sstream>

namespace strata {
namespace {

bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

namespace pass {

bool collapse_empty(LayoutIR& ir) {
  bool empty = ir.dense_bytes == 0;
  for (const Stream& s : ir.streams) empty = empty || s.count == 0;
  if (!empty) return false;
  bool changed = ir.offset != 0 || ir.dense_bytes != 0 || !ir.streams.empty();
  ir = LayoutIR{};
  return changed;
}

bool drop_unit_streams(LayoutIR& ir) {
  size_t before = ir.streams.size();
  std::vector<Stream> kept;
  kept.reserve(before);
  for (const Stream& s : ir.streams) {
    if (s.count != 1) kept.push_back(s);
  }
  ir.streams.swap(kept);
  return ir.streams.size() != before;
}

bool fold_stream_into_dense(LayoutIR& ir) {
  bool changed = false;
  while (!ir.streams.empty() && ir.streams.front().stride == ir.dense_bytes) {
    int64_t bytes = 0;
    if (mul_overflows(ir.dense_bytes, ir.streams.front().count, &bytes)) break;
    ir.dense_bytes = bytes;
    ir.streams.erase(ir.streams.begin());
    changed = true;
  }
  return changed;
}

bool flatten_nested_streams(LayoutIR& ir) {
  bool changed = false;
  for (size_t i = 0; i + 1 < ir.streams.size();) {
    const Stream inner = ir.streams[i];
    const Stream outer = ir.streams[i + 1];
    int64_t span = 0;
    int64_t count = 0;
    if (!mul_overflows(inner.count, inner.stride, &span) && outer.stride == span &&
        !mul_overflows(inner.count, outer.count, &count)) {
      ir.streams[i].count = count;
      ir.streams.erase(ir.streams.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      changed = true;
    } else {
      ++i;
    }
  }
  return changed;
}

bool order_by_stride(LayoutIR& /*ir*/) {
  // See the header: in MPI's pack order no legal reordering remains once unit
  // streams are gone, so the canonical order is the traversal order.
  return false;
}

}  // namespace pass

void simplify(LayoutIR& ir) {
  bool changed = true;
  while (changed) {
    changed = false;
    changed |= pass::collapse_empty(ir);
    changed |= pass::drop_unit_streams(ir);
    changed |= pass::fold_stream_into_dense(ir);
    changed |= pass::flatten_nested_streams(ir);
    changed |= pass::order_by_stride(ir);
  }
}

StridedBlock canonicalize(LayoutIR ir, int64_t extent) {
  simplify(ir);
  StridedBlock out;
  out.offset = ir.offset;
  out.block = ir.dense_bytes;
  out.dims = std::move(ir.streams);
  out.extent = extent;
  return out;
}

StridedBlock repeat(const StridedBlock& element, int64_t count) {
  if (count == 1) return element;
  LayoutIR ir{element.offset, element.block, element.dims};
  ir.repeat(count, element.extent);
  int64_t extent = 0;
  if (mul_overflows(element.extent, count, &extent)) extent = 0;
  return canonicalize(std::move(ir), extent);
}

int64_t StridedBlock::block_count() const {
  if (block == 0) return 0;
  int64_t n = 1;
  for (const Stream& d : dims) n *= d.count;
  return n;
}

int64_t StridedBlock::packed_bytes() const { return block * block_count(); }

int64_t StridedBlock::lowest_byte() const {
  if (empty()) return 0;
  int64_t low = offset;
  for (const Stream& d : dims) low += d.stride < 0 ? (d.count - 1) * d.stride : 0;
  return low;
}

int64_t StridedBlock::highest_byte() const {
  if (empty()) return 0;
  int64_t high = offset + block;
  for (const Stream& d : dims) high += d.stride > 0 ? (d.count - 1) * d.stride : 0;
  return high;
}

std::string StridedBlock::to_string() const {
  std::ostringstream os;
  os << "{offset=" << offset << " block=" << block << " dims=[";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? " " : "") << dims[i].count << "x" << dims[i].stride;
  os << "] extent=" << extent << "}";
  return os.str();
}

}  // namespace strata
