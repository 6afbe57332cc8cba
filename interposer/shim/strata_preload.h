/* The non-MPI symbols libstrata_preload.so exports: what the interposer did
 * so far, and (for tests) the device stand-in. Programs that do not link
 * Strata can find them at run time with dlsym(RTLD_DEFAULT, "...")
 * ("strata_preload_counters": null means no interposer). */
#ifndef STRATA_PRELOAD_H
#define STRATA_PRELOAD_H

#include <stddef.h> /* NOLINT(modernize-deprecated-headers): a C header */
#include <stdint.h> /* NOLINT(modernize-deprecated-headers): a C header */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_preload_counters_t {
  uint64_t version; /* 14 */
  uint64_t calls_intercepted;
  uint64_t calls_passed_through; /* forwarded untouched because STRATA_DISABLE=1 */
  uint64_t packs_by_strata;      /* MPI_Pack/MPI_Unpack done by Strata's engine */
  uint64_t sends_packed;         /* send sides packed by Strata */
  uint64_t recvs_unpacked;       /* receive sides unpacked by Strata */
  uint64_t requests_completed;   /* Strata requests finished by a completion call */
  uint64_t types_reducible;      /* committed types with a canonical strided form */
  uint64_t types_irreducible;
  uint64_t requests_started;      /* (version 2) Strata requests started by Isend/Irecv */
  uint64_t spans_copied;          /* (version 2) device data moved through a host copy of its span */
  uint64_t collectives_by_strata; /* (version 3) collectives run by Strata's algorithms (NCCL or host) */
  uint64_t collectives_staged;    /* (version 3) collectives on GPU buffers run by the library on host copies */
  uint64_t sends_deferred;        /* (version 4) MPI_Isend packed and posted at the caller's next MPI call */
  uint64_t deferred_flushes;      /* (version 4) flushes that packed deferred device sends together */
  uint64_t parts_by_copy_engine;  /* (version 5) strided device parts packed or unpacked by the copy engine */
  uint64_t collective_decisions;  /* (version 6) routing decisions taken; equal on every rank of a communicator */
  uint64_t sends_direct;          /* (version 7) device sends a node peer pulled from this GPU through IPC */
  uint64_t recvs_direct;          /* (version 7) receives pulled from a node peer's GPU through IPC */
  uint64_t direct_rehomed;        /* (version 7) direct sends moved to a bounce because the receiver was late */
  uint64_t flush_pack_ns;         /* (version 8) ns packing deferred device sends (kernels and the wait) */
  uint64_t direct_pull_ns;        /* (version 8) ns in device-direct receives: claim, map, pull (queued or waited) */
  uint64_t unpack_wait_ns;        /* (version 8) ns waiting once for the queued unpacks and pulls of a completion */
  uint64_t receiver_wait_ns;      /* (version 8) ns device-direct sends waited for their receiver (or a bounce) */
  uint64_t pinned_allocated;      /* (version 9) pinned staging buffers allocated (milliseconds each for megabytes) */
  uint64_t staged_unpinned;       /* (version 9) device messages of 1 MiB or more staged in plain host memory (no
                                     pinned buffer was kept for them) */
  uint64_t deferred_pack_groups;  /* (version 10) packed groups of deferred device sends: a flush packs its
                                     messages in groups of about 1 MiB, each posted before the next is packed */
  uint64_t recvs_finished_early;  /* (version 10) receives into device memory (1 MiB or more) that an MPI_Waitall
                                     waiting for several finished as each request completed */
  uint64_t sends_ahead_of_pack;   /* (version 11) device-direct sends whose descriptor left before their pack
                                     finished (the receiver waited for it on its GPU) */
  uint64_t reads_after_event;     /* (version 11) device-direct receives that waited for the sender's pack on the
                                     GPU (an IPC event), not on the sender's host */
  uint64_t pack_waits_queued;     /* (version 11) GPU waits queued for senders' packs (records not yet waited for) */
  uint64_t kernel_copies;         /* (version 11) contiguous device-to-device pulls copied by the kernels (a batch
                                     of STRATA_DEVICE_KERNEL_COPIES or more) */
  uint64_t staging_evicted;       /* (version 12) kept staging buffers a pool freed to make room for one returned
                                     later (its STRATA_*_POOL_BYTES reached; the longest-kept go first) */
  uint64_t sends_in_chunks;       /* (version 13) device-direct sends packed in chunks, the descriptor sent ahead:
                                     the receiver unpacks each chunk as soon as it is packed */
  uint64_t recvs_in_chunks;       /* (version 13) device-direct receives that unpacked the sender's chunks as
                                     each was packed (the GPU waited for each chunk's IPC event) */
  uint64_t contiguous_by_kernels; /* (version 14) small contiguous device parts of host-staged messages moved by
                                     a flush's one kernel launch, not a copy-engine call each */
} strata_preload_counters_t;

/* A snapshot, refreshed by each call. */
const strata_preload_counters_t* strata_preload_counters(void);

/* The device stand-in of a build without CUDA or HIP (STRATA_FAKE_DEVICE=N,
 * docs/testing.md), for test programs that allocate "device" memory without
 * a GPU runtime of their own. The host cannot touch that memory: move bytes
 * in and out with strata_fake_device_memcpy. */
/* The number of stand-in devices; 0 when the stand-in is off (or the build
 * has a real GPU backend). */
int strata_fake_device_count(void);
/* Makes `device` (0..count-1) current for this thread, as cudaSetDevice
 * does; 0 on success. */
int strata_fake_device_select(int device);
/* Device memory of the current device; null when the stand-in is off or
 * the allocation fails. */
void* strata_fake_device_malloc(size_t bytes);
void strata_fake_device_free(void* ptr);
/* Page-locked host memory (cudaMallocHost's stand-in): the host reads and
 * writes it; the pointer cache classifies it as pinned host memory. */
void* strata_fake_device_malloc_host(size_t bytes);
void strata_fake_device_free_host(void* ptr);
/* Copies `bytes` in either direction (device or host on each side) and
 * waits; 0 on success. */
int strata_fake_device_memcpy(void* dst, const void* src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
