/* The one non-MPI symbol libstrata_preload.so exports: what the interposer
 * did so far. Programs that do not link Strata can find it at run time with
 * dlsym(RTLD_DEFAULT, "strata_preload_counters"); null means no interposer. */
#ifndef STRATA_PRELOAD_H
#define STRATA_PRELOAD_H

#include <stdint.h> /* NOLINT(modernize-deprecated-headers): a C header */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_preload_counters_t {
  uint64_t version; /* 5 */
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
} strata_preload_counters_t;

/* A snapshot, refreshed by each call. */
const strata_preload_counters_t* strata_preload_counters(void);

#ifdef __cplusplus
}
#endif

#endif
