// The names of the mover's methods (method.hpp).
#include "portability/mover/method.hpp"

namespace strata::mover {
namespace {

const char* const kNames[kMethods] = {"device", "oneshot", "staged", "span"};

}  // namespace

const char* to_string(Method method) { return kNames[static_cast<int>(method)]; }

bool method_from_string(const std::string& name, Method* out) {
  for (int i = 0; i < kMethods; ++i) {
    if (name == kNames[i]) {
      *out = static_cast<Method>(i);
      return true;
    }
  }
  return false;
}

}  // namespace strata::mover
