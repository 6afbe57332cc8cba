#include "interposer/transfer/direct_descriptor.hpp"

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace strata::interposer {

static_assert(sizeof(ChunkWords) == 16 && sizeof(ChunkWords) <= kDescriptorEventBytes,
              "chunk words fit the event field");
static_assert(sizeof(DirectDescriptor) == kDirectDescriptorBytes, "the descriptor's size is part of the protocol");
static_assert(std::is_trivially_copyable_v<DirectDescriptor> && std::is_standard_layout_v<DirectDescriptor>,
              "a descriptor is plain bytes");
static_assert(offsetof(DirectDescriptor, bytes) == 24 && offsetof(DirectDescriptor, slot) == 32 &&
                  offsetof(DirectDescriptor, location) == 64 && offsetof(DirectDescriptor, event) == 168 &&
                  offsetof(DirectDescriptor, event_sequence) == 232 && offsetof(DirectDescriptor, reserved) == 240 &&
                  offsetof(DirectDescriptor, checksum) == kDirectDescriptorBytes - sizeof(uint64_t),
              "no padding: every byte is covered by the checksum or is the checksum");

namespace {

constexpr size_t kCheckedWords = offsetof(DirectDescriptor, checksum) / sizeof(uint64_t);

// Each step maps h bijectively for a given word, and the word bijectively
// for a given h; the finaliser is bijective: a change in one word always
// shows.
uint64_t checksum_of(const unsigned char* bytes, uint64_t token) {
  uint64_t h = 0xcbf29ce484222325ull ^ token;
  for (size_t i = 0; i < kCheckedWords; ++i) {
    uint64_t w = 0;
    std::memcpy(&w, bytes + i * sizeof(uint64_t), sizeof(w));
    h = (h ^ w) * 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

bool zero_from(const unsigned char* bytes, size_t from, size_t n) {
  for (size_t i = from; i < n; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

ChunkWords chunk_words(const DirectDescriptor& d) {
  ChunkWords w;
  std::memcpy(&w, d.event, sizeof w);
  return w;
}

// In chunks: 1..kDescriptorMaxChunks pieces that cover the bytes, none
// empty, their notes within the table's.
bool chunks_sane(const DirectDescriptor& d) {
  const ChunkWords w = chunk_words(d);
  if (w.chunks == 0 || w.chunks > kDescriptorMaxChunks || w.chunk_bytes == 0 ||
      w.first_note > slots::kMaxNotes - w.chunks || d.event_sequence != 0) {
    return false;
  }
  const uint64_t before_last = (w.chunks - 1) * w.chunk_bytes;  // no overflow: chunk_bytes * 8 < 2^64 below
  return w.chunk_bytes <= (uint64_t{1} << 56) && before_last < d.bytes && d.bytes <= before_last + w.chunk_bytes &&
         zero_from(d.event, sizeof(ChunkWords), sizeof d.event);
}

bool fields_sane(const DirectDescriptor& d) {
  for (uint64_t r : d.reserved) {
    if (r != 0) return false;
  }
  if (d.flags == kDescriptorOrderedByEvent) {
    if (d.event_sequence == 0) return false;
  } else if (d.flags == kDescriptorInChunks) {
    if (!chunks_sane(d)) return false;
  } else if (d.flags != 0 || d.event_sequence != 0 || !zero_from(d.event, 0, sizeof d.event)) {
    return false;  // no event: its fields are zero
  }
  const slots::SlotRef& s = d.slot;
  return d.bytes > 0 && s.table.pid > 0 && s.table.fd >= 0 && s.table.id != 0 && s.ticket.reserved == 0 &&
         s.ticket.generation != 0;
}

}  // namespace

const char* to_string(DescriptorCheck check) noexcept {
  switch (check) {
    case DescriptorCheck::descriptor: return "descriptor";
    case DescriptorCheck::not_descriptor: return "not a descriptor";
    case DescriptorCheck::corrupt: return "corrupt descriptor";
    case DescriptorCheck::unsupported_version: return "descriptor of an unsupported version";
  }
  return "unknown";
}

uint64_t descriptor_checksum(const DirectDescriptor& descriptor, uint64_t token) noexcept {
  return checksum_of(reinterpret_cast<const unsigned char*>(&descriptor), token);
}

DirectDescriptor encode_descriptor(const DirectFields& fields, uint64_t token) noexcept {
  DirectDescriptor d;
  std::memset(&d, 0, sizeof(d));
  d.magic = kDirectDescriptorMagic;
  d.token = token;
  d.version = kDirectDescriptorVersion;
  d.bytes = fields.bytes;
  d.slot = fields.slot;
  d.location = fields.location;
  if (fields.ordered()) {
    d.flags = kDescriptorOrderedByEvent;
    std::memcpy(d.event, fields.event, sizeof d.event);
    d.event_sequence = fields.event_sequence;
  } else if (fields.in_chunks()) {
    d.flags = kDescriptorInChunks;
    const ChunkWords w{fields.chunks, fields.first_note, fields.chunk_bytes};
    std::memcpy(d.event, &w, sizeof w);
  }
  d.checksum = descriptor_checksum(d, token);
  return d;
}

DescriptorCheck check_descriptor(const void* bytes, size_t n, uint64_t token, DirectFields* fields) noexcept {
  if (bytes == nullptr || n != kDirectDescriptorBytes || token == 0) return DescriptorCheck::not_descriptor;
  DirectDescriptor d;
  std::memcpy(&d, bytes, sizeof(d));
  if (d.magic != kDirectDescriptorMagic || d.token != token) return DescriptorCheck::not_descriptor;
  if (d.checksum != descriptor_checksum(d, token)) return DescriptorCheck::corrupt;
  if (d.version != kDirectDescriptorVersion) return DescriptorCheck::unsupported_version;
  if (!fields_sane(d)) return DescriptorCheck::corrupt;
  if (fields != nullptr) {
    *fields = DirectFields{};
    fields->bytes = d.bytes;
    fields->slot = d.slot;
    fields->location = d.location;
    if (d.flags == kDescriptorInChunks) {
      const ChunkWords w = chunk_words(d);
      fields->chunks = w.chunks;
      fields->first_note = w.first_note;
      fields->chunk_bytes = w.chunk_bytes;
    } else {
      std::memcpy(fields->event, d.event, sizeof d.event);
      fields->event_sequence = d.event_sequence;
    }
  }
  return DescriptorCheck::descriptor;
}

}  // namespace strata::interposer
