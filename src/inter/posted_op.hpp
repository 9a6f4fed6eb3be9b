// An MPI operation in flight: what ProcessComm's post_* functions started, and everything that
// must stay alive until MPI completes it (the request, the datatype and context of a user
// reduction, int copies of count arrays for MPI-3 libraries, scratch memory and a copy back).
// Blocking calls keep one on their stack and complete it at once; the calls that return before
// their data has moved (nonblocking and persistent thread collectives, algo/posted/) keep one in
// the call's shared state until a test finds it complete.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <mpi.h>

#include <tlc/detail/call.hpp>

#include "inter/mpi_large.hpp"

namespace tlc::detail {

class PointToPointRounds;  // inter/p2p_rounds.hpp

// A user MPI_Op has no context argument, so the combine function travels with the datatype:
// each reduction of a user op uses its own contiguous datatype carrying a UserOpContext
// attribute, which the trampoline (inter/process_comm.cpp) reads back. Safe with concurrent
// lanes, unlike a global. An exception from the user op must not unwind through MPI's C frames:
// the trampoline records the first one and skips every later combine of the call so that MPI
// finishes it quickly; the thread that completes the MPI call rethrows it.
struct UserOpContext {
  CombineFn combine = nullptr;
  const void* op_object = nullptr;
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;
};

// The MPI datatype and op of a reduction: MPI's own for built-in ops on built-in types, else a
// datatype carrying the combine function and a user op that calls it.
class Reduction {
 public:
  Reduction(const Call& call, MPI_Op commutative, MPI_Op ordered);
  ~Reduction();
  Reduction(const Reduction&) = delete;
  Reduction& operator=(const Reduction&) = delete;
  MPI_Datatype type() const noexcept { return type_; }
  MPI_Op op() const noexcept { return op_; }
  // After the MPI call has completed: the user op's exception, if it threw. The result of this
  // process is then incomplete; the other processes of the call are not told
  // (docs/reliability.md).
  void rethrow_if_failed();

 private:
  UserOpContext context_;
  MPI_Datatype user_type_ = MPI_DATATYPE_NULL;  // committed here for user ops only
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Op op_ = MPI_OP_NULL;
};

class PostedOp {
 public:
  PostedOp();
  PostedOp(const PostedOp&) = delete;
  PostedOp& operator=(const PostedOp&) = delete;
  // Frees a persistent request (inactive by then: every round was completed).
  ~PostedOp();

  const char* what() const noexcept { return what_; }
  // The operation is posted with the same arguments every round (a persistent call): with an
  // MPI library that has persistent collectives (MPI 4) the first post makes MPI's persistent
  // request and every post starts it. Set before the first post.
  void set_repeated() noexcept { repeated_ = true; }
  // Whether MPI's persistent request serves it.
  bool persistent() const noexcept { return persistent_made_; }
  // Before each post: the rounds a previous post ran (an op serves call after call, and keeps
  // its rounds for a later call with the same buffers) are not this post's unless it starts them.
  void begin() noexcept { on_rounds_ = false; }

 private:
  friend class ProcessComm;
  // After MPI completed the request: the copy back, then the user op's exception.
  void finish();

  // The reduction of this operation: made at the first post of a persistent request (whose
  // datatype must live as long as it), at every post otherwise.
  const Reduction& reduction(const Call& call, MPI_Op commutative, MPI_Op ordered) {
    if (persistent_made_ && reduction_) return *reduction_;
    return reduction_.emplace(call, commutative, ordered);
  }

  MPI_Request request_ = MPI_REQUEST_NULL;
  const char* what_ = "";
  bool repeated_ = false;
  bool persistent_made_ = false;
  std::optional<Reduction> reduction_;
  // Where the result goes once complete, when MPI could not write it in place.
  void* copy_to_ = nullptr;
  std::size_t copy_bytes_ = 0;
  std::vector<std::byte> scratch_;
  large::IntCopies int_copies_;
  // Instead of request_ where on_rounds_: tlc's own algorithm as rounds of point-to-point
  // requests (inter/p2p_rounds.hpp).
  std::unique_ptr<PointToPointRounds> rounds_;
  bool on_rounds_ = false;
};

}  // namespace tlc::detail
