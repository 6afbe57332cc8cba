// The probes (kind special of the interception table): while the
// device-direct transport is on, a probe that meets a message of exactly a
// descriptor's size reports the size of the message it stands for
// (transfer/probed.hpp); otherwise the library's calls.
#include "interposer/handlers/special.hpp"
#include "interposer/transfer/probed.hpp"

namespace strata::interposer::special {

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return probed::probe(source, tag, comm, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return probed::iprobe(source, tag, comm, flag, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return probed::mprobe(source, tag, comm, message, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return probed::improbe(source, tag, comm, flag, message, status);
}

}  // namespace strata::interposer::special
