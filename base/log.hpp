// Levelled logging with a subsystem mask. It never calls MPI and never
// allocates: a line is formatted into a stack buffer and written with one
// write(2). The `host:pid:rank` prefix is cached; set_rank() refreshes it.
#pragma once

#include <strata/export.h>

#include <atomic>
#include <cstdint>

namespace strata::log {

enum class Level : int { off = 0, error, warn, info, debug, trace };

// Subsystems, for STRATA_LOG_SUBSYS.
enum Subsys : uint32_t {
  kBase = 1u << 0,
  kLayout = 1u << 1,
  kTypes = 1u << 2,
  kModel = 1u << 3,
  kP2p = 1u << 4,
  kShim = 1u << 5,
  kColl = 1u << 6,
  kTopo = 1u << 7,
  kFault = 1u << 8,
  kDevice = 1u << 9,
  kApp = 1u << 10,
  kAll = 0xffffffffu,
};

// Exported (STRATA_API) so that Strata::kokkos, a static library over
// libstrata.so, logs through the same logger.
extern STRATA_API std::atomic<int> g_level;
extern STRATA_API std::atomic<uint32_t> g_mask;

__attribute__((always_inline)) inline bool enabled(Level level, uint32_t subsys) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed) &&
         (subsys & g_mask.load(std::memory_order_relaxed)) != 0;
}

STRATA_API void emit(Level level, uint32_t subsys, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// Reads STRATA_LOG and STRATA_LOG_SUBSYS (called by config::load).
void configure();

// Sets the rank shown in the prefix (-1: unknown). Call before threads log.
void set_rank(int rank);

const char* subsys_name(uint32_t subsys);

}  // namespace strata::log

#define STRATA_LOG(level, subsys, ...)                                                      \
  do {                                                                                      \
    if (::strata::log::enabled(::strata::log::Level::level, ::strata::log::subsys)) {       \
      ::strata::log::emit(::strata::log::Level::level, ::strata::log::subsys, __VA_ARGS__); \
    }                                                                                       \
  } while (0)

// Logs the first time this line is reached, then never again.
#define STRATA_LOG_ONCE(level, subsys, ...)                                                 \
  do {                                                                                      \
    static std::atomic<bool> strata_log_once_done_{false};                                  \
    if (::strata::log::enabled(::strata::log::Level::level, ::strata::log::subsys) &&       \
        !strata_log_once_done_.exchange(true)) {                                            \
      ::strata::log::emit(::strata::log::Level::level, ::strata::log::subsys, __VA_ARGS__); \
    }                                                                                       \
  } while (0)
