/* C consumer of the installed tlc package: a two-thread team per process runs an allreduce of a
 * few ints from tlc_team_run and checks it against the closed form; rank 0 prints "consumer ok"
 * once every process agreed. Built by CMake (CMakeLists.txt) and by mpicc with pkg-config
 * (Makefile). */
#include <tlc/tlc.h>
#include <tlc/version.hpp> /* plain preprocessor: usable from C */

#include <stdio.h>
#include <string.h>

#if !defined(TLC_VERSION) || TLC_VERSION < TLC_VERSION_NUMBER(0, 1, 0)
#error "tlc/version.hpp: TLC_VERSION missing or older than 0.1.0"
#endif

enum { n = 7 };

static void body(tlc_participant* me, void* user_data) {
  int* wrong = (int*)user_data;
  int send[n], recv[n];
  for (int i = 0; i < n; ++i) send[i] = (tlc_rank(me) + 1) * (i + 1);
  if (tlc_allreduce(me, send, recv, n, TLC_INT32, TLC_SUM) != TLC_SUCCESS) {
    fprintf(stderr, "consumer_c: allreduce: %s\n", tlc_error_message());
    __atomic_fetch_add(wrong, 1, __ATOMIC_RELAXED);
    return;
  }
  const int s = tlc_size(me);
  for (int i = 0; i < n; ++i)
    if (recv[i] != (i + 1) * s * (s + 1) / 2) __atomic_fetch_add(wrong, 1, __ATOMIC_RELAXED);
}

int main(int argc, char** argv) {
  if (tlc_init(&argc, &argv) != TLC_SUCCESS) {
    fprintf(stderr, "consumer_c: tlc_init: %s\n", tlc_error_message());
    return 1;
  }
  int wrong = strcmp(tlc_version(), TLC_VERSION_STRING) != 0;
  tlc_team_options options;
  tlc_team_options_init(&options);
  options.threads = 2;
  options.timeout_seconds = 120; /* a hang becomes an error instead of a ctest timeout */
  tlc_team* team = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &options, &team) != TLC_SUCCESS ||
      tlc_team_run(team, body, &wrong) != TLC_SUCCESS) {
    fprintf(stderr, "consumer_c: %s\n", tlc_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int process = tlc_team_process(team);
  tlc_team_free(&team);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  tlc_finalize();
  if (wrong != 0) return 1;
  if (process == 0) printf("consumer ok\n");
  return 0;
}
