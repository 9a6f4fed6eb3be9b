/* A team on an MPI initialised without thread support (plain MPI_Init, which MPICH and Open MPI
 * answer with MPI_THREAD_SINGLE) must be refused with TLC_ERR_UNSUPPORTED and a message that
 * names the level MPI provides ("MPI_THREAD_SINGLE", not a number). An MPI whose MPI_Init
 * provides MPI_THREAD_SERIALIZED or more gets a team, and the test says it could not check. */
#include <tlc/tlc.h>

#include <stdio.h>
#include <string.h>

static const char* level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  return "MPI_THREAD_MULTIPLE";
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  int wrong = tlc_init(NULL, NULL) != TLC_SUCCESS; /* adopts the MPI initialised above */
  tlc_team* team = NULL;
  const tlc_status status = tlc_team_create(MPI_COMM_WORLD, NULL, &team);
  if (provided >= MPI_THREAD_SERIALIZED) {
    printf("MPI_Init provided %s: nothing to refuse, not checked\n", level_name(provided));
    if (status == TLC_SUCCESS) tlc_team_free(&team);
  } else {
    char expected[96];
    snprintf(expected, sizeof expected, "MPI provides thread level %s", level_name(provided));
    if (status != TLC_ERR_UNSUPPORTED || strstr(tlc_error_message(), expected) == NULL) {
      fprintf(stderr, "expected TLC_ERR_UNSUPPORTED with '%s', got %s: '%s'\n", expected,
              tlc_status_name(status), tlc_error_message());
      wrong = 1;
    } else {
      printf("refused as expected: %s\n", tlc_error_message());
    }
  }
  tlc_finalize();
  MPI_Finalize();
  return wrong;
}
