// Maps tlc's element and op descriptions to MPI's. A (type, op) pair MPI defines natively goes
// to the network as such; anything else (structs, user ops, ops MPI does not define for the
// type, e.g. MPI_SUM on MPI_C_BOOL) crosses the network as bytes reduced by a user MPI_Op that
// calls tlc's combine function.
#pragma once

#include <mpi.h>

#include <tlc/ops.hpp>
#include <tlc/types.hpp>

namespace tlc::detail {

// MPI_DATATYPE_NULL when MPI has no predefined datatype for the type.
MPI_Datatype predefined_datatype(TypeInfo type) noexcept;
// MPI_OP_NULL when MPI does not define op for type.
MPI_Op predefined_op(BuiltinOp op, TypeInfo type) noexcept;

}  // namespace tlc::detail
