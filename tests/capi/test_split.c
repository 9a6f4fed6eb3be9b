/* Sub-teams from C (tlc_split, tlc_split_type, tlc_participant_free) under mpiexec, on uneven
 * teams (3 threads on process 0, 2 elsewhere): a split by parity of rank, keys in order and
 * reversed, with collectives on the sub-team (blocking, nonblocking, persistent) alternating
 * with the parent's, every result compared with a value computed here from the parent ranks;
 * tlc_split_type by process, NUMA domain and rail; TLC_UNDEFINED (a NULL handle); a split of a
 * sub-team; collectives on a NULL or freed handle, which must fail with an error code; the
 * errors of the split itself; and sub-teams that outlive their parent team (attached pthreads
 * that detach, then tlc_team_free, then the sub-team's collectives). Exits non-zero on any
 * difference. */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t in strict C11 */

#include <tlc/tlc.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct shared {
  int failures;
  pthread_mutex_t lock;
} shared;

static shared results = {0, PTHREAD_MUTEX_INITIALIZER};

static void report(int rank, const char* what) {
  pthread_mutex_lock(&results.lock);
  if (++results.failures <= 30) fprintf(stderr, "rank %d: %s\n", rank, what);
  pthread_mutex_unlock(&results.lock);
}

#define CHECK_OK(call)                                                                \
  do {                                                                                \
    tlc_status s_ = (call);                                                           \
    if (s_ != TLC_SUCCESS) {                                                          \
      char m_[512];                                                                   \
      snprintf(m_, sizeof m_, "%s:%d: %s returned %s: %s", __FILE__, __LINE__, #call, \
               tlc_status_name(s_), tlc_error_message());                             \
      report(rank, m_);                                                               \
    }                                                                                 \
  } while (0)

#define EXPECT(cond, ...)                                              \
  do {                                                                 \
    if (!(cond)) {                                                     \
      char m_[512];                                                    \
      int n_ = snprintf(m_, sizeof m_, "%s:%d: ", __FILE__, __LINE__); \
      snprintf(m_ + n_, sizeof m_ - (size_t)n_, __VA_ARGS__);          \
      report(rank, m_);                                                \
    }                                                                  \
  } while (0)

/* The parent's ranks that choose colour c in the parity split, in the sub-team's order. */
static int members_of(int size, int c, int reversed, int* out) {
  int n = 0;
  for (int r = 0; r < size; ++r)
    if (r % 2 == c) out[n++] = r;
  if (reversed)
    for (int i = 0; i < n / 2; ++i) {
      const int t = out[i];
      out[i] = out[n - 1 - i];
      out[n - 1 - i] = t;
    }
  return n;
}

enum { max_ranks = 64, elements = 100 };

/* Splits me by parity of rank (key rank, or -rank for the reversed order) and checks the
 * sub-team's facts and collectives against the members computed here. */
static void parity_split(tlc_participant* me, int reversed) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  int members[max_ranks];
  const int n = members_of(size, rank % 2, reversed, members);
  int position = -1;
  for (int i = 0; i < n; ++i)
    if (members[i] == rank) position = i;

  tlc_participant* sub = NULL;
  CHECK_OK(tlc_split(me, rank % 2, reversed ? -rank : rank, &sub));
  if (!sub) {
    report(rank, "parity split: no sub-team");
    return;
  }
  EXPECT(tlc_current() == me, "tlc_split changed tlc_current()");
  EXPECT(tlc_size(sub) == n, "parity split: size %d, expected %d", tlc_size(sub), n);
  EXPECT(tlc_rank(sub) == position, "parity split (reversed %d): rank %d, expected %d", reversed,
         tlc_rank(sub), position);

  /* allreduce: the sum of the members' parent ranks, and element-wise over a vector. */
  int64_t mine = rank, sum = -1, expected = 0;
  for (int i = 0; i < n; ++i) expected += members[i];
  CHECK_OK(tlc_allreduce(sub, &mine, &sum, 1, TLC_INT64, TLC_SUM));
  EXPECT(sum == expected, "allreduce on the sub-team: %lld, expected %lld", (long long)sum,
         (long long)expected);
  double x[elements], total[elements];
  for (int i = 0; i < elements; ++i) x[i] = rank * 1000.0 + i;
  CHECK_OK(tlc_allreduce(sub, x, total, elements, TLC_DOUBLE, TLC_SUM));
  for (int i = 0; i < elements; ++i)
    if (total[i] != (double)expected * 1000.0 + (double)n * i) {
      EXPECT(0, "allreduce of doubles: element %d is %g, expected %g", i, total[i],
             (double)expected * 1000.0 + (double)n * i);
      break;
    }

  /* The parent between two calls of the sub-team: its own sum over all ranks. */
  int64_t all = -1;
  CHECK_OK(tlc_allreduce(me, &mine, &all, 1, TLC_INT64, TLC_SUM));
  EXPECT(all == (int64_t)size * (size - 1) / 2, "allreduce on the parent: %lld", (long long)all);

  /* allgather: the parent ranks in the sub-team's rank order. */
  int32_t gathered[max_ranks], mine32 = rank;
  CHECK_OK(tlc_allgather(sub, &mine32, gathered, 1, TLC_INT32));
  for (int i = 0; i < n; ++i)
    EXPECT(gathered[i] == members[i], "allgather: block %d is %d, expected %d", i, gathered[i],
           members[i]);

  /* bcast from the sub-team's last rank, and a scan. */
  int32_t value = rank;
  CHECK_OK(tlc_bcast(sub, &value, 1, TLC_INT32, n - 1));
  EXPECT(value == members[n - 1], "bcast: %d, expected %d", value, members[n - 1]);
  int64_t prefix = -1, want = 0;
  for (int i = 0; i <= position; ++i) want += members[i];
  CHECK_OK(tlc_scan(sub, &mine, &prefix, 1, TLC_INT64, TLC_SUM));
  EXPECT(prefix == want, "scan: %lld, expected %lld", (long long)prefix, (long long)want);

  /* Nonblocking and persistent calls on the sub-team. */
  tlc_request requests[2];
  int64_t nb_sum = -1;
  int32_t nb_value = rank;
  CHECK_OK(tlc_iallreduce(sub, &mine, &nb_sum, 1, TLC_INT64, TLC_SUM, &requests[0]));
  CHECK_OK(tlc_ibcast(sub, &nb_value, 1, TLC_INT32, 0, &requests[1]));
  CHECK_OK(tlc_waitall(2, requests));
  EXPECT(nb_sum == expected, "iallreduce on the sub-team: %lld", (long long)nb_sum);
  EXPECT(nb_value == members[0], "ibcast on the sub-team: %d, expected %d", nb_value, members[0]);
  tlc_request step = TLC_REQUEST_NULL;
  int64_t in = 0, out = -1;
  CHECK_OK(tlc_allreduce_init(sub, &in, &out, 1, TLC_INT64, TLC_MAX, &step));
  for (int round = 0; round < 5; ++round) {
    in = rank + round;
    CHECK_OK(tlc_start(&step));
    CHECK_OK(tlc_wait(&step));
    EXPECT(out == members[reversed ? 0 : n - 1] + round, "persistent max, round %d: %lld", round,
           (long long)out);
  }
  CHECK_OK(tlc_request_free(&step));
  CHECK_OK(tlc_barrier(sub));

  CHECK_OK(tlc_participant_free(&sub));
  EXPECT(sub == NULL, "tlc_participant_free left the handle set");
}

/* The shapes: every sub-team's size is agreed by an allreduce on it. */
static void shapes(tlc_participant* me) {
  const int rank = tlc_rank(me), threads = tlc_threads(me), local = tlc_local_index(me);
  tlc_participant* sub = NULL;
  CHECK_OK(tlc_split_type(me, TLC_BY_PROCESS, &sub));
  if (sub) {
    EXPECT(tlc_size(sub) == threads && tlc_rank(sub) == local && tlc_processes(sub) == 1,
           "by process: size %d rank %d processes %d, expected %d %d 1", tlc_size(sub),
           tlc_rank(sub), tlc_processes(sub), threads, local);
    int64_t mine = rank, sum = -1;
    const int64_t first = rank - local;
    CHECK_OK(tlc_allreduce(sub, &mine, &sum, 1, TLC_INT64, TLC_SUM));
    EXPECT(sum == first * threads + (int64_t)threads * (threads - 1) / 2,
           "allreduce by process: %lld", (long long)sum);
    CHECK_OK(tlc_participant_free(&sub));
  } else {
    report(rank, "by process: no sub-team");
  }
  const int types[2] = {TLC_BY_NUMA, TLC_BY_RAIL};
  for (int t = 0; t < 2; ++t) {
    CHECK_OK(tlc_split_type(me, types[t], &sub));
    if (!sub) {
      report(rank, "by NUMA or rail: no sub-team");
      continue;
    }
    int32_t one = 1, count = 0;
    CHECK_OK(tlc_allreduce(sub, &one, &count, 1, TLC_INT32, TLC_SUM));
    EXPECT(count == tlc_size(sub) && tlc_size(sub) >= 1 && tlc_size(sub) <= tlc_size(me),
           "split type %d: %d members counted, size %d", types[t], count, tlc_size(sub));
    if (types[t] == TLC_BY_NUMA)
      EXPECT(tlc_processes(sub) == 1, "by NUMA: %d processes", tlc_processes(sub));
    CHECK_OK(tlc_participant_free(&sub));
  }
}

/* TLC_UNDEFINED, NULL and freed handles, a nested split, and the errors of the split. */
static void undefined_and_errors(tlc_participant* me) {
  const int rank = tlc_rank(me), size = tlc_size(me), local = tlc_local_index(me);
  const int processes = tlc_processes(me);
  static int dummy;

  /* The sum of the first rank of each process, from the parent. */
  int64_t first = local == 0 ? rank : 0, firsts = -1;
  CHECK_OK(tlc_allreduce(me, &first, &firsts, 1, TLC_INT64, TLC_SUM));

  /* Thread 0 of each process joins no sub-team: its handle is NULL (set even though it held
   * something before), the others' team has every other thread. */
  tlc_participant* sub = (tlc_participant*)&dummy;
  CHECK_OK(tlc_split(me, local == 0 ? TLC_UNDEFINED : 7, 0, &sub));
  if (local == 0) {
    EXPECT(sub == NULL, "TLC_UNDEFINED gave a handle");
    int x = 1, y = -1;
    tlc_status s = tlc_allreduce(sub, &x, &y, 1, TLC_INT32, TLC_SUM);
    EXPECT(s == TLC_ERR_INVALID_ARGUMENT && strstr(tlc_error_message(), "me is NULL") && y == -1,
           "allreduce on the NULL handle: %s (%s)", tlc_status_name(s), tlc_error_message());
    EXPECT(tlc_rank(sub) == -1 && tlc_size(sub) == -1, "facts of the NULL handle");
    tlc_request r = (tlc_request)&dummy;
    s = tlc_iallreduce(sub, &x, &y, 1, TLC_INT32, TLC_SUM, &r);
    EXPECT(s == TLC_ERR_INVALID_ARGUMENT && r == TLC_REQUEST_NULL,
           "iallreduce on the NULL handle: %s", tlc_status_name(s));
    CHECK_OK(tlc_participant_free(&sub)); /* NULL: ignored */
  } else if (!sub || sub == (tlc_participant*)&dummy) {
    report(rank, "colour 7: no sub-team");
    sub = NULL;
  } else {
    EXPECT(tlc_size(sub) == size - processes, "without thread 0: size %d, expected %d",
           tlc_size(sub), size - processes);
    int64_t mine = rank, sum = -1, expected = (int64_t)size * (size - 1) / 2 - firsts;
    CHECK_OK(tlc_allreduce(sub, &mine, &sum, 1, TLC_INT64, TLC_SUM));
    EXPECT(sum == expected, "allreduce without thread 0: %lld, expected %lld", (long long)sum,
           (long long)expected);

    /* A split of the sub-team: by process. */
    tlc_participant* inner = NULL;
    CHECK_OK(tlc_split_type(sub, TLC_BY_PROCESS, &inner));
    if (inner) {
      int32_t one = 1, count = 0;
      CHECK_OK(tlc_allreduce(inner, &one, &count, 1, TLC_INT32, TLC_SUM));
      EXPECT(count == tlc_threads(me) - 1 && tlc_size(inner) == count,
             "nested split: %d members, expected %d", count, tlc_threads(me) - 1);
      CHECK_OK(tlc_participant_free(&inner));
    } else {
      report(rank, "nested split: no sub-team");
    }

    /* Not the way to release it, and not from another thread. */
    tlc_status s = tlc_team_detach(&sub);
    EXPECT(s == TLC_ERR_INVALID_ARGUMENT && sub != NULL &&
               strstr(tlc_error_message(), "tlc_participant_free"),
           "tlc_team_detach of a sub-team's participant: %s", tlc_status_name(s));

    CHECK_OK(tlc_participant_free(&sub));
    EXPECT(sub == NULL, "freed handle not NULL");
    /* A collective on the freed handle: an error code, no crash. */
    int x = 1, y = -1;
    s = tlc_allreduce(sub, &x, &y, 1, TLC_INT32, TLC_SUM);
    EXPECT(s == TLC_ERR_INVALID_ARGUMENT && y == -1, "allreduce on a freed handle: %s",
           tlc_status_name(s));
    s = tlc_barrier(sub);
    EXPECT(s == TLC_ERR_INVALID_ARGUMENT, "barrier on a freed handle: %s", tlc_status_name(s));
  }

  /* The run's participant is no sub-team's. */
  tlc_participant* self = me;
  tlc_status s = tlc_participant_free(&self);
  EXPECT(s == TLC_ERR_INVALID_ARGUMENT && self == me, "tlc_participant_free of the run's: %s",
         tlc_status_name(s));
  s = tlc_split(NULL, 0, 0, &sub);
  EXPECT(s == TLC_ERR_INVALID_ARGUMENT && sub == NULL, "tlc_split of NULL: %s", tlc_status_name(s));

  /* A negative colour other than TLC_UNDEFINED: every thread fails alike. */
  sub = (tlc_participant*)&dummy;
  s = tlc_split(me, -5, 0, &sub);
  EXPECT(s == TLC_ERR_INVALID_ARGUMENT && sub == NULL && strstr(tlc_error_message(), "-5"),
         "colour -5: %s (%s)", tlc_status_name(s), tlc_error_message());

  /* Keys that interleave the processes: refused on every thread. */
  if (processes > 1) {
    s = tlc_split(me, 0, local, &sub);
    EXPECT(s == TLC_ERR_UNSUPPORTED && sub == NULL, "interleaving keys: %s (%s)",
           tlc_status_name(s), tlc_error_message());
  }

  /* Thread 0 of each process passes no place for the handle, or a type that is no shape: it
   * gets the argument error, the others a mismatch instead of waiting for it. */
  if (tlc_threads(me) > 1) {
    s = tlc_split(me, 0, rank, local == 0 ? NULL : &sub);
    EXPECT(s == (local == 0 ? TLC_ERR_INVALID_ARGUMENT : TLC_ERR_MISMATCH), "one NULL sub: %s (%s)",
           tlc_status_name(s), tlc_error_message());
    if (local != 0) EXPECT(sub == NULL, "one NULL sub: a handle anyway");
    s = tlc_split_type(me, local == 0 ? 99 : TLC_BY_PROCESS, &sub);
    EXPECT(s == (local == 0 ? TLC_ERR_INVALID_ARGUMENT : TLC_ERR_MISMATCH) && sub == NULL,
           "one bad type: %s (%s)", tlc_status_name(s), tlc_error_message());
    if (local == 0)
      EXPECT(strstr(tlc_error_message(), "99") != NULL, "bad type message: %s",
             tlc_error_message());
    /* Threads that split differently: a mismatch everywhere. */
    s = local == 0 ? tlc_split_type(me, TLC_BY_PROCESS, &sub) : tlc_split(me, 0, rank, &sub);
    EXPECT(s == TLC_ERR_MISMATCH && sub == NULL, "split and split_type mixed: %s (%s)",
           tlc_status_name(s), tlc_error_message());
  }

  /* The team is still usable. */
  int64_t mine = rank, sum = -1;
  CHECK_OK(tlc_allreduce(me, &mine, &sum, 1, TLC_INT64, TLC_SUM));
  EXPECT(sum == (int64_t)size * (size - 1) / 2, "allreduce after the errors: %lld", (long long)sum);
}

static void body(tlc_participant* me, void* user) {
  (void)user;
  if (tlc_size(me) > max_ranks) {
    report(tlc_rank(me), "team too large for this test");
    return;
  }
  parity_split(me, 0);
  parity_split(me, 1);
  shapes(me);
  undefined_and_errors(me);
}

/* ---- sub-teams that outlive their parent: attached threads ---- */

typedef struct attach_arg {
  tlc_team* team;
  int index;
  pthread_barrier_t* detached; /* all detached: main may free the team */
  pthread_barrier_t* freed;    /* the team is freed */
} attach_arg;

static void* attached_thread(void* p) {
  attach_arg* a = p;
  tlc_participant* me = NULL;
  tlc_participant* sub = NULL;
  int rank = -1, size = 0;
  if (tlc_team_attach(a->team, a->index, &me) != TLC_SUCCESS) {
    report(-1, tlc_error_message());
  } else {
    rank = tlc_rank(me);
    size = tlc_size(me);
    CHECK_OK(tlc_split(me, rank % 2, rank, &sub));
    CHECK_OK(tlc_team_detach(&me));
  }
  pthread_barrier_wait(a->detached);
  pthread_barrier_wait(a->freed);
  if (sub) {
    /* The parent team is gone; the sub-team still works. */
    int members[max_ranks];
    const int n = members_of(size, rank % 2, 0, members);
    int64_t mine = rank, sum = -1, expected = 0;
    for (int i = 0; i < n; ++i) expected += members[i];
    CHECK_OK(tlc_allreduce(sub, &mine, &sum, 1, TLC_INT64, TLC_SUM));
    EXPECT(sum == expected, "allreduce after the parent was freed: %lld, expected %lld",
           (long long)sum, (long long)expected);
    CHECK_OK(tlc_barrier(sub));
    CHECK_OK(tlc_participant_free(&sub));
  } else {
    report(rank, "attached split: no sub-team");
  }
  return NULL;
}

/* tlc_participant_free from a thread that did not make the participant. */
typedef struct free_arg {
  tlc_participant* sub;
  tlc_status status;
} free_arg;

static void* free_other(void* p) {
  free_arg* a = p;
  a->status = tlc_participant_free(&a->sub);
  return NULL;
}

static void foreign_free_body(tlc_participant* me, void* user) {
  (void)user;
  const int rank = tlc_rank(me);
  free_arg arg = {NULL, TLC_SUCCESS};
  CHECK_OK(tlc_split(me, 0, rank, &arg.sub));
  tlc_participant* made = arg.sub;
  pthread_t other;
  pthread_create(&other, NULL, free_other, &arg);
  pthread_join(other, NULL);
  EXPECT(arg.status == TLC_ERR_INVALID_ARGUMENT && arg.sub == made,
         "tlc_participant_free from another thread: %s", tlc_status_name(arg.status));
  int64_t one = 1, count = 0;
  CHECK_OK(tlc_allreduce(made, &one, &count, 1, TLC_INT64, TLC_SUM));
  EXPECT(count == tlc_size(me), "the sub-team after a refused free: %lld", (long long)count);
  CHECK_OK(tlc_participant_free(&made));
}

int main(int argc, char** argv) {
  if (tlc_init(&argc, &argv) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_init: %s\n", tlc_error_message());
    return 1;
  }
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  tlc_team_options options;
  tlc_team_options_init(&options);
  options.threads = process == 0 ? 3 : 2;
  options.timeout_seconds = 60; /* a split that waits forever fails the test instead */
  tlc_team* team = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &options, &team) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_create: %s\n", tlc_error_message());
    return 1;
  }
  tlc_status s = tlc_team_run(team, body, NULL);
  if (s != TLC_SUCCESS) report(-1, tlc_error_message());
  s = tlc_team_run(team, foreign_free_body, NULL);
  if (s != TLC_SUCCESS) report(-1, tlc_error_message());

  pthread_barrier_t detached, freed;
  pthread_barrier_init(&detached, NULL, (unsigned)options.threads + 1);
  pthread_barrier_init(&freed, NULL, (unsigned)options.threads + 1);
  pthread_t threads[3];
  attach_arg args[3];
  for (int i = 0; i < options.threads; ++i) {
    args[i] = (attach_arg){team, i, &detached, &freed};
    pthread_create(&threads[i], NULL, attached_thread, &args[i]);
  }
  pthread_barrier_wait(&detached);
  s = tlc_team_free(&team);
  if (s != TLC_SUCCESS || team != NULL) report(-1, "tlc_team_free with sub-teams alive");
  pthread_barrier_wait(&freed);
  for (int i = 0; i < options.threads; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&detached);
  pthread_barrier_destroy(&freed);

  int failures = results.failures;
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  tlc_finalize();
  if (failures == 0 && process == 0) printf("split ok\n");
  return failures != 0;
}
