// The symbol that names the MPI libtlc was compiled with (include/tlc/detail/mpi_check.h): a
// program compiled against another MPI's <mpi.h> refers to the other symbol and fails to link.
// In a file of its own, so that a static link pulls in nothing else for it.
#include <mpi.h>

#include <tlc/detail/mpi_check.h>

#if defined(TLC_DETAIL_BUILT_WITH) && (defined(__GNUC__) || defined(__clang__))
extern "C" TLC_API const int TLC_DETAIL_BUILT_WITH = 1;
#endif
