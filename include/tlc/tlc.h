/** @file
 * tlc's C interface: the C++ API (tlc/tlc.hpp) for C programs and other languages (the Fortran
 * module `tlc` is built on it). Compiles as C99 and later, and as C++.
 *
 * Every thread of a team calls the same collectives in the same order, as MPI ranks do. Ranks
 * (and roots) are global thread ranks, process-major. Counts are in elements. Every function
 * that can fail returns a tlc_status; tlc_error_message() says what went wrong. No C++ exception
 * ever leaves this interface.
 *
 *   tlc_init(&argc, &argv);                       MPI_Init_thread(MPI_THREAD_MULTIPLE)
 *   tlc_team_options opt; tlc_team_options_init(&opt); opt.threads = 4;
 *   tlc_team* team; tlc_team_create(MPI_COMM_WORLD, &opt, &team);
 *   tlc_team_run(team, body, &data);              body(me, &data) on each of the team's threads
 *   tlc_team_free(&team);
 *   tlc_finalize();
 */
#ifndef TLC_TLC_H
#define TLC_TLC_H

#include <stddef.h>

#include <mpi.h>

#include <tlc/detail/mpi_check.h>
#include <tlc/detail/export.hpp>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---------------------------------------------------------------------------------- */

/** What every function that can fail returns; tlc_error_message() says more. */
typedef enum tlc_status {
  TLC_SUCCESS = 0,              /**< no error */
  TLC_ERR_INVALID_ARGUMENT = 1, /**< bad input, detected before any data moved */
  TLC_ERR_MISMATCH = 2,         /**< the participants of one call disagree */
  TLC_ERR_MPI = 3,              /**< an MPI call failed */
  TLC_ERR_TOPOLOGY = 4,         /**< hwloc, or a placement that cannot be honoured */
  TLC_ERR_TIMEOUT = 5,          /**< TLC_TIMEOUT expired */
  TLC_ERR_ABORTED = 6,          /**< another thread of the team failed */
  TLC_ERR_UNSUPPORTED = 7,      /**< valid, but this build or MPI library cannot serve it */
  TLC_ERR_NO_MEMORY = 8,        /**< out of memory */
  TLC_ERR_INTERNAL = 9          /**< anything else (a bug in tlc) */
} tlc_status;

/** The message of the most recent call on the calling thread that failed ("" if none). Valid
 * until the next failing call on this thread. */
TLC_API const char* tlc_error_message(void);
/** "TLC_SUCCESS", "TLC_ERR_INVALID_ARGUMENT", ... */
TLC_API const char* tlc_status_name(tlc_status status);
/** The library's version, "major.minor.patch" ("0.1.0"); tlc/version.hpp has it as macros. */
TLC_API const char* tlc_version(void);

/* ---- element types and reduction ops --------------------------------------------------------- */

/** The element type of a collective's buffers. */
typedef enum tlc_datatype {
  TLC_INT8 = 1,
  TLC_INT16 = 2,
  TLC_INT32 = 3,
  TLC_INT64 = 4,
  TLC_UINT8 = 5,
  TLC_UINT16 = 6,
  TLC_UINT32 = 7,
  TLC_UINT64 = 8,
  TLC_FLOAT = 9,
  TLC_DOUBLE = 10,
  TLC_FLOAT_COMPLEX = 11,  /**< float _Complex, Fortran complex(c_float_complex) */
  TLC_DOUBLE_COMPLEX = 12, /**< double _Complex, Fortran complex(c_double_complex) */
  TLC_BOOL = 13,           /**< _Bool / bool, Fortran logical(c_bool) */
  TLC_BYTE = 14            /**< raw bytes: any data to move; reduced only by user ops */
} tlc_datatype;

/** Bytes of one element, or 0 for a value that is not a tlc_datatype. */
TLC_API size_t tlc_datatype_size(tlc_datatype type);

/** A reduction op: one of the built-in ops below, or a handle from tlc_op_create. */
typedef int tlc_op;
enum {
  TLC_SUM = 1,  /**< integers, floating point, complex */
  TLC_PROD = 2, /**< integers, floating point, complex */
  TLC_MIN = 3,  /**< integers, floating point */
  TLC_MAX = 4,  /**< integers, floating point */
  TLC_BAND = 5, /**< integers */
  TLC_BOR = 6,  /**< integers */
  TLC_BXOR = 7, /**< integers */
  TLC_LAND = 8, /**< integers, TLC_BOOL */
  TLC_LOR = 9   /**< integers, TLC_BOOL */
};

/** A user op: out[i] = a[i] op b[i] for i < count, where a holds the combination of lower ranks
 * than b. out is the same memory as a or as b. tlc calls it with any count (whole slices, not
 * necessarily the whole buffer), from any thread of the team, concurrently. */
typedef void (*tlc_user_function)(const void* a, const void* b, void* out, size_t count,
                                  void* user_data);
/** Registers a user op, usable with every datatype. Unless commutative is non-zero, ranks are
 * combined in rank order. Create it before the collectives that use it, free it after. */
TLC_API tlc_status tlc_op_create(tlc_user_function function, void* user_data, int commutative,
                                 tlc_op* op);
/** Releases a user op; *op becomes 0. No collective may be using it. */
TLC_API tlc_status tlc_op_free(tlc_op* op);

/* The in-place forms, passed as the send buffer (the receive buffer of scatter and scatterv at
 * the root): allreduce, reduce, scan, exscan (the contribution is in recv and is replaced by the
 * result), reduce_scatter_block (recv holds size * count inputs, the result lands in its first
 * count elements), allgather(v) and alltoall (this rank's block is already in place in recv),
 * gather(v) at the root (its own block is already in place), scatter(v) at the root (its block
 * stays in send). */
/** The in-place marker (see above). */
#define TLC_IN_PLACE ((void*)-1)

/* ---- MPI lifetime ---------------------------------------------------------------------------- */

/** MPI_Init_thread(MPI_THREAD_MULTIPLE), or adopts an MPI that the application initialised (then
 * tlc_finalize leaves it alone). argc and argv may be NULL. */
TLC_API tlc_status tlc_init(int* argc, char*** argv);
/** MPI_Finalize, if tlc_init initialised MPI. Free every team first. */
TLC_API tlc_status tlc_finalize(void);
/** The level MPI provided (MPI_THREAD_*), or -1 before tlc_init. */
TLC_API int tlc_thread_level(void);

/* ---- teams ----------------------------------------------------------------------------------- */

/** A team: the threads of one process joined with those of the other processes (tlc::Team). */
typedef struct tlc_team tlc_team;
/** One participant of a team, as a body or an attached thread sees it (tlc::Thread). */
typedef struct tlc_participant tlc_participant;

/** What tlc::TeamOptions holds (include/tlc/options.hpp has every detail). 0, -1 and NULL mean
 * "unset": the TLC_* environment variable decides, else the default. */
typedef struct tlc_team_options {
  int threads;            /**< threads of this process; 0: TLC_THREADS, else one per allowed core */
  int threads_per_numa;   /**< 0: spread evenly over NUMA domains */
  int lanes;              /**< inter-process lanes; 0: TLC_LANES, else threads_per_rail * rails */
  int threads_per_rail;   /**< lane threads per network rail */
  int pin;                /**< 1 pin (error if impossible), 0 never, -1: TLC_PIN, else automatic */
  int reproducible;       /**< 1 (default): bitwise reproducible floating-point results */
  double timeout_seconds; /**< 0: TLC_TIMEOUT, else wait forever */
  const char* timeout_action;  /**< "error" or "abort"; NULL: TLC_TIMEOUT_ACTION */
  size_t pipeline_chunk_bytes; /**< 0: TLC_PIPELINE_CHUNK, else the default */
  const char* algorithms;  /**< forced algorithms, "allreduce=full_lane,bcast=binomial:pipelined" */
  const char* fallback;    /**< "plan" or "error"; NULL: TLC_FALLBACK */
  const char* leaders;     /**< "auto", "static" or "dynamic"; NULL: TLC_LEADERS, else "auto" */
  int check;               /**< 1 compare calls across processes, 0 not, -1: TLC_CHECK */
  int stats;               /**< 1 arrival telemetry, 0 not, -1: TLC_STATS */
  const char* tuning_file; /**< NULL: TLC_TUNING */
  /** The machine the team is placed on; both NULL: this one (hwloc's detection). At most one. */
  const char* topology_xml;       /**< an hwloc XML file (lstopo --of xml) */
  const char* topology_synthetic; /**< an hwloc synthetic description, "package:2 numa:2 core:8" */
  /** Calls that disagree across processes (docs/reliability.md): a wait between processes longer
   * than this many ms is compared with the others'; 0 off; -1: TLC_SUSPECT_MS, else 500. */
  int suspect_ms;
  /** Another process not heard from for this many seconds in such a wait is silent and the wait
   * ends; 0 never; -1: TLC_SILENT, else 30. */
  double silent_seconds;
} tlc_team_options;

/** Fills every field with its default (the "unset" values above, reproducible = 1). */
TLC_API void tlc_team_options_init(tlc_team_options* options);

/** Collective over comm: one call per process. options may be NULL (all defaults). */
TLC_API tlc_status tlc_team_create(MPI_Comm comm, const tlc_team_options* options, tlc_team** team);
/** Destroys the team (*team becomes NULL); NULL and a NULL *team are ignored. */
TLC_API tlc_status tlc_team_free(tlc_team** team);

/** Facts about the team, or -1 (and a message) when team is NULL. */
TLC_API int tlc_team_threads(const tlc_team* team);   /**< threads of this process */
TLC_API int tlc_team_size(const tlc_team* team);      /**< threads of all processes */
TLC_API int tlc_team_process(const tlc_team* team);   /**< rank of this process in comm */
TLC_API int tlc_team_processes(const tlc_team* team); /**< processes in comm */
TLC_API int tlc_team_lanes(const tlc_team* team);     /**< inter-process lanes */

/** Runs body(me, user_data) once on each of the team's own (pinned) threads and waits for all of
 * them. me is valid during the call only. If a thread called tlc_abort, the team is aborted and
 * the first such failure is returned; every later run or attach then fails. */
typedef void (*tlc_body)(tlc_participant* me, void* user_data);
/** Runs body on the team's threads (see tlc_body). */
TLC_API tlc_status tlc_team_run(tlc_team* team, tlc_body body, void* user_data);

/** For applications that keep their own threads (OpenMP): the calling thread becomes participant
 * local_index (0 .. threads-1) until tlc_team_detach. Does not change the thread's binding. */
TLC_API tlc_status tlc_team_attach(tlc_team* team, int local_index, tlc_participant** me);
/** The same from a parallel region of region_threads threads (OpenMP: omp_get_num_threads()): a
 * region of another size than the team's threads of this process (OMP_THREAD_LIMIT,
 * OMP_DYNAMIC, a nested region) could never complete a collective, so this fails at once with
 * TLC_ERR_INVALID_ARGUMENT and a message naming both sizes, on every thread of the region,
 * instead of letting the first collective wait forever. C++: Team::attach(index, threads). */
TLC_API tlc_status tlc_team_attach_checked(tlc_team* team, int local_index, int region_threads,
                                           tlc_participant** me);
/** Ends an attachment (*me becomes NULL); NULL and a NULL *me are ignored. */
TLC_API tlc_status tlc_team_detach(tlc_participant** me);

/** The participant the calling thread runs as (inside tlc_team_run) or has attached, or NULL. */
TLC_API tlc_participant* tlc_current(void);

/** Gives up: when this thread's body returns, the team is aborted (threads waiting in a
 * collective, now or later, get TLC_ERR_ABORTED) and tlc_team_run returns TLC_ERR_ABORTED with
 * message. Inside tlc_team_run only; return from the body right after. */
TLC_API tlc_status tlc_abort(tlc_participant* me, const char* message);

/** Facts about a participant, or -1 (and a message) when me is NULL. */
TLC_API int tlc_rank(const tlc_participant* me);        /**< global rank, process-major */
TLC_API int tlc_size(const tlc_participant* me);        /**< threads of all processes */
TLC_API int tlc_local_index(const tlc_participant* me); /**< index inside this process */
TLC_API int tlc_threads(const tlc_participant* me);     /**< threads of this process */
TLC_API int tlc_process(const tlc_participant* me);     /**< rank of this process */
TLC_API int tlc_processes(const tlc_participant* me);   /**< processes of the team */

/* ---- sub-teams ------------------------------------------------------------------------------ */
/* As MPI_Comm_split makes communicators (C++: tlc::Thread::split): collective over every thread
 * of me's team, each with its own colour and key. The threads with the same colour form one
 * sub-team, ranked by key, ties by rank (ranks of the sub-team count from 0); TLC_UNDEFINED joins
 * none. *sub is the caller's participant in its sub-team, a team of its own on which every
 * collective above (blocking, nonblocking, persistent) and tlc_split itself work; calls on the
 * sub-team and on its parent may alternate in any order that is the same for every member.
 * A team's ranks are process-major, so the keys must keep the members of each process
 * consecutive (TLC_ERR_UNSUPPORTED otherwise). Slow (it makes MPI communicators): split once,
 * call often. Threads that disagree (another kind of split, a negative colour) fail alike, with
 * *sub NULL. A NULL sub, or a type that is no TLC_BY_*, fails on the threads that passed it
 * (TLC_ERR_INVALID_ARGUMENT) while they still join the call, so the others get TLC_ERR_MISMATCH
 * instead of waiting. tlc_current() is not changed. */

/** The colour of a thread that joins no sub-team in tlc_split (as MPI_UNDEFINED): its *sub is
 * NULL and the call succeeds. */
#define TLC_UNDEFINED (-32766)

/** The shapes a team already has, for tlc_split_type. */
enum {
  TLC_BY_PROCESS = 1, /**< the threads of my process */
  TLC_BY_NUMA = 2,    /**< the threads of my NUMA domain, in my process */
  TLC_BY_RAIL = 3     /**< the threads of every process that use the same network rail as I do */
};

/** *sub = the caller's participant in the sub-team of its colour (see above), NULL for
 * TLC_UNDEFINED. Free it with tlc_participant_free. */
TLC_API tlc_status tlc_split(tlc_participant* me, int color, int key, tlc_participant** sub);
/** The same with the sub-teams of a shape of the team: TLC_BY_PROCESS, TLC_BY_NUMA or
 * TLC_BY_RAIL, the same on every thread. */
TLC_API tlc_status tlc_split_type(tlc_participant* me, int type, tlc_participant** sub);
/** Releases a participant of a sub-team (*sub becomes NULL; NULL and a NULL *sub are ignored),
 * on the thread that made it, once its requests are complete or freed. The sub-team itself goes
 * with its last participant; it does not need its parent, which may be freed (or detached) first.
 * Every member must free its participant, and before tlc_finalize: the last one of a process
 * releases the sub-team's MPI resources there, collectively with its other processes, as
 * tlc_team_free does. A participant of tlc_team_run or tlc_team_attach is refused. */
TLC_API tlc_status tlc_participant_free(tlc_participant** sub);

/* ---- collectives ----------------------------------------------------------------------------- */
/* Buffers a rank does not use (recv of a non-root in reduce and gather(v), send of a non-root in
 * scatter(v)) are ignored and may be NULL. Bad arguments fail on every thread of the process
 * before any buffer is written. */

/** Returns once every participant of the team has entered it. */
TLC_API tlc_status tlc_barrier(tlc_participant* me);

/** buf of root is copied into buf of every rank; all pass the same count. */
TLC_API tlc_status tlc_bcast(tlc_participant* me, void* buf, size_t count, tlc_datatype type,
                             int root);

/** recv of root = op over all ranks (in rank order) of send; count elements each. */
TLC_API tlc_status tlc_reduce(tlc_participant* me, const void* send, void* recv, size_t count,
                              tlc_datatype type, tlc_op op, int root);
/** recv[i] = op over all ranks of send[i]; count elements each. */
TLC_API tlc_status tlc_allreduce(tlc_participant* me, const void* send, void* recv, size_t count,
                                 tlc_datatype type, tlc_op op);
/** recv of rank r = op over ranks 0..r of send. */
TLC_API tlc_status tlc_scan(tlc_participant* me, const void* send, void* recv, size_t count,
                            tlc_datatype type, tlc_op op);
/** recv of rank r = op over ranks 0..r-1 of send; rank 0's recv is left untouched. */
TLC_API tlc_status tlc_exscan(tlc_participant* me, const void* send, void* recv, size_t count,
                              tlc_datatype type, tlc_op op);
/** recv of rank r (count elements) = block r of the element-wise reduction of all send buffers
 * (size * count elements each). */
TLC_API tlc_status tlc_reduce_scatter_block(tlc_participant* me, const void* send, void* recv,
                                            size_t count, tlc_datatype type, tlc_op op);

/** recv (size * count) = the send buffers (count each) of all ranks in rank order. */
TLC_API tlc_status tlc_allgather(tlc_participant* me, const void* send, void* recv, size_t count,
                                 tlc_datatype type);
/** recv of root (size * count) = the send buffers (count each) of all ranks in rank order. */
TLC_API tlc_status tlc_gather(tlc_participant* me, const void* send, void* recv, size_t count,
                              tlc_datatype type, int root);
/** recv of rank r (count) = block r of the root's send (size * count). */
TLC_API tlc_status tlc_scatter(tlc_participant* me, const void* send, void* recv, size_t count,
                               tlc_datatype type, int root);
/** Block j (count elements) of rank i's send goes to block i of rank j's recv; both hold
 * size * count elements. */
TLC_API tlc_status tlc_alltoall(tlc_participant* me, const void* send, void* recv, size_t count,
                                tlc_datatype type);

/** The v-variants: counts and displacements (in elements) have one entry per global rank. */
/** recv[displs[r] ...] = the send buffer of rank r, which holds counts[r] elements. */
TLC_API tlc_status tlc_allgatherv(tlc_participant* me, const void* send, size_t send_count,
                                  void* recv, const size_t* counts, const size_t* displs,
                                  tlc_datatype type);
/** The same at the root only; counts and displs are read at the root only. */
TLC_API tlc_status tlc_gatherv(tlc_participant* me, const void* send, size_t send_count, void* recv,
                               const size_t* counts, const size_t* displs, tlc_datatype type,
                               int root);
/** recv of rank r (recv_count elements) = counts[r] elements of the root's send from displs[r];
 * counts and displs are read at the root only. */
TLC_API tlc_status tlc_scatterv(tlc_participant* me, const void* send, const size_t* counts,
                                const size_t* displs, void* recv, size_t recv_count,
                                tlc_datatype type, int root);
/** send_counts[j] elements from send[send_displs[j]] go to rank j, which receives them at
 * recv[recv_displs[i]] (recv_counts[i] elements, equal to what rank i sends it). */
TLC_API tlc_status tlc_alltoallv(tlc_participant* me, const void* send, const size_t* send_counts,
                                 const size_t* send_displs, void* recv, const size_t* recv_counts,
                                 const size_t* recv_displs, tlc_datatype type);

/* ---- nonblocking and persistent collectives ------------------------------------------------- */
/* Every collective above also as tlc_i<name>(same arguments..., &request), which starts it and
 * returns at once, and as tlc_<name>_init(same arguments..., &request), which makes a persistent
 * call to start any number of times (tlc_start). As in MPI: the buffers and the count and
 * displacement arrays belong to tlc until the request completes (a persistent call's until it is
 * freed; each round reads them anew); every thread of the team starts the same nonblocking calls
 * and persistent inits and starts in the same order, an order of their own apart from the
 * blocking calls; requests complete in any order. Nothing advances without a thread inside tlc:
 * the last thread of a process to start a call combines and posts it, and any thread testing or
 * waiting for it advances it. A user op (tlc_op_create) is copied into the call: it may be freed
 * while a request that uses it is active, but its user_data must stay valid until completion.
 * Arguments are checked when the call starts: a thread's bad arguments fail its start (request
 * stays TLC_REQUEST_NULL), and the call of the other threads then fails when completed. */

/** A nonblocking or persistent collective call of one thread (as MPI_Request): one handle type
 * for both. TLC_REQUEST_NULL is no call. A nonblocking request becomes TLC_REQUEST_NULL when it
 * completes (tlc_wait, tlc_test with *flag set, tlc_waitall, tlc_waitany), successfully or not;
 * a persistent one stays valid (inactive) until tlc_request_free. */
typedef struct tlc_request_object* tlc_request;
/** The null request: completes at once in tlc_wait, tlc_test, tlc_waitall, tlc_waitany. */
#define TLC_REQUEST_NULL ((tlc_request)0)

/** Waits until this thread's part of the call is complete (its output written). A nonblocking
 * request becomes TLC_REQUEST_NULL; a persistent one becomes inactive. Returns what the call
 * failed with, once. TLC_TIMEOUT bounds the wait. */
TLC_API tlc_status tlc_wait(tlc_request* request);
/** Advances the call: *flag = 1 if it is complete (then as tlc_wait; a call that failed is
 * complete too, its status returned), else 0. */
TLC_API tlc_status tlc_test(tlc_request* request, int* flag);
/** Waits for all n requests (in any order inside). Every one is completed even when some fail;
 * the first failure is returned. */
TLC_API tlc_status tlc_waitall(size_t n, tlc_request* requests);
/** Waits until one active request of the n completes and sets *index to its position (as
 * tlc_wait for it, its status returned); *index = n when none is active (null requests and
 * inactive persistent ones). */
TLC_API tlc_status tlc_waitany(size_t n, tlc_request* requests, size_t* index);
/** Starts a round of a persistent call (from a tlc_<name>_init); starting an active one is an
 * error (TLC_ERR_INVALID_ARGUMENT), as is starting a nonblocking request. */
TLC_API tlc_status tlc_start(tlc_request* request);
/** Starts the n persistent calls, in order; stops at the first failure and returns it. */
TLC_API tlc_status tlc_startall(size_t n, tlc_request* requests);
/** Releases a request (*request becomes TLC_REQUEST_NULL; a null one is ignored): a persistent
 * call, or a nonblocking request that will not be waited for. An active call is waited for first
 * (its buffers are never left in use); an error of that wait is lost. */
TLC_API tlc_status tlc_request_free(tlc_request* request);
/** For language bindings built on this interface: memory the binding allocated with malloc for
 * the call (count arrays it converted) and that must live as long as the call; it is released
 * with free() when the request is completed (nonblocking) or freed, after the call is done. On
 * failure (and for TLC_REQUEST_NULL) memory is freed at once. */
TLC_API tlc_status tlc_request_keep(tlc_request request, void* memory);
/** Whether the request is a call in progress for this thread: 1 or 0 (0 for TLC_REQUEST_NULL
 * and an inactive persistent call). */
TLC_API int tlc_request_active(tlc_request request);
/** Whether the request is persistent (from a tlc_<name>_init): 1 or 0. */
TLC_API int tlc_request_persistent(tlc_request request);

/** Starts tlc_barrier. */
TLC_API tlc_status tlc_ibarrier(tlc_participant* me, tlc_request* request);
/** Starts tlc_bcast. */
TLC_API tlc_status tlc_ibcast(tlc_participant* me, void* buf, size_t count, tlc_datatype type,
                              int root, tlc_request* request);
/** Starts tlc_reduce. */
TLC_API tlc_status tlc_ireduce(tlc_participant* me, const void* send, void* recv, size_t count,
                               tlc_datatype type, tlc_op op, int root, tlc_request* request);
/** Starts tlc_allreduce. */
TLC_API tlc_status tlc_iallreduce(tlc_participant* me, const void* send, void* recv, size_t count,
                                  tlc_datatype type, tlc_op op, tlc_request* request);
/** Starts tlc_scan. */
TLC_API tlc_status tlc_iscan(tlc_participant* me, const void* send, void* recv, size_t count,
                             tlc_datatype type, tlc_op op, tlc_request* request);
/** Starts tlc_exscan. */
TLC_API tlc_status tlc_iexscan(tlc_participant* me, const void* send, void* recv, size_t count,
                               tlc_datatype type, tlc_op op, tlc_request* request);
/** Starts tlc_reduce_scatter_block. */
TLC_API tlc_status tlc_ireduce_scatter_block(tlc_participant* me, const void* send, void* recv,
                                             size_t count, tlc_datatype type, tlc_op op,
                                             tlc_request* request);
/** Starts tlc_allgather. */
TLC_API tlc_status tlc_iallgather(tlc_participant* me, const void* send, void* recv, size_t count,
                                  tlc_datatype type, tlc_request* request);
/** Starts tlc_gather. */
TLC_API tlc_status tlc_igather(tlc_participant* me, const void* send, void* recv, size_t count,
                               tlc_datatype type, int root, tlc_request* request);
/** Starts tlc_scatter. */
TLC_API tlc_status tlc_iscatter(tlc_participant* me, const void* send, void* recv, size_t count,
                                tlc_datatype type, int root, tlc_request* request);
/** Starts tlc_alltoall. */
TLC_API tlc_status tlc_ialltoall(tlc_participant* me, const void* send, void* recv, size_t count,
                                 tlc_datatype type, tlc_request* request);
/** Starts tlc_allgatherv. */
TLC_API tlc_status tlc_iallgatherv(tlc_participant* me, const void* send, size_t send_count,
                                   void* recv, const size_t* counts, const size_t* displs,
                                   tlc_datatype type, tlc_request* request);
/** Starts tlc_gatherv. */
TLC_API tlc_status tlc_igatherv(tlc_participant* me, const void* send, size_t send_count,
                                void* recv, const size_t* counts, const size_t* displs,
                                tlc_datatype type, int root, tlc_request* request);
/** Starts tlc_scatterv. */
TLC_API tlc_status tlc_iscatterv(tlc_participant* me, const void* send, const size_t* counts,
                                 const size_t* displs, void* recv, size_t recv_count,
                                 tlc_datatype type, int root, tlc_request* request);
/** Starts tlc_alltoallv. */
TLC_API tlc_status tlc_ialltoallv(tlc_participant* me, const void* send, const size_t* send_counts,
                                  const size_t* send_displs, void* recv, const size_t* recv_counts,
                                  const size_t* recv_displs, tlc_datatype type,
                                  tlc_request* request);

/** Makes a persistent tlc_barrier. */
TLC_API tlc_status tlc_barrier_init(tlc_participant* me, tlc_request* request);
/** Makes a persistent tlc_bcast. */
TLC_API tlc_status tlc_bcast_init(tlc_participant* me, void* buf, size_t count, tlc_datatype type,
                                  int root, tlc_request* request);
/** Makes a persistent tlc_reduce. */
TLC_API tlc_status tlc_reduce_init(tlc_participant* me, const void* send, void* recv, size_t count,
                                   tlc_datatype type, tlc_op op, int root, tlc_request* request);
/** Makes a persistent tlc_allreduce. */
TLC_API tlc_status tlc_allreduce_init(tlc_participant* me, const void* send, void* recv,
                                      size_t count, tlc_datatype type, tlc_op op,
                                      tlc_request* request);
/** Makes a persistent tlc_scan. */
TLC_API tlc_status tlc_scan_init(tlc_participant* me, const void* send, void* recv, size_t count,
                                 tlc_datatype type, tlc_op op, tlc_request* request);
/** Makes a persistent tlc_exscan. */
TLC_API tlc_status tlc_exscan_init(tlc_participant* me, const void* send, void* recv, size_t count,
                                   tlc_datatype type, tlc_op op, tlc_request* request);
/** Makes a persistent tlc_reduce_scatter_block. */
TLC_API tlc_status tlc_reduce_scatter_block_init(tlc_participant* me, const void* send, void* recv,
                                                 size_t count, tlc_datatype type, tlc_op op,
                                                 tlc_request* request);
/** Makes a persistent tlc_allgather. */
TLC_API tlc_status tlc_allgather_init(tlc_participant* me, const void* send, void* recv,
                                      size_t count, tlc_datatype type, tlc_request* request);
/** Makes a persistent tlc_gather. */
TLC_API tlc_status tlc_gather_init(tlc_participant* me, const void* send, void* recv, size_t count,
                                   tlc_datatype type, int root, tlc_request* request);
/** Makes a persistent tlc_scatter. */
TLC_API tlc_status tlc_scatter_init(tlc_participant* me, const void* send, void* recv, size_t count,
                                    tlc_datatype type, int root, tlc_request* request);
/** Makes a persistent tlc_alltoall. */
TLC_API tlc_status tlc_alltoall_init(tlc_participant* me, const void* send, void* recv,
                                     size_t count, tlc_datatype type, tlc_request* request);
/** Makes a persistent tlc_allgatherv. */
TLC_API tlc_status tlc_allgatherv_init(tlc_participant* me, const void* send, size_t send_count,
                                       void* recv, const size_t* counts, const size_t* displs,
                                       tlc_datatype type, tlc_request* request);
/** Makes a persistent tlc_gatherv. */
TLC_API tlc_status tlc_gatherv_init(tlc_participant* me, const void* send, size_t send_count,
                                    void* recv, const size_t* counts, const size_t* displs,
                                    tlc_datatype type, int root, tlc_request* request);
/** Makes a persistent tlc_scatterv. */
TLC_API tlc_status tlc_scatterv_init(tlc_participant* me, const void* send, const size_t* counts,
                                     const size_t* displs, void* recv, size_t recv_count,
                                     tlc_datatype type, int root, tlc_request* request);
/** Makes a persistent tlc_alltoallv. */
TLC_API tlc_status tlc_alltoallv_init(tlc_participant* me, const void* send,
                                      const size_t* send_counts, const size_t* send_displs,
                                      void* recv, const size_t* recv_counts,
                                      const size_t* recv_displs, tlc_datatype type,
                                      tlc_request* request);

/** For language bindings built on this interface: this thread cannot make the team's current
 * collective (an argument the binding cannot translate). It joins the call anyway, so nothing
 * waits for it (the other threads fail with TLC_ERR_MISMATCH unless they reject too), and
 * returns TLC_ERR_INVALID_ARGUMENT with message. */
TLC_API tlc_status tlc_reject(tlc_participant* me, const char* message);
/** tlc_reject for the team's current nonblocking call or persistent init (tlc_i<name>,
 * tlc_<name>_init): this thread takes its place in the order of those calls without waiting, so
 * that the other threads' call fails with TLC_ERR_MISMATCH (unless they reject too) instead of
 * waiting for it, and returns TLC_ERR_INVALID_ARGUMENT with message. */
TLC_API tlc_status tlc_ireject(tlc_participant* me, const char* message);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLC_TLC_H */
