/* Symbol visibility for the public API. Everything else is hidden. */
#ifndef STRATA_EXPORT_H
#define STRATA_EXPORT_H
#define STRATA_API __attribute__((visibility("default")))
#endif
