/* A link-time check that a program and libtlc use the same MPI library. Included by tlc/tlc.h
 * and tlc/team.hpp, after <mpi.h>.
 *
 * libtlc defines one symbol naming the MPI it was compiled with (src/capi/mpi_check.cpp:
 * tlc_built_with_mpich or tlc_built_with_openmpi). Every translation unit that includes this
 * header keeps a reference to the symbol of the MPI whose <mpi.h> *it* was compiled with, so a
 * program built with another MPI's wrapper fails to link with "undefined reference to
 * `tlc_built_with_<its MPI>'" instead of mixing two MPI libraries (which links, then crashes or
 * runs every process as a singleton). The reference costs one pointer per translation unit.
 * Other MPIs and compilers without __attribute__((used)) get no check; defining TLC_NO_MPI_CHECK
 * before the include turns it off. */
#ifndef TLC_DETAIL_MPI_CHECK_H
#define TLC_DETAIL_MPI_CHECK_H

#include <tlc/detail/export.hpp>

#if defined(OMPI_MAJOR_VERSION)
#define TLC_DETAIL_BUILT_WITH tlc_built_with_openmpi
#elif defined(MPICH_VERSION)
#define TLC_DETAIL_BUILT_WITH tlc_built_with_mpich
#endif

#if defined(TLC_DETAIL_BUILT_WITH) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(TLC_NO_MPI_CHECK)
#ifdef __cplusplus
extern "C" {
#endif
TLC_API extern const int TLC_DETAIL_BUILT_WITH;
#ifdef __cplusplus
}
#endif
/* Internal linkage, kept by the compiler (used) although nothing reads it. */
static const int* const tlc_detail_mpi_check __attribute__((used, unused)) = &TLC_DETAIL_BUILT_WITH;
#endif

#endif /* TLC_DETAIL_MPI_CHECK_H */
