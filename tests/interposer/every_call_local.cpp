// Local calls on buffers (every_call.hpp: local_cases): MPI_Reduce_local,
// MPI_Pack/MPI_Unpack, MPI_Pack_external/MPI_Unpack_external, with device
// and host buffers on either side, against the library's own calls on host
// copies.
#include "call_cases_detail.hpp"
#include "every_call.hpp"

#include "support/test_device_memory.hpp"

#include <cstdlib>
#include <cstring>

namespace every_call {

int error_class(int rc) {
  int c = rc;
  PMPI_Error_class(rc, &c);
  return c;
}

namespace {

using cases::Flavor;
using cases::Setting;
using cases::Side;
using cases::Type;

constexpr char kFill = 0x5A;  // what an output byte buffer holds before a pack

// Raw bytes in host or device memory.
class Bytes {
 public:
  Bytes(bool device, size_t n)
      : device_(device), n_(n), data_(device ? strata_test::test_device_alloc(n) : std::malloc(n)) {}
  ~Bytes() {
    if (device_) {
      strata_test::test_device_free(data_);
    } else {
      std::free(data_);
    }
  }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  void* data() const { return data_; }
  void set(const std::vector<char>& v) {
    if (device_) {
      strata_test::test_device_to(data_, v.data(), n_);
    } else {
      std::memcpy(data_, v.data(), n_);
    }
  }
  std::vector<char> get() const {
    std::vector<char> v(n_);
    if (device_) {
      strata_test::test_device_from(v.data(), data_, n_);
    } else {
      std::memcpy(v.data(), data_, n_);
    }
    return v;
  }

 private:
  bool device_;
  size_t n_;
  void* data_;
};

std::string compare_bytes(const std::vector<char>& got, const std::vector<char>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      return "byte " + std::to_string(i) + " of " + std::to_string(want.size()) + " is " +
             std::to_string(static_cast<unsigned char>(got[i])) + ", expected " +
             std::to_string(static_cast<unsigned char>(want[i]));
    }
  }
  return "";
}

const char* memory(bool device) { return device ? "device" : "host"; }

int world_rank() {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// MPI_Reduce_local (MPI_SUM) of `in` into `inout`, both of flavor f (a
// predefined operation takes predefined datatypes only).
std::string reduce_local(const Setting& s, Flavor f, bool in_device, bool inout_device) {
  const int rank = world_rank();
  Type t(f);
  Side in(in_device, {{&t, s.n / t.per()}}), inout(inout_device, {{&t, s.n / t.per()}});
  const std::vector<int> a = cases::values(rank, s.n, 1), b = cases::values(rank + 1, s.n, 2);
  in.fill(a);
  inout.fill(b);
  std::vector<int> ref = b;
  PMPI_Reduce_local(a.data(), ref.data(), s.n, MPI_INT, MPI_SUM);
  const int rc = CASE_CALL_LC(s, MPI_Reduce_local, in.data(), inout.data(), s.n / t.per(), t.get(), MPI_SUM);
  if (rc != MPI_SUCCESS) return cases::failed("MPI_Reduce_local", rc);
  std::string why = inout.compare(ref);
  if (!why.empty()) return "inout: " + why;
  why = in.compare(a);
  return why.empty() ? why : "in (must not change): " + why;
}

// What one side packs: n ints of flavor f, then 6 more as MPI_INT (the
// second pack starts at the first one's position).
struct Packed {
  explicit Packed(const Setting& s, Flavor f)
      : t(f), named(Flavor::named), first(cases::values(world_rank(), s.n, 3)), second(cases::values(7, 6, 3)) {}
  Type t, named;
  std::vector<int> first, second;
};

// MPI_Pack from device (or host) memory into device or host memory, and
// MPI_Unpack back into device memory, against PMPI_Pack/PMPI_Unpack of
// host copies (MPI_COMM_WORLD's format).
std::string pack_unpack(const Setting& s, Flavor f, bool in_device, bool packed_device) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  Packed p(s, f);
  const int count = s.n / p.t.per();
  int size1 = 0, size2 = 0;
  CASE_CALL(MPI_Pack_size, count, p.t.get(), comm, &size1);
  CASE_CALL(MPI_Pack_size, 6, MPI_INT, comm, &size2);
  const int room = size1 + size2 + 32;
  // The oracle: the library packs host copies.
  Side host1(false, {{&p.t, count}}), host2(false, {{&p.named, 6}});
  host1.fill(p.first);
  host2.fill(p.second);
  std::vector<char> ref(static_cast<size_t>(room), kFill);
  int ref_position = 0;
  PMPI_Pack(host1.data(), count, p.t.get(), ref.data(), room, &ref_position, comm);
  PMPI_Pack(host2.data(), 6, MPI_INT, ref.data(), room, &ref_position, comm);
  // MPI_Pack.
  Side in1(in_device, {{&p.t, count}}), in2(in_device, {{&p.named, 6}});
  in1.fill(p.first);
  in2.fill(p.second);
  Bytes packed(packed_device, static_cast<size_t>(room));
  packed.set(std::vector<char>(static_cast<size_t>(room), kFill));
  int position = 0;
  int rc = CASE_CALL(MPI_Pack, in1.data(), count, p.t.get(), packed.data(), room, &position, comm);
  if (rc == MPI_SUCCESS) rc = CASE_CALL(MPI_Pack, in2.data(), 6, MPI_INT, packed.data(), room, &position, comm);
  if (rc != MPI_SUCCESS) return cases::failed("MPI_Pack", rc);
  if (position != ref_position)
    return "MPI_Pack's position is " + std::to_string(position) + ", the library's " + std::to_string(ref_position);
  std::string why = compare_bytes(packed.get(), ref);
  if (!why.empty()) return "MPI_Pack: " + why;
  // MPI_Unpack of the library's bytes.
  packed.set(ref);
  Side out1(in_device, {{&p.t, count}}), out2(in_device, {{&p.named, 6}});
  position = 0;
  rc = CASE_CALL(MPI_Unpack, packed.data(), room, &position, out1.data(), count, p.t.get(), comm);
  if (rc == MPI_SUCCESS) rc = CASE_CALL(MPI_Unpack, packed.data(), room, &position, out2.data(), 6, MPI_INT, comm);
  if (rc != MPI_SUCCESS) return cases::failed("MPI_Unpack", rc);
  if (position != ref_position)
    return "MPI_Unpack's position is " + std::to_string(position) + ", the library's " + std::to_string(ref_position);
  why = out1.compare(p.first);
  if (why.empty()) why = out2.compare(p.second);
  return why.empty() ? why : "MPI_Unpack: " + why;
}

// The same through MPI_Pack_external / MPI_Unpack_external ("external32").
std::string pack_external(const Setting& s, Flavor f, bool in_device, bool packed_device) {
  const char* rep = "external32";
  Packed p(s, f);
  const int count = s.n / p.t.per();
  MPI_Aint size1 = 0, size2 = 0;
  PMPI_Pack_external_size(rep, count, p.t.get(), &size1);
  PMPI_Pack_external_size(rep, 6, MPI_INT, &size2);
  const MPI_Aint room = size1 + size2 + 32;
  Side host1(false, {{&p.t, count}}), host2(false, {{&p.named, 6}});
  host1.fill(p.first);
  host2.fill(p.second);
  std::vector<char> ref(static_cast<size_t>(room), kFill);
  MPI_Aint ref_position = 0;
  PMPI_Pack_external(rep, host1.data(), count, p.t.get(), ref.data(), room, &ref_position);
  PMPI_Pack_external(rep, host2.data(), 6, MPI_INT, ref.data(), room, &ref_position);
  Side in1(in_device, {{&p.t, count}}), in2(in_device, {{&p.named, 6}});
  in1.fill(p.first);
  in2.fill(p.second);
  Bytes packed(packed_device, static_cast<size_t>(room));
  packed.set(std::vector<char>(static_cast<size_t>(room), kFill));
  MPI_Aint position = 0;
  int rc = CASE_CALL(MPI_Pack_external, rep, in1.data(), count, p.t.get(), packed.data(), room, &position);
  if (rc == MPI_SUCCESS) rc = CASE_CALL(MPI_Pack_external, rep, in2.data(), 6, MPI_INT, packed.data(), room, &position);
  if (rc != MPI_SUCCESS) return cases::failed("MPI_Pack_external", rc);
  if (position != ref_position) return "MPI_Pack_external's position is " + std::to_string(position);
  std::string why = compare_bytes(packed.get(), ref);
  if (!why.empty()) return "MPI_Pack_external: " + why;
  packed.set(ref);
  Side out1(in_device, {{&p.t, count}}), out2(in_device, {{&p.named, 6}});
  position = 0;
  rc = CASE_CALL(MPI_Unpack_external, rep, packed.data(), room, &position, out1.data(), count, p.t.get());
  if (rc == MPI_SUCCESS) {
    rc = CASE_CALL(MPI_Unpack_external, rep, packed.data(), room, &position, out2.data(), 6, MPI_INT);
  }
  if (rc != MPI_SUCCESS) return cases::failed("MPI_Unpack_external", rc);
  if (position != ref_position) return "MPI_Unpack_external's position is " + std::to_string(position);
  why = out1.compare(p.first);
  if (why.empty()) why = out2.compare(p.second);
  return why.empty() ? why : "MPI_Unpack_external: " + why;
}

}  // namespace

std::vector<Case> local_cases(const Setting& s) {
  const bool device = s.device(world_rank());
  std::vector<Case> all;
  const std::string lc = s.large_count ? " (_c)" : "";
  const struct {
    Flavor f;
    bool in, inout;
  } reductions[] = {{Flavor::named, device, device}, {Flavor::named, device, false}, {Flavor::named, false, device}};
  for (const auto& r : reductions) {
    all.push_back(
        {"MPI_Reduce_local" + lc + ", " + cases::to_string(r.f) + ", in " + memory(r.in) + ", inout " + memory(r.inout),
         [s, r] { return reduce_local(s, r.f, r.in, r.inout); }});
  }
  if (s.large_count) return all;  // the pack calls have no large-count form
  for (Flavor f : {Flavor::named, Flavor::vector, Flavor::indexed, Flavor::structure}) {
    for (bool packed_device : {false, true}) {
      const std::string where = std::string(", ") + cases::to_string(f) + ", data " + memory(device) + ", packed " +
                                memory(packed_device && device);
      all.push_back({"MPI_Pack/MPI_Unpack" + where,
                     [s, f, device, packed_device] { return pack_unpack(s, f, device, packed_device && device); }});
      all.push_back({"MPI_Pack_external/MPI_Unpack_external" + where,
                     [s, f, device, packed_device] { return pack_external(s, f, device, packed_device && device); }});
    }
  }
  return all;
}

}  // namespace every_call
