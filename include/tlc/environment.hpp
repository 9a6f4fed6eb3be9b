/// @file
/// MPI lifetime. tlc::Environment initialises MPI with MPI_THREAD_MULTIPLE and finalises it on
/// destruction, or adopts an MPI the application already initialised (and then leaves it alone).
#pragma once

#include <string>

#include <tlc/detail/export.hpp>

namespace tlc {

/// MPI's lifetime: initialises MPI with MPI_THREAD_MULTIPLE and finalises it when destroyed, or
/// adopts an MPI the application initialised (and then leaves it alone).
class TLC_API Environment {
 public:
  /// Without the program's arguments.
  Environment();
  /// With the program's arguments, which MPI_Init_thread may read and change.
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  /// The level MPI provided: 0 single, 1 funneled, 2 serialized, 3 multiple (MPI_THREAD_* order).
  int thread_level() const noexcept { return provided_; }
  /// Whether this Environment initialised MPI (and finalises it), rather than adopting it.
  bool owns_mpi() const noexcept { return owns_; }

  /// MPI_Get_library_version; callable before MPI_Init.
  static std::string mpi_library_version();
  /// "MPI_THREAD_SINGLE" ... "MPI_THREAD_MULTIPLE" for a level, "unknown" for anything else.
  static const char* thread_level_name(int level) noexcept;

 private:
  void init(int* argc, char*** argv);
  int provided_ = 0;
  bool owns_ = false;
};

}  // namespace tlc
