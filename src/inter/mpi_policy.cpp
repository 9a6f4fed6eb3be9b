// tlc's MPI policy (inter/mpi_policy.hpp): the thread level, error checking, duplicate
// communicators, what the MPI library tells about lanes, ending the job.
#include "inter/mpi_policy.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <tlc/environment.hpp>
#include <tlc/error.hpp>

#include "inter/mpi_check.hpp"
#include "inter/mpi_wait.hpp"

namespace tlc::detail {

thread_local int WorldErrorsReturned::depth_ = 0;

namespace {

// MPI_COMM_WORLD's handler while tlc's is there.
void world_error_handler(MPI_Comm* comm, int* code, ...) {
  if (WorldErrorsReturned::held()) return;  // the code comes back to tlc's check_mpi
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(*code, text, &length) != MPI_SUCCESS) length = 0;
  std::fprintf(stderr, "Fatal error in an MPI call: %.*s\n", length, text);
  std::fflush(stderr);
  MPI_Abort(*comm, *code);
}

}  // namespace

void return_world_errors_to_tlc() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto lock = serialize_mpi();
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;
    check_mpi(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &current), "MPI_Comm_get_errhandler");
    const bool fatal = current == MPI_ERRORS_ARE_FATAL;
    if (current != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&current);
    if (!fatal) return;
    MPI_Errhandler ours = MPI_ERRHANDLER_NULL;
    check_mpi(MPI_Comm_create_errhandler(&world_error_handler, &ours),
              "MPI_Comm_create_errhandler");
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, ours), "MPI_Comm_set_errhandler");
    MPI_Errhandler_free(&ours);  // MPI_COMM_WORLD keeps it
  });
}

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(Errc::mpi, std::string("tlc: ") + what + " failed: " + std::string(text, length));
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
  const bool required = provided < MPI_THREAD_MULTIPLE;
  mpi_serialization::required.store(required, std::memory_order_relaxed);
  return required;
}

MPI_Comm duplicate_comm(MPI_Comm parent, bool assert_no_wildcards) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = serialize_mpi();
    if (assert_no_wildcards) {
      check_mpi(MPI_Info_create(&info), "MPI_Info_create");
      MPI_Info_set(info, "mpi_assert_no_any_source", "true");
      MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    }
#if MPI_VERSION >= 4
    const int rc = assert_no_wildcards ? MPI_Comm_idup_with_info(parent, info, &comm, &request)
                                       : MPI_Comm_idup(parent, &comm, &request);
#else
    const int rc = MPI_Comm_idup(parent, &comm, &request);
#endif
    if (rc != MPI_SUCCESS && info != MPI_INFO_NULL) MPI_Info_free(&info);
    check_mpi(rc, "MPI_Comm_idup");
  }
  complete_politely(request, "MPI_Comm_idup");
  auto lock = serialize_mpi();
  if (info != MPI_INFO_NULL) {
#if MPI_VERSION < 4
    // MPI 3 has no MPI_Comm_idup_with_info: the hints follow the duplicate (an MPI may ignore
    // hints set after creation; they only let it match faster).
    MPI_Comm_set_info(comm, info);
#endif
    MPI_Info_free(&info);
  }
  check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return comm;
}

double mpi_default_eager_bytes() noexcept {
#ifdef OMPI_MAJOR_VERSION
  return 4 * 1024 - 64;  // its 4 KiB include the message's header: a 4 KiB payload is past it
#else
  return 8 * 1024;
#endif
}

bool mpi_splits_short_rendezvous_messages() noexcept {
#ifdef OMPI_MAJOR_VERSION
  return false;
#else
  return true;
#endif
}

bool mpi_takes_arrived_messages_faster() noexcept {
#ifdef OMPI_MAJOR_VERSION
  return false;
#else
  return true;
#endif
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

}  // namespace tlc::detail
