// MPI initialisation: one of the two places (with team setup) that may call MPI directly.
#include <mpi.h>

#include <tlc/environment.hpp>
#include <tlc/error.hpp>

#include "inter/mpi_check.hpp"
#include "inter/process_comm.hpp"

namespace tlc {

Environment::Environment() { init(nullptr, nullptr); }
Environment::Environment(int& argc, char**& argv) { init(&argc, &argv); }

void Environment::init(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    detail::check_mpi(MPI_Query_thread(&provided_), "MPI_Query_thread");
    return;  // adopted: the application finalises
  }
  detail::check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided_),
                    "MPI_Init_thread");
  owns_ = true;
}

Environment::~Environment() {
  if (!owns_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // A team gave up waiting for an MPI operation (it aborted, or TLC_TIMEOUT expired): the
  // operation may never complete, and MPI_Finalize would wait for it, and for processes that
  // are waiting for this one. End the job instead of hanging it.
  if (detail::mpi_operation_abandoned())
    detail::abort_job(
        "tlc: a team gave up on an MPI operation between processes (see the error above); "
        "ending the job with MPI_Abort instead of blocking in MPI_Finalize");
  MPI_Finalize();
}

std::string Environment::mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string version(text, static_cast<std::size_t>(length));
  while (!version.empty() && (version.back() == '\n' || version.back() == ' ')) version.pop_back();
  return version;
}

const char* Environment::thread_level_name(int level) noexcept {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
}

}  // namespace tlc
