// The device-direct descriptor (interposer/transfer/direct_descriptor.hpp):
// what the sender encodes the receiver decodes, byte for byte; every
// single-byte change of an encoded descriptor is refused (a flip in the
// magic or token reads as user data, anywhere else as a corrupt
// descriptor); another job's token, another size, another version and
// random user data are never taken for a descriptor.
#include "interposer/transfer/direct_descriptor.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

namespace strata::interposer {
void PrintTo(DescriptorCheck c, std::ostream* os) { *os << to_string(c); }
}  // namespace strata::interposer

namespace {

using strata::interposer::check_descriptor;
using strata::interposer::ChunkWords;
using strata::interposer::descriptor_checksum;
using strata::interposer::DescriptorCheck;
using strata::interposer::DirectDescriptor;
using strata::interposer::DirectFields;
using strata::interposer::encode_descriptor;
using strata::interposer::is_descriptor;
using strata::interposer::kDescriptorInChunks;
using strata::interposer::kDescriptorMaxChunks;
using strata::interposer::kDescriptorOrderedByEvent;
using strata::interposer::kDirectDescriptorBytes;

static_assert(sizeof(DirectDescriptor) == kDirectDescriptorBytes, "the size is a compile-time constant");

constexpr uint64_t kToken = 0x9b2f61c04d7e5a13ull;

DirectFields random_fields(std::mt19937_64& rng) {
  DirectFields f;
  f.bytes = 1 + rng() % (uint64_t{1} << 40);
  f.slot.table.pid = static_cast<int32_t>(1 + rng() % 4000000);
  f.slot.table.fd = static_cast<int32_t>(rng() % 1024);
  f.slot.table.id = rng() | 1;
  f.slot.ticket.index = static_cast<uint32_t>(rng() % 65536);
  f.slot.ticket.generation = 1 + rng() % (uint64_t{1} << 34);
  for (unsigned char& b : f.location.bytes) b = static_cast<unsigned char>(rng());
  const uint64_t kind = rng() % 3;
  if (kind == 1) {  // a pack still running when it left: ordered by the sender's event
    for (unsigned char& b : f.event) b = static_cast<unsigned char>(rng());
    f.event_sequence = 1 + rng() % (uint64_t{1} << 40);
  } else if (kind == 2) {  // packed in chunks: pieces that cover the bytes, their events in the table's notes
    f.chunks = static_cast<uint32_t>(1 + rng() % kDescriptorMaxChunks);
    f.chunk_bytes = (f.bytes + f.chunks - 1) / f.chunks;
    while (f.chunks > 1 && (f.chunks - 1) * f.chunk_bytes >= f.bytes) --f.chunks;  // none empty
    f.first_note = static_cast<uint32_t>(rng() % (strata::slots::kMaxNotes - f.chunks + 1));
  }
  return f;
}

bool same(const DirectFields& a, const DirectFields& b) {
  return a.bytes == b.bytes && std::memcmp(&a.slot, &b.slot, sizeof(a.slot)) == 0 &&
         std::memcmp(&a.location, &b.location, sizeof(a.location)) == 0 &&
         std::memcmp(a.event, b.event, sizeof(a.event)) == 0 && a.event_sequence == b.event_sequence &&
         a.chunks == b.chunks && a.first_note == b.first_note && a.chunk_bytes == b.chunk_bytes;
}

TEST(DirectDescriptor, RoundTrip) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const DirectFields f = random_fields(rng);
    const DirectDescriptor d = encode_descriptor(f, kToken);
    DirectFields out;
    ASSERT_EQ(check_descriptor(&d, sizeof(d), kToken, &out), DescriptorCheck::descriptor);
    EXPECT_TRUE(same(f, out));
    EXPECT_TRUE(is_descriptor(&d, sizeof(d), kToken));
  }
}

TEST(DirectDescriptor, AnyAlignment) {
  std::mt19937_64 rng(2);
  const DirectFields f = random_fields(rng);
  const DirectDescriptor d = encode_descriptor(f, kToken);
  std::vector<unsigned char> buffer(kDirectDescriptorBytes + 8);
  for (size_t shift = 0; shift < 8; ++shift) {
    std::memcpy(buffer.data() + shift, &d, sizeof(d));
    DirectFields out;
    ASSERT_EQ(check_descriptor(buffer.data() + shift, kDirectDescriptorBytes, kToken, &out),
              DescriptorCheck::descriptor);
    EXPECT_TRUE(same(f, out));
  }
}

// Each byte XORed with each of the 255 non-zero masks.
TEST(DirectDescriptor, EverySingleByteChangeIsRefused) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 4; ++round) {
    const DirectDescriptor d = encode_descriptor(random_fields(rng), kToken);
    unsigned char bytes[kDirectDescriptorBytes];
    for (size_t at = 0; at < kDirectDescriptorBytes; ++at) {
      for (unsigned mask = 1; mask < 256; ++mask) {
        std::memcpy(bytes, &d, sizeof(bytes));
        bytes[at] = static_cast<unsigned char>(bytes[at] ^ mask);
        DirectFields out;
        out.bytes = 77;
        const DescriptorCheck c = check_descriptor(bytes, sizeof(bytes), kToken, &out);
        const DescriptorCheck want = at < 16 ? DescriptorCheck::not_descriptor : DescriptorCheck::corrupt;
        ASSERT_EQ(c, want) << "byte " << at << " ^ " << mask;
        ASSERT_EQ(out.bytes, 77u) << "fields written for a refused descriptor";
      }
    }
  }
}

TEST(DirectDescriptor, AnotherTokenIsNotADescriptor) {
  std::mt19937_64 rng(4);
  const DirectDescriptor d = encode_descriptor(random_fields(rng), kToken);
  EXPECT_EQ(check_descriptor(&d, sizeof(d), kToken ^ 1, nullptr), DescriptorCheck::not_descriptor);
  EXPECT_EQ(check_descriptor(&d, sizeof(d), kToken + (uint64_t{1} << 63), nullptr), DescriptorCheck::not_descriptor);
  EXPECT_EQ(check_descriptor(&d, sizeof(d), 0, nullptr), DescriptorCheck::not_descriptor);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(is_descriptor(&d, sizeof(d), rng()));
  // A descriptor made with token 0 matches nothing, not even token 0.
  const DirectDescriptor z = encode_descriptor(random_fields(rng), 0);
  EXPECT_FALSE(is_descriptor(&z, sizeof(z), 0));
  // The token is in the checksum too: the right token field with another
  // job's checksum is corrupt, not a descriptor.
  DirectDescriptor other = encode_descriptor(random_fields(rng), kToken ^ 2);
  other.token = kToken;
  EXPECT_EQ(check_descriptor(&other, sizeof(other), kToken, nullptr), DescriptorCheck::corrupt);
}

TEST(DirectDescriptor, OnlyTheExactSize) {
  std::mt19937_64 rng(5);
  const DirectDescriptor d = encode_descriptor(random_fields(rng), kToken);
  std::vector<unsigned char> longer(kDirectDescriptorBytes + 1);
  std::memcpy(longer.data(), &d, sizeof(d));
  EXPECT_FALSE(is_descriptor(longer.data(), longer.size(), kToken));
  EXPECT_FALSE(is_descriptor(&d, sizeof(d) - 1, kToken));
  EXPECT_FALSE(is_descriptor(&d, 0, kToken));
  EXPECT_FALSE(is_descriptor(nullptr, sizeof(d), kToken));
}

// A well-formed descriptor (valid checksum) of another version, or with a
// field version 3 does not allow, is an error, not user data.
TEST(DirectDescriptor, VersionAndFieldsAreChecked) {
  std::mt19937_64 rng(6);
  auto resealed = [](DirectDescriptor d) {
    d.checksum = descriptor_checksum(d, kToken);
    return d;
  };
  DirectDescriptor d = encode_descriptor(random_fields(rng), kToken);
  d.version = 1;
  EXPECT_EQ(check_descriptor(&d, sizeof(d), kToken, nullptr), DescriptorCheck::corrupt) << "the checksum covers it";
  d = resealed(d);
  EXPECT_EQ(check_descriptor(&d, sizeof(d), kToken, nullptr), DescriptorCheck::unsupported_version);

  DirectFields plain = random_fields(rng);
  plain.event_sequence = 0;
  std::memset(plain.event, 0, sizeof(plain.event));
  const DirectDescriptor good = encode_descriptor(plain, kToken);
  ASSERT_EQ(good.flags, 0u);
  DirectDescriptor bad = good;
  bad.flags = 4;  // no such flag
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.flags = kDescriptorOrderedByEvent;  // ordered, but no record to wait for
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.event_sequence = 5;  // a record without the flag
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.event[17] = 1;  // an event without the flag
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.flags = kDescriptorOrderedByEvent;
  bad.event_sequence = 5;
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::descriptor);
  bad = good;
  bad.flags = kDescriptorOrderedByEvent | kDescriptorInChunks;  // one or the other
  bad.event_sequence = 5;
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.reserved[0] = 9;
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.bytes = 0;
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.slot.ticket.generation = 0;
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
  bad = good;
  bad.slot.table.pid = 0;
  bad = resealed(bad);
  EXPECT_EQ(check_descriptor(&bad, sizeof(bad), kToken, nullptr), DescriptorCheck::corrupt);
}

// In chunks: the pieces must cover the bytes, none empty, at most
// kDescriptorMaxChunks, their notes within the table's, no record number.
TEST(DirectDescriptor, ChunksAreChecked) {
  std::mt19937_64 rng(8);
  DirectFields f = random_fields(rng);
  f.event_sequence = 0;
  std::memset(f.event, 0, sizeof(f.event));
  f.bytes = 1000;
  f.chunks = 4;
  f.chunk_bytes = 256;  // 256 * 3 < 1000 <= 256 * 4
  f.first_note = 10;
  const DirectDescriptor good = encode_descriptor(f, kToken);
  ASSERT_EQ(good.flags, kDescriptorInChunks);
  DirectFields out;
  ASSERT_EQ(check_descriptor(&good, sizeof(good), kToken, &out), DescriptorCheck::descriptor);
  EXPECT_TRUE(same(f, out));
  auto with = [&](uint32_t chunks, uint64_t chunk_bytes, uint32_t first_note) {
    DirectDescriptor d = good;
    const ChunkWords w{chunks, first_note, chunk_bytes};
    std::memcpy(d.event, &w, sizeof w);
    d.checksum = descriptor_checksum(d, kToken);
    return check_descriptor(&d, sizeof(d), kToken, nullptr);
  };
  EXPECT_EQ(with(4, 256, 10), DescriptorCheck::descriptor);
  EXPECT_EQ(with(4, 249, 10), DescriptorCheck::corrupt) << "4 x 249 < 1000: the pieces do not cover the bytes";
  EXPECT_EQ(with(5, 249, 10), DescriptorCheck::descriptor);
  EXPECT_EQ(with(5, 256, 10), DescriptorCheck::corrupt) << "the fifth piece would be empty";
  EXPECT_EQ(with(1, 1000, 10), DescriptorCheck::descriptor);
  EXPECT_EQ(with(0, 1000, 10), DescriptorCheck::corrupt);
  EXPECT_EQ(with(kDescriptorMaxChunks + 1, 112, 10), DescriptorCheck::corrupt);
  EXPECT_EQ(with(4, 0, 10), DescriptorCheck::corrupt);
  EXPECT_EQ(with(4, 256, strata::slots::kMaxNotes - 4), DescriptorCheck::descriptor);
  EXPECT_EQ(with(4, 256, strata::slots::kMaxNotes - 3), DescriptorCheck::corrupt) << "notes past the table's";
  EXPECT_EQ(with(4, uint64_t{1} << 62, 10), DescriptorCheck::corrupt);
  DirectDescriptor d = good;
  d.event[40] = 1;  // past the chunk words
  d.checksum = descriptor_checksum(d, kToken);
  EXPECT_EQ(check_descriptor(&d, sizeof(d), kToken, nullptr), DescriptorCheck::corrupt);
  d = good;
  d.event_sequence = 3;
  d.checksum = descriptor_checksum(d, kToken);
  EXPECT_EQ(check_descriptor(&d, sizeof(d), kToken, nullptr), DescriptorCheck::corrupt);
}

// User data of the descriptor's size: random bytes, zeros, and random bytes
// that happen to start with the magic and the token.
TEST(DirectDescriptor, UserDataIsNotADescriptor) {
  std::mt19937_64 rng(7);
  unsigned char bytes[kDirectDescriptorBytes] = {};
  EXPECT_EQ(check_descriptor(bytes, sizeof(bytes), kToken, nullptr), DescriptorCheck::not_descriptor);
  for (int i = 0; i < 100000; ++i) {
    for (size_t k = 0; k < sizeof(bytes); k += 8) {
      const uint64_t v = rng();
      std::memcpy(bytes + k, &v, 8);
    }
    ASSERT_EQ(check_descriptor(bytes, sizeof(bytes), kToken, nullptr), DescriptorCheck::not_descriptor);
    if (i % 10 == 0) {
      const uint64_t head[2] = {strata::interposer::kDirectDescriptorMagic, kToken};
      std::memcpy(bytes, head, sizeof(head));
      ASSERT_EQ(check_descriptor(bytes, sizeof(bytes), kToken, nullptr), DescriptorCheck::corrupt);
    }
  }
}

}  // namespace
