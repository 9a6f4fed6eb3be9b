/* The C interface (tlc/tlc.h) under mpiexec: every collective with several element types and
 * ops, built-in and user (commutative and not), in place and not, checked element by element
 * against a sequential reference computed here; attach from pthreads; and the error paths (bad
 * root, an op the type lacks, one thread with a bad datatype, tlc_abort), none of which may
 * hang. Exits non-zero on any difference. */
#include <tlc/tlc.h>

#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values of every datatype, in one representation for references and comparisons ---- */

typedef struct value {
  long long i;   /* integer types and TLC_BOOL */
  double re, im; /* floating point (re) and complex (re, im) */
} value;

static bool is_integer(tlc_datatype t) { return t <= TLC_UINT64 || t == TLC_BOOL || t == TLC_BYTE; }
static bool is_complex(tlc_datatype t) { return t == TLC_FLOAT_COMPLEX || t == TLC_DOUBLE_COMPLEX; }

static value get(tlc_datatype t, const void* buf, size_t k) {
  value v = {0, 0, 0};
  switch (t) {
    case TLC_INT8:
      v.i = ((const int8_t*)buf)[k];
      break;
    case TLC_INT16:
      v.i = ((const int16_t*)buf)[k];
      break;
    case TLC_INT32:
      v.i = ((const int32_t*)buf)[k];
      break;
    case TLC_INT64:
      v.i = ((const int64_t*)buf)[k];
      break;
    case TLC_UINT8:
    case TLC_BYTE:
      v.i = ((const uint8_t*)buf)[k];
      break;
    case TLC_UINT16:
      v.i = ((const uint16_t*)buf)[k];
      break;
    case TLC_UINT32:
      v.i = ((const uint32_t*)buf)[k];
      break;
    case TLC_UINT64:
      v.i = (long long)((const uint64_t*)buf)[k];
      break;
    case TLC_FLOAT:
      v.re = ((const float*)buf)[k];
      break;
    case TLC_DOUBLE:
      v.re = ((const double*)buf)[k];
      break;
    case TLC_FLOAT_COMPLEX:
      v.re = crealf(((const float _Complex*)buf)[k]);
      v.im = cimagf(((const float _Complex*)buf)[k]);
      break;
    case TLC_DOUBLE_COMPLEX:
      v.re = creal(((const double _Complex*)buf)[k]);
      v.im = cimag(((const double _Complex*)buf)[k]);
      break;
    case TLC_BOOL:
      v.i = ((const bool*)buf)[k];
      break;
  }
  return v;
}

static void set(tlc_datatype t, void* buf, size_t k, value v) {
  switch (t) {
    case TLC_INT8:
      ((int8_t*)buf)[k] = (int8_t)v.i;
      break;
    case TLC_INT16:
      ((int16_t*)buf)[k] = (int16_t)v.i;
      break;
    case TLC_INT32:
      ((int32_t*)buf)[k] = (int32_t)v.i;
      break;
    case TLC_INT64:
      ((int64_t*)buf)[k] = (int64_t)v.i;
      break;
    case TLC_UINT8:
    case TLC_BYTE:
      ((uint8_t*)buf)[k] = (uint8_t)v.i;
      break;
    case TLC_UINT16:
      ((uint16_t*)buf)[k] = (uint16_t)v.i;
      break;
    case TLC_UINT32:
      ((uint32_t*)buf)[k] = (uint32_t)v.i;
      break;
    case TLC_UINT64:
      ((uint64_t*)buf)[k] = (uint64_t)v.i;
      break;
    case TLC_FLOAT:
      ((float*)buf)[k] = (float)v.re;
      break;
    case TLC_DOUBLE:
      ((double*)buf)[k] = v.re;
      break;
    case TLC_FLOAT_COMPLEX:
      ((float _Complex*)buf)[k] = (float)v.re + (float)v.im * I;
      break;
    case TLC_DOUBLE_COMPLEX:
      ((double _Complex*)buf)[k] = v.re + v.im * I;
      break;
    case TLC_BOOL:
      ((bool*)buf)[k] = v.i != 0;
      break;
  }
}

static bool same(tlc_datatype t, value a, value b) {
  if (is_integer(t)) return a.i == b.i;
  return a.re == b.re && (!is_complex(t) || a.im == b.im);
}

/* ---- user ops ---- */

/* An affine map x -> m x + c (mod 2^32), packed as m << 32 | c: composition is associative and
 * not commutative. a (lower ranks) applies first. */
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
static void sum_int32_op(const void* a, const void* b, void* out, size_t count, void* user) {
  /* Proves user_data arrives; threads of the team call it at once, hence atomic (GCC/Clang). */
  __atomic_fetch_add((int*)user, 1, __ATOMIC_RELAXED);
  for (size_t k = 0; k < count; ++k)
    ((int32_t*)out)[k] = ((const int32_t*)a)[k] + ((const int32_t*)b)[k];
}

static tlc_op compose_handle, sum_int32_handle;
static int sum_int32_calls;

/* ---- contributions and the reference ---- */

/* What rank r contributes at element k for a reduction with op on type t. */
static value contribution(tlc_datatype t, tlc_op op, int r, size_t k) {
  value v = {0, 0, 0};
  const long long kk = (long long)k;
  if (op == compose_handle) {
    v.i = (long long)((uint64_t)(2 * ((r + kk) % 5) + 1) << 32 | (uint64_t)(r * 3 + kk));
    return v;
  }
  switch (op) {
    case TLC_PROD:
      v.i = (r == 1 && k % 3 == 0) ? 2 : 1;
      if (t == TLC_DOUBLE_COMPLEX) {
        static const double re[4] = {1, 0, -1, 0}, im[4] = {0, 1, 0, -1};
        v.re = re[(r + kk) % 4];
        v.im = im[(r + kk) % 4];
      }
      break;
    case TLC_MIN:
    case TLC_MAX:
      v.i = (r * 7 + kk * 3) % 11 - (t == TLC_INT16 ? 5 : 0);
      v.re = (double)((r * 5 + kk) % 9) - 4.5;
      break;
    case TLC_BAND:
    case TLC_BOR:
    case TLC_BXOR:
      v.i = (r * 37 + kk * 11) & 0x7f;
      break;
    case TLC_LAND:
    case TLC_LOR:
      v.i = ((r + kk) % 3 != 0) || (op == TLC_LAND && r % 2 == 0 && k % 2 == 0);
      if (op == TLC_LOR) v.i = (r + kk) % 4 == 1;
      break;
    default: /* sums, built-in or user */
      v.i = (r + 1) + kk % 5;
      v.re = (double)((r + 1) * (long long)(k % 4)) - 1;
      v.im = (double)(k % 3) - r;
      break;
  }
  return v;
}

static value combine(tlc_datatype t, tlc_op op, value a, value b) {
  value v = {0, 0, 0};
  if (op == compose_handle) {
    v.i = (long long)compose((uint64_t)a.i, (uint64_t)b.i);
    return v;
  }
  switch (op) {
    case TLC_PROD:
      v.i = a.i * b.i;
      v.re = a.re * b.re - a.im * b.im;
      v.im = a.re * b.im + a.im * b.re;
      if (!is_complex(t)) v.re = a.re * b.re;
      break;
    case TLC_MIN:
      v.i = a.i < b.i ? a.i : b.i;
      v.re = a.re < b.re ? a.re : b.re;
      break;
    case TLC_MAX:
      v.i = a.i > b.i ? a.i : b.i;
      v.re = a.re > b.re ? a.re : b.re;
      break;
    case TLC_BAND:
      v.i = a.i & b.i;
      break;
    case TLC_BOR:
      v.i = a.i | b.i;
      break;
    case TLC_BXOR:
      v.i = a.i ^ b.i;
      break;
    case TLC_LAND:
      v.i = a.i && b.i;
      break;
    case TLC_LOR:
      v.i = a.i || b.i;
      break;
    default:
      v.i = a.i + b.i;
      v.re = a.re + b.re;
      v.im = a.im + b.im;
      break;
  }
  return v;
}

/* op over ranks first..last (inclusive, in rank order) at element k, as stored in type t. */
static value fold(tlc_datatype t, tlc_op op, int first, int last, size_t k) {
  value acc = contribution(t, op, first, k);
  for (int r = first + 1; r <= last; ++r) acc = combine(t, op, acc, contribution(t, op, r, k));
  _Alignas(16) char scratch[16]; /* round-trip through the type, as the library stores it */
  set(t, scratch, 0, acc);
  return get(t, scratch, 0);
}

/* What rank r sends at element k of a data movement. */
static value data(tlc_datatype t, int r, size_t k) {
  value v;
  v.i = (r * 31 + (long long)k) % 127;
  v.re = r * 1000.0 + (double)k;
  v.im = -(double)r;
  (void)t;
  return v;
}
static value sentinel(void) {
  value v = {99, -7.0, 7.0};
  return v;
}

/* ---- checking ---- */

typedef struct shared {
  int failures;
  pthread_mutex_t lock;
} shared;

static shared results = {0, PTHREAD_MUTEX_INITIALIZER};

static void report(tlc_participant* me, const char* what) {
  pthread_mutex_lock(&results.lock);
  if (++results.failures <= 20) fprintf(stderr, "rank %d: %s\n", tlc_rank(me), what);
  pthread_mutex_unlock(&results.lock);
}

#define CHECK_OK(call)                                                                \
  do {                                                                                \
    tlc_status s_ = (call);                                                           \
    if (s_ != TLC_SUCCESS) {                                                          \
      char m_[512];                                                                   \
      snprintf(m_, sizeof m_, "%s:%d: %s returned %s: %s", __FILE__, __LINE__, #call, \
               tlc_status_name(s_), tlc_error_message());                             \
      report(me, m_);                                                                 \
    }                                                                                 \
  } while (0)

static void expect(tlc_participant* me, tlc_datatype t, const void* buf, size_t k, value want,
                   const char* what, size_t count, int extra) {
  _Alignas(16) char stored[16]; /* want as the type holds it (a sentinel in a bool is 1) */
  set(t, stored, 0, want);
  want = get(t, stored, 0);
  const value got = get(t, buf, k);
  if (same(t, got, want)) return;
  char m[512];
  snprintf(m, sizeof m,
           "%s (type %d, count %zu, %d): element %zu is (%lld, %g, %g), expected (%lld, %g, %g)",
           what, (int)t, count, extra, k, got.i, got.re, got.im, want.i, want.re, want.im);
  report(me, m);
}

static void* alloc(tlc_datatype t, size_t n) {
  void* p = malloc((n ? n : 1) * tlc_datatype_size(t));
  if (!p) abort();
  for (size_t k = 0; k < n; ++k) set(t, p, k, sentinel());
  return p;
}

/* ---- the collectives ---- */

static void reductions(tlc_participant* me, tlc_datatype t, tlc_op op, size_t n) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  void* send = alloc(t, n * (size_t)size);
  void* recv = alloc(t, n * (size_t)size);
  for (size_t k = 0; k < n; ++k) set(t, send, k, contribution(t, op, rank, k));

  CHECK_OK(tlc_allreduce(me, send, recv, n, t, op));
  for (size_t k = 0; k < n; ++k)
    expect(me, t, recv, k, fold(t, op, 0, size - 1, k), "allreduce", n, 0);

  for (size_t k = 0; k < n; ++k) set(t, recv, k, contribution(t, op, rank, k));
  CHECK_OK(tlc_allreduce(me, TLC_IN_PLACE, recv, n, t, op));
  for (size_t k = 0; k < n; ++k)
    expect(me, t, recv, k, fold(t, op, 0, size - 1, k), "allreduce in place", n, 0);

  for (int root = 0; root < size; root += (size > 1 ? size - 1 : 1)) {
    for (size_t k = 0; k < n; ++k) set(t, recv, k, sentinel());
    CHECK_OK(tlc_reduce(me, send, rank == root ? recv : NULL, n, t, op, root));
    for (size_t k = 0; k < n; ++k)
      expect(me, t, recv, k, rank == root ? fold(t, op, 0, size - 1, k) : sentinel(), "reduce", n,
             root);
    for (size_t k = 0; k < n; ++k) set(t, recv, k, contribution(t, op, rank, k));
    CHECK_OK(tlc_reduce(me, TLC_IN_PLACE, recv, n, t, op, root));
    if (rank == root)
      for (size_t k = 0; k < n; ++k)
        expect(me, t, recv, k, fold(t, op, 0, size - 1, k), "reduce in place", n, root);
  }

  CHECK_OK(tlc_scan(me, send, recv, n, t, op));
  for (size_t k = 0; k < n; ++k) expect(me, t, recv, k, fold(t, op, 0, rank, k), "scan", n, 0);

  for (size_t k = 0; k < n; ++k) set(t, recv, k, sentinel());
  CHECK_OK(tlc_exscan(me, send, recv, n, t, op));
  for (size_t k = 0; k < n; ++k)
    expect(me, t, recv, k, rank == 0 ? sentinel() : fold(t, op, 0, rank - 1, k), "exscan", n, 0);

  for (size_t k = 0; k < n; ++k) set(t, recv, k, contribution(t, op, rank, k));
  CHECK_OK(tlc_exscan(me, TLC_IN_PLACE, recv, n, t, op));
  for (size_t k = 0; k < n && rank > 0; ++k)
    expect(me, t, recv, k, fold(t, op, 0, rank - 1, k), "exscan in place", n, 0);

  /* reduce_scatter_block: element j of block b is contribution element b * n + j. */
  for (size_t k = 0; k < n * (size_t)size; ++k) set(t, send, k, contribution(t, op, rank, k));
  CHECK_OK(tlc_reduce_scatter_block(me, send, recv, n, t, op));
  for (size_t k = 0; k < n; ++k)
    expect(me, t, recv, k, fold(t, op, 0, size - 1, (size_t)rank * n + k), "reduce_scatter_block",
           n, 0);
  memcpy(recv, send, n * (size_t)size * tlc_datatype_size(t));
  CHECK_OK(tlc_reduce_scatter_block(me, TLC_IN_PLACE, recv, n, t, op));
  for (size_t k = 0; k < n; ++k)
    expect(me, t, recv, k, fold(t, op, 0, size - 1, (size_t)rank * n + k),
           "reduce_scatter_block in place", n, 0);

  free(send);
  free(recv);
}

static void movements(tlc_participant* me, tlc_datatype t, size_t n) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  const size_t all = n * (size_t)size;
  void* send = alloc(t, all);
  void* recv = alloc(t, all);

  for (int root = 0; root < size; root += (size > 1 ? size - 1 : 1)) {
    for (size_t k = 0; k < n; ++k) set(t, recv, k, rank == root ? data(t, root, k) : sentinel());
    CHECK_OK(tlc_bcast(me, recv, n, t, root));
    for (size_t k = 0; k < n; ++k) expect(me, t, recv, k, data(t, root, k), "bcast", n, root);
  }

  for (size_t k = 0; k < n; ++k) set(t, send, k, data(t, rank, k));
  CHECK_OK(tlc_allgather(me, send, recv, n, t));
  for (size_t k = 0; k < all; ++k)
    expect(me, t, recv, k, data(t, (int)(k / (n ? n : 1)), k % (n ? n : 1)), "allgather", n, 0);
  for (size_t k = 0; k < all; ++k)
    set(t, recv, k, k / n == (size_t)rank ? data(t, rank, k % n) : sentinel());
  CHECK_OK(tlc_allgather(me, TLC_IN_PLACE, recv, n, t));
  for (size_t k = 0; k < all; ++k)
    expect(me, t, recv, k, data(t, (int)(k / n), k % n), "allgather in place", n, 0);

  const int last = size - 1;
  for (size_t k = 0; k < all; ++k) set(t, recv, k, sentinel());
  CHECK_OK(tlc_gather(me, send, rank == last ? recv : NULL, n, t, last));
  for (size_t k = 0; k < all && rank == last; ++k)
    expect(me, t, recv, k, data(t, (int)(k / n), k % n), "gather", n, last);
  for (size_t k = 0; k < all; ++k)
    set(t, recv, k, k / n == (size_t)rank ? data(t, rank, k % n) : sentinel());
  CHECK_OK(tlc_gather(me, rank == 0 ? TLC_IN_PLACE : send, recv, n, t, 0));
  for (size_t k = 0; k < all && rank == 0; ++k)
    expect(me, t, recv, k, data(t, (int)(k / n), k % n), "gather in place", n, 0);

  /* scatter: the root's element k is data(root, k); rank r receives block r. */
  for (size_t k = 0; k < all; ++k) set(t, send, k, data(t, last, k));
  for (size_t k = 0; k < n; ++k) set(t, recv, k, sentinel());
  CHECK_OK(tlc_scatter(me, rank == last ? send : NULL, recv, n, t, last));
  for (size_t k = 0; k < n; ++k)
    expect(me, t, recv, k, data(t, last, (size_t)rank * n + k), "scatter", n, last);
  for (size_t k = 0; k < all; ++k) set(t, send, k, data(t, 0, k));
  CHECK_OK(tlc_scatter(me, send, rank == 0 ? TLC_IN_PLACE : recv, n, t, 0));
  for (size_t k = 0; k < n && rank != 0; ++k)
    expect(me, t, recv, k, data(t, 0, (size_t)rank * n + k), "scatter in place", n, 0);

  /* alltoall: block j of rank i's send = data(i, j * n + ...) goes to block i of rank j. */
  for (size_t k = 0; k < all; ++k) set(t, send, k, data(t, rank, k));
  CHECK_OK(tlc_alltoall(me, send, recv, n, t));
  for (size_t k = 0; k < all; ++k)
    expect(me, t, recv, k, data(t, (int)(k / n), (size_t)rank * n + k % n), "alltoall", n, 0);
  memcpy(recv, send, all * tlc_datatype_size(t));
  CHECK_OK(tlc_alltoall(me, TLC_IN_PLACE, recv, n, t));
  for (size_t k = 0; k < all; ++k)
    expect(me, t, recv, k, data(t, (int)(k / n), (size_t)rank * n + k % n), "alltoall in place", n,
           0);

  free(send);
  free(recv);
}

/* v-variants: rank r owns r % 3 + n elements; blocks are laid out with one-element gaps that
 * must stay untouched. */
static void variants(tlc_participant* me, tlc_datatype t, size_t n) {
  const int rank = tlc_rank(me), size = tlc_size(me);
  size_t* counts = malloc(sizeof(size_t) * (size_t)size);
  size_t* displs = malloc(sizeof(size_t) * (size_t)size);
  size_t* send_counts = malloc(sizeof(size_t) * (size_t)size);
  size_t* send_displs = malloc(sizeof(size_t) * (size_t)size);
  size_t* recv_counts = malloc(sizeof(size_t) * (size_t)size);
  size_t* recv_displs = malloc(sizeof(size_t) * (size_t)size);
  size_t total = 0, sent = 0, received = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = (size_t)(r % 3) + n;
    displs[r] = total;
    total += counts[r] + 1;
    send_counts[r] = (size_t)((rank + r) % 3) + n; /* what I send to r */
    send_displs[r] = sent;
    sent += send_counts[r];
    recv_counts[r] = (size_t)((r + rank) % 3) + n; /* what r sends to me */
    recv_displs[r] = received;
    received += recv_counts[r];
  }
  const size_t mine = counts[rank];
  void* send = alloc(t, total + sent);
  void* recv = alloc(t, total + received);
  int last = size - 1;

  for (size_t k = 0; k < mine; ++k) set(t, send, k, data(t, rank, k));
  CHECK_OK(tlc_allgatherv(me, send, mine, recv, counts, displs, t));
  for (int r = 0; r < size; ++r) {
    for (size_t k = 0; k < counts[r]; ++k)
      expect(me, t, recv, displs[r] + k, data(t, r, k), "allgatherv", n, r);
    expect(me, t, recv, displs[r] + counts[r], sentinel(), "allgatherv gap", n, r);
  }

  for (size_t k = 0; k < total; ++k) set(t, recv, k, sentinel());
  CHECK_OK(tlc_gatherv(me, send, mine, rank == last ? recv : NULL, counts, displs, t, last));
  for (int r = 0; r < size && rank == last; ++r)
    for (size_t k = 0; k < counts[r]; ++k)
      expect(me, t, recv, displs[r] + k, data(t, r, k), "gatherv", n, r);

  /* scatterv from the last rank: element displs[r] + k of its send is data(last, that index). */
  for (size_t k = 0; k < total; ++k) set(t, send, k, data(t, last, k));
  for (size_t k = 0; k < mine; ++k) set(t, recv, k, sentinel());
  CHECK_OK(tlc_scatterv(me, rank == last ? send : NULL, counts, displs, recv, mine, t, last));
  for (size_t k = 0; k < mine; ++k)
    expect(me, t, recv, k, data(t, last, displs[rank] + k), "scatterv", n, last);

  /* alltoallv: what I send to r is data(me, 1000 * r + k) */
  for (int r = 0; r < size; ++r)
    for (size_t k = 0; k < send_counts[r]; ++k)
      set(t, send, send_displs[r] + k, data(t, rank, 100 * (size_t)r + k));
  CHECK_OK(tlc_alltoallv(me, send, send_counts, send_displs, recv, recv_counts, recv_displs, t));
  for (int r = 0; r < size; ++r)
    for (size_t k = 0; k < recv_counts[r]; ++k)
      expect(me, t, recv, recv_displs[r] + k, data(t, r, 100 * (size_t)rank + k), "alltoallv", n,
             r);

  free(send);
  free(recv);
  free(counts);
  free(displs);
  free(send_counts);
  free(send_displs);
  free(recv_counts);
  free(recv_displs);
}

typedef struct reduction_case {
  tlc_datatype type;
  tlc_op* op; /* a pointer, so that the user op handles can be filled in at run time */
} reduction_case;

static tlc_op op_sum = TLC_SUM, op_prod = TLC_PROD, op_min = TLC_MIN, op_max = TLC_MAX,
              op_band = TLC_BAND, op_bor = TLC_BOR, op_bxor = TLC_BXOR, op_land = TLC_LAND,
              op_lor = TLC_LOR;

static const reduction_case reduction_cases[] = {
    {TLC_INT32, &op_sum},          {TLC_INT64, &op_prod},
    {TLC_INT16, &op_min},          {TLC_UINT32, &op_max},
    {TLC_UINT8, &op_bxor},         {TLC_INT64, &op_band},
    {TLC_UINT16, &op_bor},         {TLC_BOOL, &op_lor},
    {TLC_INT32, &op_land},         {TLC_DOUBLE, &op_sum},
    {TLC_FLOAT, &op_max},          {TLC_DOUBLE, &op_min},
    {TLC_FLOAT_COMPLEX, &op_sum},  {TLC_DOUBLE_COMPLEX, &op_prod},
    {TLC_UINT64, &compose_handle}, {TLC_INT32, &sum_int32_handle},
    {TLC_INT8, &op_bor},           {TLC_UINT64, &op_sum},
};
static const tlc_datatype movement_types[] = {TLC_INT8, TLC_DOUBLE, TLC_DOUBLE_COMPLEX, TLC_BYTE};
static const size_t sizes[] = {0, 1, 7, 300};

/* Errors that every thread of every process meets alike: nothing may hang. */
static void error_paths(tlc_participant* me) {
  int x[4] = {1, 2, 3, 4}, y[4];
  const int size = tlc_size(me);
  tlc_status s = tlc_bcast(me, x, 4, TLC_INT32, size); /* root out of range */
  if (s != TLC_ERR_INVALID_ARGUMENT || !strstr(tlc_error_message(), "root"))
    report(me, "bcast with a bad root: expected TLC_ERR_INVALID_ARGUMENT naming the root");
  s = tlc_allreduce(me, x, y, 4, TLC_DOUBLE, TLC_BAND);
  if (s != TLC_ERR_INVALID_ARGUMENT ||
      !strstr(tlc_error_message(), "TLC_BAND is not defined for TLC_DOUBLE"))
    report(me, "allreduce TLC_BAND on TLC_DOUBLE: expected TLC_ERR_INVALID_ARGUMENT");
  s = tlc_allreduce(me, x, y, 4, TLC_INT32, 12345);
  if (s != TLC_ERR_INVALID_ARGUMENT || !strstr(tlc_error_message(), "neither"))
    report(me, "allreduce with an unknown op: expected TLC_ERR_INVALID_ARGUMENT");
  s = tlc_allreduce(me, NULL, y, 4, TLC_INT32, TLC_SUM);
  if (s != TLC_ERR_INVALID_ARGUMENT || !strstr(tlc_error_message(), "null"))
    report(me, "allreduce from NULL: expected TLC_ERR_INVALID_ARGUMENT");
  /* Thread 0 of each process passes a datatype that does not exist, the others a valid call:
   * it gets the argument error, they get a mismatch; the buffers stay untouched. */
  y[0] = -1;
  s = tlc_allreduce(me, x, y, 4, tlc_local_index(me) == 0 ? (tlc_datatype)77 : TLC_INT32, TLC_SUM);
  if (tlc_threads(me) > 1) {
    const tlc_status expected =
        tlc_local_index(me) == 0 ? TLC_ERR_INVALID_ARGUMENT : TLC_ERR_MISMATCH;
    if (s != expected) {
      char m[512];
      snprintf(m, sizeof m, "one bad datatype: got %s (%s), expected %s", tlc_status_name(s),
               tlc_error_message(), tlc_status_name(expected));
      report(me, m);
    }
    if (y[0] != -1) report(me, "one bad datatype: the receive buffer was written");
  }
  /* The team is still usable. */
  CHECK_OK(tlc_allreduce(me, x, y, 4, TLC_INT32, TLC_SUM));
  if (y[3] != 4 * size) report(me, "allreduce after the errors");
  if (tlc_current() != me) report(me, "tlc_current is not the participant");
}

static void body(tlc_participant* me, void* user) {
  (void)user;
  for (size_t c = 0; c < sizeof reduction_cases / sizeof *reduction_cases; ++c)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
      reductions(me, reduction_cases[c].type, *reduction_cases[c].op, sizes[s]);
  for (size_t t = 0; t < sizeof movement_types / sizeof *movement_types; ++t) {
    for (size_t s = 1; s < sizeof sizes / sizeof *sizes; ++s)
      movements(me, movement_types[t], sizes[s]);
    variants(me, movement_types[t], 0);
    variants(me, movement_types[t], 5);
  }
  CHECK_OK(tlc_barrier(me));
  error_paths(me);
}

static void aborting_body(tlc_participant* me, void* user) {
  (void)user;
  if (tlc_local_index(me) == 0) {
    tlc_abort(me, "thread 0 gives up");
    return;
  }
  /* Waits for thread 0, which never comes: must end with TLC_ERR_ABORTED. */
  const tlc_status s = tlc_barrier(me);
  if (s != TLC_ERR_ABORTED) report(me, "barrier after tlc_abort: expected TLC_ERR_ABORTED");
}

/* ---- attach from the application's own threads ---- */

typedef struct attach_arg {
  tlc_team* team;
  int index;
} attach_arg;

static void* attached_thread(void* p) {
  attach_arg* a = p;
  tlc_participant* me = NULL;
  if (tlc_team_attach(a->team, a->index, &me) != TLC_SUCCESS) {
    fprintf(stderr, "attach %d: %s\n", a->index, tlc_error_message());
    pthread_mutex_lock(&results.lock);
    ++results.failures;
    pthread_mutex_unlock(&results.lock);
    return NULL;
  }
  if (tlc_current() != me) report(me, "tlc_current after attach");
  double x[3] = {1.0, (double)tlc_rank(me), 0.5}, sum[3];
  CHECK_OK(tlc_allreduce(me, x, sum, 3, TLC_DOUBLE, TLC_SUM));
  const int size = tlc_size(me);
  if (sum[0] != size || sum[1] != size * (size - 1) / 2.0 || sum[2] != 0.5 * size)
    report(me, "attached allreduce");
  reductions(me, TLC_UINT64, compose_handle, 7);
  movements(me, TLC_INT8, 3);
  tlc_team_detach(&me);
  if (me != NULL || tlc_current() != NULL) report(NULL, "detach");
  return NULL;
}

int main(int argc, char** argv) {
  if (tlc_init(&argc, &argv) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_init: %s\n", tlc_error_message());
    return 1;
  }
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  if (tlc_op_create(compose_op, NULL, 0, &compose_handle) != TLC_SUCCESS ||
      tlc_op_create(sum_int32_op, &sum_int32_calls, 1, &sum_int32_handle) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_op_create: %s\n", tlc_error_message());
    return 1;
  }

  /* Uneven teams: 3 threads on process 0, 2 elsewhere. */
  tlc_team_options options;
  tlc_team_options_init(&options);
  options.threads = process == 0 ? 3 : 2;
  tlc_team* team = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &options, &team) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_create: %s\n", tlc_error_message());
    return 1;
  }
  tlc_status s = tlc_team_run(team, body, NULL);
  if (s != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_run: %s: %s\n", tlc_status_name(s), tlc_error_message());
    ++results.failures;
  }
  if (__atomic_load_n(&sum_int32_calls, __ATOMIC_RELAXED) == 0) {
    fprintf(stderr, "the user op's user_data never arrived\n");
    ++results.failures;
  }

  pthread_t threads[3];
  attach_arg args[3];
  for (int i = 0; i < options.threads; ++i) {
    args[i].team = team;
    args[i].index = i;
    pthread_create(&threads[i], NULL, attached_thread, &args[i]);
  }
  for (int i = 0; i < options.threads; ++i) pthread_join(threads[i], NULL);
  tlc_team_free(&team);

  /* The long-wait settings reach the team: a suspect time past an hour is refused, a silence
   * time of 0 (never) is not. */
  tlc_team_options waits;
  tlc_team_options_init(&waits);
  waits.threads = 1;
  if (waits.suspect_ms != -1 || waits.silent_seconds != -1) {
    fprintf(stderr, "tlc_team_options_init: suspect_ms and silent_seconds not unset\n");
    ++results.failures;
  }
  waits.suspect_ms = 4000000;
  tlc_team* refused = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &waits, &refused) != TLC_ERR_INVALID_ARGUMENT ||
      !strstr(tlc_error_message(), "suspect_ms")) {
    fprintf(stderr, "suspect_ms = 4000000: expected TLC_ERR_INVALID_ARGUMENT naming it\n");
    ++results.failures;
  }
  tlc_team_free(&refused);
  waits.suspect_ms = 100;
  waits.silent_seconds = 0;
  tlc_team* quiet = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &waits, &quiet) != TLC_SUCCESS) {
    fprintf(stderr, "suspect_ms = 100, silent_seconds = 0: %s\n", tlc_error_message());
    ++results.failures;
  }
  tlc_team_free(&quiet);

  /* Arguments rejected before anything runs. */
  tlc_participant* nobody = NULL;
  if (tlc_team_attach(NULL, 0, &nobody) != TLC_ERR_INVALID_ARGUMENT || nobody != NULL) {
    fprintf(stderr, "attach to NULL: expected TLC_ERR_INVALID_ARGUMENT\n");
    ++results.failures;
  }
  if (tlc_barrier(NULL) != TLC_ERR_INVALID_ARGUMENT || !strstr(tlc_error_message(), "NULL")) {
    fprintf(stderr, "barrier of NULL: expected TLC_ERR_INVALID_ARGUMENT\n");
    ++results.failures;
  }
  options.algorithms = "allreduce=full_lane,nonsense=flat";
  if (tlc_team_create(MPI_COMM_WORLD, &options, &team) != TLC_ERR_INVALID_ARGUMENT ||
      !strstr(tlc_error_message(), "unknown collective 'nonsense'")) {
    fprintf(stderr, "bad algorithms option: %s\n", tlc_error_message());
    ++results.failures;
  }

  /* Another machine's topology: a team of three threads placed on a described machine; an
   * invalid description, two descriptions at once, or an XML file that does not exist, are
   * errors. */
  tlc_team_options placed;
  tlc_team_options_init(&placed);
  placed.pin = 0;
  placed.threads = 3;
  placed.topology_synthetic = "package:1 numa:2 core:2 pu:1";
  if (tlc_team_create(MPI_COMM_WORLD, &placed, &team) != TLC_SUCCESS ||
      tlc_team_threads(team) != 3) {
    fprintf(stderr, "synthetic topology: %s\n", tlc_error_message());
    ++results.failures;
  }
  tlc_team_free(&team);
  placed.topology_synthetic = "no such machine";
  if (tlc_team_create(MPI_COMM_WORLD, &placed, &team) == TLC_SUCCESS ||
      !strstr(tlc_error_message(), "no such machine")) {
    fprintf(stderr, "invalid synthetic topology: %s\n", tlc_error_message());
    ++results.failures;
  }
  tlc_team_free(&team);
  placed.topology_synthetic = "package:1 numa:2 core:2 pu:1";
  placed.topology_xml = "/nonexistent/tlc-topology.xml";
  if (tlc_team_create(MPI_COMM_WORLD, &placed, &team) != TLC_ERR_INVALID_ARGUMENT ||
      !strstr(tlc_error_message(), "at most one")) {
    fprintf(stderr, "two topologies: %s\n", tlc_error_message());
    ++results.failures;
  }
  placed.topology_synthetic = NULL;
  if (tlc_team_create(MPI_COMM_WORLD, &placed, &team) == TLC_SUCCESS ||
      !strstr(tlc_error_message(), "/nonexistent/tlc-topology.xml")) {
    fprintf(stderr, "missing topology XML: %s\n", tlc_error_message());
    ++results.failures;
  }
  tlc_team_free(&team);

  /* A single-process team (no inter-process step): tlc_abort wakes the waiting threads. */
  options.algorithms = NULL;
  if (tlc_team_create(MPI_COMM_SELF, &options, &team) != TLC_SUCCESS) {
    fprintf(stderr, "tlc_team_create(MPI_COMM_SELF): %s\n", tlc_error_message());
    return 1;
  }
  s = tlc_team_run(team, aborting_body, NULL);
  if (s != TLC_ERR_ABORTED || !strstr(tlc_error_message(), "thread 0 gives up")) {
    fprintf(stderr, "run with tlc_abort: got %s (%s)\n", tlc_status_name(s), tlc_error_message());
    ++results.failures;
  }
  tlc_team_free(&team);
  tlc_op_free(&compose_handle);
  tlc_op_free(&sum_int32_handle);

  int failures = results.failures, all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (process == 0) printf("tlc C API test: %s (%d failures)\n", all ? "FAILED" : "passed", all);
  tlc_finalize();
  return all ? 1 : 0;
}
