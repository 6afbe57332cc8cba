// The real MPI call a handler finishes with: the wrapper's own call of
// real().fn over its parameters, which the handler may have pointed at
// staged copies first (interposer/calls/roles.hpp). Non-owning; lives for
// the wrapper's call.
#pragma once

#include <utility>

namespace strata::interposer {

class Library {
 public:
  template <class F>
  explicit Library(F& call) noexcept
      : object_(&call), call_([](void* object) { return (*static_cast<F*>(object))(); }) {}
  int operator()() const { return call_(object_); }

 private:
  void* object_;
  int (*call_)(void*);
};

}  // namespace strata::interposer
