#include "inter/process_comm.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <tlc/environment.hpp>
#include <tlc/error.hpp>

#include "inter/mpi_check.hpp"
#include "inter/mpi_datatypes.hpp"
#include "inter/mpi_large.hpp"

namespace tlc::detail {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(Errc::mpi, std::string("tlc: ") + what + " failed: " + std::string(text, length));
}

namespace {

// Set when MPI provides only MPI_THREAD_SERIALIZED: every MPI call tlc makes then holds this.
bool g_serialize_mpi = false;
std::mutex g_mpi_mutex;

// A user MPI_Op has no context argument, so the combine function travels with the datatype:
// each reduction of a user op uses its own contiguous datatype carrying a UserOpContext
// attribute, which the trampoline reads back. Safe with concurrent lanes, unlike a global.
// An exception from the user op must not unwind through MPI's C frames (it would end the
// process, or leave MPI's state inconsistent): the trampoline catches it, records the first one,
// skips every later combine of the call so that MPI finishes it quickly, and the thread that made
// the MPI call rethrows it once the call is complete. The callback may run on any thread that
// drives MPI's progress (another lane's MPI_Test), hence the lock.
struct UserOpContext {
  CombineFn combine;
  const void* op_object;
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;
};

int g_context_keyval = MPI_KEYVAL_INVALID;
std::once_flag g_keyval_once;

void user_op_trampoline(void* in, void* inout, int* len, MPI_Datatype* datatype) {
  void* value = nullptr;
  int found = 0;
  MPI_Type_get_attr(*datatype, g_context_keyval, &value, &found);
  if (!found) {
    std::fprintf(stderr, "tlc: user reduction called without its context datatype\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  auto* context = static_cast<UserOpContext*>(value);
  if (context->failed.load(std::memory_order_acquire)) return;
  try {
    // MPI's order: inout = in (lower ranks) op inout.
    context->combine(context->op_object, inout, in, static_cast<std::size_t>(*len), true);
  } catch (...) {
    std::lock_guard<std::mutex> lock(context->mutex);
    if (!context->error) context->error = std::current_exception();
    context->failed.store(true, std::memory_order_release);
  }
}

struct UserDatatype {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  UserDatatype(std::size_t element_size, UserOpContext* context) {
    check_mpi(MPI_Type_contiguous(static_cast<int>(element_size), MPI_BYTE, &type),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
    check_mpi(MPI_Type_set_attr(type, g_context_keyval, context), "MPI_Type_set_attr");
  }
  ~UserDatatype() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

// Every process of comm has arrived, waited for politely. Precedes the collectives that have no
// non-blocking form (communicator creation), so that their blocking wait inside MPI is short.
void polite_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = ProcessComm::serialize();
    check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  }
  complete_politely(request, "MPI_Ibarrier");
}

// MPI_Allreduce of a few ints, waited for politely.
void polite_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = ProcessComm::serialize();
    check_mpi(MPI_Iallreduce(send, recv, count, type, op, comm, &request), "MPI_Iallreduce");
  }
  complete_politely(request, "MPI_Iallreduce");
}

}  // namespace

// Between two MPI_Tests of a polite wait: nothing for the first tests (a punctual partner
// answers within them), then a yield (the awaited thread may be runnable here), then a short
// fixed sleep. Non-blocking collectives progress only inside MPI_Test, so every step of a
// multi-step schedule waits for the next test of each process in it: sleeps that grow with the
// wait made the whole MPICH test suite far slower (docs/mpi.md) and Open MPI's no faster.
void pace_polite_wait(int attempt) {
  if (attempt < 64) return;
  if (attempt < 256)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

// Completes one request of team construction or of a small agreement between processes without
// holding a core while other processes are late. MPI implementations busy-poll inside blocking
// calls; on a node with more threads than cores (tests, oversubscribed runs) a process spinning
// in MPI_Comm_dup or MPI_Allreduce takes the core the late process needs, and every team
// construction then costs whole scheduler time slices per collective. At construction tlc does
// not know yet whether the node is oversubscribed, so these waits are always polite
// (pace_polite_wait).
void complete_politely(MPI_Request& request, const char* what) {
  for (int attempt = 0;; ++attempt) {
    int done = 0;
    {
      auto lock = ProcessComm::serialize();
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    }
    if (done) return;
    pace_polite_wait(attempt);
  }
}

bool check_thread_level() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw Error(Errc::invalid_argument,
                "tlc: MPI is not initialised (create a tlc::Environment, or call "
                "MPI_Init_thread with MPI_THREAD_MULTIPLE, before building a tlc::Team)");
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error(Errc::unsupported,
                std::string("tlc: MPI provides thread level ") +
                    Environment::thread_level_name(provided) +
                    " but tlc needs at least MPI_THREAD_SERIALIZED (MPI_THREAD_MULTIPLE "
                    "recommended): team threads other than the main thread call MPI");
  g_serialize_mpi = provided < MPI_THREAD_MULTIPLE;
  return g_serialize_mpi;
}

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
    auto lock = ProcessComm::serialize();
    void* value = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(comm, g_node_keyval, &value, &found), "MPI_Comm_get_attr");
    if (found) {
      node_ = *static_cast<MPI_Comm*>(value);
      return;
    }
  }
  polite_barrier(comm);
  auto lock = ProcessComm::serialize();
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
    auto lock = ProcessComm::serialize();
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

int mpi_lane_parallelism() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  static const int parallelism = [] {
#ifdef OMPI_MAJOR_VERSION
    // Open MPI has no such variable. Its MPI_T_init_thread also overwrites the thread level of
    // the whole process with the one asked for (up to at least 4.1): asked for below
    // MPI_THREAD_MULTIPLE, it turned off Open MPI's locking and made MPI_Query_thread report it.
    return 0;
#else
    // The tool interface at the level MPI runs at: the level asked for should not matter, but
    // nothing is gained by asking for less.
    int level = MPI_THREAD_SINGLE, provided = 0;
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return 0;
    int result = 0, index = -1;
    if (MPI_T_cvar_get_index("MPIR_CVAR_CH4_NUM_VCIS", &index) == MPI_SUCCESS && index >= 0) {
      MPI_T_cvar_handle handle;
      int count = 0, value = 0;
      if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
        if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) result = value;
        MPI_T_cvar_handle_free(&handle);
      }
    }
    MPI_T_finalize();
    return result;
#endif
  }();
  return parallelism;
}

ProcessComm::ProcessComm(MPI_Comm parent, bool lane) {
  std::call_once(g_keyval_once, [] {
    check_mpi(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                     &g_context_keyval, nullptr),
              "MPI_Type_create_keyval");
  });
  // Communicator creation agrees on a context id in rounds of collectives inside MPI; its
  // non-blocking form is completed politely (see complete_politely).
  MPI_Info info = MPI_INFO_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = serialize();
    if (lane) {
      check_mpi(MPI_Info_create(&info), "MPI_Info_create");
      MPI_Info_set(info, "mpi_assert_no_any_source", "true");
      MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    }
#if MPI_VERSION >= 4
    const int rc = lane ? MPI_Comm_idup_with_info(parent, info, &comm_, &request)
                        : MPI_Comm_idup(parent, &comm_, &request);
#else
    const int rc = MPI_Comm_idup(parent, &comm_, &request);
#endif
    if (rc != MPI_SUCCESS && info != MPI_INFO_NULL) MPI_Info_free(&info);
    check_mpi(rc, "MPI_Comm_idup");
  }
  complete_politely(request, "MPI_Comm_idup");
  auto lock = serialize();
  if (info != MPI_INFO_NULL) {
#if MPI_VERSION < 4
    // MPI 3 has no MPI_Comm_idup_with_info: the hints follow the duplicate (an MPI may ignore
    // hints set after creation; they only let it match faster).
    MPI_Comm_set_info(comm_, info);
#endif
    MPI_Info_free(&info);
  }
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int* tag_ub = nullptr;
  int has_tag_ub = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &has_tag_ub);
  if (has_tag_ub && tag_ub) tag_limit_ = *tag_ub;
  check_mpi(MPI_Op_create(&user_op_trampoline, 1, &user_op_commutative_), "MPI_Op_create");
  check_mpi(MPI_Op_create(&user_op_trampoline, 0, &user_op_ordered_), "MPI_Op_create");
}

ProcessComm::~ProcessComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // MPI already released everything
  // An operation given up on may still be pending on it: freeing could wait for it.
  if (abandoned_.load(std::memory_order_acquire)) return;
  auto lock = serialize();
  if (user_op_commutative_ != MPI_OP_NULL) MPI_Op_free(&user_op_commutative_);
  if (user_op_ordered_ != MPI_OP_NULL) MPI_Op_free(&user_op_ordered_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::unique_lock<std::mutex> ProcessComm::serialize() {
  if (g_serialize_mpi) return std::unique_lock<std::mutex>(g_mpi_mutex);
  return {};
}

std::vector<int> ProcessComm::allgather(int value) {
  std::vector<int> all(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = serialize();
    check_mpi(MPI_Iallgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, comm_, &request),
              "MPI_Iallgather");
  }
  complete_politely(request, "MPI_Iallgather");
  return all;
}

std::vector<std::vector<double>> ProcessComm::gather_to_root(std::span<const double> mine) {
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  auto lock = serialize();
  check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
  std::vector<int> displs(counts.size());
  int total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    displs[p] = total;
    total += counts[p];
  }
  std::vector<double> flat(static_cast<std::size_t>(total));
  check_mpi(MPI_Gatherv(mine.data(), count, MPI_DOUBLE, flat.data(), counts.data(), displs.data(),
                        MPI_DOUBLE, 0, comm_),
            "MPI_Gatherv");
  std::vector<std::vector<double>> all(counts.size());
  for (std::size_t p = 0; p < counts.size(); ++p)
    all[p].assign(flat.begin() + displs[p], flat.begin() + displs[p] + counts[p]);
  return all;
}

std::vector<std::int64_t> ProcessComm::allgather(std::span<const std::int64_t> mine) {
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(size_));
  call(
      "MPI_Allgather",
      [&](MPI_Request* r) {
        return MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                              static_cast<int>(mine.size()), MPI_INT64_T, comm_, r);
      });
  return all;
}

int ProcessComm::allreduce_max(int value) {
  int result = value;
  polite_allreduce(&value, &result, 1, MPI_INT, MPI_MAX, comm_);
  return result;
}

void ProcessComm::allreduce_max(std::span<int> values) {
  polite_allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT, MPI_MAX,
                   comm_);
}

void ProcessComm::agree_or_throw(const std::string& local_error, int local_code) {
  const int failed_here = local_error.empty() ? size_ : rank_;
  int first_failed = failed_here;
  polite_allreduce(&failed_here, &first_failed, 1, MPI_INT, MPI_MIN, comm_);
  if (first_failed == size_) return;
  if (!local_error.empty()) throw Error(static_cast<Errc>(local_code), local_error);
  throw Error(Errc::aborted, "tlc: team construction failed on process " +
                                 std::to_string(first_failed) + " (see its error)");
}

namespace {

std::atomic<bool> g_abandoned{false};

}  // namespace

bool mpi_operation_abandoned() noexcept { return g_abandoned.load(std::memory_order_acquire); }

void abort_job(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::fflush(stderr);
  // MPI_Abort makes the launcher tear the job down at once, and what was just written to the
  // output pipe may never be forwarded to the user's terminal (seen with MPICH's hydra): give it
  // a moment to go out first. The job is ending anyway.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; if it did, the job must still end
}

template <class Test>
void ProcessComm::poll(Test&& test, const char* what) {
  using Clock = std::chrono::steady_clock;
  // Read once the wait has lasted beyond its first tests: a call that completes at once (the
  // common small call) pays no clock read.
  Clock::time_point start{};
  const bool timed = watch_.timeout_seconds > 0;
  const auto limit = std::chrono::duration<double>(watch_.timeout_seconds);
  // Giving up leaves the operation pending inside MPI: this communicator is not freed, and
  // tlc::Environment ends the job instead of finalising.
  const auto give_up = [&] {
    abandoned_.store(true, std::memory_order_release);
    g_abandoned.store(true, std::memory_order_release);
  };
  const auto aborted = [&] {
    return TeamAborted(std::string("tlc: team aborted while waiting for ") + what +
                       " between processes" + (watch_.why ? ": " + watch_.why() : ""));
  };
  // Once the team has aborted, the operation gets a short grace before it is given up: where
  // the failure left MPI's steps complete on every process (a user op that threw inside MPI
  // skips its combinations and lets MPI finish the call), this one completes too, and MPI stays
  // usable for the program (a new team).
  constexpr auto grace = std::chrono::milliseconds(100);
  std::optional<Clock::time_point> abort_seen;
  for (int attempt = 0;; ++attempt) {
    int done = 0;
    test(done);
    if (done) {
      if (abort_seen) throw aborted();
      return;
    }
    if (attempt < 64) continue;
    if (attempt == 64) start = Clock::now();
    // Notes from other processes cost an MPI_Test each: every 16th round while spinning.
    if (watch_.listen && !abort_seen && (polite_ || attempt % 16 == 0)) watch_.listen();
    if (!abort_seen && watch_.abandoned && watch_.abandoned()) abort_seen = Clock::now();
    if (abort_seen && Clock::now() - *abort_seen > grace) {
      give_up();
      throw aborted();
    }
    if (timed && Clock::now() - start > limit) {
      give_up();
      const std::string message =
          "tlc: waited " + std::to_string(watch_.timeout_seconds) + " s (TLC_TIMEOUT) for " + what +
          " between processes: another process did not reach this call, or failed";
      if (watch_.abort_job_on_timeout)
        abort_job(message + "; TLC_TIMEOUT_ACTION=abort ends the job");
      throw Error(Errc::timeout, message);
    }
    // Oversubscribed: the awaited process needs this core (and after an abort nothing is gained
    // by holding one).
    if (polite_ || abort_seen) pace_polite_wait(attempt);
  }
}

void ProcessComm::complete(MPI_Request& request, const char* what) {
  poll(
      [&](int& done) {
        auto lock = serialize();
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
      },
      what);
}

template <class Nonblocking>
void ProcessComm::call(const char* what, Nonblocking nonblocking) {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = serialize();
    check_mpi(nonblocking(&request), what);
  }
  complete(request, what);
}

namespace {

// The MPI datatype and op of a reduction: MPI's own for built-in ops on built-in types, else a
// datatype carrying the combine function and a user op that calls it.
class Reduction {
 public:
  Reduction(const Call& call, MPI_Op commutative, MPI_Op ordered)
      : context_{call.combine, call.op_object, {}, {}, {}} {
    type_ = predefined_datatype(call.type);
    op_ = predefined_op(call.op, call.type);
    if (op_ == MPI_OP_NULL) {
      user_type_.emplace(call.type.size, &context_);
      type_ = user_type_->type;
      op_ = call.commutative ? commutative : ordered;
    }
  }
  Reduction(const Reduction&) = delete;
  Reduction& operator=(const Reduction&) = delete;
  MPI_Datatype type() const noexcept { return type_; }
  MPI_Op op() const noexcept { return op_; }
  // After the MPI call has completed: the user op's exception, if it threw (see UserOpContext).
  // The result of this process is then incomplete; the other processes of the call are not
  // told (docs/reliability.md).
  void rethrow_if_failed() {
    if (!context_.failed.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(context_.mutex);
    std::rethrow_exception(context_.error);
  }

 private:
  UserOpContext context_;
  std::optional<UserDatatype> user_type_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Op op_ = MPI_OP_NULL;
};

MPI_Count mpi_count(std::size_t n) { return static_cast<MPI_Count>(n); }

// Open MPI's non-blocking collectives (libnbc, 4.1) take a send buffer equal to the receive
// buffer for MPI_IN_PLACE and then follow their in-place schedule, while processes whose two
// buffers differ follow the ordinary one: messages stay unmatched and a later collective on the
// communicator hangs (an alltoallv of nothing from an empty staging region did). tlc never
// aliases the two on purpose; they coincide only where the send side moves nothing (an empty
// send region at the start of a staging buffer, or two null pointers), so that side gets an
// address of its own.
const void* apart(const void* send, const void* recv) {
  static const std::byte nothing{};
  return send == recv && send != MPI_IN_PLACE ? &nothing : send;
}

}  // namespace

void ProcessComm::wait_all(std::span<MPI_Request> requests, const char* what) {
  if (requests.empty()) return;
  const int count = static_cast<int>(requests.size());
  poll(
      [&](int& done) {
        auto lock = serialize();
        check_mpi(MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE), what);
      },
      what);
}

void ProcessComm::wait_all_alongside(std::span<MPI_Request> requests,
                                     const std::function<bool()>& alongside, const char* what) {
  const int count = static_cast<int>(requests.size());
  bool requests_done = requests.empty(), local_done = false;
  poll(
      [&](int& done) {
        if (!requests_done) {
          int flag = 0;
          auto lock = serialize();
          check_mpi(MPI_Testall(count, requests.data(), &flag, MPI_STATUSES_IGNORE), what);
          requests_done = flag != 0;
        }
        if (!local_done) local_done = alongside();
        done = requests_done && local_done ? 1 : 0;
      },
      what);
}

void ProcessComm::barrier() {
  call(
      "MPI_Barrier", [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
}

void ProcessComm::bcast(void* buf, std::size_t bytes, int root) {
  if (bytes == 0) return;
  call(
      "MPI_Bcast", [&](MPI_Request* r) {
        return large::ibcast(buf, mpi_count(bytes), MPI_BYTE, root, comm_, r);
      });
}

// MPI_IN_PLACE in allreduce and allgather must be given by all processes or by none (MPI 4.0
// sections 6.9.6 and 6.7), and tlc's processes differ: a one-thread process reduces the caller's
// buffers (the direct form) while the others reduce staging in place. MPICH tolerates the mix;
// Open MPI's libnbc picks its algorithm by it (in place: binomial; not: reduce-scatter +
// allgather from 64 KiB at 4 processes), so the processes ran different schedules: wrong sums
// from the second half on, MPI_ERR_TRUNCATE, hangs. Both always run in place here: the send
// block is copied into recv first, which MPI's out-of-place algorithms do internally anyway.
void ProcessComm::allreduce(const void* send, void* buf, std::size_t count, const Call& c) {
  if (count == 0) return;
  if (send && send != buf) std::memcpy(buf, send, count * c.type.size);
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Allreduce",
      [&](MPI_Request* r) {
        return large::iallreduce(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_,
                                 r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::reduce_in_place(void* buf, std::size_t count, const Call& c, int root) {
  if (count == 0) return;
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  // MPICH 4.0 (Debian 12) crashes in MPI_Reduce with MPI_IN_PLACE at a root other than 0 for
  // messages of a few KiB and more (reduce-scatter-gather path; reproduced with plain
  // MPI_Reduce). Such a root reduces into scratch memory and copies back: one local copy.
  const bool copy_back = rank_ == root && root != 0;
  thread_local std::vector<std::byte> scratch;
  if (copy_back && scratch.size() < count * c.type.size) scratch.resize(count * c.type.size);
  const void* send = rank_ == root && !copy_back ? MPI_IN_PLACE : buf;
  void* recv = rank_ != root ? nullptr : copy_back ? scratch.data() : buf;
  call(
      "MPI_Reduce",
      [&](MPI_Request* r) {
        return large::ireduce(send, recv, mpi_count(count), red.type(), red.op(), root, comm_, r);
      });
  red.rethrow_if_failed();
  if (copy_back) std::memcpy(buf, scratch.data(), count * c.type.size);
}

void ProcessComm::reduce_scatter(const void* send, void* recv, std::span<const MPI_Count> counts,
                                 const Call& c) {
  MPI_Count total = 0;
  for (MPI_Count n : counts) total += n;
  if (total == 0) return;
  send = apart(send, recv);
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Reduce_scatter",
      [&](MPI_Request* r) {
        return large::ireduce_scatter(send, recv, counts.data(), red.type(), red.op(), comm_, r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::reduce_scatter_block(const void* send, void* recv, std::size_t count,
                                       const Call& c) {
  if (count == 0) return;
  send = apart(send, recv);
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Reduce_scatter_block",
      [&](MPI_Request* r) {
        return large::ireduce_scatter_block(send, recv, mpi_count(count), red.type(), red.op(),
                                            comm_, r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::exscan_in_place(void* buf, std::size_t count, const Call& c) {
  if (count == 0) return;
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Exscan",
      [&](MPI_Request* r) {
        return large::iexscan(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_, r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::allgatherv_in_place(void* buf, std::span<const MPI_Count> bytes,
                                      std::span<const MPI_Aint> displs) {
  call(
      "MPI_Allgatherv",
      [&](MPI_Request* r) {
        return large::iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, bytes.data(),
                                  displs.data(), MPI_BYTE, comm_, r);
      });
}

// In place on every process, as allreduce above.
void ProcessComm::allgather(const void* send, void* recv, std::size_t bytes) {
  const auto count = static_cast<MPI_Count>(bytes);
  auto* mine = static_cast<std::byte*>(recv) + static_cast<std::size_t>(rank_) * bytes;
  if (send && send != mine && bytes > 0) std::memcpy(mine, send, bytes);
  call(
      "MPI_Allgather",
      [&](MPI_Request* r) {
        return large::iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_BYTE, comm_,
                                 r);
      });
}

void ProcessComm::alltoall(const void* send, void* recv, std::size_t bytes) {
  const auto count = static_cast<MPI_Count>(bytes);
  send = apart(send, recv);
  call(
      "MPI_Alltoall",
      [&](MPI_Request* r) {
        return large::ialltoall(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm_, r);
      });
}

void ProcessComm::gatherv(const void* send, std::size_t send_bytes, void* recv,
                          std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs,
                          int root) {
  const bool at_root = rank_ == root;
  const void* s = at_root ? MPI_IN_PLACE : apart(send, recv);
  call(
      "MPI_Gatherv",
      [&](MPI_Request* r) {
        return large::igatherv(s, mpi_count(send_bytes), MPI_BYTE, recv,
                               at_root ? bytes.data() : nullptr, at_root ? displs.data() : nullptr,
                               MPI_BYTE, root, comm_, r);
      });
}

void ProcessComm::scatterv(const void* send, std::span<const MPI_Count> bytes,
                           std::span<const MPI_Aint> displs, void* recv, std::size_t recv_bytes,
                           int root) {
  const bool at_root = rank_ == root;
  void* rv = at_root ? MPI_IN_PLACE : recv;
  if (!at_root) send = apart(send, recv);
  call(
      "MPI_Scatterv",
      [&](MPI_Request* r) {
        return large::iscatterv(send, at_root ? bytes.data() : nullptr,
                                at_root ? displs.data() : nullptr, MPI_BYTE, rv,
                                mpi_count(recv_bytes), MPI_BYTE, root, comm_, r);
      });
}

void ProcessComm::alltoallv(const void* send, std::span<const MPI_Count> send_bytes,
                            std::span<const MPI_Aint> send_displs, void* recv,
                            std::span<const MPI_Count> recv_bytes,
                            std::span<const MPI_Aint> recv_displs) {
  send = apart(send, recv);
  call(
      "MPI_Alltoallv",
      [&](MPI_Request* r) {
        return large::ialltoallv(send, send_bytes.data(), send_displs.data(), MPI_BYTE, recv,
                                 recv_bytes.data(), recv_displs.data(), MPI_BYTE, comm_, r);
      });
}

}  // namespace tlc::detail
