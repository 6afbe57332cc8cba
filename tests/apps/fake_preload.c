/* A stand-in for libstrata_preload.so in the tests of strata-halo-compare:
 * an empty shared library that exports only the symbol by which strata-halo3d
 * recognises the interposer. It intercepts nothing. */
#include <stddef.h>

__attribute__((visibility("default"))) const void* strata_preload_counters(void) { return NULL; }
