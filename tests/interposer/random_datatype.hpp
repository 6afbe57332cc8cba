// A seeded generator of random nested MPI datatypes (a "dtpools"-like
// corpus) for the datatype engine's property tests, plus small helpers the
// datatype tests share.
//
// Every MPI constructor appears: named types (pair types with holes too),
// contiguous, vector, hvector (negative and zero strides), indexed_block,
// hindexed_block, indexed, hindexed (regular, merged-adjacent and irregular
// lists), struct (one member, one type at regular displacements, adjacent
// dense members, irregular mixes), subarray (C and Fortran order, 2-4
// dimensions), resized (larger and smaller extents, negative lower bounds),
// dup and darray, nested up to a depth of about 4. Sizes are bounded so that
// five elements of any generated type fit in well under 1 MiB.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <random>
#include <string>

namespace strata_test {

// What the construction alone says about Strata's engine.
enum class Expect {
  reducible,    // built only from regular constructors over reducible parts
  irreducible,  // darray, a pair type with an inner hole, a list that is irregular in bytes
  unknown,      // anything else: the engine may go either way
};
const char* to_string(Expect e);

// A committed datatype, freed when this goes out of scope.
class OwnedType {
 public:
  OwnedType() = default;
  explicit OwnedType(MPI_Datatype t) : type_(t) {}
  OwnedType(const OwnedType&) = delete;
  OwnedType& operator=(const OwnedType&) = delete;
  OwnedType(OwnedType&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  OwnedType& operator=(OwnedType&& o) noexcept;
  ~OwnedType() { reset(); }
  void reset();
  MPI_Datatype get() const { return type_; }
  MPI_Datatype release() {
    MPI_Datatype t = type_;
    type_ = MPI_DATATYPE_NULL;
    return t;
  }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

struct RandomType {
  OwnedType type;           // committed; every intermediate type is already freed
  std::string description;  // the whole construction, for failure messages
  std::string constructor;  // the outermost constructor (for per-constructor statistics)
  Expect expect = Expect::unknown;
};

class RandomDatatypeGenerator {
 public:
  explicit RandomDatatypeGenerator(uint64_t seed, int max_depth = 4) : rng_(seed), max_depth_(max_depth) {}
  // Every construction decision read from `bytes` (the fuzzer's input; each
  // decision takes as many bytes as its range needs, and an exhausted input
  // answers the lowest choice, so every input is a valid type). rng() is
  // then seeded from the bytes, for buffer contents.
  RandomDatatypeGenerator(const uint8_t* bytes, size_t size, int max_depth = 4);
  RandomType next();
  std::mt19937_64& rng() { return rng_; }

 private:
  struct Node;
  Node build(int depth);
  Node named();
  Node contiguous(int depth);
  Node vector(int depth, bool bytes);
  Node block_list(int depth, bool bytes, bool one_blocklen);
  Node structure(int depth);
  Node subarray(int depth);
  Node resized(int depth);
  Node dup(int depth);
  Node darray(int depth);
  Node finish(MPI_Datatype made, Node&& child, std::string constructor, std::string args, Expect expect);
  int64_t uniform(int64_t lo, int64_t hi);
  bool chance(int percent) { return uniform(0, 99) < percent; }

  std::mt19937_64 rng_;
  int max_depth_;
  const uint8_t* bytes_ = nullptr;  // the decision source when set (fuzzing)
  size_t size_ = 0;
  size_t used_ = 0;
};

// The bytes [lo, hi), relative to the buffer pointer, that `count` elements
// of `type` can touch (empty for a zero size or count).
struct Footprint {
  int64_t lo = 0;
  int64_t hi = 0;
};
Footprint footprint(MPI_Datatype type, int count);

// Reads an unsigned integer from the environment (seed and iteration
// overrides: STRATA_TEST_SEED, STRATA_TEST_ITERATIONS).
uint64_t env_u64(const char* name, uint64_t fallback);

}  // namespace strata_test
