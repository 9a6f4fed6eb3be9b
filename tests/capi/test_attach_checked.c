/* tlc_team_attach_checked from an OpenMP region. Run twice by ctest: as is, the region has the
 * team's size and every thread attaches and sums its rank; with OMP_THREAD_LIMIT=1 the region
 * has one thread for a team of two, and the attach must fail at once with
 * TLC_ERR_INVALID_ARGUMENT and a message naming the team's size. Without the check the attach
 * would succeed and the allreduce wait for the missing thread: the team's time-out turns that
 * into a failure of this test rather than a hang. Exits non-zero on any unexpected outcome. */
#include <tlc/tlc.h>

#include <omp.h>
#include <stdio.h>
#include <string.h>

enum { team_threads = 2 };

int main(int argc, char** argv) {
  if (tlc_init(&argc, &argv) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_init: %s\n", tlc_error_message());
    return 1;
  }
  omp_set_dynamic(0);
  tlc_team_options options;
  tlc_team_options_init(&options);
  options.threads = team_threads;
  options.timeout_seconds = 20; /* a missing check shows as a time-out error, not a hang */
  tlc_team* team = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &options, &team) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_create: %s\n", tlc_error_message());
    return 1;
  }
  int wrong = 0;
  int region_size = 0;
#pragma omp parallel num_threads(tlc_team_threads(team)) reduction(+ : wrong)
  {
#pragma omp single
    region_size = omp_get_num_threads();
    tlc_participant* me = NULL;
    const tlc_status status =
        tlc_team_attach_checked(team, omp_get_thread_num(), omp_get_num_threads(), &me);
    if (omp_get_num_threads() == team_threads) {
      long sum = 0, rank = 0;
      if (status == TLC_SUCCESS) rank = tlc_rank(me);
      if (status != TLC_SUCCESS ||
          tlc_allreduce(me, &rank, &sum, 1, TLC_INT64, TLC_SUM) != TLC_SUCCESS ||
          sum != (long)tlc_size(me) * (tlc_size(me) - 1) / 2) {
        fprintf(stderr, "attach or allreduce failed: %s\n", tlc_error_message());
        wrong += 1;
      }
      tlc_team_detach(&me);
    } else {
      /* "... the team has 2 threads in this process ..." */
      char expected[64];
      snprintf(expected, sizeof expected, "the team has %d threads", team_threads);
      if (status != TLC_ERR_INVALID_ARGUMENT || me != NULL ||
          strstr(tlc_error_message(), expected) == NULL) {
        fprintf(stderr, "a region of %d threads attached to a team of %d: status %s, '%s'\n",
                omp_get_num_threads(), team_threads, tlc_status_name(status), tlc_error_message());
        if (me) {
          tlc_barrier(me); /* what an unchecked attach leads to: the team's time-out */
          tlc_team_detach(&me);
        }
        wrong += 1;
      } else {
        printf("refused as expected: %s\n", tlc_error_message());
      }
    }
  }
  tlc_team_free(&team);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  tlc_finalize();
  if (wrong == 0) printf("attach_checked ok (region of %d threads)\n", region_size);
  return wrong != 0;
}
