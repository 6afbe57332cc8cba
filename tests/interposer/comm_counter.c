/* Preloaded after libstrata_preload.so (LD_PRELOAD=strata:this): Strata's
 * calls into MPI resolve the next definition (dlsym(RTLD_NEXT)), which is
 * this library's, so every communicator Strata makes is counted here
 * before it goes on to the library's PMPI_* entry. comms_at_init_job reads
 * the count through strata_test_comms_made(). */
#include <mpi.h>

static int g_made = 0;

int strata_test_comms_made(void) { return g_made; }

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  ++g_made;
  return PMPI_Comm_split_type(comm, type, key, info, out);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  ++g_made;
  return PMPI_Comm_split(comm, color, key, out);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
  ++g_made;
  return PMPI_Comm_dup(comm, out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
  ++g_made;
  return PMPI_Comm_create(comm, group, out);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* out) {
  ++g_made;
  return PMPI_Comm_create_group(comm, group, tag, out);
}
