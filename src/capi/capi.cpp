// The C interface (include/tlc/tlc.h), apart from the collectives (capi/dispatch.hpp):
// errors, MPI lifetime, teams, run, attach and user ops. Every entry point goes through
// capi::guarded, so no exception crosses into C.
#include "capi/capi.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>

namespace tlc::capi {
namespace {

thread_local std::string last_error;
thread_local tlc_participant* current_participant = nullptr;

tlc_status status_of(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return TLC_ERR_INVALID_ARGUMENT;
    case Errc::mismatch:
      return TLC_ERR_MISMATCH;
    case Errc::mpi:
      return TLC_ERR_MPI;
    case Errc::topology:
      return TLC_ERR_TOPOLOGY;
    case Errc::timeout:
      return TLC_ERR_TIMEOUT;
    case Errc::aborted:
      return TLC_ERR_ABORTED;
    case Errc::unsupported:
      return TLC_ERR_UNSUPPORTED;
  }
  return TLC_ERR_INTERNAL;
}

// User ops live in a fixed table of slots, so that looking one up during a collective takes no
// lock; creating and freeing (rare) take one.
constexpr tlc_op first_user_op = 1000;
constexpr std::size_t user_op_slots = 4096;
std::array<std::atomic<UserOp*>, user_op_slots> user_ops{};
std::mutex user_ops_mutex;

// tlc_init's environment; MPI is finalised when tlc_finalize destroys it.
std::mutex environment_mutex;
std::unique_ptr<Environment> environment;

}  // namespace

tlc_status fail(tlc_status status, const std::string& message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    last_error.clear();  // out of memory for the message: the code still says what happened
  }
  return status;
}

tlc_status status_of_current_exception() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return fail(status_of(e.code()), e.what());
  } catch (const std::bad_alloc& e) {
    return fail(TLC_ERR_NO_MEMORY, std::string("tlc: out of memory (") + e.what() + ")");
  } catch (const std::invalid_argument& e) {
    return fail(TLC_ERR_INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return fail(TLC_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(TLC_ERR_INTERNAL, "tlc: unknown exception");
  }
}

void set_current(tlc_participant* me) noexcept { current_participant = me; }

const UserOp* find_user_op(tlc_op op) noexcept {
  if (op < first_user_op || op >= first_user_op + static_cast<tlc_op>(user_op_slots))
    return nullptr;
  return user_ops[static_cast<std::size_t>(op - first_user_op)].load(std::memory_order_acquire);
}

namespace {

// The string options: NULL means unset.
std::string text(const char* s) { return s ? std::string(s) : std::string(); }

std::optional<bool> tristate(int value, const char* field) {
  if (value < -1 || value > 1)
    throw Error(Errc::invalid_argument, std::string("tlc_team_create: options.") + field + " is " +
                                            std::to_string(value) + " (1, 0, or -1 for unset)");
  if (value < 0) return std::nullopt;
  return value == 1;
}

// "allreduce=full_lane,bcast=binomial:pipelined" (';' also separates).
std::map<Collective, std::string> parse_algorithms(const char* spec) {
  std::map<Collective, std::string> result;
  if (!spec) return result;
  const std::string all(spec);
  std::size_t at = 0;
  while (at <= all.size()) {
    std::size_t end = all.find_first_of(",;", at);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error(Errc::invalid_argument, "tlc_team_create: options.algorithms: '" + item +
                                              "' is not collective=algorithm[:form]");
    const std::string name = item.substr(0, eq);
    std::optional<Collective> found;
    std::string known;
    for (int c = static_cast<int>(Collective::barrier); c <= static_cast<int>(Collective::exscan);
         ++c) {
      const auto collective = static_cast<Collective>(c);
      known += (known.empty() ? "" : ", ") + std::string(to_string(collective));
      if (name == to_string(collective)) found = collective;
    }
    if (!found)
      throw Error(Errc::invalid_argument,
                  "tlc_team_create: options.algorithms: unknown collective '" + name +
                      "' (known: " + known + ")");
    result[*found] = item.substr(eq + 1);
  }
  return result;
}

TeamOptions to_options(const tlc_team_options& o) {
  TeamOptions options;
  options.threads = o.threads;
  options.threads_per_numa = o.threads_per_numa;
  options.lanes = o.lanes;
  options.threads_per_rail = o.threads_per_rail;
  options.pin = tristate(o.pin, "pin");
  options.reproducible = o.reproducible != 0;
  options.timeout_seconds = o.timeout_seconds;
  options.timeout_action = text(o.timeout_action);
  options.pipeline_chunk_bytes = o.pipeline_chunk_bytes;
  options.algorithms = parse_algorithms(o.algorithms);
  options.fallback = text(o.fallback);
  options.leaders = text(o.leaders);
  options.check = tristate(o.check, "check");
  options.stats = tristate(o.stats, "stats");
  options.tuning_file = text(o.tuning_file);
  if (o.topology_xml && o.topology_synthetic)
    throw Error(Errc::invalid_argument,
                "tlc_team_create: options.topology_xml and options.topology_synthetic are both "
                "set; give at most one");
  if (o.topology_xml) options.topology = Topology::from_xml(o.topology_xml);
  if (o.topology_synthetic) options.topology = Topology::synthetic(o.topology_synthetic);
  // Negative: unset (0 is a value: off); Config::read checks the values.
  if (o.suspect_ms >= 0) options.suspect_ms = o.suspect_ms;
  if (o.silent_seconds >= 0) options.silent_seconds = o.silent_seconds;
  return options;
}

template <class Handle>
void require(const Handle* handle, const char* function, const char* what) {
  if (!handle)
    throw Error(Errc::invalid_argument, std::string(function) + ": " + what + " is NULL");
}

// A fact about a team or participant, or -1 with a message for NULL.
template <class Handle, class Get>
int fact(const Handle* handle, const char* function, Get get) noexcept {
  if (!handle) {
    fail(TLC_ERR_INVALID_ARGUMENT, std::string(function) + ": NULL handle");
    return -1;
  }
  return get(*handle);
}

}  // namespace
}  // namespace tlc::capi

using namespace tlc;
using capi::guarded;
using capi::require;

extern "C" {

const char* tlc_error_message(void) { return capi::last_error.c_str(); }

const char* tlc_status_name(tlc_status status) {
  switch (status) {
    case TLC_SUCCESS:
      return "TLC_SUCCESS";
    case TLC_ERR_INVALID_ARGUMENT:
      return "TLC_ERR_INVALID_ARGUMENT";
    case TLC_ERR_MISMATCH:
      return "TLC_ERR_MISMATCH";
    case TLC_ERR_MPI:
      return "TLC_ERR_MPI";
    case TLC_ERR_TOPOLOGY:
      return "TLC_ERR_TOPOLOGY";
    case TLC_ERR_TIMEOUT:
      return "TLC_ERR_TIMEOUT";
    case TLC_ERR_ABORTED:
      return "TLC_ERR_ABORTED";
    case TLC_ERR_UNSUPPORTED:
      return "TLC_ERR_UNSUPPORTED";
    case TLC_ERR_NO_MEMORY:
      return "TLC_ERR_NO_MEMORY";
    case TLC_ERR_INTERNAL:
      return "TLC_ERR_INTERNAL";
  }
  return "unknown tlc_status";
}

const char* tlc_version(void) { return version_string; }

tlc_status tlc_op_create(tlc_user_function function, void* user_data, int commutative, tlc_op* op) {
  return guarded([&] {
    require(op, "tlc_op_create", "op");
    if (!function) throw Error(Errc::invalid_argument, "tlc_op_create: function is NULL");
    auto entry =
        std::make_unique<capi::UserOp>(capi::UserOp{function, user_data, commutative != 0});
    const std::lock_guard lock(capi::user_ops_mutex);
    for (std::size_t slot = 0; slot < capi::user_op_slots; ++slot) {
      if (capi::user_ops[slot].load(std::memory_order_relaxed)) continue;
      capi::user_ops[slot].store(entry.release(), std::memory_order_release);
      *op = capi::first_user_op + static_cast<tlc_op>(slot);
      return;
    }
    throw Error(Errc::unsupported, "tlc_op_create: all " + std::to_string(capi::user_op_slots) +
                                       " user ops are in use (tlc_op_free releases one)");
  });
}

tlc_status tlc_op_free(tlc_op* op) {
  return guarded([&] {
    require(op, "tlc_op_free", "op");
    if (!capi::find_user_op(*op))
      throw Error(Errc::invalid_argument,
                  "tlc_op_free: " + std::to_string(*op) + " is not a user op (built-in, or freed)");
    const std::lock_guard lock(capi::user_ops_mutex);
    auto& slot = capi::user_ops[static_cast<std::size_t>(*op - capi::first_user_op)];
    delete slot.exchange(nullptr, std::memory_order_acq_rel);
    *op = 0;
  });
}

tlc_status tlc_init(int* argc, char*** argv) {
  return guarded([&] {
    if ((argc == nullptr) != (argv == nullptr))
      throw Error(Errc::invalid_argument, "tlc_init: pass both argc and argv, or neither");
    const std::lock_guard lock(capi::environment_mutex);
    if (capi::environment)
      throw Error(Errc::invalid_argument, "tlc_init: already called (tlc_finalize first)");
    capi::environment =
        argc ? std::make_unique<Environment>(*argc, *argv) : std::make_unique<Environment>();
  });
}

tlc_status tlc_finalize(void) {
  return guarded([&] {
    const std::lock_guard lock(capi::environment_mutex);
    if (!capi::environment)
      throw Error(Errc::invalid_argument, "tlc_finalize: tlc_init was not called");
    capi::environment.reset();
  });
}

int tlc_thread_level(void) {
  const std::lock_guard lock(capi::environment_mutex);
  return capi::environment ? capi::environment->thread_level() : -1;
}

void tlc_team_options_init(tlc_team_options* options) {
  if (!options) return;
  *options = tlc_team_options{};
  options->pin = -1;
  options->reproducible = 1;
  options->check = -1;
  options->stats = -1;
  options->suspect_ms = -1;
  options->silent_seconds = -1;
}

tlc_status tlc_team_create(MPI_Comm comm, const tlc_team_options* options, tlc_team** team) {
  return guarded([&] {
    require(team, "tlc_team_create", "team");
    *team = nullptr;
    tlc_team_options defaults;
    tlc_team_options_init(&defaults);
    *team = new tlc_team(comm, capi::to_options(options ? *options : defaults));
  });
}

tlc_status tlc_team_free(tlc_team** team) {
  return guarded([&] {
    if (!team) return;
    delete *team;
    *team = nullptr;
  });
}

int tlc_team_threads(const tlc_team* team) {
  return capi::fact(team, "tlc_team_threads", [](const tlc_team& t) { return t.team.threads(); });
}
int tlc_team_size(const tlc_team* team) {
  return capi::fact(team, "tlc_team_size", [](const tlc_team& t) { return t.team.size(); });
}
int tlc_team_process(const tlc_team* team) {
  return capi::fact(team, "tlc_team_process", [](const tlc_team& t) { return t.team.process(); });
}
int tlc_team_processes(const tlc_team* team) {
  return capi::fact(team, "tlc_team_processes",
                    [](const tlc_team& t) { return t.team.processes(); });
}
int tlc_team_lanes(const tlc_team* team) {
  return capi::fact(team, "tlc_team_lanes", [](const tlc_team& t) { return t.team.lanes(); });
}

tlc_status tlc_team_run(tlc_team* team, tlc_body body, void* user_data) {
  return guarded([&] {
    require(team, "tlc_team_run", "team");
    if (!body) throw Error(Errc::invalid_argument, "tlc_team_run: body is NULL");
    team->team.run([&](Thread& thread) {
      tlc_participant me;
      me.thread = &thread;
      capi::set_current(&me);
      body(&me, user_data);
      capi::set_current(nullptr);
      // Thrown from here, it aborts the team like any exception from a C++ body.
      if (me.abort_message) throw TeamAborted(*me.abort_message);
    });
  });
}

namespace {
// Both attaches: region_threads < 0 is the unchecked one. The size check is the C++ one
// (Team::attach(index, region_threads)), so C, Fortran and C++ fail with the same message.
tlc_status attach(const char* name, tlc_team* team, int local_index, int region_threads,
                  tlc_participant** me) {
  return guarded([&] {
    require(me, name, "me");
    *me = nullptr;
    require(team, name, "team");
    auto participant = std::make_unique<tlc_participant>();
    if (region_threads < 0)
      participant->attached.emplace(team->team.attach(local_index));
    else
      participant->attached.emplace(team->team.attach(local_index, region_threads));
    participant->thread = &*participant->attached;
    *me = participant.release();
    capi::set_current(*me);
  });
}
}  // namespace

tlc_status tlc_team_attach(tlc_team* team, int local_index, tlc_participant** me) {
  return attach("tlc_team_attach", team, local_index, -1, me);
}

tlc_status tlc_team_attach_checked(tlc_team* team, int local_index, int region_threads,
                                   tlc_participant** me) {
  if (region_threads < 0) {
    if (me) *me = nullptr;
    return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_team_attach_checked: region_threads = " +
                                                    std::to_string(region_threads) +
                                                    " is negative");
  }
  return attach("tlc_team_attach_checked", team, local_index, region_threads, me);
}

tlc_status tlc_team_detach(tlc_participant** me) {
  return guarded([&] {
    if (!me || !*me) return;
    if ((*me)->sub_team)
      throw Error(Errc::invalid_argument,
                  "tlc_team_detach: this participant is of a sub-team (tlc_split), it is not "
                  "attached; tlc_participant_free releases it");
    if (!(*me)->attached)
      throw Error(Errc::invalid_argument,
                  "tlc_team_detach: this participant runs inside tlc_team_run, it is not attached");
    if (tlc_current() == *me) capi::set_current(nullptr);
    delete *me;
    *me = nullptr;
  });
}

tlc_participant* tlc_current(void) { return capi::current_participant; }

tlc_status tlc_abort(tlc_participant* me, const char* message) {
  return guarded([&] {
    require(me, "tlc_abort", "me");
    if (me->attached || me->sub_team)
      throw Error(Errc::invalid_argument,
                  "tlc_abort: only with the participant of tlc_team_run's body");
    me->abort_message = message ? message : "tlc_abort";
  });
}

int tlc_rank(const tlc_participant* me) {
  return capi::fact(me, "tlc_rank", [](const tlc_participant& p) { return p.thread->rank(); });
}
int tlc_size(const tlc_participant* me) {
  return capi::fact(me, "tlc_size", [](const tlc_participant& p) { return p.thread->size(); });
}
int tlc_local_index(const tlc_participant* me) {
  return capi::fact(me, "tlc_local_index",
                    [](const tlc_participant& p) { return p.thread->local_index(); });
}
int tlc_threads(const tlc_participant* me) {
  return capi::fact(me, "tlc_threads",
                    [](const tlc_participant& p) { return p.thread->threads(); });
}
int tlc_process(const tlc_participant* me) {
  return capi::fact(me, "tlc_process",
                    [](const tlc_participant& p) { return p.thread->process(); });
}
int tlc_processes(const tlc_participant* me) {
  return capi::fact(me, "tlc_processes",
                    [](const tlc_participant& p) { return p.thread->processes(); });
}

}  // extern "C"

// ---- sub-teams (tlc_split) ----

static_assert(TLC_UNDEFINED == tlc::undefined);

namespace {

// Both splits: make(thread) is the C++ split of the parent's participant.
template <class Make>
tlc_status split(const char* name, tlc_participant* me, tlc_participant** sub, Make make) {
  if (sub) *sub = nullptr;
  if (!me) return capi::fail(TLC_ERR_INVALID_ARGUMENT, std::string(name) + ": me is NULL");
  // Joins the call without splitting, so that the other threads fail instead of waiting.
  if (!sub) return tlc_reject(me, (std::string(name) + ": sub is NULL").c_str());
  return guarded([&] {
    // Made before the split: a failure to allocate afterwards would drop a fresh participant,
    // which aborts its sub-team.
    auto participant = std::make_unique<tlc_participant>();
    Thread thread = make(*me->thread);
    if (!thread) return;  // TLC_UNDEFINED
    participant->sub_team.emplace(std::move(thread));
    participant->thread = &*participant->sub_team;
    participant->owner = std::this_thread::get_id();
    *sub = participant.release();
  });
}

}  // namespace

extern "C" {

tlc_status tlc_split(tlc_participant* me, int color, int key, tlc_participant** sub) {
  return split("tlc_split", me, sub, [&](Thread& t) { return t.split(color, key); });
}

tlc_status tlc_split_type(tlc_participant* me, int type, tlc_participant** sub) {
  SplitType shape = SplitType::process;
  switch (type) {
    case TLC_BY_PROCESS:
      shape = SplitType::process;
      break;
    case TLC_BY_NUMA:
      shape = SplitType::numa;
      break;
    case TLC_BY_RAIL:
      shape = SplitType::rail;
      break;
    default:
      if (sub) *sub = nullptr;
      if (!me) return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_split_type: me is NULL");
      return tlc_reject(me, ("tlc_split_type: type " + std::to_string(type) +
                             " is none of TLC_BY_PROCESS, TLC_BY_NUMA, TLC_BY_RAIL")
                                .c_str());
  }
  return split("tlc_split_type", me, sub, [&](Thread& t) { return t.split(shape); });
}

tlc_status tlc_participant_free(tlc_participant** sub) {
  return guarded([&] {
    if (!sub || !*sub) return;
    if (!(*sub)->sub_team)
      throw Error(Errc::invalid_argument,
                  std::string("tlc_participant_free: this participant is not of a sub-team "
                              "(tlc_split); ") +
                      ((*sub)->attached ? "tlc_team_detach ends an attached one"
                                        : "tlc_team_run's ends when its body returns"));
    if ((*sub)->owner != std::this_thread::get_id())
      throw Error(Errc::invalid_argument,
                  "tlc_participant_free: called on another thread than the one that made the "
                  "participant (tlc_split); each thread frees its own");
    // The last participant of the sub-team in this process releases its part of the sub-team.
    delete *sub;
    *sub = nullptr;
  });
}

}  // extern "C"

// ---- requests (tlc_request) ----

tlc_kept_memory::~tlc_kept_memory() {
  for (void* block : blocks) std::free(block);
}

namespace {

// Completes *request as tlc_wait or a successful tlc_test do: a nonblocking request is released
// and becomes TLC_REQUEST_NULL (also when it failed), a persistent one stays.
void release_if_done(tlc_request* request) noexcept {
  if (*request && !(*request)->is_persistent && !(*request)->request.active()) {
    delete *request;
    *request = TLC_REQUEST_NULL;
  }
}

bool active(const tlc_request_object& r) noexcept {
  return r.is_persistent ? r.persistent.active() : r.request.active();
}

tlc_status wait_one(tlc_request* request) noexcept {
  const tlc_status status = guarded([&] {
    if ((*request)->is_persistent)
      (*request)->persistent.wait();
    else
      (*request)->request.wait();
  });
  release_if_done(request);
  return status;
}

tlc_status test_one(tlc_request* request, int* flag) noexcept {
  bool done = true;
  const tlc_status status = guarded([&] {
    done = (*request)->is_persistent ? (*request)->persistent.test() : (*request)->request.test();
  });
  *flag = done || status != TLC_SUCCESS ? 1 : 0;
  release_if_done(request);
  return status;
}

tlc_status start_one(tlc_request* request, const char* function) noexcept {
  if (!*request)
    return capi::fail(TLC_ERR_INVALID_ARGUMENT,
                      std::string(function) + ": the request is TLC_REQUEST_NULL");
  if (!(*request)->is_persistent)
    return capi::fail(TLC_ERR_INVALID_ARGUMENT,
                      std::string(function) +
                          ": the request is a nonblocking one (only a persistent call from a "
                          "tlc_<name>_init can be started)");
  return guarded([&] { (*request)->persistent.start(); });
}

}  // namespace

extern "C" {

tlc_status tlc_wait(tlc_request* request) {
  if (!request) return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_wait: request is NULL");
  if (!*request) return TLC_SUCCESS;
  return wait_one(request);
}

tlc_status tlc_test(tlc_request* request, int* flag) {
  if (!request || !flag)
    return capi::fail(TLC_ERR_INVALID_ARGUMENT,
                      std::string("tlc_test: ") + (request ? "flag" : "request") + " is NULL");
  *flag = 1;
  if (!*request) return TLC_SUCCESS;
  return test_one(request, flag);
}

tlc_status tlc_waitall(size_t n, tlc_request* requests) {
  if (n > 0 && !requests)
    return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_waitall: requests is NULL");
  tlc_status first = TLC_SUCCESS;
  std::string message;
  for (size_t i = 0; i < n; ++i) {
    if (!requests[i]) continue;
    const tlc_status status = wait_one(&requests[i]);
    if (status != TLC_SUCCESS && first == TLC_SUCCESS) {
      first = status;
      message = tlc_error_message();
    }
  }
  return first == TLC_SUCCESS ? first : capi::fail(first, message);
}

tlc_status tlc_waitany(size_t n, tlc_request* requests, size_t* index) {
  if (!index || (n > 0 && !requests))
    return capi::fail(TLC_ERR_INVALID_ARGUMENT,
                      std::string("tlc_waitany: ") + (index ? "requests" : "index") + " is NULL");
  *index = n;
  for (;;) {
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (!requests[i] || !active(*requests[i])) continue;
      any = true;
      int flag = 0;
      const tlc_status status = test_one(&requests[i], &flag);
      if (flag) {
        *index = i;
        return status;
      }
    }
    if (!any) return TLC_SUCCESS;
    std::this_thread::yield();
  }
}

tlc_status tlc_start(tlc_request* request) {
  if (!request) return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_start: request is NULL");
  return start_one(request, "tlc_start");
}

tlc_status tlc_startall(size_t n, tlc_request* requests) {
  if (n > 0 && !requests)
    return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_startall: requests is NULL");
  for (size_t i = 0; i < n; ++i)
    if (const tlc_status status = start_one(&requests[i], "tlc_startall"); status != TLC_SUCCESS)
      return status;
  return TLC_SUCCESS;
}

tlc_status tlc_request_free(tlc_request* request) {
  if (!request || !*request) return TLC_SUCCESS;
  // The destructors of Request and Persistent wait for an active call.
  delete *request;
  *request = TLC_REQUEST_NULL;
  return TLC_SUCCESS;
}

tlc_status tlc_request_keep(tlc_request request, void* memory) {
  if (!request) {
    std::free(memory);
    return capi::fail(TLC_ERR_INVALID_ARGUMENT, "tlc_request_keep: request is TLC_REQUEST_NULL");
  }
  try {
    request->kept.blocks.push_back(memory);
  } catch (...) {
    // Out of memory: the call may still read the block, so it is waited for before freeing.
    if (request->is_persistent)
      request->persistent = Persistent();
    else
      request->request = Request();
    std::free(memory);
    return capi::fail(TLC_ERR_NO_MEMORY, "tlc_request_keep: out of memory");
  }
  return TLC_SUCCESS;
}

int tlc_request_active(tlc_request request) { return request && active(*request) ? 1 : 0; }

int tlc_request_persistent(tlc_request request) {
  return request && request->is_persistent ? 1 : 0;
}

}  // extern "C"
