// Start-up and shutdown of fault detection, the STRATA_FAULT_* settings,
// and the public API (strata/fault.hpp).
#include <strata/fault.hpp>

#include "base/config.hpp"
#include "base/log.hpp"
#include "fault/agent/agent.hpp"
#include "fault/clock.hpp"
#include "fault/hooks.hpp"
#include "fault/inject/inject.hpp"
#include "fault/oob/socket.hpp"
#include "fault/recorder/dump.hpp"
#include "fault/recorder/signals.hpp"
#include "fault/recorder/state.hpp"
#include "fault/settings.hpp"
#include "mpi/helpers.hpp"

#include <mpi.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace strata::fault {

using mpi::real;

namespace {

config::BoolParam g_enable{"STRATA_FAULT", false,
                           "Fault detection: record every communication (flight recorder), watch for hangs and "
                           "slow ranks or links, act by STRATA_FAULT_ACTION (docs/fault.md)"};
config::StringParam g_dir{"STRATA_FAULT_DIR", "strata-fault",
                          "Folder of the flight records (<job>.rank<R>.jsonl), diagnoses and exclude files"};
config::IntParam g_ring{"STRATA_FAULT_RING", 4096,
                        "Flight recorder: records kept per rank (rounded up to a power of two)", 16, int64_t{1} << 24};
config::IntParam g_tick{"STRATA_FAULT_TICK_MS", 100,
                        "Watchdog period: heartbeats to the coordinator, ring scans, detector runs", 5, 10000};
config::IntParam g_hang_floor{"STRATA_FAULT_HANG_FLOOR_MS", 3000,
                              "Hang threshold floor: an operation is suspect after max(factor x its typical "
                              "duration, this)",
                              10, int64_t{1} << 31};
config::IntParam g_hang_factor{"STRATA_FAULT_HANG_FACTOR", 10,
                               "Hang threshold: this many times the operation's learned typical duration (median of "
                               "its kind and size class), at least the floor",
                               1, 1000000};
config::IntParam g_heartbeat_timeout{"STRATA_FAULT_HEARTBEAT_TIMEOUT_MS", 5000,
                                     "A rank whose watchdog says nothing for this long is reported unresponsive", 100,
                                     int64_t{1} << 31};
config::IntParam g_probe{"STRATA_FAULT_PROBE_MS", 1000,
                         "Period of the out-of-band probes of rank pairs the traffic does not cover; 0: no probes", 0,
                         int64_t{1} << 31};
config::IntParam g_probe_bytes{"STRATA_FAULT_PROBE_BYTES", 1024, "Payload of a probe", 0, 1 << 20, true};
config::IntParam g_final_timeout{"STRATA_FAULT_FINAL_TIMEOUT_MS", 5000,
                                 "At MPI_Finalize: how long the ranks wait for each other's last samples", 0,
                                 int64_t{1} << 31};
config::IntParam g_slow_min{"STRATA_FAULT_SLOW_MIN_US", 10000,
                            "Fail-slow: the largest lateness or extra link latency that is tolerated (microseconds); "
                            "twice this is reported after 4 samples",
                            0, int64_t{1} << 40};
config::IntParam g_slow_rel{"STRATA_FAULT_SLOW_REL_PCT", 50,
                            "Fail-slow: the largest tolerated shift, in percent of the typical value (the peers' "
                            "compute time between collectives, the link's reference latency); the larger of this and "
                            "STRATA_FAULT_SLOW_MIN_US applies",
                            0, 100000};
config::IntParam g_cusum_h{"STRATA_FAULT_CUSUM_H", 7,
                           "Fail-slow change-point test: CUSUM alarm threshold (scores are clipped at 4 with an "
                           "allowance of 2, so h=7 needs 4 consecutive late samples)",
                           1, 1000};
config::ChoiceParam<Action> g_action{
    "STRATA_FAULT_ACTION",
    Action::report,
    {{"report", Action::report}, {"abort", Action::abort}, {"exclude", Action::exclude}},
    "On a diagnosed fault: report (log, diagnosis file, every rank dumps, the job "
    "goes on); abort (the same, then every rank exits with STRATA_FAULT_EXIT_CODE); "
    "exclude (write <job>.exclude with the hosts and GPUs at fault, then abort)"};
config::IntParam g_exit_code{"STRATA_FAULT_EXIT_CODE", 75,
                             "Exit code of every rank when STRATA_FAULT_ACTION ends the job", 1, 255};
config::StringParam g_inject{"STRATA_FAULT_INJECT", "",
                             "Inject faults (tests, drills): rule;rule... with rules delay:rank=R,ms=D[,op=K][,after=N]"
                             ", stall:rank=R, hang:rank=R, kill:rank=R[,signal=S], slowlink:ranks=A-B,ms=D, "
                             "cutlink:ranks=A-B (docs/fault.md)"};
config::StringParam g_iface{"STRATA_FAULT_IFACE", "",
                            "Network interface of the out-of-band channel; empty: the first non-loopback IPv4 one "
                            "that is up (127.0.0.1 if none)"};
config::IntParam g_device_every{
    "STRATA_FAULT_DEVICE_EVERY", 1,
    "Device times of collectives on a GPU stream: a thread times a call (two events on "
    "its stream, 4-15 us of host time on an H200) when it is at least the N-th recorded "
    "one since the thread's last timed one and STRATA_FAULT_DEVICE_PERIOD_US has passed "
    "(at high call rates only every S-th collective on a stream is recorded, docs/fault.md); "
    "0: none",
    0, int64_t{1} << 20};
config::IntParam g_device_period{"STRATA_FAULT_DEVICE_PERIOD_US", 10000,
                                 "Least time between two device-timed collectives of a thread (0: no least time; "
                                 "with STRATA_FAULT_DEVICE_EVERY=1 every call is timed)",
                                 0, int64_t{1} << 32};
config::BoolParam g_dump_at_exit{"STRATA_FAULT_DUMP_AT_EXIT", true,
                                 "With STRATA_FAULT=1: every rank writes its flight record at MPI_Finalize (or exit)"};

ProcessState g_process;

std::mutex g_mutex;
std::unique_ptr<Agent> g_agent;
bool g_started = false;

// What each rank tells the others at start-up.
struct AddressWire {
  uint32_t ip;
  uint16_t port;
  uint16_t pad;
  int64_t pid;
  int64_t wall;  // time(), for the job id
  char host[64];
  char gpu[64];
};

Settings read_settings() {
  Settings s;
  s.tick_ns = g_tick.get() * 1000000;
  s.hang_floor_ns = g_hang_floor.get() * 1000000;
  s.hang_factor = static_cast<double>(g_hang_factor.get());
  s.heartbeat_timeout_ns = g_heartbeat_timeout.get() * 1000000;
  s.probe_period_ns = g_probe.get() * 1000000;
  s.probe_bytes = static_cast<uint32_t>(g_probe_bytes.get());
  s.final_timeout_ns = g_final_timeout.get() * 1000000;
  s.slow.min_shift_ns = static_cast<double>(g_slow_min.get()) * 1000;
  s.slow.rel_shift = static_cast<double>(g_slow_rel.get()) / 100;
  s.slow.cusum.h = static_cast<double>(g_cusum_h.get());
  s.action = g_action.get();
  s.exit_code = static_cast<int>(g_exit_code.get());
  s.dir = g_dir.get().empty() ? "." : g_dir.get();
  s.iface = g_iface.get();
  return s;
}

const char* visible_gpus() {
  for (const char* v : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}) {
    if (const char* text = std::getenv(v)) return text;
  }
  return "";
}

void make_dirs(const std::string& dir) {
  std::string path;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!path.empty()) ::mkdir(path.c_str(), 0755);
    }
    if (i < dir.size()) path += dir[i];
  }
}

void at_exit() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_started) return;
  hooks::g_on.store(false);
  if (g_agent) g_agent->stop(false);
  if (g_dump_at_exit.get()) write_dump("exit without MPI_Finalize");
  g_agent.reset();
  g_started = false;
}

// The address exchange (collective over MPI_COMM_WORLD): every rank's
// out-of-band endpoint, and the job id (rank 0's start time and pid).
// Returns the agent, not started yet; null when the channel cannot work.
std::unique_ptr<Agent> exchange_addresses(ProcessState& p, const Settings& settings) {
  oob::Endpoint me;
  Result<int> listener = oob::listen_any(&me);
  me.ip = oob::local_address(settings.iface);
  AddressWire mine{};
  mine.ip = me.ip;
  mine.port = listener ? me.port : 0;
  mine.pid = getpid();
  mine.wall = static_cast<int64_t>(std::time(nullptr));
  std::snprintf(mine.host, sizeof(mine.host), "%s", p.host);
  std::snprintf(mine.gpu, sizeof(mine.gpu), "%s", visible_gpus());
  std::vector<AddressWire> all(static_cast<size_t>(p.size));
  if (real().MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine), MPI_BYTE, MPI_COMM_WORLD) !=
      MPI_SUCCESS) {
    STRATA_LOG(warn, kFault, "address exchange failed: fault detection is off");
    if (listener) ::close(listener.value());
    return nullptr;
  }
  char when[32];
  const time_t t0 = static_cast<time_t>(all[0].wall);
  tm parts{};
  localtime_r(&t0, &parts);
  std::strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &parts);
  std::snprintf(p.job, sizeof(p.job), "%s-%lld", when, static_cast<long long>(all[0].pid));
  std::vector<PeerAddress> peers(all.size());
  bool reachable = true;
  for (size_t r = 0; r < all.size(); ++r) {
    peers[r].endpoint.ip = all[r].ip;
    peers[r].endpoint.port = all[r].port;
    peers[r].pid = all[r].pid;
    all[r].host[sizeof(all[r].host) - 1] = '\0';
    all[r].gpu[sizeof(all[r].gpu) - 1] = '\0';
    peers[r].host = all[r].host;
    peers[r].gpu = all[r].gpu;
    if (all[r].port == 0) reachable = false;
  }
  if (!reachable) {
    STRATA_LOG(warn, kFault, "a rank has no out-of-band socket: detection is off, the flight recorder stays on");
    if (listener) ::close(listener.value());
    return nullptr;
  }
  return std::make_unique<Agent>(settings, p.rank, p.size, std::move(peers), listener.value());
}

}  // namespace

ProcessState& process() { return g_process; }

Status start(bool force) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_started) return Status::ok;
    if (!mpi::running()) return Status::invalid_argument;
    config::load();
    const bool record = force || g_enable.get();
    std::vector<InjectRule> rules;
    if (!g_inject.get().empty()) {
      std::string error;
      if (parse_injection(g_inject.get(), &rules, &error) != Status::ok) {
        STRATA_LOG(warn, kFault, "STRATA_FAULT_INJECT ignored: %s", error.c_str());
        rules.clear();
      }
    }
    if (!record && rules.empty()) return Status::ok;

    ProcessState& p = g_process;
    real().MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
    real().MPI_Comm_size(MPI_COMM_WORLD, &p.size);
    calibrate_ticks();
    p.start_ns = now_ns();
    if (gethostname(p.host, sizeof(p.host) - 1) != 0) std::snprintf(p.host, sizeof(p.host), "unknown");
    p.comms.open(p.rank, p.size);
    std::snprintf(p.inject_text, sizeof(p.inject_text), "%s", g_inject.get().c_str());
    // Everything the agent reads is in place before its thread starts.
    inject::install(std::move(rules), p.rank, p.start_ns);
    const Settings settings = read_settings();
    if (record) {
      p.recording = true;
      p.device_every.store(static_cast<uint64_t>(g_device_every.get()), std::memory_order_relaxed);
      p.device_period_ticks.store(ns_to_ticks(1000 * g_device_period.get()), std::memory_order_relaxed);
      if (!p.ring) {
        // Below MPI_THREAD_MULTIPLE one thread calls MPI at a time: the
        // ring's single-writer mode (no atomic read-modify-write).
        int level = MPI_THREAD_SINGLE;
        if (real().MPI_Query_thread(&level) != MPI_SUCCESS) level = MPI_THREAD_MULTIPLE;
        p.ring = std::make_unique<Ring>(static_cast<size_t>(g_ring.get()), level == MPI_THREAD_MULTIPLE);
        p.sent_to = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(p.size));
        p.received_from = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(p.size));
      }
      make_dirs(settings.dir);
      g_agent = exchange_addresses(p, settings);
      if (!g_agent) std::snprintf(p.job, sizeof(p.job), "job-%lld", static_cast<long long>(getpid()));
      const std::string path = settings.dir + "/" + p.job + ".rank" + std::to_string(p.rank) + ".jsonl";
      if (path.size() + 5 < sizeof(p.dump_path)) {
        std::memcpy(p.dump_path, path.c_str(), path.size() + 1);
        std::memcpy(p.dump_tmp, path.c_str(), path.size());
        std::memcpy(p.dump_tmp + path.size(), ".tmp", 5);
      } else {
        STRATA_LOG(warn, kFault, "STRATA_FAULT_DIR is too long: no flight record files");
      }
      if (g_agent && g_agent->start() != Status::ok) g_agent.reset();
      install_signal_handlers();
      static bool registered = false;
      if (!registered) registered = std::atexit(at_exit) == 0;
      STRATA_LOG(info, kFault, "fault detection on: ring of %zu records, %s, action %s, records in %s, times from %s",
                 p.ring->capacity(), g_agent ? "watchdog running" : "no watchdog", to_string(settings.action),
                 settings.dir.c_str(), tick_source());
    }
    if (inject::any()) STRATA_LOG(warn, kFault, "fault injection on this rank: %s", p.inject_text);
    g_started = true;
    hooks::g_on.store(true, std::memory_order_release);
    return Status::ok;
  } catch (...) {
    return Status::out_of_memory;
  }
}

Status stop() noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_started) return Status::ok;
    hooks::g_on.store(false, std::memory_order_release);
    if (g_agent) g_agent->stop(true);
    int rc = 0;
    if (g_process.recording && g_dump_at_exit.get()) rc = write_dump("exit");
    if (rc != 0) STRATA_LOG(warn, kFault, "flight record dump failed: %s", std::strerror(rc));
    g_started = false;
    return rc == 0 ? Status::ok : Status::internal;
  } catch (...) {
    return Status::internal;
  }
}

bool running() noexcept { return hooks::g_on.load(std::memory_order_relaxed); }

Status dump(const char* reason) noexcept {
  const int rc = write_dump(reason != nullptr ? reason : "api");
  if (rc == 0) return Status::ok;
  return rc == ENOENT ? Status::invalid_argument : Status::internal;
}

std::vector<Diagnosis> diagnoses() noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_agent ? g_agent->diagnoses() : std::vector<Diagnosis>{};
  } catch (...) {
    return {};
  }
}

void set_device_timer(const DeviceTimer* timer) noexcept {
  g_process.device_timer.store(timer, std::memory_order_release);
}

}  // namespace strata::fault
