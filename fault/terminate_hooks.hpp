// What runs just before the fault policy ends a process
// (STRATA_FAULT_ACTION=abort or exclude): layers above fault/ register
// hooks here, since fault/ may not call them. The collectives register one
// that aborts their NCCL communicators, so that a rank whose kernel waits
// for a peer that will never come leaves nothing spinning on its GPU.
//
// Registration is lock-free and may happen at any time; the hooks run on
// the fault agent's thread while other threads may be blocked anywhere, so
// a hook must not wait for a lock another thread could hold (try_lock) and
// must finish quickly.
#pragma once

namespace strata::fault {

using TerminateHook = void (*)() noexcept;

// False when the table is full (kMaxTerminateHooks): the hook is not kept.
bool add_terminate_hook(TerminateHook hook) noexcept;
// Runs every registered hook once, in registration order.
void run_terminate_hooks() noexcept;

constexpr int kMaxTerminateHooks = 8;

}  // namespace strata::fault
