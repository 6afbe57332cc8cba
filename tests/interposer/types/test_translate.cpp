// describe_datatype / translate_datatype: one focused test per MPI
// constructor checking the exact canonical block, 64-bit strides and sizes,
// irreducible types, and handles that are freed or never committed.
#include "../random_datatype.hpp"
#include "support/layout_print.hpp"

#include <strata/datatype.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace {

using strata::Stream;
using strata::StridedBlock;
using strata_test::OwnedType;

constexpr int64_t I = 4;  // sizeof(int)
constexpr int64_t D = 8;  // sizeof(double)

OwnedType committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return OwnedType(t);
}

// The canonical block of `t`, or a failure naming the status.
::testing::AssertionResult block_is(MPI_Datatype t, const StridedBlock& want) {
  const strata::Result<strata::TypeLayout> d = strata::describe_datatype(t);
  if (!d) return ::testing::AssertionFailure() << "describe_datatype: " << to_string(d.status());
  if (d->element != want) {
    return ::testing::AssertionFailure() << "canonical " << d->element.to_string() << ", want " << want.to_string();
  }
  MPI_Count size = 0;
  MPI_Type_size_x(t, &size);
  if (d->size != size || d->element.packed_bytes() != size) {
    return ::testing::AssertionFailure() << "size " << d->size << " / packed " << d->element.packed_bytes()
                                         << ", MPI_Type_size_x " << size;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult irreducible(MPI_Datatype t) {
  const strata::Result<strata::TypeLayout> d = strata::describe_datatype(t);
  if (d) return ::testing::AssertionFailure() << "reduced to " << d->element.to_string();
  if (d.status() != strata::Status::irreducible) {
    return ::testing::AssertionFailure() << "status " << to_string(d.status()) << ", want irreducible";
  }
  // pack refuses it too, and writes nothing.
  std::vector<unsigned char> in(4096, 1), out(4096, 0xEE);
  int64_t pos = 0;
  const strata::Status s = strata::pack(in.data() + 2048, 1, t, out.data(), 4096, &pos);
  if (s != strata::Status::irreducible || pos != 0) {
    return ::testing::AssertionFailure() << "pack returned " << to_string(s) << " at position " << pos;
  }
  for (unsigned char c : out) {
    if (c != 0xEE) return ::testing::AssertionFailure() << "pack wrote for an irreducible type";
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// Named types

TEST(Translate, NamedTypes) {
  EXPECT_TRUE(block_is(MPI_BYTE, {0, 1, {}, 1}));
  EXPECT_TRUE(block_is(MPI_INT, {0, I, {}, I}));
  EXPECT_TRUE(block_is(MPI_DOUBLE, {0, D, {}, D}));
  EXPECT_TRUE(block_is(MPI_C_DOUBLE_COMPLEX, {0, 16, {}, 16}));
  EXPECT_TRUE(block_is(MPI_2INT, {0, 8, {}, 8}));
  EXPECT_TRUE(block_is(MPI_FLOAT_INT, {0, 8, {}, 8}));
}

// A pair type whose data bytes are one run followed by padding is the run
// with the padded extent: MPI_Pack copies exactly those 12 bytes (checked
// against PMPI_Pack here and in test_pack_property).
TEST(Translate, PairTypesWithTrailingPaddingAreOneRun) {
  EXPECT_TRUE(block_is(MPI_DOUBLE_INT, {0, 12, {}, 16}));
  EXPECT_TRUE(block_is(MPI_LONG_INT, {0, 12, {}, 16}));
  OwnedType three = [] {
    MPI_Datatype t;
    MPI_Type_contiguous(3, MPI_DOUBLE_INT, &t);
    return committed(t);
  }();
  EXPECT_TRUE(block_is(three.get(), {0, 12, {{3, 16}}, 48}));
  std::vector<unsigned char> src(48);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  std::vector<unsigned char> mine(40, 0), theirs(40, 0);
  int64_t pos = 0;
  int mpi_pos = 0;
  ASSERT_EQ(strata::pack(src.data(), 1, three.get(), mine.data(), 40, &pos), strata::Status::ok);
  ASSERT_EQ(PMPI_Pack(src.data(), 1, three.get(), theirs.data(), 40, &mpi_pos, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(pos, 36);
  EXPECT_EQ(mpi_pos, 36);
  EXPECT_EQ(mine, theirs);
}

TEST(Translate, PairTypesWithInnerHolesAreIrreducible) {
  EXPECT_TRUE(irreducible(MPI_SHORT_INT));  // short at 0, int at 4: bytes 2..3 are a hole
  OwnedType v = [] {
    MPI_Datatype t;
    MPI_Type_vector(2, 1, 3, MPI_SHORT_INT, &t);
    return committed(t);
  }();
  EXPECT_TRUE(irreducible(v.get()));
}

// ---------------------------------------------------------------------------
// One test per constructor

TEST(Translate, Contiguous) {
  MPI_Datatype t;
  MPI_Type_contiguous(5, MPI_INT, &t);
  OwnedType c = committed(t);
  EXPECT_TRUE(block_is(c.get(), {0, 5 * I, {}, 5 * I}));
  MPI_Type_contiguous(0, MPI_INT, &t);
  OwnedType empty = committed(t);
  EXPECT_TRUE(block_is(empty.get(), {0, 0, {}, 0}));
}

TEST(Translate, Vector) {
  MPI_Datatype t;
  MPI_Type_vector(4, 2, 5, MPI_INT, &t);  // the brief's example: 8-byte blocks, 4 of them 20 bytes apart
  OwnedType v = committed(t);
  EXPECT_TRUE(block_is(v.get(), {0, 8, {{4, 20}}, 3 * 20 + 8}));

  MPI_Type_vector(3, 2, 2, MPI_INT, &t);  // stride == blocklen: contiguous
  OwnedType dense = committed(t);
  EXPECT_TRUE(block_is(dense.get(), {0, 6 * I, {}, 6 * I}));

  MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t);  // negative stride
  OwnedType neg = committed(t);
  EXPECT_TRUE(block_is(neg.get(), {0, D, {{3, -16}}, 40}));

  MPI_Type_vector(3, 1, 0, MPI_INT, &t);  // zero stride: the same int three times
  OwnedType zero = committed(t);
  EXPECT_TRUE(block_is(zero.get(), {0, I, {{3, 0}}, I}));

  MPI_Type_vector(1, 3, 100, MPI_INT, &t);  // one block
  OwnedType one = committed(t);
  EXPECT_TRUE(block_is(one.get(), {0, 3 * I, {}, 3 * I}));
}

TEST(Translate, Hvector) {
  MPI_Datatype t;
  MPI_Type_create_hvector(3, 2, 100, MPI_INT, &t);
  OwnedType h = committed(t);
  EXPECT_TRUE(block_is(h.get(), {0, 8, {{3, 100}}, 208}));

  MPI_Type_create_hvector(3, 1, -24, MPI_DOUBLE, &t);
  OwnedType neg = committed(t);
  EXPECT_TRUE(block_is(neg.get(), {0, D, {{3, -24}}, 56}));

  // hvector of vector: two nested strides.
  MPI_Datatype inner;
  MPI_Type_vector(4, 2, 5, MPI_INT, &inner);
  MPI_Type_create_hvector(3, 1, 400, inner, &t);
  MPI_Type_free(&inner);
  OwnedType nested = committed(t);
  EXPECT_TRUE(block_is(nested.get(), {0, 8, {{4, 20}, {3, 400}}, 868}));
}

TEST(Translate, IndexedBlock) {
  int displs[3] = {1, 5, 9};
  MPI_Datatype t;
  MPI_Type_create_indexed_block(3, 2, displs, MPI_INT, &t);
  OwnedType ib = committed(t);
  EXPECT_TRUE(block_is(ib.get(), {4, 8, {{3, 16}}, 40}));

  int irregular[3] = {0, 3, 4};
  MPI_Type_create_indexed_block(3, 1, irregular, MPI_INT, &t);
  OwnedType irr = committed(t);
  EXPECT_TRUE(irreducible(irr.get()));
}

TEST(Translate, HindexedBlock) {
  MPI_Aint displs[4] = {0, 24, 48, 72};
  MPI_Datatype t;
  MPI_Type_create_hindexed_block(4, 1, displs, MPI_DOUBLE, &t);
  OwnedType hb = committed(t);
  EXPECT_TRUE(block_is(hb.get(), {0, D, {{4, 24}}, 80}));

  MPI_Aint irregular[3] = {0, 8, 24};
  MPI_Type_create_hindexed_block(3, 1, irregular, MPI_DOUBLE, &t);
  OwnedType irr = committed(t);
  EXPECT_TRUE(irreducible(irr.get()));
}

TEST(Translate, Indexed) {
  int lens[3] = {2, 2, 2}, displs[3] = {0, 3, 6};
  MPI_Datatype t;
  MPI_Type_indexed(3, lens, displs, MPI_INT, &t);
  OwnedType regular = committed(t);
  EXPECT_TRUE(block_is(regular.get(), {0, 8, {{3, 12}}, 32}));

  // Adjacent blocks of different lengths are one run.
  int mlens[3] = {1, 3, 2}, mdispls[3] = {0, 1, 4};
  MPI_Type_indexed(3, mlens, mdispls, MPI_INT, &t);
  OwnedType merged = committed(t);
  EXPECT_TRUE(block_is(merged.get(), {0, 24, {}, 24}));

  // Zero-length blocks contribute nothing.
  int zlens[4] = {2, 0, 2, 2}, zdispls[4] = {0, 100, 5, 10};
  MPI_Type_indexed(4, zlens, zdispls, MPI_INT, &t);
  OwnedType zero = committed(t);
  EXPECT_TRUE(block_is(zero.get(), {0, 8, {{3, 20}}, 48}));

  int ilens[2] = {1, 2}, idispls[2] = {0, 3};
  MPI_Type_indexed(2, ilens, idispls, MPI_INT, &t);
  OwnedType irr = committed(t);
  EXPECT_TRUE(irreducible(irr.get()));
}

TEST(Translate, Hindexed) {
  // Four ints as two adjacent pairs: runs of 8 bytes 16 apart.
  int lens[4] = {1, 1, 1, 1};
  MPI_Aint displs[4] = {0, 4, 16, 20};
  MPI_Datatype t;
  MPI_Type_create_hindexed(4, lens, displs, MPI_INT, &t);
  OwnedType h = committed(t);
  EXPECT_TRUE(block_is(h.get(), {0, 8, {{2, 16}}, 24}));

  // Runs in decreasing address order.
  int rlens[3] = {2, 2, 2};
  MPI_Aint rdispls[3] = {32, 16, 0};
  MPI_Type_create_hindexed(3, rlens, rdispls, MPI_INT, &t);
  OwnedType rev = committed(t);
  EXPECT_TRUE(block_is(rev.get(), {32, 8, {{3, -16}}, 40}));

  int ilens[3] = {1, 1, 1};
  MPI_Aint idispls[3] = {0, 8, 24};
  MPI_Type_create_hindexed(3, ilens, idispls, MPI_INT, &t);
  OwnedType irr = committed(t);
  EXPECT_TRUE(irreducible(irr.get()));
}

TEST(Translate, StructOneMember) {
  MPI_Datatype vec, t;
  MPI_Type_vector(2, 1, 3, MPI_INT, &vec);  // bytes 0..3, 12..15; extent 16
  int len = 2;
  MPI_Aint displ = 8;
  MPI_Type_create_struct(1, &len, &displ, &vec, &t);
  MPI_Type_free(&vec);
  OwnedType s = committed(t);
  EXPECT_TRUE(block_is(s.get(), {8, I, {{2, 12}, {2, 16}}, 32}));
}

TEST(Translate, StructOfOneTypeAtRegularDisplacements) {
  MPI_Datatype vec, t;
  MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
  int lens[3] = {1, 1, 1};
  MPI_Aint displs[3] = {0, 40, 80};
  MPI_Datatype types[3] = {vec, vec, vec};
  MPI_Type_create_struct(3, lens, displs, types, &t);
  MPI_Type_free(&vec);
  OwnedType s = committed(t);
  EXPECT_TRUE(block_is(s.get(), {0, I, {{2, 12}, {3, 40}}, 96}));
}

TEST(Translate, StructOfAdjacentDenseMembers) {
  int lens[3] = {1, 1, 1};
  MPI_Aint displs[3] = {0, 4, 8};
  MPI_Datatype types[3] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
  MPI_Datatype t;
  MPI_Type_create_struct(3, lens, displs, types, &t);
  OwnedType s = committed(t);
  EXPECT_TRUE(block_is(s.get(), {0, 16, {}, 16}));

  // {int x2, float x2} with a gap: equal runs at one step.
  int lens2[2] = {2, 2};
  MPI_Aint displs2[2] = {0, 12};
  MPI_Datatype types2[2] = {MPI_INT, MPI_FLOAT};
  MPI_Type_create_struct(2, lens2, displs2, types2, &t);
  OwnedType gap = committed(t);
  EXPECT_TRUE(block_is(gap.get(), {0, 8, {{2, 12}}, 20}));
}

TEST(Translate, StructIrregularIsIrreducible) {
  int lens[3] = {1, 1, 1};
  MPI_Aint displs[3] = {0, 8, 20};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
  MPI_Datatype t;
  MPI_Type_create_struct(3, lens, displs, types, &t);
  OwnedType s = committed(t);
  EXPECT_TRUE(irreducible(s.get()));

  // Members of different non-dense layouts.
  MPI_Datatype v1, v2;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v1);
  MPI_Type_vector(2, 1, 3, MPI_INT, &v2);
  MPI_Datatype mixed[2] = {v1, v2};
  int lens2[2] = {1, 1};
  MPI_Aint displs2[2] = {0, 64};
  MPI_Type_create_struct(2, lens2, displs2, mixed, &t);
  MPI_Type_free(&v1);
  MPI_Type_free(&v2);
  OwnedType m = committed(t);
  EXPECT_TRUE(irreducible(m.get()));
}

TEST(Translate, SubarrayCAndFortran) {
  int sizes[2] = {4, 6}, sub[2] = {2, 3}, starts[2] = {1, 2};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
  OwnedType c = committed(t);
  EXPECT_TRUE(block_is(c.get(), {1 * 24 + 2 * I, 3 * I, {{2, 24}}, 96}));

  int fsizes[2] = {6, 4}, fsub[2] = {3, 2}, fstarts[2] = {2, 1};
  MPI_Type_create_subarray(2, fsizes, fsub, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &t);
  OwnedType f = committed(t);
  EXPECT_TRUE(block_is(f.get(), {32, 12, {{2, 24}}, 96}));

  // 3D, full innermost rows fold: rows of 5 doubles, 2 rows, 2 planes.
  int s3[3] = {3, 4, 5}, sub3[3] = {2, 2, 5}, st3[3] = {1, 1, 0};
  MPI_Type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &t);
  OwnedType c3 = committed(t);
  EXPECT_TRUE(block_is(c3.get(), {200, 80, {{2, 160}}, 480}));

  // 4D Fortran: dim 0 fastest.
  int s4[4] = {5, 4, 3, 2}, sub4[4] = {2, 4, 1, 2}, st4[4] = {1, 0, 2, 0};
  MPI_Type_create_subarray(4, s4, sub4, st4, MPI_ORDER_FORTRAN, MPI_BYTE, &t);
  OwnedType f4 = committed(t);
  EXPECT_TRUE(block_is(f4.get(), {1 + 2 * 20, 2, {{4, 5}, {2, 60}}, 120}));
}

TEST(Translate, Resized) {
  MPI_Datatype r, t;
  MPI_Type_create_resized(MPI_INT, -4, 12, &r);  // negative lb, larger extent
  OwnedType rr = committed(r);
  EXPECT_TRUE(block_is(rr.get(), {0, I, {}, 12}));
  MPI_Type_contiguous(3, rr.get(), &t);
  OwnedType c = committed(t);
  EXPECT_TRUE(block_is(c.get(), {0, I, {{3, 12}}, 36}));

  // Smaller extent than the data: elements overlap.
  MPI_Datatype pair, small;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 4, &small);
  MPI_Type_free(&pair);
  MPI_Type_contiguous(3, small, &t);
  MPI_Type_free(&small);
  OwnedType overlap = committed(t);
  EXPECT_TRUE(block_is(overlap.get(), {0, 8, {{3, 4}}, 12}));
}

TEST(Translate, Dup) {
  MPI_Datatype v, d1, d2;
  MPI_Type_vector(4, 2, 5, MPI_INT, &v);
  MPI_Type_dup(v, &d1);
  MPI_Type_dup(d1, &d2);
  MPI_Type_free(&v);
  MPI_Type_free(&d1);
  OwnedType d = committed(d2);
  EXPECT_TRUE(block_is(d.get(), {0, 8, {{4, 20}}, 68}));
  MPI_Datatype named_dup;
  MPI_Type_dup(MPI_DOUBLE, &named_dup);
  OwnedType nd = committed(named_dup);
  EXPECT_TRUE(block_is(nd.get(), {0, D, {}, D}));
}

TEST(Translate, DarrayIsIrreducible) {
  int gsizes[2] = {8, 6};
  int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
  int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  int psizes[2] = {2, 1};
  MPI_Datatype t;
  MPI_Type_create_darray(2, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
  OwnedType block = committed(t);
  EXPECT_TRUE(irreducible(block.get()));

  int cyc[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
  int cdargs[2] = {2, 1};
  int cps[2] = {2, 2};
  MPI_Type_create_darray(4, 3, 2, gsizes, cyc, cdargs, cps, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
  OwnedType cyclic = committed(t);
  EXPECT_TRUE(irreducible(cyclic.get()));

  // A darray nested inside a regular constructor stays irreducible.
  MPI_Datatype outer;
  MPI_Type_contiguous(2, block.get(), &outer);
  OwnedType nested = committed(outer);
  EXPECT_TRUE(irreducible(nested.get()));
}

// ---------------------------------------------------------------------------
// 64 bits

TEST(Translate, HvectorStridesBeyond32BitsStayExact) {
  // TEMPI truncated hvector strides to int. These cannot be allocated; only
  // the canonical form is checked.
  const MPI_Aint s31 = (MPI_Aint{1} << 31) + 8;
  const MPI_Aint s32 = (MPI_Aint{1} << 32) + 16;
  MPI_Datatype t;
  MPI_Type_create_hvector(2, 1, s31, MPI_DOUBLE, &t);
  OwnedType a = committed(t);
  EXPECT_TRUE(block_is(a.get(), {0, D, {{2, s31}}, s31 + D}));

  MPI_Type_create_hvector(3, 2, s32, MPI_DOUBLE, &t);
  OwnedType b = committed(t);
  EXPECT_TRUE(block_is(b.get(), {0, 2 * D, {{3, s32}}, 2 * s32 + 2 * D}));

  MPI_Type_create_hvector(2, 1, -s32, MPI_DOUBLE, &t);
  OwnedType neg = committed(t);
  EXPECT_TRUE(block_is(neg.get(), {0, D, {{2, -s32}}, s32 + D}));

  MPI_Aint displs[2] = {0, MPI_Aint{1} << 33};
  MPI_Type_create_hindexed_block(2, 1, displs, MPI_DOUBLE, &t);
  OwnedType hb = committed(t);
  EXPECT_TRUE(block_is(hb.get(), {0, D, {{2, MPI_Aint{1} << 33}}, (MPI_Aint{1} << 33) + D}));

  // A vector whose stride in bytes (not in elements) passes 2^32.
  MPI_Datatype big_elem;
  MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &big_elem);  // 8 MiB
  MPI_Type_vector(3, 1, 1 << 10, big_elem, &t);         // stride 2^10 * 2^23 = 2^33 bytes
  MPI_Type_free(&big_elem);
  OwnedType v = committed(t);
  EXPECT_TRUE(block_is(v.get(), {0, int64_t{1} << 23, {{3, int64_t{1} << 33}}, (int64_t{2} << 33) + (1 << 23)}));
}

TEST(Translate, CountsBeyond31BitsKeepExactSizes) {
  // 2^32 ints through nested contiguous types: 16 GiB dense.
  MPI_Datatype inner, t;
  MPI_Type_contiguous(1 << 12, MPI_INT, &inner);
  MPI_Type_contiguous(1 << 20, inner, &t);
  MPI_Type_free(&inner);
  OwnedType dense = committed(t);
  EXPECT_TRUE(block_is(dense.get(), {0, int64_t{1} << 34, {}, int64_t{1} << 34}));

  // count * blocklen = 2^32 elements in one vector.
  MPI_Type_vector(1 << 16, 1 << 16, 1 << 17, MPI_INT, &t);
  OwnedType v = committed(t);
  const int64_t ext = (int64_t{(1 << 16) - 1} << 19) + (int64_t{1} << 18);
  EXPECT_TRUE(block_is(v.get(), {0, int64_t{1} << 18, {{1 << 16, int64_t{1} << 19}}, ext}));

  // repeat() of that element keeps exact 64-bit arithmetic too.
  const strata::Result<strata::TypeLayout> d = strata::describe_datatype(v.get());
  ASSERT_TRUE(d.ok());
  const StridedBlock three = strata::repeat(d->element, 3);
  EXPECT_EQ(three.packed_bytes(), 3 * (int64_t{1} << 34));
  EXPECT_EQ(three.extent, 3 * ext);
}

// ---------------------------------------------------------------------------
// Handles

TEST(Translate, NullAndFreedHandlesDoNotCrash) {
  const strata::Result<strata::TypeLayout> null = strata::describe_datatype(MPI_DATATYPE_NULL);
  EXPECT_FALSE(null.ok());
  EXPECT_EQ(null.status(), strata::Status::invalid_argument);

  // Freed after commit: MPI_Type_free sets the handle to MPI_DATATYPE_NULL.
  MPI_Datatype t;
  MPI_Type_vector(2, 1, 2, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Type_free(&t);
  const strata::Result<strata::TypeLayout> freed = strata::describe_datatype(t);
  EXPECT_EQ(freed.status(), strata::Status::invalid_argument);

  // A type whose child was freed after the parent was built is still whole.
  MPI_Datatype child, parent;
  MPI_Type_contiguous(2, MPI_INT, &child);
  MPI_Type_commit(&child);
  MPI_Type_create_hvector(3, 1, 20, child, &parent);
  MPI_Type_free(&child);
  OwnedType p = committed(parent);
  EXPECT_TRUE(block_is(p.get(), {0, 8, {{3, 20}}, 48}));
}

TEST(Translate, UncommittedTypesTranslate) {
  MPI_Datatype t;
  MPI_Type_vector(4, 2, 5, MPI_INT, &t);  // never committed
  EXPECT_TRUE(block_is(t, {0, 8, {{4, 20}}, 68}));
  const strata::Result<strata::LayoutIR> ir = strata::translate_datatype(t);
  ASSERT_TRUE(ir.ok());
  EXPECT_EQ(strata::canonicalize(*ir, 68), (StridedBlock{0, 8, {{4, 20}}, 68}));
  MPI_Type_free(&t);
}

// Translating many times leaks no handles the library would notice and
// gives the same answer every time (the Contents destructor frees what
// MPI_Type_get_contents returned).
TEST(Translate, RepeatedTranslationIsStable) {
  MPI_Datatype inner, t;
  MPI_Type_vector(2, 1, 3, MPI_INT, &inner);
  int lens[2] = {1, 1};
  MPI_Aint displs[2] = {0, 40};
  MPI_Datatype types[2] = {inner, inner};
  MPI_Type_create_struct(2, lens, displs, types, &t);
  MPI_Type_free(&inner);
  OwnedType s = committed(t);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(block_is(s.get(), {0, I, {{2, 12}, {2, 40}}, 56})) << "iteration " << i;
  }
}

// Open MPI 4.1 builds an hvector whose byte stride is exactly -1 as if it
// were contiguous (opal_datatype_add reads an extent of -1 as "the child's
// extent"). Strata's own translation is the standard's type map; the cross-
// check against the library's true extent then hands the type back to the
// library, so strata::pack stays byte-identical to PMPI_Pack either way.
TEST(Translate, OpenMpiMinusOneByteStrideFallsBackToTheLibrary) {
  MPI_Datatype t;
  MPI_Type_create_hvector(3, 1, -1, MPI_BYTE, &t);
  OwnedType h = committed(t);
  const strata::Result<strata::LayoutIR> ir = strata::translate_datatype(h.get());
  ASSERT_TRUE(ir.ok());
  EXPECT_EQ(strata::canonicalize(*ir, 0), (StridedBlock{0, 1, {{3, -1}}, 0}));
  MPI_Aint true_lb = 0, true_extent = 0;
  MPI_Type_get_true_extent(h.get(), &true_lb, &true_extent);
  if (true_lb == -2) {  // a library that follows the standard
    EXPECT_TRUE(block_is(h.get(), {0, 1, {{3, -1}}, 3}));
  } else {
    EXPECT_TRUE(irreducible(h.get())) << "library true extent [" << true_lb << "," << true_lb + true_extent << ")";
  }
}

}  // namespace
