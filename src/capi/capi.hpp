// Internals of the C interface (include/tlc/tlc.h): the handles behind the opaque C types, the
// one place that turns C++ exceptions into tlc_status codes, and the user-op registry.
#pragma once

#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tlc/tlc.h>
#include <tlc/tlc.hpp>

struct tlc_team {
  tlc::Team team;
  tlc_team(MPI_Comm comm, tlc::TeamOptions options) : team(comm, std::move(options)) {}
};

struct tlc_participant {
  // The participant: the run's Thread, or the attached one or the sub-team's one owned here.
  tlc::Thread* thread = nullptr;
  std::optional<tlc::Thread> attached;
  // A participant of a sub-team (tlc_split), and the OS thread that made it: only that one may
  // free it, so that two threads cannot both free the handle of one.
  std::optional<tlc::Thread> sub_team;
  std::thread::id owner;
  // Set by tlc_abort: thrown when the body returns, which aborts the team.
  std::optional<std::string> abort_message;
  // The places this thread took in the order of nonblocking calls for calls it rejected
  // (tlc_ireject): completed (their errors dropped) when later calls start, or waited for when
  // the participant ends. Declared after `attached` and `sub_team`, so destroyed before them.
  std::vector<tlc::Request> rejected;
};

// Memory a binding handed to a request (tlc_request_keep), released with free().
struct tlc_kept_memory {
  std::vector<void*> blocks;
  tlc_kept_memory() = default;
  tlc_kept_memory(const tlc_kept_memory&) = delete;
  tlc_kept_memory& operator=(const tlc_kept_memory&) = delete;
  ~tlc_kept_memory();
};

// A tlc_request: a nonblocking request, or a persistent call. `kept` is declared first, so it
// is destroyed last: after the destructor of the request or call has waited for it.
struct tlc_request_object {
  tlc_kept_memory kept;
  tlc::Request request;
  tlc::Persistent persistent;
  bool is_persistent = false;
};

namespace tlc::capi {

// Records message as the calling thread's last error and returns status.
tlc_status fail(tlc_status status, const std::string& message) noexcept;

// The status of the exception being handled, its message recorded. Call inside a catch block.
tlc_status status_of_current_exception() noexcept;

// Runs f, turning every exception into a status: the only way C++ code is entered from C.
template <class F>
tlc_status guarded(F&& f) noexcept {
  try {
    f();
    return TLC_SUCCESS;
  } catch (...) {
    return status_of_current_exception();
  }
}

// The calling thread's participant, while it runs a body or is attached (tlc_current).
void set_current(tlc_participant* me) noexcept;

// A user op from the registry: the function and its argument, or nullptr for an op that was
// never created or was freed.
struct UserOp {
  tlc_user_function function = nullptr;
  void* user_data = nullptr;
  bool commutative = false;
};
const UserOp* find_user_op(tlc_op op) noexcept;

}  // namespace tlc::capi
