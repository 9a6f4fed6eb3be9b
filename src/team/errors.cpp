// Error construction and the names used in messages.
#include <tlc/error.hpp>
#include <tlc/ops.hpp>
#include <tlc/options.hpp>
#include <tlc/types.hpp>

namespace tlc {

const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::mismatch:
      return "participants disagree";
    case Errc::mpi:
      return "MPI failure";
    case Errc::topology:
      return "topology";
    case Errc::timeout:
      return "timeout";
    case Errc::aborted:
      return "team aborted";
    case Errc::unsupported:
      return "unsupported";
  }
  return "unknown";
}

Error::Error(Errc code, const std::string& what) : std::runtime_error(what), code_(code) {}

const char* to_string(Collective c) noexcept {
  switch (c) {
    case Collective::barrier:
      return "barrier";
    case Collective::bcast:
      return "bcast";
    case Collective::reduce:
      return "reduce";
    case Collective::allreduce:
      return "allreduce";
    case Collective::allgather:
      return "allgather";
    case Collective::allgatherv:
      return "allgatherv";
    case Collective::gather:
      return "gather";
    case Collective::gatherv:
      return "gatherv";
    case Collective::scatter:
      return "scatter";
    case Collective::scatterv:
      return "scatterv";
    case Collective::alltoall:
      return "alltoall";
    case Collective::alltoallv:
      return "alltoallv";
    case Collective::reduce_scatter_block:
      return "reduce_scatter_block";
    case Collective::scan:
      return "scan";
    case Collective::exscan:
      return "exscan";
  }
  return "unknown";
}

namespace detail {

const char* to_string(BuiltinOp op) noexcept {
  switch (op) {
    case BuiltinOp::none:
      return "user op";
    case BuiltinOp::sum:
      return "sum";
    case BuiltinOp::prod:
      return "prod";
    case BuiltinOp::min:
      return "min";
    case BuiltinOp::max:
      return "max";
    case BuiltinOp::band:
      return "bit_and";
    case BuiltinOp::bor:
      return "bit_or";
    case BuiltinOp::bxor:
      return "bit_xor";
    case BuiltinOp::land:
      return "logical_and";
    case BuiltinOp::lor:
      return "logical_or";
  }
  return "unknown";
}

const char* to_string(TypeClass c) noexcept {
  switch (c) {
    case TypeClass::signed_integer:
      return "signed integer";
    case TypeClass::unsigned_integer:
      return "unsigned integer";
    case TypeClass::floating:
      return "floating point";
    case TypeClass::boolean:
      return "bool";
    case TypeClass::complex_floating:
      return "complex";
    case TypeClass::opaque:
      return "struct";
  }
  return "unknown";
}

}  // namespace detail
}  // namespace tlc
