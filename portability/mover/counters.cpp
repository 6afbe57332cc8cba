// The mover's counters (counters.hpp).
#include "portability/mover/counters.hpp"

namespace strata::mover {

Counters& counters() {
  static Counters c;
  return c;
}

}  // namespace strata::mover
