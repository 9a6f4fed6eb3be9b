/// @file
/// Errors thrown by tlc. Every error carries a code so callers can react without parsing text.
#pragma once

#include <stdexcept>
#include <string>

#include <tlc/detail/export.hpp>

namespace tlc {

/// What went wrong, carried by every tlc::Error.
enum class Errc {
  invalid_argument,  ///< bad input detected before any data moved
  mismatch,          ///< participants of one call disagree (collective, count, root, op, type)
  mpi,               ///< an MPI call failed; the message carries MPI_Error_string
  topology,          ///< hwloc failure or a placement plan that cannot be honoured
  timeout,           ///< TLC_TIMEOUT expired; the message names who never arrived
  aborted,           ///< another thread of the team failed
  unsupported,       ///< a valid request this build or MPI library cannot serve
};

/// The code's name: "invalid_argument", "mismatch", ...
TLC_API const char* to_string(Errc code) noexcept;

/// Every error tlc throws: a std::runtime_error with a code, so that callers can react without
/// parsing the message.
class TLC_API Error : public std::runtime_error {
 public:
  /// An error of this code with this message.
  Error(Errc code, const std::string& what);
  /// What went wrong.
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

/// Thrown in every thread that was waiting inside a collective when another thread of the team
/// failed. Team::run rethrows the first (original) exception, not this one.
class TLC_API TeamAborted : public Error {
 public:
  /// An error of code Errc::aborted with this message.
  explicit TeamAborted(const std::string& what) : Error(Errc::aborted, what) {}
};

}  // namespace tlc
