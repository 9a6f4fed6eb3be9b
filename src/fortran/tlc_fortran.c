/* The C half of the Fortran module (tlc.f90): reads the Fortran descriptors of assumed-type,
 * assumed-rank arguments (ISO_Fortran_binding.h) and calls the C interface (tlc/tlc.h). One
 * procedure per collective thereby serves every kind and rank. A buffer this layer cannot
 * translate, or sizes that do not fit the collective, are rejected through tlc_reject (tlc_ireject
 * for the nonblocking and persistent forms), so the other threads are not left waiting. The
 * nonblocking and persistent forms pass the buffer's own memory on, never a copy: a buffer that
 * is not contiguous is rejected. */
#include <ISO_Fortran_binding.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <tlc/tlc.h>

/* TLC_IN_PLACE of the Fortran module: a variable whose address marks the in-place forms. */
int tlc_fortran_in_place = 0;

typedef struct buffer {
  void* data;
  size_t count; /* elements of type */
  tlc_datatype type;
  bool in_place;
  bool as_bytes; /* a type tlc has no element type for, moved as bytes */
  size_t scale;  /* tlc elements per Fortran element: the element's bytes when as_bytes, else 1 */
} buffer;

typedef struct failure {
  char message[256];
} failure;

/* The Fortran types with a tlc element type of their own. */
static const struct {
  CFI_type_t fortran;
  tlc_datatype tlc;
} element_types[] = {
    {CFI_type_int8_t, TLC_INT8},
    {CFI_type_int16_t, TLC_INT16},
    {CFI_type_int32_t, TLC_INT32},
    {CFI_type_int64_t, TLC_INT64},
    {CFI_type_float, TLC_FLOAT},
    {CFI_type_double, TLC_DOUBLE},
    {CFI_type_float_Complex, TLC_FLOAT_COMPLEX},
    {CFI_type_double_Complex, TLC_DOUBLE_COMPLEX},
    {CFI_type_Bool, TLC_BOOL},
};

/* Reads d into b; false (and a message) for a buffer that cannot be passed on. */
static bool read_buffer(const CFI_cdesc_t* d, const char* function, const char* name, buffer* b,
                        failure* f) {
  b->data = d->base_addr;
  b->in_place = d->base_addr == &tlc_fortran_in_place;
  b->as_bytes = false;
  b->scale = 1;
  b->type = TLC_BYTE; /* replaced below; stays for TLC_IN_PLACE, which has no type */
  b->count = 1;
  for (int i = 0; i < d->rank; ++i) b->count *= (size_t)d->dim[i].extent;
  if (b->in_place) return true;
  if (!CFI_is_contiguous(d)) {
    snprintf(f->message, sizeof f->message, "%s: %s is not contiguous", function, name);
    return false;
  }
  for (size_t i = 0; i < sizeof element_types / sizeof element_types[0]; ++i)
    if (d->type == element_types[i].fortran) {
      b->type = element_types[i].tlc;
      return true;
    }
  /* Default logicals are integers holding 0 or 1 to C: TLC_LAND and TLC_LOR work on them. */
  if ((d->type & CFI_type_mask) == CFI_type_Logical && (d->elem_len == 4 || d->elem_len == 8)) {
    b->type = d->elem_len == 4 ? TLC_INT32 : TLC_INT64;
    return true;
  }
  /* Anything else (character, derived types, other kinds) moves as bytes. */
  b->type = TLC_BYTE;
  b->count *= d->elem_len;
  b->as_bytes = true;
  b->scale = d->elem_len;
  return true;
}

/* Which form of a collective a tlc_f_<name> entry makes (its argument `form`):
 * the blocking call, tlc_i<name> or tlc_<name>_init. */
enum { BLOCKING = 0, NONBLOCKING = 1, PERSISTENT = 2 };

/* Calls tlc_<name>, tlc_i<name> or tlc_<name>_init with the arguments, as `form` says (the last
 * two with `request`). */
#define FORMS(name, ...)                                     \
  (form == BLOCKING      ? tlc_##name(__VA_ARGS__)           \
   : form == NONBLOCKING ? tlc_i##name(__VA_ARGS__, request) \
                         : tlc_##name##_init(__VA_ARGS__, request))

static const char* form_name(int form, const char* blocking, const char* nonblocking,
                             const char* persistent) {
  return form == BLOCKING ? blocking : form == NONBLOCKING ? nonblocking : persistent;
}

static int reject(tlc_participant* me, int form, const failure* f) {
  return form == BLOCKING ? tlc_reject(me, f->message) : tlc_ireject(me, f->message);
}

static bool in_place_fails(failure* f, const char* function, const char* what) {
  snprintf(f->message, sizeof f->message, "%s: %s cannot be TLC_IN_PLACE", function, what);
  return true;
}

/* Both buffers readable, of one element type; for reductions, one tlc can combine; recv
 * TLC_IN_PLACE only where the caller allows it. */
static bool read_pair(const CFI_cdesc_t* send, const CFI_cdesc_t* recv, const char* function,
                      bool reduction, bool recv_in_place, buffer* s, buffer* r, failure* f) {
  if (!read_buffer(send, function, "send", s, f) || !read_buffer(recv, function, "recv", r, f))
    return false;
  if (r->in_place && !recv_in_place) return !in_place_fails(f, function, "recv");
  if (!s->in_place && !r->in_place && s->type != r->type) {
    snprintf(f->message, sizeof f->message,
             "%s: send and recv have different types (Fortran type codes %d and %d)", function,
             (int)send->type, (int)recv->type);
    return false;
  }
  const CFI_cdesc_t* typed = s->in_place ? recv : send;
  if (reduction && (s->in_place ? r : s)->as_bytes) {
    snprintf(f->message, sizeof f->message,
             "%s: tlc cannot reduce this Fortran type (type code %d, %zu bytes an element); "
             "integer, real, complex and logical kinds it can",
             function, (int)typed->type, (size_t)typed->elem_len);
    return false;
  }
  return true;
}

static bool sizes_fail(failure* f, const char* function, const char* what, size_t got,
                       size_t expected) {
  snprintf(f->message, sizeof f->message, "%s: %s holds %zu elements, expected %zu", function, what,
           got, expected);
  return true;
}

int tlc_f_team_create(int has_comm, MPI_Fint comm, const tlc_team_options* options,
                      tlc_team** team) {
  return tlc_team_create(has_comm ? MPI_Comm_f2c(comm) : MPI_COMM_WORLD, options, team);
}

/* The entry points of tlc.f90 (its interfaces are generated from src/fortran/collectives.cmake):
 * tlc_f_<name>(me, <the collective's arguments>, form, request), form BLOCKING (request unused),
 * NONBLOCKING or PERSISTENT. */
int tlc_f_barrier(tlc_participant* me, int form, tlc_request* request) {
  return FORMS(barrier, me);
}

int tlc_f_bcast(tlc_participant* me, CFI_cdesc_t* buf, int root, int form, tlc_request* request) {
  const char* function = form_name(form, "tlc_bcast", "tlc_ibcast", "tlc_bcast_init");
  buffer b;
  failure f;
  if (!read_buffer(buf, function, "buffer", &b, &f) ||
      (b.in_place && sizes_fail(&f, function, "TLC_IN_PLACE", 0, 0)))
    return reject(me, form, &f);
  return FORMS(bcast, me, b.data, b.count, b.type, root);
}

/* allreduce, scan and exscan: the same shape. */
typedef enum elementwise_kind { ALLREDUCE, SCAN, EXSCAN } elementwise_kind;
static int elementwise(elementwise_kind kind, const char* function, tlc_participant* me,
                       CFI_cdesc_t* send, CFI_cdesc_t* recv, int op, int form,
                       tlc_request* request) {
  buffer s, r;
  failure f;
  if (!read_pair(send, recv, function, true, false, &s, &r, &f) ||
      (!s.in_place && s.count != r.count && sizes_fail(&f, function, "recv", r.count, s.count)))
    return reject(me, form, &f);
  const void* from = s.in_place ? TLC_IN_PLACE : s.data;
  switch (kind) {
    case ALLREDUCE:
      return FORMS(allreduce, me, from, r.data, r.count, r.type, op);
    case SCAN:
      return FORMS(scan, me, from, r.data, r.count, r.type, op);
    default:
      return FORMS(exscan, me, from, r.data, r.count, r.type, op);
  }
}

int tlc_f_allreduce(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int op, int form,
                    tlc_request* request) {
  return elementwise(ALLREDUCE,
                     form_name(form, "tlc_allreduce", "tlc_iallreduce", "tlc_allreduce_init"), me,
                     send, recv, op, form, request);
}
int tlc_f_scan(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int op, int form,
               tlc_request* request) {
  return elementwise(SCAN, form_name(form, "tlc_scan", "tlc_iscan", "tlc_scan_init"), me, send,
                     recv, op, form, request);
}
int tlc_f_exscan(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int op, int form,
                 tlc_request* request) {
  return elementwise(EXSCAN, form_name(form, "tlc_exscan", "tlc_iexscan", "tlc_exscan_init"), me,
                     send, recv, op, form, request);
}

int tlc_f_reduce(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int op, int root,
                 int form, tlc_request* request) {
  const char* function = form_name(form, "tlc_reduce", "tlc_ireduce", "tlc_reduce_init");
  const bool at_root = tlc_rank(me) == root;
  buffer s, r;
  failure f;
  if (!read_pair(send, recv, function, true, true, &s, &r, &f)) return reject(me, form, &f);
  if (s.in_place) return FORMS(reduce, me, TLC_IN_PLACE, r.data, r.count, r.type, op, root);
  if (at_root && (r.in_place || s.count != r.count)) {
    sizes_fail(&f, function, "the root's recv", r.in_place ? 0 : r.count, s.count);
    return reject(me, form, &f);
  }
  return FORMS(reduce, me, s.data, at_root ? r.data : NULL, s.count, s.type, op, root);
}

int tlc_f_reduce_scatter_block(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int op,
                               int form, tlc_request* request) {
  const char* function = form_name(form, "tlc_reduce_scatter_block", "tlc_ireduce_scatter_block",
                                   "tlc_reduce_scatter_block_init");
  const size_t size = (size_t)tlc_size(me);
  buffer s, r;
  failure f;
  if (!read_pair(send, recv, function, true, false, &s, &r, &f)) return reject(me, form, &f);
  if (s.in_place) {
    if (r.count % size != 0) {
      sizes_fail(&f, function, "recv (in place)", r.count, (r.count / size + 1) * size);
      return reject(me, form, &f);
    }
    return FORMS(reduce_scatter_block, me, TLC_IN_PLACE, r.data, r.count / size, r.type, op);
  }
  if (s.count != size * r.count) {
    sizes_fail(&f, function, "send", s.count, size * r.count);
    return reject(me, form, &f);
  }
  return FORMS(reduce_scatter_block, me, s.data, r.data, r.count, r.type, op);
}

int tlc_f_allgather(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int form,
                    tlc_request* request) {
  const char* function = form_name(form, "tlc_allgather", "tlc_iallgather", "tlc_allgather_init");
  const size_t size = (size_t)tlc_size(me);
  buffer s, r;
  failure f;
  if (!read_pair(send, recv, function, false, false, &s, &r, &f)) return reject(me, form, &f);
  const size_t count = s.in_place ? r.count / size : s.count;
  if (r.count != size * count) {
    sizes_fail(&f, function, "recv", r.count, size * count);
    return reject(me, form, &f);
  }
  return FORMS(allgather, me, s.in_place ? TLC_IN_PLACE : s.data, r.data, count, r.type);
}

int tlc_f_gather(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int root, int form,
                 tlc_request* request) {
  const char* function = form_name(form, "tlc_gather", "tlc_igather", "tlc_gather_init");
  const size_t size = (size_t)tlc_size(me);
  const bool at_root = tlc_rank(me) == root;
  buffer s, r;
  failure f;
  if (!read_pair(send, recv, function, false, !at_root, &s, &r, &f)) return reject(me, form, &f);
  if (!at_root) {
    if (s.in_place) {
      snprintf(f.message, sizeof f.message, "%s: TLC_IN_PLACE at a rank other than the root",
               function);
      return reject(me, form, &f);
    }
    return FORMS(gather, me, s.data, NULL, s.count, s.type, root);
  }
  const size_t count = s.in_place ? r.count / size : s.count;
  if (r.count != size * count) {
    sizes_fail(&f, function, "the root's recv", r.count, size * count);
    return reject(me, form, &f);
  }
  return FORMS(gather, me, s.in_place ? TLC_IN_PLACE : s.data, r.data, count, r.type, root);
}

int tlc_f_scatter(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int root, int form,
                  tlc_request* request) {
  const char* function = form_name(form, "tlc_scatter", "tlc_iscatter", "tlc_scatter_init");
  const size_t size = (size_t)tlc_size(me);
  const bool at_root = tlc_rank(me) == root;
  buffer s, r;
  failure f;
  if (!read_buffer(send, function, "send", &s, &f) || !read_buffer(recv, function, "recv", &r, &f))
    return reject(me, form, &f);
  if (!at_root) {
    if (r.in_place) {
      snprintf(f.message, sizeof f.message, "%s: TLC_IN_PLACE at a rank other than the root",
               function);
      return reject(me, form, &f);
    }
    return FORMS(scatter, me, NULL, r.data, r.count, r.type, root);
  }
  if (s.in_place) {
    snprintf(f.message, sizeof f.message, "%s: send cannot be TLC_IN_PLACE", function);
    return reject(me, form, &f);
  }
  if (!r.in_place && s.type != r.type) {
    snprintf(f.message, sizeof f.message, "%s: send and recv have different types", function);
    return reject(me, form, &f);
  }
  const size_t count = r.in_place ? s.count / size : r.count;
  if (s.count != size * count) {
    sizes_fail(&f, function, "the root's send", s.count, size * count);
    return reject(me, form, &f);
  }
  return FORMS(scatter, me, s.data, r.in_place ? TLC_IN_PLACE : r.data, count, s.type, root);
}

int tlc_f_alltoall(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, int form,
                   tlc_request* request) {
  const char* function = form_name(form, "tlc_alltoall", "tlc_ialltoall", "tlc_alltoall_init");
  const size_t size = (size_t)tlc_size(me);
  buffer s, r;
  failure f;
  if (!read_pair(send, recv, function, false, false, &s, &r, &f)) return reject(me, form, &f);
  if ((!s.in_place && s.count != r.count) || r.count % size != 0) {
    sizes_fail(&f, function, "recv", r.count, s.in_place ? (r.count / size + 1) * size : s.count);
    return reject(me, form, &f);
  }
  return FORMS(alltoall, me, s.in_place ? TLC_IN_PLACE : s.data, r.data, r.count / size, r.type);
}

/* --- The v-variants ---------------------------------------------------------------------------
 * Counts and displacements come from Fortran as default integers, one per rank, displacements
 * in elements from the start of the buffer (0-based, as in MPI). The converted arrays of a
 * nonblocking or persistent call are handed to its request (keep_or_free). */

typedef struct layout {
  size_t* counts; /* in tlc elements (bytes for a type moved as bytes) */
  size_t* displs;
  size_t extent; /* elements the layout reaches into its buffer */
} layout;

static void free_layout(layout* l) {
  free(l->counts);
  free(l->displs);
  l->counts = l->displs = NULL;
}

/* Reads one rank's counts and displacements for a buffer of b->count elements; false (and a
 * message) for the wrong number of entries, a negative entry, or a block past the buffer's end. */
static bool read_layout(tlc_participant* me, const char* function, const char* what,
                        const buffer* b, const int* counts, int n_counts, const int* displs,
                        int n_displs, layout* l, failure* f) {
  const int size = tlc_size(me);
  if (n_counts != size || n_displs != size) {
    snprintf(f->message, sizeof f->message,
             "%s: %s counts and displacements have %d and %d entries; expected one per rank (%d)",
             function, what, n_counts, n_displs, size);
    return false;
  }
  l->counts = malloc((size_t)size * sizeof *l->counts);
  l->displs = malloc((size_t)size * sizeof *l->displs);
  l->extent = 0;
  if (l->counts == NULL || l->displs == NULL) {
    snprintf(f->message, sizeof f->message, "%s: out of memory for the %s counts", function, what);
    return false;
  }
  for (int i = 0; i < size; ++i) {
    if (counts[i] < 0 || displs[i] < 0) {
      snprintf(f->message, sizeof f->message, "%s: %s %s(%d) is negative (%d)", function, what,
               counts[i] < 0 ? "counts" : "displs", i + 1, counts[i] < 0 ? counts[i] : displs[i]);
      return false;
    }
    l->counts[i] = (size_t)counts[i] * b->scale;
    l->displs[i] = (size_t)displs[i] * b->scale;
    if (l->counts[i] > 0 && l->displs[i] + l->counts[i] > l->extent)
      l->extent = l->displs[i] + l->counts[i];
  }
  if (l->extent > b->count) {
    snprintf(f->message, sizeof f->message,
             "%s: %s holds %zu elements, its counts and displacements reach element %zu", function,
             what, b->count / b->scale, l->extent / b->scale);
    return false;
  }
  return true;
}

/* The counts of a call that started as a request live as long as it (tlc_request_keep): tlc reads
 * them until it completes. Otherwise they are freed now. */
static void keep_or_free(int form, int status, tlc_request* request, layout* l) {
  if (form != BLOCKING && status == TLC_SUCCESS && *request != TLC_REQUEST_NULL) {
    tlc_request_keep(*request, l->counts);
    tlc_request_keep(*request, l->displs);
    l->counts = l->displs = NULL;
  }
  free_layout(l);
}

static bool types_fail(failure* f, const char* function) {
  snprintf(f->message, sizeof f->message, "%s: send and recv have different types", function);
  return true;
}

int tlc_f_allgatherv(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, const int* counts,
                     int n_counts, const int* displs, int n_displs, int form,
                     tlc_request* request) {
  const char* function =
      form_name(form, "tlc_allgatherv", "tlc_iallgatherv", "tlc_allgatherv_init");
  buffer s, r;
  failure f;
  layout l = {NULL, NULL, 0};
  int status;
  if (!read_pair(send, recv, function, false, false, &s, &r, &f) ||
      !read_layout(me, function, "recv", &r, counts, n_counts, displs, n_displs, &l, &f))
    status = reject(me, form, &f);
  else
    status = FORMS(allgatherv, me, s.in_place ? TLC_IN_PLACE : s.data, s.count, r.data, l.counts,
                   l.displs, r.type);
  keep_or_free(form, status, request, &l);
  return status;
}

int tlc_f_gatherv(tlc_participant* me, CFI_cdesc_t* send, CFI_cdesc_t* recv, const int* counts,
                  int n_counts, const int* displs, int n_displs, int root, int form,
                  tlc_request* request) {
  const char* function = form_name(form, "tlc_gatherv", "tlc_igatherv", "tlc_gatherv_init");
  const bool at_root = tlc_rank(me) == root;
  buffer s, r;
  failure f;
  layout l = {NULL, NULL, 0};
  int status;
  if (!read_pair(send, recv, function, false, !at_root, &s, &r, &f) ||
      (!at_root && s.in_place &&
       in_place_fails(&f, function, "send at a rank other than the root")) ||
      (at_root &&
       !read_layout(me, function, "recv", &r, counts, n_counts, displs, n_displs, &l, &f)))
    status = reject(me, form, &f);
  else
    status = FORMS(gatherv, me, s.in_place ? TLC_IN_PLACE : s.data, s.count,
                   at_root ? r.data : NULL, l.counts, l.displs, s.in_place ? r.type : s.type, root);
  keep_or_free(form, status, request, &l);
  return status;
}

int tlc_f_scatterv(tlc_participant* me, CFI_cdesc_t* send, const int* counts, int n_counts,
                   const int* displs, int n_displs, CFI_cdesc_t* recv, int root, int form,
                   tlc_request* request) {
  const char* function = form_name(form, "tlc_scatterv", "tlc_iscatterv", "tlc_scatterv_init");
  const bool at_root = tlc_rank(me) == root;
  buffer s, r;
  failure f;
  layout l = {NULL, NULL, 0};
  int status;
  /* As in tlc_f_scatter: send is read at the root only, so elsewhere its type does not matter. */
  if (!read_buffer(send, function, "send", &s, &f) ||
      !read_buffer(recv, function, "recv", &r, &f) ||
      (s.in_place && in_place_fails(&f, function, "send")) ||
      (!at_root && r.in_place &&
       in_place_fails(&f, function, "recv at a rank other than the root")) ||
      (at_root && !r.in_place && s.type != r.type && types_fail(&f, function)) ||
      (at_root &&
       !read_layout(me, function, "send", &s, counts, n_counts, displs, n_displs, &l, &f)))
    status = reject(me, form, &f);
  else
    status = FORMS(scatterv, me, at_root ? s.data : NULL, l.counts, l.displs,
                   r.in_place ? TLC_IN_PLACE : r.data, r.count, r.in_place ? s.type : r.type, root);
  keep_or_free(form, status, request, &l);
  return status;
}

int tlc_f_alltoallv(tlc_participant* me, CFI_cdesc_t* send, const int* send_counts,
                    int n_send_counts, const int* send_displs, int n_send_displs, CFI_cdesc_t* recv,
                    const int* recv_counts, int n_recv_counts, const int* recv_displs,
                    int n_recv_displs, int form, tlc_request* request) {
  const char* function = form_name(form, "tlc_alltoallv", "tlc_ialltoallv", "tlc_alltoallv_init");
  buffer s, r;
  failure f;
  layout sl = {NULL, NULL, 0}, rl = {NULL, NULL, 0};
  int status;
  if (!read_pair(send, recv, function, false, false, &s, &r, &f) ||
      (s.in_place && in_place_fails(&f, function, "send")) ||
      !read_layout(me, function, "send", &s, send_counts, n_send_counts, send_displs, n_send_displs,
                   &sl, &f) ||
      !read_layout(me, function, "recv", &r, recv_counts, n_recv_counts, recv_displs, n_recv_displs,
                   &rl, &f))
    status = reject(me, form, &f);
  else
    status =
        FORMS(alltoallv, me, s.data, sl.counts, sl.displs, r.data, rl.counts, rl.displs, r.type);
  keep_or_free(form, status, request, &sl);
  keep_or_free(form, status, request, &rl);
  return status;
}
