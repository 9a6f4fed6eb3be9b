// The process-level communicator of a team (one rank per node; with TLC_NODE=process, every
// process) and the MPI operations leaders perform on it. The only place besides team setup
// that calls MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <mpi.h>

#include <tlc/thread.hpp>

namespace tlc::detail {

class ProcessComm {
 public:
  // Duplicates parent (collective over it) and sets MPI_ERRORS_RETURN on the duplicate.
  explicit ProcessComm(MPI_Comm parent);
  ~ProcessComm();
  ProcessComm(const ProcessComm&) = delete;
  ProcessComm& operator=(const ProcessComm&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm get() const noexcept { return comm_; }

  std::vector<int> allgather(int value);
  int allreduce_max(int value);
  // Collective: if any process passes a non-empty message, every process throws; processes
  // with their own message throw it, the others name the first failing process. Keeps a
  // failure on one process from leaving the others blocked in the next collective.
  void agree_or_throw(const std::string& local_error, int local_code);

  // Oversubscribed nodes: MPI implementations busy-poll inside blocking calls, which steals the
  // core from the very threads (of this or another process) the call waits for. Polite mode
  // issues the non-blocking variant and completes it with tlc's own spin-yield-sleep policy.
  void set_polite(bool polite) noexcept { polite_ = polite; }
  bool polite() const noexcept { return polite_; }

  void barrier();
  // In place on buf: the reduction of every process's buf (call.count elements), combined in
  // process rank order for non-commutative ops.
  void allreduce_in_place(void* buf, const ReduceCall& call);

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  MPI_Op user_op_commutative_ = MPI_OP_NULL;
  MPI_Op user_op_ordered_ = MPI_OP_NULL;
  bool polite_ = false;
  std::unique_lock<std::mutex> serialize();
  void complete(MPI_Request& request, const char* what);
};

// Whether MPI is initialised with at least MPI_THREAD_SERIALIZED; throws otherwise.
// Returns true when tlc must serialise its own MPI calls (MPI_THREAD_SERIALIZED).
bool check_thread_level();

// Where this process stands among the processes of comm on its node (MPI_COMM_TYPE_SHARED).
struct NodeInfo {
  int rank = 0;              // among the processes of this node
  int size = 1;              // processes on this node
  int largest = 1;           // most processes on any node of comm
  bool same_cpusets = true;  // all processes of this node may run on the same PUs
};
// Collective over comm. cpuset_key identifies this process's allowed PUs.
NodeInfo node_info(MPI_Comm comm, std::uint64_t cpuset_key);

// Sum of `threads` over the processes of comm that share this process's node.
int threads_on_node(MPI_Comm comm, int threads);

}  // namespace tlc::detail
