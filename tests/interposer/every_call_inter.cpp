// Collectives on an intercommunicator (every_call.hpp:
// intercommunicator_cases): the even and the odd ranks of the world as its
// two groups, each collective made with MPI_ on the setting's memory and
// with PMPI_ on host ints that start alike, both buffers compared after.
#include "call_cases_detail.hpp"
#include "every_call.hpp"

#include "support/test_device_memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace every_call {
namespace {

// The intercommunicator, freed with the last case.
struct Inter {
  Inter() {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world);
    const int color = world % 2;
    PMPI_Comm_split(MPI_COMM_WORLD, color, world, &local);
    rc = CASE_CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, 1 - color, 65, &inter);
  }
  ~Inter() {
    if (inter != MPI_COMM_NULL) PMPI_Comm_free(&inter);
    PMPI_Comm_free(&local);
  }
  Inter(const Inter&) = delete;
  Inter& operator=(const Inter&) = delete;
  int world = 0;
  int rc = MPI_SUCCESS;
  MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
};

// Ints in device memory (host memory without a device), or host ints.
class Ints {
 public:
  Ints(bool device, const std::vector<int>& init)
      : device_(device), bytes_(std::max<size_t>(init.size(), 1) * sizeof(int)) {
    data_ = device ? strata_test::test_device_alloc(bytes_) : std::malloc(bytes_);
    std::vector<int> all(bytes_ / sizeof(int), 0);
    std::copy(init.begin(), init.end(), all.begin());
    if (device_) {
      strata_test::test_device_to(data_, all.data(), bytes_);
    } else {
      std::memcpy(data_, all.data(), bytes_);
    }
    n_ = init.size();
  }
  ~Ints() {
    if (device_) {
      strata_test::test_device_free(data_);
    } else {
      std::free(data_);
    }
  }
  Ints(const Ints&) = delete;
  Ints& operator=(const Ints&) = delete;
  void* data() const { return data_; }
  std::vector<int> get() const {
    std::vector<int> all(bytes_ / sizeof(int));
    if (device_) {
      strata_test::test_device_from(all.data(), data_, bytes_);
    } else {
      std::memcpy(all.data(), data_, bytes_);
    }
    all.resize(n_);
    return all;
  }

 private:
  bool device_;
  size_t bytes_;
  size_t n_ = 0;
  void* data_ = nullptr;
};

// One collective on an intercommunicator: call(true, ...) makes the MPI_
// call on the setting's memory, call(false, ...) the PMPI_ one on host
// ints that start alike; both buffers must end alike.
std::string inter_case(bool device, const std::vector<int>& send, const std::vector<int>& recv,
                       const std::function<int(bool, void*, void*)>& call) {
  Ints ds(device, send), dr(device, recv);
  std::vector<int> hs = send, hr = recv;
  hs.resize(std::max<size_t>(hs.size(), 1));
  hr.resize(std::max<size_t>(hr.size(), 1));
  const int rc = call(true, ds.data(), dr.data());
  const int oracle = call(false, hs.data(), hr.data());
  if (rc != MPI_SUCCESS) return cases::failed("the call", rc);
  if (oracle != MPI_SUCCESS) return cases::failed("the library's call", oracle);
  hs.resize(send.size());
  hr.resize(recv.size());
  const std::vector<int> got = dr.get();
  for (size_t i = 0; i < hr.size(); ++i) {
    if (got[i] != hr[i]) {
      return "int " + std::to_string(i) + " is " + std::to_string(got[i]) + ", the library's " + std::to_string(hr[i]);
    }
  }
  return ds.get() == hs ? "" : "the send buffer changed";
}

}  // namespace

// The collectives on an intercommunicator of the even and the odd ranks
// (groups of 1 and 1, 2 and 1, 2 and 2): rooted ones from rank 0 of the
// even group (MPI_ROOT) to the odd group, and a few non-blocking forms.
std::vector<Case> intercommunicator_cases(const cases::Setting& setting) {
  auto comms = std::make_shared<Inter>();
  const int world = comms->world, color = world % 2;
  const MPI_Comm inter = comms->inter;
  int lrank = 0, lsize = 0, rsize = 0;
  PMPI_Comm_rank(inter, &lrank);
  PMPI_Comm_size(inter, &lsize);
  PMPI_Comm_remote_size(inter, &rsize);
  const bool device = setting.device(world);
  const int n = setting.n;
  const bool is_root = color == 0 && lrank == 0;
  const int root = color == 0 ? (is_root ? MPI_ROOT : MPI_PROC_NULL) : 0;
  const int most = std::max(lsize, rsize);
  auto data = [&](int ints) { return cases::values(world, ints, 9); };
  auto poison = [](int ints) { return std::vector<int>(static_cast<size_t>(ints), -0x5a5a5a5b); };
  // Per-peer counts and displacements with a gap of 2 ints between blocks.
  const std::vector<int> counts(static_cast<size_t>(most), n);
  std::vector<int> displs(static_cast<size_t>(most)), byte_displs(static_cast<size_t>(most));
  for (int i = 0; i < most; ++i) {
    displs[static_cast<size_t>(i)] = i * (n + 2);
    byte_displs[static_cast<size_t>(i)] = i * (n + 2) * static_cast<int>(sizeof(int));
  }
  const std::vector<MPI_Datatype> types(static_cast<size_t>(most), MPI_INT);
  const int spread = rsize * (n + 2);  // a v buffer over the remote group
  const auto wait = [](bool mpi, MPI_Request* r) {
    return mpi ? MPI_Wait(r, MPI_STATUS_IGNORE) : PMPI_Wait(r, MPI_STATUS_IGNORE);
  };
  const struct {
    const char* name;
    std::vector<int> send, recv;
    std::function<int(bool, void*, void*)> call;
  } all[] = {
      {"MPI_Bcast",
       {},
       is_root ? data(n) : poison(n),
       [=](bool mpi, void*, void* r) { return (mpi ? MPI_Bcast : PMPI_Bcast)(r, n, MPI_INT, root, inter); }},
      {"MPI_Gather", data(n), poison(n * rsize),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Gather : PMPI_Gather)(s, n, MPI_INT, r, n, MPI_INT, root, inter);
       }},
      {"MPI_Gatherv", data(n), poison(spread),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Gatherv : PMPI_Gatherv)(s, n, MPI_INT, r, counts.data(), displs.data(), MPI_INT, root,
                                                   inter);
       }},
      {"MPI_Scatter", data(n * rsize), poison(n),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Scatter : PMPI_Scatter)(s, n, MPI_INT, r, n, MPI_INT, root, inter);
       }},
      {"MPI_Scatterv", data(spread), poison(n),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Scatterv : PMPI_Scatterv)(s, counts.data(), displs.data(), MPI_INT, r, n, MPI_INT, root,
                                                     inter);
       }},
      {"MPI_Allgather", data(n), poison(n * rsize),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Allgather : PMPI_Allgather)(s, n, MPI_INT, r, n, MPI_INT, inter);
       }},
      {"MPI_Allgatherv", data(n), poison(spread),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Allgatherv : PMPI_Allgatherv)(s, n, MPI_INT, r, counts.data(), displs.data(), MPI_INT,
                                                         inter);
       }},
      {"MPI_Alltoall", data(n * rsize), poison(n * rsize),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Alltoall : PMPI_Alltoall)(s, n, MPI_INT, r, n, MPI_INT, inter);
       }},
      {"MPI_Alltoallv", data(spread), poison(spread),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Alltoallv : PMPI_Alltoallv)(s, counts.data(), displs.data(), MPI_INT, r, counts.data(),
                                                       displs.data(), MPI_INT, inter);
       }},
      {"MPI_Alltoallw", data(spread), poison(spread),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Alltoallw : PMPI_Alltoallw)(s, counts.data(), byte_displs.data(), types.data(), r,
                                                       counts.data(), byte_displs.data(), types.data(), inter);
       }},
      {"MPI_Reduce", data(n), poison(n),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Reduce : PMPI_Reduce)(s, r, n, MPI_INT, MPI_SUM, root, inter);
       }},
      {"MPI_Allreduce", data(n), poison(n),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Allreduce : PMPI_Allreduce)(s, r, n, MPI_INT, MPI_SUM, inter);
       }},
      {"MPI_Reduce_scatter_block", data(n * most), poison(n),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Reduce_scatter_block : PMPI_Reduce_scatter_block)(s, r, n, MPI_INT, MPI_SUM, inter);
       }},
      {"MPI_Reduce_scatter", data(n * most), poison(n),
       [=](bool mpi, void* s, void* r) {
         return (mpi ? MPI_Reduce_scatter : PMPI_Reduce_scatter)(s, r, counts.data(), MPI_INT, MPI_SUM, inter);
       }},
      {"MPI_Ibcast",
       {},
       is_root ? data(n) : poison(n),
       [=](bool mpi, void*, void* r) {
         MPI_Request q = MPI_REQUEST_NULL;
         const int rc = (mpi ? MPI_Ibcast : PMPI_Ibcast)(r, n, MPI_INT, root, inter, &q);
         return rc != MPI_SUCCESS ? rc : wait(mpi, &q);
       }},
      {"MPI_Iallreduce", data(n), poison(n),
       [=](bool mpi, void* s, void* r) {
         MPI_Request q = MPI_REQUEST_NULL;
         const int rc = (mpi ? MPI_Iallreduce : PMPI_Iallreduce)(s, r, n, MPI_INT, MPI_SUM, inter, &q);
         return rc != MPI_SUCCESS ? rc : wait(mpi, &q);
       }},
      {"MPI_Ialltoallv", data(spread), poison(spread),
       [=](bool mpi, void* s, void* r) {
         MPI_Request q = MPI_REQUEST_NULL;
         const int rc = (mpi ? MPI_Ialltoallv : PMPI_Ialltoallv)(s, counts.data(), displs.data(), MPI_INT, r,
                                                                 counts.data(), displs.data(), MPI_INT, inter, &q);
         return rc != MPI_SUCCESS ? rc : wait(mpi, &q);
       }},
  };
  std::vector<Case> cases_of;
  for (const auto& c : all) {
    // Groups of different sizes: Open MPI 4.1's reduce-scatters on an
    // intercommunicator fail with MPI_ERR_TRUNCATE (the library alone).
    if (lsize != rsize && std::strncmp(c.name, "MPI_Reduce_scatter", 18) == 0) continue;
    cases_of.push_back({std::string(c.name) + " on an intercommunicator",
                        [comms, device, send = c.send, recv = c.recv, call = c.call] {
                          if (comms->rc != MPI_SUCCESS) return cases::failed("MPI_Intercomm_create", comms->rc);
                          return inter_case(device, send, recv, call);
                        }});
  }
  return cases_of;
}

}  // namespace every_call
