#include "fault/recorder/signals.hpp"

#include "base/config.hpp"
#include "fault/recorder/dump.hpp"
#include "fault/recorder/line_writer.hpp"
#include "fault/recorder/state.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace strata::fault {
namespace {

config::BoolParam g_signals{"STRATA_FAULT_SIGNALS", true,
                            "With STRATA_FAULT=1: write the flight record when the process gets SIGSEGV, SIGBUS, "
                            "SIGFPE, SIGILL, SIGABRT or SIGTERM, then pass the signal on"};

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];
std::atomic<bool> g_in_handler{false};

void say(const char* s) { (void)!::write(STDERR_FILENO, s, std::strlen(s)); }

void on_fatal(int sig, siginfo_t*, void*) {
  if (!g_in_handler.exchange(true)) {
    char reason[16] = "signal:";
    const size_t n = LineWriter::format_int(reason + 7, sig);
    reason[7 + n] = '\0';
    int rc = write_dump(reason);
    // Another thread is writing one (the coordinator asked): let it finish.
    for (int i = 0; rc == EBUSY && i < 200; ++i) {
      timespec ts{0, 10000000};
      nanosleep(&ts, nullptr);
      rc = process().dumping.load() ? EBUSY : 0;
    }
    say("strata: fatal signal; flight record in ");
    say(process().dump_path);
    say("\n");
  }
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  }
  raise(sig);  // delivered to the previous handler once we return
}

}  // namespace

void install_signal_handlers() {
  if (!g_signals.get()) return;
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

}  // namespace strata::fault
