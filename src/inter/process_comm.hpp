// The process-level communicator of a team (one rank per node; with TLC_NODE=process, every
// process) and the MPI operations leaders perform on it. The only place besides team setup
// that calls MPI.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <tlc/thread.hpp>

namespace tlc::detail {

// What a wait for an MPI operation watches besides the operation, so that a failure elsewhere
// ends the wait instead of hanging it: the team's abort, notes from other processes
// (inter/alarm.hpp), and TLC_TIMEOUT.
struct MpiWatch {
  double timeout_seconds = 0;          // 0: as long as it takes
  std::function<bool()> abandoned;     // true: the team has aborted, stop waiting (cheap)
  std::function<std::string()> why;    // the abort's reason, for the error
  std::function<void()> listen;        // reads other processes' notes (an MPI_Test); may abort
  bool abort_job_on_timeout = false;   // TLC_TIMEOUT_ACTION=abort: MPI_Abort instead of throwing
};

// Between two tests of a polite wait (attempt counts from 0): nothing at first, then a yield,
// then a short fixed sleep.
void pace_polite_wait(int attempt);
// Completes request with the polite pace, whatever the node (waits of team construction and of
// small agreements between processes).
void complete_politely(MPI_Request& request, const char* what);

// Whether a wait gave up on an MPI operation that may still complete (after an abort or a
// time-out): MPI_Finalize could then wait for it forever, so tlc::Environment aborts the job.
bool mpi_operation_abandoned() noexcept;
// Prints why on stderr and ends the whole job with MPI_Abort.
[[noreturn]] void abort_job(const std::string& why);

class ProcessComm {
 public:
  // Duplicates parent (collective over it) and sets MPI_ERRORS_RETURN on the duplicate. A lane
  // communicator also carries the info hints mpi_assert_no_any_source and
  // mpi_assert_no_any_tag: tlc never receives from a wildcard, which lets MPI match faster.
  explicit ProcessComm(MPI_Comm parent, bool lane = false);
  ~ProcessComm();
  ProcessComm(const ProcessComm&) = delete;
  ProcessComm& operator=(const ProcessComm&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm get() const noexcept { return comm_; }

  std::vector<int> allgather(int value);
  // Every process's `mine` (the same length everywhere), in process order: small data only.
  std::vector<std::int64_t> allgather(std::span<const std::int64_t> mine);
  int allreduce_max(int value);
  // Every process's values at process 0 (in process order; empty elsewhere). Small data only.
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine);
  // In place: every value becomes its maximum over the processes (one MPI call for several
  // agreements; pass -x as well to get the minimum of x).
  void allreduce_max(std::span<int> values);
  // Collective: if any process passes a non-empty message, every process throws; processes
  // with their own message throw it, the others name the first failing process. Keeps a
  // failure on one process from leaving the others blocked in the next collective.
  void agree_or_throw(const std::string& local_error, int local_code);

  // Every operation is the non-blocking variant completed by tlc's own loop of MPI_Test, which
  // gives up (TeamAborted, or Error(timeout)) when the watch says so: a blocking MPI call could
  // not be ended when another process fails. Polite mode is for oversubscribed nodes: MPI
  // implementations busy-poll inside blocking calls, which steals the core from the very threads
  // (of this or another process) the call waits for, so the loop yields and sleeps between tests
  // (pace_polite_wait); otherwise it spins.
  void set_polite(bool polite) noexcept { polite_ = polite; }
  bool polite() const noexcept { return polite_; }
  void set_watch(MpiWatch watch) { watch_ = std::move(watch); }

  // Completes requests with MPI_Testall in tlc's loop (see set_polite). Every request is
  // MPI_REQUEST_NULL on return.
  void wait_all(std::span<MPI_Request> requests, const char* what);
  // Completes requests while the caller does local work between the tests: alongside() runs
  // after each test (outside MPI) and returns true once the caller's local part is done; returns
  // when both are. Always polls (MPI makes progress only inside MPI calls, and the local work
  // must not wait behind a blocking MPI_Waitall), with the policy and watch of wait_all.
  void wait_all_alongside(std::span<MPI_Request> requests, const std::function<bool()>& alongside,
                          const char* what);

  // The largest tag MPI allows (MPI_TAG_UB; at least 32767).
  int tag_limit() const noexcept { return tag_limit_; }
  // Serialises MPI calls when MPI provides only MPI_THREAD_SERIALIZED (empty lock otherwise);
  // hold it around every MPI call made on this communicator.
  static std::unique_lock<std::mutex> serialize();

  // The collectives leaders run on the team's staging buffers. Data movement is in bytes;
  // reductions take `count` elements of call.type combined with call's op, in process rank
  // order for non-commutative ops. Roots are process ranks. All use MPI-4 large counts.
  void barrier();
  void bcast(void* buf, std::size_t bytes, int root);
  // In place on buf: the reduction of every process's buf.
  void allreduce_in_place(void* buf, std::size_t count, const Call& call) {
    allreduce(nullptr, buf, count, call);
  }
  // recv = the reduction of every process's send (in place when send is null). MPI always runs
  // in place: a send block is first copied into recv.
  void allreduce(const void* send, void* recv, std::size_t count, const Call& call);
  // In place at the root (result in buf there); buf is only read elsewhere.
  void reduce_in_place(void* buf, std::size_t count, const Call& call, int root);
  // send holds sum(counts) elements; this process's block (counts[rank()] elements) of the
  // reduction lands in recv. (Not in place: MPICH 4.0's in-place form memcpys overlapping
  // ranges.)
  void reduce_scatter(const void* send, void* recv, std::span<const MPI_Count> counts,
                      const Call& call);
  // send holds size() blocks of count elements; block rank() of the reduction lands in recv
  // (send and recv separate).
  void reduce_scatter_block(const void* send, void* recv, std::size_t count, const Call& call);
  // In place: buf becomes the reduction over lower processes; undefined on process 0.
  void exscan_in_place(void* buf, std::size_t count, const Call& call);
  // In place: process p's bytes[p] bytes are already at buf + displs[p].
  void allgatherv_in_place(void* buf, std::span<const MPI_Count> bytes,
                           std::span<const MPI_Aint> displs);
  // Every process contributes `bytes` bytes, gathered in rank order into recv (in place, its own
  // block already at recv + rank() * bytes, when send is null). MPI always runs in place.
  void allgather(const void* send, void* recv, std::size_t bytes);
  // Blocks of `bytes` bytes per process, in rank order on both sides; send and recv separate.
  void alltoall(const void* send, void* recv, std::size_t bytes);
  // At the root, in place: its own block is already at recv + displs[root].
  void gatherv(const void* send, std::size_t send_bytes, void* recv,
               std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs, int root);
  // At the root, in place: its own block stays in send.
  void scatterv(const void* send, std::span<const MPI_Count> bytes,
                std::span<const MPI_Aint> displs, void* recv, std::size_t recv_bytes, int root);
  void alltoallv(const void* send, std::span<const MPI_Count> send_bytes,
                 std::span<const MPI_Aint> send_displs, void* recv,
                 std::span<const MPI_Count> recv_bytes, std::span<const MPI_Aint> recv_displs);

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  MPI_Op user_op_commutative_ = MPI_OP_NULL;
  MPI_Op user_op_ordered_ = MPI_OP_NULL;
  bool polite_ = false;
  MpiWatch watch_;
  int tag_limit_ = 32767;
  // A wait on this communicator gave up on an operation (several threads may wait on it).
  std::atomic<bool> abandoned_{false};
  void complete(MPI_Request& request, const char* what);
  // Calls test() (one MPI_Test or MPI_Testall under the serialising lock, setting done) until
  // done: spinning, then in polite mode yielding and sleeping; checks the watch as it goes.
  template <class Test>
  void poll(Test&& test, const char* what);
  // Posts the non-blocking form of an MPI call and completes it with poll().
  template <class Nonblocking>
  void call(const char* what, Nonblocking nonblocking);
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

// The processes of comm that share this process's node, split off once per parent communicator
// and cached on it (the split is the slowest step of team construction: tens of milliseconds on
// an oversubscribed node).
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

// How many lanes the MPI library can progress at once, as far as it says: MPICH's number of
// VCIs (MPIR_CVAR_CH4_NUM_VCIS through the MPI tool interface; 1 in a global-lock build), or 0
// when the library does not tell or MPI is not initialised.
int mpi_lane_parallelism();

}  // namespace tlc::detail
