// tlc's element types and built-in ops as MPI's predefined datatypes and MPI_Ops, or the null
// handle where MPI defines none for the type (inter/mpi_datatypes.hpp).
#include "inter/mpi_datatypes.hpp"

namespace tlc::detail {

MPI_Datatype predefined_datatype(TypeInfo type) noexcept {
  switch (type.type_class) {
    case TypeClass::signed_integer:
      switch (type.size) {
        case 1:
          return MPI_INT8_T;
        case 2:
          return MPI_INT16_T;
        case 4:
          return MPI_INT32_T;
        case 8:
          return MPI_INT64_T;
      }
      break;
    case TypeClass::unsigned_integer:
      switch (type.size) {
        case 1:
          return MPI_UINT8_T;
        case 2:
          return MPI_UINT16_T;
        case 4:
          return MPI_UINT32_T;
        case 8:
          return MPI_UINT64_T;
      }
      break;
    case TypeClass::floating:
      if (type.size == sizeof(float)) return MPI_FLOAT;
      if (type.size == sizeof(double)) return MPI_DOUBLE;
      if (type.size == sizeof(long double)) return MPI_LONG_DOUBLE;
      break;
    case TypeClass::boolean:
      if (type.size == sizeof(bool)) return MPI_CXX_BOOL;
      break;
    case TypeClass::complex_floating:
      if (type.size == 2 * sizeof(float)) return MPI_CXX_FLOAT_COMPLEX;
      if (type.size == 2 * sizeof(double)) return MPI_CXX_DOUBLE_COMPLEX;
      if (type.size == 2 * sizeof(long double)) return MPI_CXX_LONG_DOUBLE_COMPLEX;
      break;
    case TypeClass::opaque:
      break;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op predefined_op(BuiltinOp op, TypeInfo type) noexcept {
  if (predefined_datatype(type) == MPI_DATATYPE_NULL) return MPI_OP_NULL;
  const TypeClass c = type.type_class;
  const bool integer = c == TypeClass::signed_integer || c == TypeClass::unsigned_integer;
  const bool real = integer || c == TypeClass::floating;
  // The groups of MPI 4.0 section 6.9.2: which predefined op applies to which type class.
#ifdef OMPI_MAJOR_VERSION
  // Open MPI's vectorised reduction kernels (op/avx, 4.1) add 8- and 16-bit integers with
  // saturation instead of wrapping around (65531 + 5 gives 65535, not 0; open-mpi/ompi#8045,
  // closed as won't fix). tlc's own kernel crosses the network as a user op instead.
  if (op == BuiltinOp::sum && integer && type.size <= 2) return MPI_OP_NULL;
#endif
  switch (op) {
    case BuiltinOp::sum:
      return real || c == TypeClass::complex_floating ? MPI_SUM : MPI_OP_NULL;
    case BuiltinOp::prod:
      return real || c == TypeClass::complex_floating ? MPI_PROD : MPI_OP_NULL;
    case BuiltinOp::min:
      return real ? MPI_MIN : MPI_OP_NULL;
    case BuiltinOp::max:
      return real ? MPI_MAX : MPI_OP_NULL;
    case BuiltinOp::band:
      return integer ? MPI_BAND : MPI_OP_NULL;
    case BuiltinOp::bor:
      return integer ? MPI_BOR : MPI_OP_NULL;
    case BuiltinOp::bxor:
      return integer ? MPI_BXOR : MPI_OP_NULL;
    case BuiltinOp::land:
      return integer || c == TypeClass::boolean ? MPI_LAND : MPI_OP_NULL;
    case BuiltinOp::lor:
      return integer || c == TypeClass::boolean ? MPI_LOR : MPI_OP_NULL;
    case BuiltinOp::none:
      break;
  }
  return MPI_OP_NULL;
}

}  // namespace tlc::detail
