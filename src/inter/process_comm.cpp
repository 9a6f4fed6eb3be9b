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
#include <optional>
#include <thread>
#include <vector>

#include <tlc/error.hpp>

#include "inter/mpi_check.hpp"
#include "inter/mpi_datatypes.hpp"

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

}  // namespace

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
                "tlc: MPI provides thread level " + std::to_string(provided) +
                    " but tlc needs at least MPI_THREAD_SERIALIZED (MPI_THREAD_MULTIPLE "
                    "recommended): team threads other than the main thread call MPI");
  g_serialize_mpi = provided < MPI_THREAD_MULTIPLE;
  return g_serialize_mpi;
}

NodeComm::NodeComm(MPI_Comm comm) : parent_(comm) {
  auto lock = ProcessComm::serialize();
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_),
            "MPI_Comm_split_type");
}

NodeComm::~NodeComm() {
  auto lock = ProcessComm::serialize();
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

NodeInfo NodeComm::info(std::uint64_t cpuset_key) {
  auto lock = ProcessComm::serialize();
  NodeInfo info;
  MPI_Comm_rank(node_, &info.rank);
  MPI_Comm_size(node_, &info.size);
  std::uint64_t keys[2] = {cpuset_key, ~cpuset_key}, extremes[2] = {0, 0};
  check_mpi(MPI_Allreduce(keys, extremes, 2, MPI_UINT64_T, MPI_MAX, node_), "MPI_Allreduce");
  info.same_cpusets = extremes[0] == cpuset_key && extremes[1] == ~cpuset_key;
  check_mpi(MPI_Allreduce(&info.size, &info.largest, 1, MPI_INT, MPI_MAX, parent_),
            "MPI_Allreduce");
  return info;
}

int NodeComm::sum(int value) {
  auto lock = ProcessComm::serialize();
  int total = value;
  check_mpi(MPI_Allreduce(&value, &total, 1, MPI_INT, MPI_SUM, node_), "MPI_Allreduce");
  return total;
}

int mpi_lane_parallelism() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  static const int parallelism = [] {
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
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
  }();
  return parallelism;
}

ProcessComm::ProcessComm(MPI_Comm parent, bool lane) {
  std::call_once(g_keyval_once, [] {
    check_mpi(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                     &g_context_keyval, nullptr),
              "MPI_Type_create_keyval");
  });
  auto lock = serialize();
  if (lane) {
    MPI_Info info = MPI_INFO_NULL;
    check_mpi(MPI_Info_create(&info), "MPI_Info_create");
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    const int rc = MPI_Comm_dup_with_info(parent, info, &comm_);
    MPI_Info_free(&info);
    check_mpi(rc, "MPI_Comm_dup_with_info");
  } else {
    check_mpi(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
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
  auto lock = serialize();
  check_mpi(MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, comm_), "MPI_Allgather");
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
      [&] {
        return MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                             static_cast<int>(mine.size()), MPI_INT64_T, comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                              static_cast<int>(mine.size()), MPI_INT64_T, comm_, r);
      });
  return all;
}

int ProcessComm::allreduce_max(int value) {
  int result = value;
  auto lock = serialize();
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
  return result;
}

void ProcessComm::allreduce_max(std::span<int> values) {
  auto lock = serialize();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT,
                          MPI_MAX, comm_),
            "MPI_Allreduce");
}

void ProcessComm::agree_or_throw(const std::string& local_error, int local_code) {
  const int failed_here = local_error.empty() ? size_ : rank_;
  int first_failed = failed_here;
  {
    auto lock = serialize();
    check_mpi(MPI_Allreduce(&failed_here, &first_failed, 1, MPI_INT, MPI_MIN, comm_),
              "MPI_Allreduce");
  }
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
  const Clock::time_point start = Clock::now();
  const bool timed = watch_.timeout_seconds > 0;
  const auto limit = std::chrono::duration<double>(watch_.timeout_seconds);
  // Giving up leaves the operation pending inside MPI: this communicator is not freed, and
  // tlc::Environment ends the job instead of finalising.
  const auto give_up = [&] {
    abandoned_.store(true, std::memory_order_release);
    g_abandoned.store(true, std::memory_order_release);
  };
  for (int attempt = 0;; ++attempt) {
    int done = 0;
    test(done);
    if (done) return;
    if (attempt < 64) continue;
    if (watch_.abandoned && watch_.abandoned()) {
      give_up();
      throw TeamAborted(std::string("tlc: team aborted while waiting for ") + what +
                        " between processes");
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
    if (!polite_ || attempt < 256) {
      if (polite_) std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
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

template <class Blocking, class Nonblocking>
void ProcessComm::call(const char* what, Blocking blocking, Nonblocking nonblocking) {
  if (watched()) {
    MPI_Request request = MPI_REQUEST_NULL;
    {
      auto lock = serialize();
      check_mpi(nonblocking(&request), what);
    }
    complete(request, what);
    return;
  }
  auto lock = serialize();
  check_mpi(blocking(), what);
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

}  // namespace

void ProcessComm::wait_all(std::span<MPI_Request> requests, const char* what) {
  if (requests.empty()) return;
  const int count = static_cast<int>(requests.size());
  if (!watched()) {
    auto lock = serialize();
    check_mpi(MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE), what);
    return;
  }
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
      "MPI_Barrier", [&] { return MPI_Barrier(comm_); },
      [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
}

void ProcessComm::bcast(void* buf, std::size_t bytes, int root) {
  if (bytes == 0) return;
  call(
      "MPI_Bcast", [&] { return MPI_Bcast_c(buf, mpi_count(bytes), MPI_BYTE, root, comm_); },
      [&](MPI_Request* r) {
        return MPI_Ibcast_c(buf, mpi_count(bytes), MPI_BYTE, root, comm_, r);
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
      [&] {
        return MPI_Allreduce_c(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Iallreduce_c(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_,
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
      [&] { return MPI_Reduce_c(send, recv, mpi_count(count), red.type(), red.op(), root, comm_); },
      [&](MPI_Request* r) {
        return MPI_Ireduce_c(send, recv, mpi_count(count), red.type(), red.op(), root, comm_, r);
      });
  red.rethrow_if_failed();
  if (copy_back) std::memcpy(buf, scratch.data(), count * c.type.size);
}

void ProcessComm::reduce_scatter(const void* send, void* recv, std::span<const MPI_Count> counts,
                                 const Call& c) {
  MPI_Count total = 0;
  for (MPI_Count n : counts) total += n;
  if (total == 0) return;
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Reduce_scatter",
      [&] { return MPI_Reduce_scatter_c(send, recv, counts.data(), red.type(), red.op(), comm_); },
      [&](MPI_Request* r) {
        return MPI_Ireduce_scatter_c(send, recv, counts.data(), red.type(), red.op(), comm_, r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::reduce_scatter_block(const void* send, void* recv, std::size_t count,
                                       const Call& c) {
  if (count == 0) return;
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Reduce_scatter_block",
      [&] {
        return MPI_Reduce_scatter_block_c(send, recv, mpi_count(count), red.type(), red.op(),
                                          comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Ireduce_scatter_block_c(send, recv, mpi_count(count), red.type(), red.op(),
                                           comm_, r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::exscan_in_place(void* buf, std::size_t count, const Call& c) {
  if (count == 0) return;
  Reduction red(c, user_op_commutative_, user_op_ordered_);
  call(
      "MPI_Exscan",
      [&] {
        return MPI_Exscan_c(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Iexscan_c(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_, r);
      });
  red.rethrow_if_failed();
}

void ProcessComm::allgatherv_in_place(void* buf, std::span<const MPI_Count> bytes,
                                      std::span<const MPI_Aint> displs) {
  call(
      "MPI_Allgatherv",
      [&] {
        return MPI_Allgatherv_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, bytes.data(),
                                displs.data(), MPI_BYTE, comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Iallgatherv_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, bytes.data(),
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
      [&] {
        return MPI_Allgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_BYTE, comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Iallgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_BYTE, comm_,
                                r);
      });
}

void ProcessComm::alltoall(const void* send, void* recv, std::size_t bytes) {
  const auto count = static_cast<MPI_Count>(bytes);
  call(
      "MPI_Alltoall",
      [&] { return MPI_Alltoall_c(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm_); },
      [&](MPI_Request* r) {
        return MPI_Ialltoall_c(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm_, r);
      });
}

void ProcessComm::gatherv(const void* send, std::size_t send_bytes, void* recv,
                          std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs,
                          int root) {
  const bool at_root = rank_ == root;
  const void* s = at_root ? MPI_IN_PLACE : send;
  call(
      "MPI_Gatherv",
      [&] {
        return MPI_Gatherv_c(s, mpi_count(send_bytes), MPI_BYTE, recv,
                             at_root ? bytes.data() : nullptr, at_root ? displs.data() : nullptr,
                             MPI_BYTE, root, comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Igatherv_c(s, mpi_count(send_bytes), MPI_BYTE, recv,
                              at_root ? bytes.data() : nullptr, at_root ? displs.data() : nullptr,
                              MPI_BYTE, root, comm_, r);
      });
}

void ProcessComm::scatterv(const void* send, std::span<const MPI_Count> bytes,
                           std::span<const MPI_Aint> displs, void* recv, std::size_t recv_bytes,
                           int root) {
  const bool at_root = rank_ == root;
  void* rv = at_root ? MPI_IN_PLACE : recv;
  call(
      "MPI_Scatterv",
      [&] {
        return MPI_Scatterv_c(send, at_root ? bytes.data() : nullptr,
                              at_root ? displs.data() : nullptr, MPI_BYTE, rv,
                              mpi_count(recv_bytes), MPI_BYTE, root, comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Iscatterv_c(send, at_root ? bytes.data() : nullptr,
                               at_root ? displs.data() : nullptr, MPI_BYTE, rv,
                               mpi_count(recv_bytes), MPI_BYTE, root, comm_, r);
      });
}

void ProcessComm::alltoallv(const void* send, std::span<const MPI_Count> send_bytes,
                            std::span<const MPI_Aint> send_displs, void* recv,
                            std::span<const MPI_Count> recv_bytes,
                            std::span<const MPI_Aint> recv_displs) {
  call(
      "MPI_Alltoallv",
      [&] {
        return MPI_Alltoallv_c(send, send_bytes.data(), send_displs.data(), MPI_BYTE, recv,
                               recv_bytes.data(), recv_displs.data(), MPI_BYTE, comm_);
      },
      [&](MPI_Request* r) {
        return MPI_Ialltoallv_c(send, send_bytes.data(), send_displs.data(), MPI_BYTE, recv,
                                recv_bytes.data(), recv_displs.data(), MPI_BYTE, comm_, r);
      });
}

}  // namespace tlc::detail
