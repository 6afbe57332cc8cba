// strata::pack / strata::unpack: MPI_Pack semantics on Strata's engine, for
// applications that link Strata (no interposer, no type cache).
#include <strata/datatype.hpp>

namespace strata {
namespace {

Status layout_for(int64_t count, MPI_Datatype type, StridedBlock* out) {
  if (count < 0) return Status::invalid_argument;
  Result<TypeLayout> t = describe_datatype(type);
  if (!t) return t.status();
  *out = repeat(t->element, count);
  return Status::ok;
}

}  // namespace

Status pack(const void* inbuf, int64_t count, MPI_Datatype type, void* outbuf, int64_t outsize, int64_t* position) {
  if (position == nullptr || *position < 0) return Status::invalid_argument;
  StridedBlock layout;
  STRATA_TRY(layout_for(count, type, &layout));
  if (layout.packed_bytes() > outsize - *position) return Status::invalid_argument;
  pack_host(layout, inbuf, static_cast<char*>(outbuf) + *position);
  *position += layout.packed_bytes();
  return Status::ok;
}

Status unpack(const void* inbuf, int64_t insize, int64_t* position, void* outbuf, int64_t count, MPI_Datatype type) {
  if (position == nullptr || *position < 0) return Status::invalid_argument;
  StridedBlock layout;
  STRATA_TRY(layout_for(count, type, &layout));
  if (layout.packed_bytes() > insize - *position) return Status::invalid_argument;
  unpack_host(layout, static_cast<const char*>(inbuf) + *position, outbuf);
  *position += layout.packed_bytes();
  return Status::ok;
}

}  // namespace strata
