// fault/terminate_hooks: what runs before the fault policy ends a process
// (the collectives' NCCL abort registers there). One test per process: the
// hooks run once per process.
#include "fault/terminate_hooks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string g_order;
void first() noexcept { g_order += "a"; }
void second() noexcept { g_order += "b"; }
void filler() noexcept { g_order += "f"; }

TEST(TerminateHooks, RunOnceInOrderAndRefuseBeyondTheTable) {
  using namespace strata::fault;
  EXPECT_FALSE(add_terminate_hook(nullptr));
  ASSERT_TRUE(add_terminate_hook(first));
  ASSERT_TRUE(add_terminate_hook(second));
  int kept = 2;
  while (add_terminate_hook(filler)) ++kept;
  EXPECT_EQ(kept, kMaxTerminateHooks);
  run_terminate_hooks();
  EXPECT_EQ(g_order, "ab" + std::string(static_cast<size_t>(kMaxTerminateHooks - 2), 'f'));
  run_terminate_hooks();  // a second end (the agent's and the coordinator's paths) runs nothing again
  EXPECT_EQ(g_order.size(), static_cast<size_t>(kMaxTerminateHooks));
}

}  // namespace
