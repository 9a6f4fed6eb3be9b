/// @file
/// tlc/openmp.hpp: a team for an OpenMP program, header-only, for code compiled with OpenMP
/// (-fopenmp). The library itself does not depend on OpenMP; this header is not part of
/// <tlc/tlc.hpp> and is included on its own.
///
///   tlc::Team team(MPI_COMM_WORLD, tlc::openmp::team_options());  // as many threads as OpenMP's
///   tlc::openmp::parallel(team, [&](tlc::Thread& me) {             // one region, all attached
///     \#pragma omp for
///     for (...) ...;                                                // the application's loops
///     double dot = me.allreduce(local);                             // or tlc::current_thread()
///   });                                                             // rethrows the first error
#pragma once

#ifndef _OPENMP
#error "tlc/openmp.hpp is for code compiled with OpenMP (e.g. -fopenmp, or OpenMP::OpenMP_CXX)"
#endif

#include <omp.h>

#include <utility>

#include <tlc/options.hpp>
#include <tlc/region.hpp>
#include <tlc/team.hpp>
#include <tlc/thread.hpp>

namespace tlc::openmp {

/// Team options whose thread count is OpenMP's (omp_get_max_threads(): OMP_NUM_THREADS, else
/// one per core), unless options.threads or TLC_THREADS asks for another, which team
/// construction then reports on stderr.
inline TeamOptions team_options(TeamOptions options = {}) {
  options.region_threads = omp_get_max_threads();
  return options;
}

/// Inside a parallel region: attaches the calling thread as participant omp_get_thread_num(),
/// checking that the region has the team's size (Team::attach throws at once otherwise).
inline Thread attach(Team& team) {
  return team.attach(omp_get_thread_num(), omp_get_num_threads());
}

/// Runs body(me) on every thread of one parallel region of team.threads() threads, each attached
/// for the whole region (so tlc::current_thread() reaches it from any code on the thread), and
/// rethrows the first error of any thread once the region is over: the other threads' waits in
/// collectives end with tlc::TeamAborted instead of hanging, and no exception leaves the region
/// (which would be std::terminate). Dynamic adjustment is turned off for the region, which must
/// get exactly team.threads() threads; a region that gets fewer (OMP_THREAD_LIMIT, a nested
/// region without nesting enabled) fails with tlc::Error before any collective. Inside body,
/// synchronise with me.barrier(), not `#pragma omp barrier`, which does not wake on an abort.
template <class Body>
void parallel(Team& team, Body&& body) {
  Region region(team);
  const int dynamic = omp_get_dynamic();
  omp_set_dynamic(0);
#pragma omp parallel num_threads(team.threads())
  region.enter(omp_get_thread_num(), omp_get_num_threads(), body);
  omp_set_dynamic(dynamic);
  region.finish();
}

}  // namespace tlc::openmp
