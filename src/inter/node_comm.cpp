// Node discovery (inter/node_comm.hpp): the node communicator, split once per parent
// communicator and cached on it, and what the processes of a node agree on through it.
#include "inter/node_comm.hpp"

#include <memory>
#include <mutex>

#include "inter/mpi_check.hpp"
#include "inter/mpi_policy.hpp"
#include "inter/mpi_wait.hpp"

namespace tlc::detail {

namespace {

// The node communicator of a parent communicator, cached on the parent (MPI attribute caching):
// MPI_Comm_split_type is a blocking collective with no non-blocking form, and every team on the
// same communicator would split it again. Duplicates of the parent do not inherit it.
int g_node_keyval = MPI_KEYVAL_INVALID;
std::once_flag g_node_keyval_once;

int free_node_comm(MPI_Comm, int, void* value, void*) {
  auto* node = static_cast<MPI_Comm*>(value);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && *node != MPI_COMM_NULL) MPI_Comm_free(node);
  delete node;
  return MPI_SUCCESS;
}

}  // namespace

NodeComm::NodeComm(MPI_Comm comm) : parent_(comm) {
  std::call_once(g_node_keyval_once, [] {
    check_mpi(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &free_node_comm, &g_node_keyval, nullptr),
        "MPI_Comm_create_keyval");
  });
  {
    auto lock = serialize_mpi();
    void* value = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(comm, g_node_keyval, &value, &found), "MPI_Comm_get_attr");
    if (found) {
      node_ = *static_cast<MPI_Comm*>(value);
      return;
    }
  }
  polite_barrier(comm);
  auto lock = serialize_mpi();
  auto node = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node.get()),
            "MPI_Comm_split_type");
  const int rc = MPI_Comm_set_attr(comm, g_node_keyval, node.get());
  if (rc != MPI_SUCCESS) MPI_Comm_free(node.get());
  check_mpi(rc, "MPI_Comm_set_attr");
  node_ = *node.release();
}

// The node communicator belongs to the parent's attribute.
NodeComm::~NodeComm() = default;

NodeInfo NodeComm::info(std::uint64_t cpuset_key) {
  NodeInfo info;
  {
    auto lock = serialize_mpi();
    MPI_Comm_rank(node_, &info.rank);
    MPI_Comm_size(node_, &info.size);
  }
  std::uint64_t keys[2] = {cpuset_key, ~cpuset_key}, extremes[2] = {0, 0};
  polite_allreduce(keys, extremes, 2, MPI_UINT64_T, MPI_MAX, node_);
  info.same_cpusets = extremes[0] == cpuset_key && extremes[1] == ~cpuset_key;
  polite_allreduce(&info.size, &info.largest, 1, MPI_INT, MPI_MAX, parent_);
  return info;
}

int NodeComm::sum(int value) {
  int total = value;
  polite_allreduce(&value, &total, 1, MPI_INT, MPI_SUM, node_);
  return total;
}

}  // namespace tlc::detail
