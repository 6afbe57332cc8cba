#include "fault/terminate_hooks.hpp"

#include <atomic>

namespace strata::fault {
namespace {

std::atomic<TerminateHook> g_hooks[kMaxTerminateHooks] = {};
std::atomic<int> g_count{0};
std::atomic<bool> g_ran{false};

}  // namespace

bool add_terminate_hook(TerminateHook hook) noexcept {
  if (hook == nullptr) return false;
  const int slot = g_count.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= kMaxTerminateHooks) {
    g_count.fetch_sub(1, std::memory_order_acq_rel);
    return false;
  }
  g_hooks[slot].store(hook, std::memory_order_release);
  return true;
}

void run_terminate_hooks() noexcept {
  if (g_ran.exchange(true, std::memory_order_acq_rel)) return;
  const int n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n && i < kMaxTerminateHooks; ++i) {
    // A slot claimed but not yet filled (a registration racing the end) is null.
    if (TerminateHook h = g_hooks[i].load(std::memory_order_acquire)) h();
  }
}

}  // namespace strata::fault
