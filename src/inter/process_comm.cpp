// The collectives of a team's process-level and lane communicators (inter/process_comm.hpp):
// each posts MPI's non-blocking form and completes it in the communicator's wait loop; the
// reductions carry user ops into MPI through a datatype attribute.
#include "inter/process_comm.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <tlc/error.hpp>

#include "inter/mpi_check.hpp"
#include "inter/mpi_datatypes.hpp"
#include "inter/mpi_large.hpp"
#include "inter/p2p.hpp"
#include "inter/p2p_rounds.hpp"

namespace tlc::detail {

namespace {

// User ops: see UserOpContext (inter/posted_op.hpp). The callback may run on any thread that
// drives MPI's progress (another lane's MPI_Test), hence the context's lock.
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

}  // namespace

ProcessComm::ProcessComm(MPI_Comm parent, bool lane) {
  std::call_once(g_keyval_once, [] {
    check_mpi(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                     &g_context_keyval, nullptr),
              "MPI_Type_create_keyval");
  });
  return_world_errors_to_tlc();
  comm_ = duplicate_comm(parent, /*assert_no_wildcards=*/lane);
  auto lock = serialize();
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int* tag_ub = nullptr;
  int has_tag_ub = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &has_tag_ub);
  if (has_tag_ub && tag_ub) tag_limit_ = *tag_ub;
  // The largest top with every tag below 2^(top + 1) allowed.
  const int top = std::bit_width(static_cast<unsigned>(tag_limit_) + 1U) - 2;
  message_tag_base_ = 1 << top;
  message_tag_mask_ = (std::uint64_t{1} << (top - step_bits)) - 1;
  check_mpi(MPI_Op_create(&user_op_trampoline, 1, &user_op_commutative_), "MPI_Op_create");
  check_mpi(MPI_Op_create(&user_op_trampoline, 0, &user_op_ordered_), "MPI_Op_create");
}

ProcessComm::~ProcessComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // MPI already released everything
  // An operation given up on may still be pending on it: freeing could wait for it.
  if (wait_.gave_up()) return;
  auto lock = serialize();
  if (user_op_commutative_ != MPI_OP_NULL) MPI_Op_free(&user_op_commutative_);
  if (user_op_ordered_ != MPI_OP_NULL) MPI_Op_free(&user_op_ordered_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

MPI_Comm ProcessComm::create_group(std::span<const int> processes) const {
  auto lock = serialize();
  MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(comm_, &all), "MPI_Comm_group");
  const int rc = MPI_Group_incl(all, static_cast<int>(processes.size()), processes.data(), &some);
  MPI_Group_free(&all);
  check_mpi(rc, "MPI_Group_incl");
  MPI_Comm made = MPI_COMM_NULL;
  // One tag for every group: the common order of the calls keeps them apart.
  const int created = MPI_Comm_create_group(comm_, some, /*tag=*/0, &made);
  MPI_Group_free(&some);
  check_mpi(created, "MPI_Comm_create_group");
  return made;
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
  call("MPI_Allgather", [&](MPI_Request* r) {
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

Reduction::Reduction(const Call& call, MPI_Op commutative, MPI_Op ordered)
    : context_{call.combine, call.op_object, {}, {}, {}} {
  type_ = predefined_datatype(call.type);
  op_ = predefined_op(call.op, call.type);
  if (op_ == MPI_OP_NULL) {
    check_mpi(MPI_Type_contiguous(static_cast<int>(call.type.size), MPI_BYTE, &user_type_),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&user_type_), "MPI_Type_commit");
    check_mpi(MPI_Type_set_attr(user_type_, g_context_keyval, &context_), "MPI_Type_set_attr");
    type_ = user_type_;
    op_ = call.commutative ? commutative : ordered;
  }
}

Reduction::~Reduction() {
  if (user_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&user_type_);
}

void Reduction::rethrow_if_failed() {
  if (!context_.failed.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(context_.mutex);
  std::rethrow_exception(context_.error);
}

void PostedOp::finish() {
  if (copy_bytes_) std::memcpy(copy_to_, scratch_.data(), copy_bytes_);
  if (!persistent_made_) copy_bytes_ = 0;  // a persistent request copies back every round
  if (reduction_) reduction_->rethrow_if_failed();
}

PostedOp::PostedOp() = default;

PostedOp::~PostedOp() {
  if (!persistent_made_ || request_ == MPI_REQUEST_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || mpi_operation_abandoned()) return;
  auto lock = serialize_mpi();
  MPI_Request_free(&request_);
}

template <class Nonblocking>
void ProcessComm::post(PostedOp& op, const char* what, Nonblocking nonblocking) {
  post(op, what, nonblocking, nullptr);
}

template <class Nonblocking, class Init>
void ProcessComm::post(PostedOp& op, const char* what, Nonblocking nonblocking, Init init) {
  op.what_ = what;
  auto lock = serialize();
  if (op.persistent_made_) {
    check_mpi(MPI_Start(&op.request_), "MPI_Start");
    return;
  }
  large::int_copies_for() = &op.int_copies_;
  int status = MPI_SUCCESS;
  if constexpr (!std::is_same_v<Init, std::nullptr_t>) {
    if (op.repeated_ && large::persistent_collectives) {
      status = init(&op.request_);
      if (status == MPI_SUCCESS) {
        op.persistent_made_ = true;
        status = MPI_Start(&op.request_);
      }
    } else {
      status = nonblocking(&op.request_);
    }
  } else {
    status = nonblocking(&op.request_);
  }
  large::int_copies_for() = nullptr;
  check_mpi(status, what);
}

void ProcessComm::complete(PostedOp& op) {
  if (op.on_rounds_) {
    wait_.wait_until([&] { return op.rounds_->test(op.what_); }, op.what_);
  } else if (op.request_ != MPI_REQUEST_NULL) {
    wait_.complete(op.request_, op.what_);
  }
  op.finish();
}

bool ProcessComm::test(PostedOp& op) {
  if (op.on_rounds_) {
    if (!op.rounds_->test(op.what_)) return false;
  } else if (op.request_ != MPI_REQUEST_NULL) {
    int done = 0;
    {
      auto lock = serialize();
      const WorldErrorsReturned returned;
      check_mpi(MPI_Test(&op.request_, &done, MPI_STATUS_IGNORE), op.what_);
    }
    if (!done) return false;
  }
  op.finish();
  return true;
}

template <class Nonblocking>
void ProcessComm::call(const char* what, Nonblocking nonblocking) {
  PostedOp op;
  post(op, what, nonblocking);
  complete(op);
}

namespace {

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

// Each blocking collective is its post_ form completed at once.
void ProcessComm::barrier() {
  PostedOp op;
  post_barrier(op);
  complete(op);
}
void ProcessComm::sum_in_place(std::span<double> values) {
  call("MPI_Allreduce", [&](MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                          MPI_SUM, comm_, r);
  });
}
void ProcessComm::bcast(void* buf, std::size_t bytes, int root) {
  PostedOp op;
  post_bcast(op, buf, bytes, root);
  complete(op);
}
void ProcessComm::allreduce(const void* send, void* buf, std::size_t count, const Call& c) {
  PostedOp op;
  post_allreduce(op, send, buf, count, c);
  complete(op);
}
void ProcessComm::reduce_in_place(void* buf, std::size_t count, const Call& c, int root) {
  PostedOp op;
  post_reduce_in_place(op, buf, count, c, root);
  complete(op);
}
void ProcessComm::reduce_scatter(const void* send, void* recv, std::span<const MPI_Count> counts,
                                 const Call& c) {
  PostedOp op;
  post_reduce_scatter(op, send, recv, counts, c);
  complete(op);
}
void ProcessComm::exscan_in_place(void* buf, std::size_t count, const Call& c) {
  PostedOp op;
  post_exscan_in_place(op, buf, count, c);
  complete(op);
}
void ProcessComm::allgatherv_in_place(void* buf, std::span<const MPI_Count> bytes,
                                      std::span<const MPI_Aint> displs) {
  PostedOp op;
  post_allgatherv_in_place(op, buf, bytes, displs);
  complete(op);
}
void ProcessComm::gatherv(const void* send, std::size_t send_bytes, void* recv,
                          std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs,
                          int root) {
  PostedOp op;
  post_gatherv(op, send, send_bytes, recv, bytes, displs, root);
  complete(op);
}
void ProcessComm::scatterv(const void* send, std::span<const MPI_Count> bytes,
                           std::span<const MPI_Aint> displs, void* recv, std::size_t recv_bytes,
                           int root) {
  PostedOp op;
  post_scatterv(op, send, bytes, displs, recv, recv_bytes, root);
  complete(op);
}
void ProcessComm::alltoallv(const void* send, std::span<const MPI_Count> send_bytes,
                            std::span<const MPI_Aint> send_displs, void* recv,
                            std::span<const MPI_Count> recv_bytes,
                            std::span<const MPI_Aint> recv_displs) {
  PostedOp op;
  post_alltoallv(op, send, send_bytes, send_displs, recv, recv_bytes, recv_displs);
  complete(op);
}

void ProcessComm::post_barrier(PostedOp& op) {
  post(
      op, "MPI_Barrier", [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); },
      [&](MPI_Request* r) { return large::barrier_init(comm_, r); });
}

void ProcessComm::post_bcast(PostedOp& op, void* buf, std::size_t bytes, int root) {
  if (bytes == 0) return;
  post(
      op, "MPI_Bcast",
      [&](MPI_Request* r) {
        return large::ibcast(buf, mpi_count(bytes), MPI_BYTE, root, comm_, r);
      },
      [&](MPI_Request* r) {
        return large::bcast_init(buf, mpi_count(bytes), MPI_BYTE, root, comm_, r);
      });
}

// MPI_IN_PLACE in allreduce and allgather must be given by all processes or by none (MPI 4.0
// sections 6.9.6 and 6.7), and tlc's processes differ: a one-thread process reduces the caller's
// buffers (the direct form) while the others reduce staging in place. MPICH tolerates the mix;
// Open MPI's libnbc picks its algorithm by it (in place: binomial; not: reduce-scatter +
// allgather from 64 KiB at 4 processes), so the processes ran different schedules: wrong sums
// from the second half on, MPI_ERR_TRUNCATE, hangs. Both always run in place here: the send
// block is copied into recv first, which MPI's out-of-place algorithms do internally anyway.
void ProcessComm::post_allreduce(PostedOp& op, const void* send, void* buf, std::size_t count,
                                 const Call& c) {
  if (count == 0) return;
  if (send && send != buf) std::memcpy(buf, send, count * c.type.size);
  const Reduction& red = op.reduction(c, user_op_commutative_, user_op_ordered_);
  post(
      op, "MPI_Allreduce",
      [&](MPI_Request* r) {
        return large::iallreduce(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_,
                                 r);
      },
      [&](MPI_Request* r) {
        return large::allreduce_init(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(),
                                     comm_, r);
      });
}

namespace {

// The tag of a nonblocking call's one-shot rounds: its place in the order of posted calls
// (two calls in flight at once never share one) with what the call is and its bytes (a call
// that disagrees never matches, as with wire_tag).
int posted_call_tag(const ProcessComm& comm, const Call& c, std::size_t bytes,
                    std::uint64_t place) noexcept {
  return comm.message_tag(
      static_cast<int>(p2p::util::Tag::posted_call),
      p2p::util::call_word(c) * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(bytes) + place);
}

}  // namespace

void ProcessComm::post_allreduce_rounds(PostedOp& op, const void* send, void* buf,
                                        std::size_t count, const Call& c, bool rabenseifner,
                                        std::uint64_t place) {
  if (count == 0) return;
  const void* input = send ? send : buf;
  op.what_ = rabenseifner ? "Rabenseifner allreduce" : "recursive doubling allreduce";
  if (place == 0) {
    if (!op.rounds_ || !op.rounds_->made_for(input, buf))
      op.rounds_ = PointToPointRounds::allreduce(
          comm_, next_rounds_tag(), static_cast<const std::byte*>(input),
          static_cast<std::byte*>(buf), count, c, rabenseifner);
    op.rounds_->start(c.combine, c.op_object);
    op.on_rounds_ = true;
    return;
  }
  if (!op.rounds_ ||
      !op.rounds_->reusable(input, buf,
                            PointToPointRounds::allreduce_key(count, c.type.size, rabenseifner)))
    op.rounds_ =
        PointToPointRounds::allreduce(comm_, -1, static_cast<const std::byte*>(input),
                                      static_cast<std::byte*>(buf), count, c, rabenseifner);
  op.rounds_->start(c.combine, c.op_object, posted_call_tag(*this, c, count * c.type.size, place));
  op.on_rounds_ = true;
}

void ProcessComm::post_bcast_rounds(PostedOp& op, void* buf, std::size_t bytes, int root,
                                    const Call& c, std::uint64_t place) {
  if (bytes == 0) return;
  op.what_ = "binomial bcast";
  auto* data = static_cast<std::byte*>(buf);
  if (place == 0) {
    if (!op.rounds_ || !op.rounds_->made_for(buf, buf))
      op.rounds_ = PointToPointRounds::bcast(comm_, next_rounds_tag(), data, bytes, root);
    op.rounds_->start();
  } else {
    if (!op.rounds_ || !op.rounds_->reusable(buf, buf, PointToPointRounds::bcast_key(bytes, root)))
      op.rounds_ = PointToPointRounds::bcast(comm_, -1, data, bytes, root);
    op.rounds_->start(nullptr, nullptr, posted_call_tag(*this, c, bytes, place));
  }
  op.on_rounds_ = true;
}

void ProcessComm::post_alltoallv_rounds(PostedOp& op, const void* send,
                                        std::span<const MPI_Count> send_bytes,
                                        std::span<const MPI_Aint> send_displs, void* recv,
                                        std::span<const MPI_Count> recv_bytes,
                                        std::span<const MPI_Aint> recv_displs, const Call& c,
                                        std::size_t agreed_bytes, std::uint64_t place) {
  op.what_ = "alltoall (all messages at once)";
  auto make = [&](int tag) {
    return PointToPointRounds::alltoallv(comm_, tag, static_cast<const std::byte*>(send),
                                         send_bytes, send_displs, static_cast<std::byte*>(recv),
                                         recv_bytes, recv_displs);
  };
  if (place == 0) {
    if (!op.rounds_ || !op.rounds_->made_for(send, recv)) op.rounds_ = make(next_rounds_tag());
    op.rounds_->start();
    op.on_rounds_ = true;
    return;
  }
  if (!op.rounds_ || !op.rounds_->reusable(send, recv,
                                           PointToPointRounds::alltoallv_key(
                                               send_bytes, send_displs, recv_bytes, recv_displs)))
    op.rounds_ = make(-1);
  op.rounds_->start(nullptr, nullptr, posted_call_tag(*this, c, agreed_bytes, place));
  op.on_rounds_ = true;
}

void ProcessComm::post_reduce_in_place(PostedOp& op, void* buf, std::size_t count, const Call& c,
                                       int root) {
  if (count == 0) return;
  const Reduction& red = op.reduction(c, user_op_commutative_, user_op_ordered_);
  // MPICH 4.0 (Debian 12) crashes in MPI_Reduce with MPI_IN_PLACE at a root other than 0 for
  // messages of a few KiB and more (reduce-scatter-gather path; reproduced with plain
  // MPI_Reduce). Such a root reduces into scratch memory and copies back: one local copy.
  const bool copy_back = rank_ == root && root != 0;
  if (copy_back) {
    op.scratch_.resize(count * c.type.size);
    op.copy_to_ = buf;
    op.copy_bytes_ = count * c.type.size;
  }
  const void* send = rank_ == root && !copy_back ? MPI_IN_PLACE : buf;
  void* recv = rank_ != root ? nullptr : copy_back ? op.scratch_.data() : buf;
  post(
      op, "MPI_Reduce",
      [&](MPI_Request* r) {
        return large::ireduce(send, recv, mpi_count(count), red.type(), red.op(), root, comm_, r);
      },
      [&](MPI_Request* r) {
        return large::reduce_init(send, recv, mpi_count(count), red.type(), red.op(), root, comm_,
                                  r);
      });
}

void ProcessComm::post_reduce_scatter(PostedOp& op, const void* send, void* recv,
                                      std::span<const MPI_Count> counts, const Call& c) {
  MPI_Count total = 0;
  for (MPI_Count n : counts) total += n;
  if (total == 0) return;
  send = apart(send, recv);
  const Reduction& red = op.reduction(c, user_op_commutative_, user_op_ordered_);
  post(
      op, "MPI_Reduce_scatter",
      [&](MPI_Request* r) {
        return large::ireduce_scatter(send, recv, counts.data(), red.type(), red.op(), comm_, r);
      },
      [&](MPI_Request* r) {
        return large::reduce_scatter_init(send, recv, counts.data(), red.type(), red.op(), comm_,
                                          r);
      });
}

void ProcessComm::reduce_scatter_block(const void* send, void* recv, std::size_t count,
                                       const Call& c) {
  if (count == 0) return;
  send = apart(send, recv);
  PostedOp op;
  const Reduction& red = op.reduction(c, user_op_commutative_, user_op_ordered_);
  post(
      op, "MPI_Reduce_scatter_block",
      [&](MPI_Request* r) {
        return large::ireduce_scatter_block(send, recv, mpi_count(count), red.type(), red.op(),
                                            comm_, r);
      },
      [&](MPI_Request* r) {
        return large::reduce_scatter_block_init(send, recv, mpi_count(count), red.type(), red.op(),
                                                comm_, r);
      });
  complete(op);
}

void ProcessComm::post_exscan_in_place(PostedOp& op, void* buf, std::size_t count, const Call& c) {
  if (count == 0) return;
  const Reduction& red = op.reduction(c, user_op_commutative_, user_op_ordered_);
  post(
      op, "MPI_Exscan",
      [&](MPI_Request* r) {
        return large::iexscan(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_, r);
      },
      [&](MPI_Request* r) {
        return large::exscan_init(MPI_IN_PLACE, buf, mpi_count(count), red.type(), red.op(), comm_,
                                  r);
      });
}

void ProcessComm::post_allgatherv_in_place(PostedOp& op, void* buf,
                                           std::span<const MPI_Count> bytes,
                                           std::span<const MPI_Aint> displs) {
  post(
      op, "MPI_Allgatherv",
      [&](MPI_Request* r) {
        return large::iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, bytes.data(),
                                  displs.data(), MPI_BYTE, comm_, r);
      },
      [&](MPI_Request* r) {
        return large::allgatherv_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, bytes.data(),
                                      displs.data(), MPI_BYTE, comm_, r);
      });
}

// In place on every process, as allreduce above.
void ProcessComm::allgather(const void* send, void* recv, std::size_t bytes) {
  const auto count = static_cast<MPI_Count>(bytes);
  auto* mine = static_cast<std::byte*>(recv) + static_cast<std::size_t>(rank_) * bytes;
  if (send && send != mine && bytes > 0) std::memcpy(mine, send, bytes);
  call("MPI_Allgather", [&](MPI_Request* r) {
    return large::iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_BYTE, comm_, r);
  });
}

void ProcessComm::alltoall(const void* send, void* recv, std::size_t bytes) {
  const auto count = static_cast<MPI_Count>(bytes);
  send = apart(send, recv);
  call("MPI_Alltoall", [&](MPI_Request* r) {
    return large::ialltoall(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm_, r);
  });
}

void ProcessComm::post_gatherv(PostedOp& op, const void* send, std::size_t send_bytes, void* recv,
                               std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs,
                               int root) {
  const bool at_root = rank_ == root;
  const void* s = at_root ? MPI_IN_PLACE : apart(send, recv);
  post(
      op, "MPI_Gatherv",
      [&](MPI_Request* r) {
        return large::igatherv(s, mpi_count(send_bytes), MPI_BYTE, recv,
                               at_root ? bytes.data() : nullptr, at_root ? displs.data() : nullptr,
                               MPI_BYTE, root, comm_, r);
      },
      [&](MPI_Request* r) {
        return large::gatherv_init(s, mpi_count(send_bytes), MPI_BYTE, recv,
                                   at_root ? bytes.data() : nullptr,
                                   at_root ? displs.data() : nullptr, MPI_BYTE, root, comm_, r);
      });
}

void ProcessComm::post_scatterv(PostedOp& op, const void* send, std::span<const MPI_Count> bytes,
                                std::span<const MPI_Aint> displs, void* recv,
                                std::size_t recv_bytes, int root) {
  const bool at_root = rank_ == root;
  void* rv = at_root ? MPI_IN_PLACE : recv;
  if (!at_root) send = apart(send, recv);
  post(
      op, "MPI_Scatterv",
      [&](MPI_Request* r) {
        return large::iscatterv(send, at_root ? bytes.data() : nullptr,
                                at_root ? displs.data() : nullptr, MPI_BYTE, rv,
                                mpi_count(recv_bytes), MPI_BYTE, root, comm_, r);
      },
      [&](MPI_Request* r) {
        return large::scatterv_init(send, at_root ? bytes.data() : nullptr,
                                    at_root ? displs.data() : nullptr, MPI_BYTE, rv,
                                    mpi_count(recv_bytes), MPI_BYTE, root, comm_, r);
      });
}

void ProcessComm::post_alltoallv(PostedOp& op, const void* send,
                                 std::span<const MPI_Count> send_bytes,
                                 std::span<const MPI_Aint> send_displs, void* recv,
                                 std::span<const MPI_Count> recv_bytes,
                                 std::span<const MPI_Aint> recv_displs) {
  send = apart(send, recv);
  post(
      op, "MPI_Alltoallv",
      [&](MPI_Request* r) {
        return large::ialltoallv(send, send_bytes.data(), send_displs.data(), MPI_BYTE, recv,
                                 recv_bytes.data(), recv_displs.data(), MPI_BYTE, comm_, r);
      },
      [&](MPI_Request* r) {
        return large::alltoallv_init(send, send_bytes.data(), send_displs.data(), MPI_BYTE, recv,
                                     recv_bytes.data(), recv_displs.data(), MPI_BYTE, comm_, r);
      });
}

}  // namespace tlc::detail
