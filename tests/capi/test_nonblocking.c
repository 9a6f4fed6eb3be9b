/* The nonblocking and persistent collectives of the C interface (tlc_i<name>, tlc_<name>_init,
 * tlc_wait & co.) under mpiexec: rounds of iallreduce (a built-in op, and a non-commutative user
 * op in place), ibcast from a moving root, ialltoall and igather outstanding at once and
 * completed in an order that differs between threads and rounds (tlc_test loops, tlc_wait,
 * tlc_waitany, tlc_waitall), with a blocking call among them; a user op freed while its request
 * is active; persistent allreduce and bcast over many rounds with the buffers refilled between
 * rounds; every element compared with a sequential reference computed here. Then the error
 * paths on a one-process team: one thread with an unknown datatype (it gets
 * TLC_ERR_INVALID_ARGUMENT at the start, the other thread TLC_ERR_MISMATCH from its wait, and
 * nothing is written), a NULL request pointer, tlc_start of a nonblocking or an active
 * request. Exits non-zero on any difference. */
#include <tlc/tlc.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 25, N = 37, BLOCK = 3, PERSISTENT_ROUNDS = 200 };

static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void report(tlc_participant* me, const char* format, ...) {
  pthread_mutex_lock(&failures_lock);
  if (++failures <= 20) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "rank %d: ", me ? tlc_rank(me) : -1);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
  }
  pthread_mutex_unlock(&failures_lock);
}

#define CHECK_OK(call)                                                                        \
  do {                                                                                        \
    tlc_status s_ = (call);                                                                   \
    if (s_ != TLC_SUCCESS)                                                                    \
      report(me, "%s:%d: %s returned %s: %s", __FILE__, __LINE__, #call, tlc_status_name(s_), \
             tlc_error_message());                                                            \
  } while (0)

/* The contribution of rank r to element i of a round's collective `salt`. */
static int64_t value(int r, int round, size_t i, int salt) {
  return (int64_t)(r + 1) * 1000003 + (int64_t)round * 7919 + (int64_t)i * 31 + salt;
}

/* An affine map x -> m x + c (mod 2^32), packed as m << 32 | c: composition is associative and
 * not commutative; a (lower ranks) applies first. */
static uint64_t compose(uint64_t a, uint64_t b) {
  const uint32_t ma = (uint32_t)(a >> 32), ca = (uint32_t)a, mb = (uint32_t)(b >> 32),
                 cb = (uint32_t)b;
  return (uint64_t)(uint32_t)(mb * ma) << 32 | (uint32_t)(mb * ca + cb);
}
static void compose_op(const void* a, const void* b, void* out, size_t count, void* user) {
  (void)user;
  for (size_t k = 0; k < count; ++k)
    ((uint64_t*)out)[k] = compose(((const uint64_t*)a)[k], ((const uint64_t*)b)[k]);
}
static uint64_t map_of(int r, int round, size_t i) {
  return (uint64_t)(2 * (uint32_t)value(r, round, i, 5) + 1) << 32 |
         (uint32_t)value(r, round, i, 6);
}

static tlc_op compose_handle;     /* lives for the whole run */
static tlc_op short_lived_handle; /* freed while a request that uses it is active */

/* Completes the k requests in an order of this thread and round: some by tlc_test loops, some
 * by tlc_wait, one by tlc_waitany, the rest by tlc_waitall. Every request must end NULL. */
static void complete(tlc_participant* me, tlc_request* requests, size_t k, int round) {
  const size_t shift = (size_t)(tlc_rank(me) + round) % k;
  const int backwards = (tlc_rank(me) + round) % 2;
  for (size_t j = 0; j + 2 < k; ++j) {
    const size_t i = backwards ? (shift + k - j) % k : (shift + j) % k;
    if (requests[i] == TLC_REQUEST_NULL) continue;
    if ((j + (size_t)round) % 2) {
      int flag = 0;
      while (!flag) CHECK_OK(tlc_test(&requests[i], &flag));
    } else {
      CHECK_OK(tlc_wait(&requests[i]));
    }
    if (requests[i] != TLC_REQUEST_NULL)
      report(me, "round %d: a completed request is not NULL", round);
  }
  size_t index = k + 1;
  CHECK_OK(tlc_waitany(k, requests, &index));
  if (index > k || (index < k && requests[index] != TLC_REQUEST_NULL))
    report(me, "round %d: tlc_waitany gave index %zu", round, index);
  CHECK_OK(tlc_waitall(k, requests));
  for (size_t i = 0; i < k; ++i)
    if (requests[i] != TLC_REQUEST_NULL) report(me, "round %d: request %zu is not NULL", round, i);
  CHECK_OK(tlc_waitany(k, requests, &index));
  if (index != k) report(me, "tlc_waitany of null requests gave %zu, expected %zu", index, k);
}

static void nonblocking_rounds(tlc_participant* me) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  const size_t all = (size_t)size * BLOCK;
  int64_t sum_send[N], sum_recv[N];
  uint64_t user_buf[N];
  double bcast_buf[N];
  int32_t* a2a_send = malloc(all * sizeof *a2a_send);
  int32_t* a2a_recv = malloc(all * sizeof *a2a_recv);
  int32_t gather_send[BLOCK];
  int32_t* gather_recv = malloc(all * sizeof *gather_recv);
  if (!a2a_send || !a2a_recv || !gather_recv) abort();
  for (int round = 0; round < ROUNDS; ++round) {
    const int root = round % size;
    for (size_t i = 0; i < N; ++i) {
      sum_send[i] = value(rank, round, i, 1);
      sum_recv[i] = -1;
      bcast_buf[i] = rank == root ? (double)value(rank, round, i, 2) : -1.0;
      user_buf[i] = map_of(rank, round, i);
    }
    for (size_t i = 0; i < all; ++i) {
      a2a_send[i] = (int32_t)value(rank, round, i, 3);
      a2a_recv[i] = -1;
      gather_recv[i] = -1;
    }
    for (size_t i = 0; i < BLOCK; ++i) gather_send[i] = (int32_t)value(rank, round, i, 4);

    tlc_request requests[5];
    CHECK_OK(tlc_iallreduce(me, sum_send, sum_recv, N, TLC_INT64, TLC_SUM, &requests[0]));
    CHECK_OK(tlc_ibcast(me, bcast_buf, N, TLC_DOUBLE, root, &requests[1]));
    CHECK_OK(tlc_barrier(me)); /* a blocking call among the nonblocking ones */
    CHECK_OK(tlc_ialltoall(me, a2a_send, a2a_recv, BLOCK, TLC_INT32, &requests[2]));
    CHECK_OK(
        tlc_iallreduce(me, TLC_IN_PLACE, user_buf, N, TLC_UINT64, compose_handle, &requests[3]));
    CHECK_OK(tlc_igather(me, gather_send, rank == root ? gather_recv : NULL, BLOCK, TLC_INT32, root,
                         &requests[4]));
    for (size_t i = 0; i < 5; ++i)
      if (requests[i] == TLC_REQUEST_NULL || !tlc_request_active(requests[i]) ||
          tlc_request_persistent(requests[i]))
        report(me, "round %d: request %zu is not an active nonblocking request", round, i);
    complete(me, requests, 5, round);

    for (size_t i = 0; i < N; ++i) {
      int64_t want = 0;
      uint64_t map = map_of(0, round, i);
      for (int r = 0; r < size; ++r) want += value(r, round, i, 1);
      for (int r = 1; r < size; ++r) map = compose(map, map_of(r, round, i));
      if (sum_recv[i] != want)
        report(me, "round %d: iallreduce element %zu is %lld, expected %lld", round, i,
               (long long)sum_recv[i], (long long)want);
      if (bcast_buf[i] != (double)value(root, round, i, 2))
        report(me, "round %d: ibcast element %zu is %g", round, i, bcast_buf[i]);
      if (user_buf[i] != map)
        report(me, "round %d: iallreduce with a user op, element %zu differs", round, i);
    }
    for (int j = 0; j < size; ++j)
      for (size_t k = 0; k < BLOCK; ++k) {
        /* block j of my recv = block `rank` of rank j's send */
        const int32_t want = (int32_t)value(j, round, (size_t)rank * BLOCK + k, 3);
        const int32_t got = a2a_recv[(size_t)j * BLOCK + k];
        if (got != want)
          report(me, "round %d: ialltoall block %d element %zu is %d", round, j, k, got);
        const int32_t gathered = gather_recv[(size_t)j * BLOCK + k];
        const int32_t want_gathered = rank == root ? (int32_t)value(j, round, k, 4) : -1;
        if (gathered != want_gathered)
          report(me, "round %d: igather block %d element %zu is %d", round, j, k, gathered);
      }
  }
  free(a2a_send);
  free(a2a_recv);
  free(gather_recv);
}

/* A user op freed (by one thread of each process) after every thread started the request that
 * uses it, before the request completes: the request holds its own copy of the op. */
static void op_freed_while_active(tlc_participant* me) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  uint64_t send[N], recv[N];
  for (size_t i = 0; i < N; ++i) send[i] = map_of(rank, 1000, i);
  tlc_request request;
  CHECK_OK(tlc_iallreduce(me, send, recv, N, TLC_UINT64, short_lived_handle, &request));
  CHECK_OK(tlc_barrier(me)); /* every thread of the team has started it */
  if (tlc_local_index(me) == 0) CHECK_OK(tlc_op_free(&short_lived_handle));
  CHECK_OK(tlc_barrier(me));
  CHECK_OK(tlc_wait(&request));
  for (size_t i = 0; i < N; ++i) {
    uint64_t map = map_of(0, 1000, i);
    for (int r = 1; r < size; ++r) map = compose(map, map_of(r, 1000, i));
    if (recv[i] != map) {
      report(me, "user op freed while active: element %zu differs", i);
      break;
    }
  }
}

/* Persistent allreduce and bcast, made once and started every round (tlc_start and
 * tlc_startall), completed in the order that differs between threads. */
static void persistent_rounds(tlc_participant* me) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  int64_t send[N], recv[N], buf[N];
  tlc_request calls[2];
  CHECK_OK(tlc_allreduce_init(me, send, recv, N, TLC_INT64, TLC_SUM, &calls[0]));
  CHECK_OK(tlc_bcast_init(me, buf, N, TLC_INT64, size - 1, &calls[1]));
  for (int i = 0; i < 2; ++i)
    if (calls[i] == TLC_REQUEST_NULL || tlc_request_active(calls[i]) ||
        !tlc_request_persistent(calls[i]))
      report(me, "persistent call %d is not an inactive persistent request after init", i);
  for (int round = 0; round < PERSISTENT_ROUNDS; ++round) {
    for (size_t i = 0; i < N; ++i) {
      send[i] = value(rank, round, i, 7);
      recv[i] = -1;
      buf[i] = rank == size - 1 ? value(rank, round, i, 8) : -1;
    }
    if (round % 2) {
      CHECK_OK(tlc_startall(2, calls));
    } else {
      CHECK_OK(tlc_start(&calls[0]));
      CHECK_OK(tlc_start(&calls[1]));
    }
    if (!tlc_request_active(calls[0]) || !tlc_request_active(calls[1]))
      report(me, "persistent round %d: not active after the start", round);
    const int first = (rank + round) % 2;
    int flag = 0;
    while (!flag) CHECK_OK(tlc_test(&calls[first], &flag));
    CHECK_OK(tlc_wait(&calls[1 - first]));
    if (calls[0] == TLC_REQUEST_NULL || calls[1] == TLC_REQUEST_NULL)
      report(me, "persistent round %d: a persistent request became NULL", round);
    for (size_t i = 0; i < N; ++i) {
      int64_t want = 0;
      for (int r = 0; r < size; ++r) want += value(r, round, i, 7);
      if (recv[i] != want)
        report(me, "persistent round %d: allreduce element %zu is %lld, expected %lld", round, i,
               (long long)recv[i], (long long)want);
      if (buf[i] != value(size - 1, round, i, 8))
        report(me, "persistent round %d: bcast element %zu is %lld", round, i, (long long)buf[i]);
    }
  }
  CHECK_OK(tlc_request_free(&calls[0]));
  CHECK_OK(tlc_request_free(&calls[1]));
  if (calls[0] != TLC_REQUEST_NULL || calls[1] != TLC_REQUEST_NULL)
    report(me, "tlc_request_free did not set the handles to TLC_REQUEST_NULL");
}

static void body(tlc_participant* me, void* user) {
  (void)user;
  nonblocking_rounds(me);
  op_freed_while_active(me);
  persistent_rounds(me);
}

/* On a team of one process and two threads: errors of one thread, and of misuse. */
static void error_body(tlc_participant* me, void* user) {
  (void)user;
  const int local = tlc_local_index(me), size = tlc_size(me);
  int32_t x[4] = {1, 2, 3, 4}, y[4] = {-1, -1, -1, -1};
  tlc_request request = TLC_REQUEST_NULL;

  /* Thread 0 passes a datatype that does not exist, thread 1 a valid call. */
  tlc_status s =
      tlc_iallreduce(me, x, y, 4, local == 0 ? (tlc_datatype)77 : TLC_INT32, TLC_SUM, &request);
  if (local == 0) {
    if (s != TLC_ERR_INVALID_ARGUMENT || request != TLC_REQUEST_NULL ||
        !strstr(tlc_error_message(), "tlc_iallreduce"))
      report(me, "iallreduce with an unknown datatype: got %s (%s)", tlc_status_name(s),
             tlc_error_message());
  } else {
    if (s != TLC_SUCCESS)
      report(me, "iallreduce next to a bad one: start failed (%s)", tlc_error_message());
    s = tlc_wait(&request);
    if (s != TLC_ERR_MISMATCH || request != TLC_REQUEST_NULL)
      report(me, "iallreduce next to a bad one: wait gave %s (%s), expected TLC_ERR_MISMATCH",
             tlc_status_name(s), tlc_error_message());
  }
  if (y[0] != -1) report(me, "iallreduce next to a bad one: the receive buffer was written");

  /* TLC_IN_PLACE where ibcast has none, on every thread: the request is set to
   * TLC_REQUEST_NULL even though it held something else. */
  request = (tlc_request)(void*)x;
  s = tlc_ibcast(me, TLC_IN_PLACE, 4, TLC_INT32, 0, &request);
  if (s != TLC_ERR_INVALID_ARGUMENT || request != TLC_REQUEST_NULL ||
      !strstr(tlc_error_message(), "tlc_ibcast: buf cannot be TLC_IN_PLACE"))
    report(me, "ibcast in place: got %s (%s), request %s", tlc_status_name(s), tlc_error_message(),
           request ? "not NULL" : "NULL");
  request = TLC_REQUEST_NULL;

  /* A NULL request pointer, on every thread. */
  s = tlc_ibcast(me, x, 4, TLC_INT32, 0, NULL);
  if (s != TLC_ERR_INVALID_ARGUMENT || !strstr(tlc_error_message(), "request is NULL"))
    report(me, "ibcast without a request: got %s (%s)", tlc_status_name(s), tlc_error_message());

  /* A root outside the team, found by the C++ layer: every thread fails at the start. */
  s = tlc_ibcast(me, x, 4, TLC_INT32, size, &request);
  if (s != TLC_ERR_INVALID_ARGUMENT || request != TLC_REQUEST_NULL)
    report(me, "ibcast with a bad root: got %s (%s)", tlc_status_name(s), tlc_error_message());

  /* tlc_start of a nonblocking request, and of an active persistent one. */
  CHECK_OK(tlc_ibarrier(me, &request));
  if (tlc_start(&request) != TLC_ERR_INVALID_ARGUMENT)
    report(me, "tlc_start of a nonblocking request: expected TLC_ERR_INVALID_ARGUMENT");
  CHECK_OK(tlc_wait(&request));
  CHECK_OK(tlc_wait(&request)); /* a null request completes at once */
  int flag = 0;
  CHECK_OK(tlc_test(&request, &flag));
  if (!flag) report(me, "tlc_test of a null request: flag 0");
  if (tlc_start(&request) != TLC_ERR_INVALID_ARGUMENT)
    report(me, "tlc_start of TLC_REQUEST_NULL: expected TLC_ERR_INVALID_ARGUMENT");
  CHECK_OK(tlc_allreduce_init(me, TLC_IN_PLACE, x, 4, TLC_INT32, TLC_MAX, &request));
  CHECK_OK(tlc_start(&request));
  if (tlc_start(&request) != TLC_ERR_INVALID_ARGUMENT)
    report(me, "tlc_start of an active persistent request: expected TLC_ERR_INVALID_ARGUMENT");
  CHECK_OK(tlc_wait(&request));
  CHECK_OK(tlc_request_free(&request));

  /* The team is still usable, its order intact. */
  for (int i = 0; i < 4; ++i) x[i] = local + 1;
  CHECK_OK(tlc_iallreduce(me, x, y, 4, TLC_INT32, TLC_SUM, &request));
  CHECK_OK(tlc_wait(&request));
  if (y[3] != 3) report(me, "iallreduce after the errors: %d, expected 3", y[3]);
}

int main(int argc, char** argv) {
  if (tlc_init(&argc, &argv) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_init: %s\n", tlc_error_message());
    return 1;
  }
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  if (tlc_op_create(compose_op, NULL, 0, &compose_handle) != TLC_SUCCESS ||
      tlc_op_create(compose_op, NULL, 0, &short_lived_handle) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_op_create: %s\n", tlc_error_message());
    return 1;
  }

  /* Uneven teams: 3 threads on process 0, 2 elsewhere. */
  tlc_team_options options;
  tlc_team_options_init(&options);
  options.threads = process == 0 ? 3 : 2;
  options.timeout_seconds = 120; /* a hang ends as a failure */
  tlc_team* team = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &options, &team) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_create: %s\n", tlc_error_message());
    return 1;
  }
  tlc_status s = tlc_team_run(team, body, NULL);
  if (s != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_run: %s: %s\n", tlc_status_name(s), tlc_error_message());
    ++failures;
  }
  tlc_team_free(&team);

  /* The error paths on a team of this process alone (an error between processes aborts the
   * team, as it does in C++). */
  options.threads = 2;
  if (tlc_team_create(MPI_COMM_SELF, &options, &team) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_create(MPI_COMM_SELF): %s\n", tlc_error_message());
    return 1;
  }
  s = tlc_team_run(team, error_body, NULL);
  if (s != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_run (errors): %s: %s\n", tlc_status_name(s), tlc_error_message());
    ++failures;
  }
  tlc_team_free(&team);

  tlc_request none = TLC_REQUEST_NULL;
  if (tlc_wait(NULL) != TLC_ERR_INVALID_ARGUMENT || tlc_request_free(&none) != TLC_SUCCESS ||
      tlc_startall(1, &none) != TLC_ERR_INVALID_ARGUMENT) {
    fprintf(stderr, "tlc_wait(NULL), tlc_request_free of null, tlc_startall of null\n");
    ++failures;
  }
  tlc_op_free(&compose_handle);

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (process == 0)
    printf("tlc C nonblocking test: %s (%d failures)\n", all ? "FAILED" : "passed", all);
  tlc_finalize();
  return all ? 1 : 0;
}
