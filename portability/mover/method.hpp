// Where the packed bytes of a device message live while the transport
// (MPI) moves them: the mover's methods. Which one a message takes is the
// caller's choice (the interposer's measured model,
// interposer/model/device_model.hpp).
//   device   device staging memory, for a transport that takes device
//            memory (a GPU-aware MPI)
//   oneshot  mapped pinned host memory, written and read by the kernels
//   staged   pinned host memory, filled from device staging by the copy
//            engine, pipelined in chunks
//   span     no packing by the mover: the copy engine copies the bytes the
//            data spans to pinned host memory (copies.hpp) and the
//            transport packs there
#pragma once

#include <string>

namespace strata::mover {

enum class Method { device, oneshot, staged, span };
constexpr int kMethods = 4;

const char* to_string(Method method);
// The method to_string names `name`; false (and `*out` untouched) for none.
bool method_from_string(const std::string& name, Method* out);

}  // namespace strata::mover
