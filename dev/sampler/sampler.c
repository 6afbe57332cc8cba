// A sampling profiler with call stacks for machines without perf (the lent
// GPU machine has none): preload it into one rank or all, and
// dev/sampler/symbolize.py turns its output into self, inclusive and
// caller profiles and folded stacks.
//
//   mpirun -np 2 -x LD_PRELOAD=/path/libsampler.so:libstrata_preload.so
//          -x SAMPLER_OUT=/tmp/prof [-x SAMPLER_RANK=0] [-x SAMPLER_US=100] prog
//   python3 dev/sampler/symbolize.py /tmp/prof.0 [dir of libstrata_preload.so]
//
// Build: cc -O2 -shared -fPIC -o libsampler.so dev/sampler/sampler.c -lrt -ldl
//
// A wall-clock timer (CLOCK_MONOTONIC) signals the main thread every
// SAMPLER_US microseconds (default 200); the handler records the stack
// with glibc's backtrace() (the unwinder reads .eh_frame, so no frame
// pointers are needed). PREFIX.RANK.pcs holds kDepth 64-bit frames per
// sample, innermost first (0-padded); PREFIX.RANK.maps0 the process's
// mappings at MPI_Finalize (Open MPI unloads its components afterwards),
// PREFIX.RANK.maps those at exit. Cost: a few microseconds per sample, so
// at 100 µs the program runs some 5-30% slower; compare shares, not times.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kDepth = 24, kCapacity = 1 << 20 };

static uint64_t* g_records;
static volatile long g_count;
static volatile sig_atomic_t g_busy;
static char g_prefix[512];
static int g_on;
static timer_t g_timer;

static void on_sample(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  (void)context;
  if (g_busy) return;
  g_busy = 1;
  const long i = g_count;
  if (i < kCapacity) {
    void* frames[kDepth + 2];
    const int n = backtrace(frames, kDepth + 2);
    uint64_t* r = g_records + (size_t)i * kDepth;
    memset(r, 0, kDepth * sizeof(uint64_t));
    // frames[0] is this handler, frames[1] the signal trampoline.
    for (int j = 2; j < n; ++j) r[j - 2] = (uint64_t)(uintptr_t)frames[j];
    g_count = i + 1;
  }
  g_busy = 0;
}

static void write_maps(const char* suffix) {
  char path[600];
  snprintf(path, sizeof path, "%s.%s", g_prefix, suffix);
  FILE* in = fopen("/proc/self/maps", "r");
  FILE* out = fopen(path, "w");
  if (in && out) {
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, k, out);
  }
  if (in) fclose(in);
  if (out) fclose(out);
}

__attribute__((constructor)) static void start(void) {
  const char* prefix = getenv("SAMPLER_OUT");
  if (!prefix) return;
  const char* want = getenv("SAMPLER_RANK");
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank) rank = getenv("PMI_RANK");
  if (want && rank && strcmp(want, rank) != 0) return;
  snprintf(g_prefix, sizeof g_prefix, "%s.%s", prefix, rank ? rank : "0");
  g_records = calloc((size_t)kCapacity * kDepth, sizeof(uint64_t));
  if (!g_records) return;
  void* warm[4];
  backtrace(warm, 4);  // loads the unwinder now, not inside the handler
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  const long us = getenv("SAMPLER_US") ? atol(getenv("SAMPLER_US")) : 200;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGPROF;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(CLOCK_MONOTONIC, &ev, &g_timer) != 0) return;
  const struct itimerspec every = {{us / 1000000, (us % 1000000) * 1000}, {us / 1000000, (us % 1000000) * 1000}};
  timer_settime(g_timer, 0, &every, NULL);
  g_on = 1;
}

__attribute__((destructor)) static void stop(void) {
  if (!g_on) return;
  timer_delete(g_timer);
  g_on = 0;
  char path[600];
  snprintf(path, sizeof path, "%s.pcs", g_prefix);
  FILE* out = fopen(path, "w");
  if (out) {
    fwrite(g_records, kDepth * sizeof(uint64_t), (size_t)g_count, out);
    fclose(out);
  }
  write_maps("maps");
}

// The mappings while Open MPI's components are still loaded.
int MPI_Finalize(void) {
  if (g_on) write_maps("maps0");
  int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
  return next ? next() : 0;
}
