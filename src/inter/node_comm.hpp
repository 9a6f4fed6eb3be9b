// Node discovery: which processes of a communicator share this process's node
// (MPI_COMM_TYPE_SHARED), for the team's view of the machine (TLC_NODE, oversubscription,
// dividing a node's cores among its processes).
#pragma once

#include <cstdint>

#include <mpi.h>

namespace tlc::detail {

// Where this process stands among the processes of comm on its node (MPI_COMM_TYPE_SHARED).
struct NodeInfo {
  int rank = 0;              // among the processes of this node
  int size = 1;              // processes on this node
  int largest = 1;           // most processes on any node of comm
  bool same_cpusets = true;  // all processes of this node may run on the same PUs
};

// The processes of comm that share this process's node, split off once per parent communicator
// and cached on it (the split is the slowest step of team construction on an oversubscribed
// node).
class NodeComm {
 public:
  explicit NodeComm(MPI_Comm comm);  // collective over comm
  ~NodeComm();
  NodeComm(const NodeComm&) = delete;
  NodeComm& operator=(const NodeComm&) = delete;

  // Collective over comm. cpuset_key identifies this process's allowed PUs.
  NodeInfo info(std::uint64_t cpuset_key);
  // Sum of `value` over the processes of this node (collective over them).
  int sum(int value);

 private:
  MPI_Comm parent_;
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace tlc::detail
