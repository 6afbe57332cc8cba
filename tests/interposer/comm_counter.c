/* Preloaded after libstrata_preload.so (LD_PRELOAD=strata:this): Strata's
 * calls into MPI resolve the next definition (dlsym(RTLD_NEXT)), which is
 * this library's, so every communicator Strata makes is counted here
 * before it goes on to the library's PMPI_* entry. comms_at_init_job reads
 * the count through strata_test_comms_made().
 *
 * Open MPI only: its components register progress functions through
 * opal_progress_register (libopen-pal), which this library sees too. The
 * non-blocking collectives' one (ompi_coll_libnbc_progress), once
 * registered, is polled in every wait of the job: strata_test_nbc_progress()
 * counts its registrations (0 under any other MPI). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <string.h>

static int g_made = 0;
static int g_nbc_progress = 0;

int strata_test_comms_made(void) { return g_made; }
int strata_test_nbc_progress(void) { return g_nbc_progress; }

typedef int (*progress_fn)(void);
int opal_progress_register(progress_fn cb) {
  static int (*next)(progress_fn) = 0;
  if (next == 0) next = (int (*)(progress_fn))dlsym(RTLD_NEXT, "opal_progress_register");
  Dl_info info;
  if (dladdr((void*)cb, &info) != 0 && info.dli_sname != 0 && strstr(info.dli_sname, "libnbc") != 0) {
    ++g_nbc_progress;
  }
  return next != 0 ? next(cb) : -1;
}

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
