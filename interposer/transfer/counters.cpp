#include "interposer/transfer/counters.hpp"

namespace strata::interposer {

Counters& counters() {
  static Counters c;
  return c;
}

}  // namespace strata::interposer
