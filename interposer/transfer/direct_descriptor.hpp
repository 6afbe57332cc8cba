// The descriptor a sender puts in the MPI message in place of a large
// message's bytes when a node-local receiver pulls them itself (the
// device-direct transport; the completion protocol is
// portability/host/shared_slots.hpp, docs/device.md "Completion slots").
// It says how many bytes the message has, where they are when it is sent,
// which slot of the sender's table to claim for them, and, where the sender
// did not wait for its pack to finish (version 2), the sender's IPC event
// whose record follows the pack: the receiver orders its copies after it;
// or, for a large message packed in chunks (version 3), how the chunks are
// cut and which notes of the sender's slot table hold their IPC events: the
// receiver reads chunk k once chunk k's event has been reached.
//
// Fixed size, trivially copyable, no pointers. The receiver of a message of
// exactly kDirectDescriptorBytes tells a descriptor from user data of the
// same size by a magic, the job's token (random, agreed by every rank; a
// program cannot produce it by chance) and a checksum keyed by the token:
// FNV-1a over 8-byte words, then a bijective finaliser, so that any change
// confined to one word (every single-byte flip) changes the checksum.
#pragma once

#include "portability/host/shared_slots.hpp"

#include <cstddef>
#include <cstdint>

namespace strata::interposer {

// 256: Open MPI's shared-memory transport sends a message of at most 256
// bytes inline (btl_vader_max_inline_send); a larger one makes a blocking
// send wait for the receiver to poll.
constexpr size_t kDirectDescriptorBytes = 256;
constexpr uint64_t kDirectDescriptorMagic = 0x3143534454525453ull;  // "STRTDSC1"
constexpr uint32_t kDirectDescriptorVersion = 3;
// flags: the bytes are ready only once the event's record `event_sequence`
// has completed on the sender's GPU.
constexpr uint32_t kDescriptorOrderedByEvent = 1u;
// flags: chunk k of the bytes is ready once the latest record of the IPC
// event in note first_note + k of the sender's table has completed; the
// event field then holds (chunks, first_note, chunk_bytes).
constexpr uint32_t kDescriptorInChunks = 2u;
constexpr uint32_t kDescriptorMaxChunks = 8;
constexpr size_t kDescriptorEventBytes = 64;  // an IPC event handle

// What a descriptor says.
struct DirectFields {
  uint64_t bytes = 0;          // the message's packed bytes (> 0)
  slots::SlotRef slot{};       // the sender's table and the message's slot
  slots::Location location{};  // where the bytes are when sent (the slot may later say otherwise)
  // The pack still running when the descriptor left (event_sequence > 0):
  // the sender's IPC event and the number of its record that follows it.
  unsigned char event[kDescriptorEventBytes] = {};
  uint64_t event_sequence = 0;
  bool ordered() const { return event_sequence != 0; }
  // Or packed in chunks (chunks > 0; not with an event): `chunks` pieces of
  // chunk_bytes packed bytes (the last may be shorter), piece k's event in
  // note first_note + k of the sender's slot table.
  uint32_t chunks = 0;
  uint32_t first_note = 0;
  uint64_t chunk_bytes = 0;
  bool in_chunks() const { return chunks != 0; }
};

// The bytes on the wire (one node, one architecture: native byte order).
struct DirectDescriptor {
  uint64_t magic;
  uint64_t token;
  uint32_t version;
  uint32_t flags;  // kDescriptorOrderedByEvent, kDescriptorInChunks or zero
  uint64_t bytes;
  slots::SlotRef slot;
  slots::Location location;
  unsigned char event[kDescriptorEventBytes];  // ordered: the handle; in chunks: ChunkWords; zero without
  uint64_t event_sequence;                     // ordered: > 0; zero otherwise
  uint64_t reserved[1];                        // zero in version 3
  uint64_t checksum;                           // over every byte before it, keyed by the token
};

// In chunks: the event field's first 16 bytes (the rest zero).
struct ChunkWords {
  uint32_t chunks;
  uint32_t first_note;
  uint64_t chunk_bytes;
};

enum class DescriptorCheck : int {
  descriptor,           // a valid descriptor of this job and version
  not_descriptor,       // user data (wrong size, magic or token): deliver it as it is
  corrupt,              // this job's magic and token, but a wrong checksum or field: an error, not data
  unsupported_version,  // a well-formed descriptor of another version: an error, not data
};
const char* to_string(DescriptorCheck check) noexcept;

// The descriptor of `fields` for the job's `token` (nonzero).
DirectDescriptor encode_descriptor(const DirectFields& fields, uint64_t token) noexcept;

// Classifies `n` received bytes (any alignment); writes *fields (may be
// null) only for a valid descriptor. A zero token matches nothing.
DescriptorCheck check_descriptor(const void* bytes, size_t n, uint64_t token, DirectFields* fields) noexcept;

inline bool is_descriptor(const void* bytes, size_t n, uint64_t token) noexcept {
  return check_descriptor(bytes, n, token, nullptr) == DescriptorCheck::descriptor;
}

// The checksum of a descriptor's bytes before its checksum field.
uint64_t descriptor_checksum(const DirectDescriptor& descriptor, uint64_t token) noexcept;

}  // namespace strata::interposer
