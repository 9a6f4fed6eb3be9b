! The Fortran 2008 module of tlc (`use tlc`), on top of the C interface (include/tlc/tlc.h).
!
! Buffers are assumed-type, assumed-rank (`type(*), dimension(..)`): one procedure serves every
! integer, real, complex and logical kind and every rank, scalars included; other types
! (character, derived types) are moved as bytes by the collectives that do not reduce.
! Non-contiguous array sections are copied in and out by the compiler. The C half that reads
! the descriptors is tlc_fortran.c.
!
! Errors: every procedure that can fail takes an optional `ierr` (TLC_SUCCESS or a TLC_ERR_*
! code; tlc_error_message() says more). Without it, an error prints the message and stops the
! program, as MPI's default error handler does.
!
! Ranks, roots and local indices count from 0, as in MPI.
module tlc
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  type, public :: tlc_team
    type(c_ptr) :: handle = c_null_ptr
  end type tlc_team

  type, public :: tlc_participant
    type(c_ptr) :: handle = c_null_ptr
  end type tlc_participant

  ! A nonblocking request (tlc_i<name>) or a persistent call (tlc_<name>_init): the C interface's
  ! tlc_request. Null (the default) is no call; a nonblocking request becomes null again when it
  ! completes, a persistent one when tlc_request_free releases it.
  type, bind(c), public :: tlc_request
    type(c_ptr) :: handle = c_null_ptr
  end type tlc_request

  integer(c_int), parameter, public :: TLC_SUCCESS = 0, TLC_ERR_INVALID_ARGUMENT = 1, &
    TLC_ERR_MISMATCH = 2, TLC_ERR_MPI = 3, TLC_ERR_TOPOLOGY = 4, TLC_ERR_TIMEOUT = 5, &
    TLC_ERR_ABORTED = 6, TLC_ERR_UNSUPPORTED = 7, TLC_ERR_NO_MEMORY = 8, TLC_ERR_INTERNAL = 9

  integer(c_int), parameter, public :: TLC_SUM = 1, TLC_PROD = 2, TLC_MIN = 3, TLC_MAX = 4, &
    TLC_BAND = 5, TLC_BOR = 6, TLC_BXOR = 7, TLC_LAND = 8, TLC_LOR = 9

  ! Sub-teams (tlc_split): the colour of a thread that joins none (as MPI_UNDEFINED), and the
  ! shapes of a team for tlc_split_type.
  integer(c_int), parameter, public :: TLC_UNDEFINED = -32766
  integer(c_int), parameter, public :: TLC_BY_PROCESS = 1, TLC_BY_NUMA = 2, TLC_BY_RAIL = 3

  ! Passed as the send buffer (the receive buffer of tlc_scatter at the root) for the in-place
  ! forms, as MPI_IN_PLACE is.
  integer(c_int), bind(c, name="tlc_fortran_in_place"), public :: TLC_IN_PLACE

  ! A user op: out(i) = a(i) op b(i) for i = 1..count, a holding lower ranks than b; out is the
  ! same memory as a or b. Use c_f_pointer to see the elements.
  abstract interface
    subroutine tlc_user_function(a, b, out, count, user_data) bind(c)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: a, b, out
      integer(c_size_t), value :: count
      type(c_ptr), value :: user_data
    end subroutine tlc_user_function
    ! The body of tlc_team_run: me is the participant (wrap it as tlc_participant(me)).
    subroutine tlc_body(me, user_data) bind(c)
      import :: c_ptr
      type(c_ptr), value :: me, user_data
    end subroutine tlc_body
  end interface

  public :: tlc_user_function, tlc_body
  public :: tlc_init, tlc_finalize, tlc_error_message, tlc_get_error_message, tlc_version
  public :: tlc_team_create, tlc_team_free, tlc_team_run, tlc_team_attach, tlc_team_detach
  public :: tlc_team_threads, tlc_team_size, tlc_team_process, tlc_team_processes
  public :: tlc_rank, tlc_size, tlc_local_index, tlc_threads, tlc_process, tlc_processes
  public :: tlc_split, tlc_split_type, tlc_participant_free, tlc_participant_is_null
  public :: tlc_op_create, tlc_op_free
  public :: tlc_barrier, tlc_bcast, tlc_reduce, tlc_allreduce, tlc_scan, tlc_exscan
  public :: tlc_reduce_scatter_block, tlc_allgather, tlc_gather, tlc_scatter, tlc_alltoall
  public :: tlc_allgatherv, tlc_gatherv, tlc_scatterv, tlc_alltoallv
  public :: tlc_wait, tlc_test, tlc_waitall, tlc_waitany, tlc_start, tlc_startall
  public :: tlc_request_free, tlc_request_active, tlc_request_is_null
  public :: tlc_ibarrier, tlc_ibcast, tlc_ireduce, tlc_iallreduce, tlc_iscan, tlc_iexscan
  public :: tlc_ireduce_scatter_block, tlc_iallgather, tlc_igather, tlc_iscatter, tlc_ialltoall
  public :: tlc_barrier_init, tlc_bcast_init, tlc_reduce_init, tlc_allreduce_init, tlc_scan_init
  public :: tlc_exscan_init, tlc_reduce_scatter_block_init, tlc_allgather_init, tlc_gather_init
  public :: tlc_scatter_init, tlc_alltoall_init
  public :: tlc_iallgatherv, tlc_igatherv, tlc_iscatterv, tlc_ialltoallv
  public :: tlc_allgatherv_init, tlc_gatherv_init, tlc_scatterv_init, tlc_alltoallv_init

  ! The form argument of the tlc_f_*_posted entries of tlc_fortran.c.
  integer(c_int), parameter :: NONBLOCKING = 1, PERSISTENT = 2

  ! Mirrors tlc_team_options of tlc.h, field by field.
  type, bind(c) :: c_team_options
    integer(c_int) :: threads, threads_per_numa, lanes, threads_per_rail, pin, reproducible
    real(c_double) :: timeout_seconds
    type(c_ptr) :: timeout_action
    integer(c_size_t) :: pipeline_chunk_bytes
    type(c_ptr) :: algorithms, fallback, leaders
    integer(c_int) :: check, stats
    type(c_ptr) :: tuning_file, topology_xml, topology_synthetic
    integer(c_int) :: suspect_ms
    real(c_double) :: silent_seconds
  end type c_team_options

  interface
    function c_init(argc, argv) bind(c, name="tlc_init") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: argc, argv
      integer(c_int) :: status
    end function c_init
    function c_finalize() bind(c, name="tlc_finalize") result(status)
      import :: c_int
      integer(c_int) :: status
    end function c_finalize
    function c_error_message() bind(c, name="tlc_error_message") result(message)
      import :: c_ptr
      type(c_ptr) :: message
    end function c_error_message
    function c_version() bind(c, name="tlc_version") result(version)
      import :: c_ptr
      type(c_ptr) :: version
    end function c_version
    function c_strlen(s) bind(c, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
    subroutine c_team_options_init(options) bind(c, name="tlc_team_options_init")
      import :: c_team_options
      type(c_team_options), intent(out) :: options
    end subroutine c_team_options_init
    function c_team_create(has_comm, comm, options, team) bind(c, name="tlc_f_team_create") &
        result(status)
      import :: c_int, c_ptr, c_team_options
      integer(c_int), value :: has_comm, comm
      type(c_team_options), intent(in) :: options
      type(c_ptr), intent(out) :: team
      integer(c_int) :: status
    end function c_team_create
    function c_team_free(team) bind(c, name="tlc_team_free") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: team
      integer(c_int) :: status
    end function c_team_free
    function c_team_run(team, body, user_data) bind(c, name="tlc_team_run") result(status)
      import :: c_ptr, c_funptr, c_int
      type(c_ptr), value :: team, user_data
      type(c_funptr), value :: body
      integer(c_int) :: status
    end function c_team_run
    function c_team_attach(team, local_index, me) bind(c, name="tlc_team_attach") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: team
      integer(c_int), value :: local_index
      type(c_ptr), intent(out) :: me
      integer(c_int) :: status
    end function c_team_attach
    function c_team_attach_checked(team, local_index, region_threads, me) &
        bind(c, name="tlc_team_attach_checked") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: team
      integer(c_int), value :: local_index, region_threads
      type(c_ptr), intent(out) :: me
      integer(c_int) :: status
    end function c_team_attach_checked
    function c_team_detach(me) bind(c, name="tlc_team_detach") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: me
      integer(c_int) :: status
    end function c_team_detach
    function c_split(me, color, key, sub) bind(c, name="tlc_split") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      integer(c_int), value :: color, key
      type(c_ptr), intent(out) :: sub
      integer(c_int) :: status
    end function c_split
    function c_split_type(me, type, sub) bind(c, name="tlc_split_type") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      integer(c_int), value :: type
      type(c_ptr), intent(out) :: sub
      integer(c_int) :: status
    end function c_split_type
    function c_participant_free(sub) bind(c, name="tlc_participant_free") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: sub
      integer(c_int) :: status
    end function c_participant_free
    function c_team_fact(team) bind(c) result(n)  ! the shape of tlc_team_threads & co.
      import :: c_ptr, c_int
      type(c_ptr), value :: team
      integer(c_int) :: n
    end function c_team_fact
    function c_op_create(fn, user_data, commutative, op) bind(c, name="tlc_op_create") &
        result(status)
      import :: c_funptr, c_ptr, c_int
      type(c_funptr), value :: fn
      type(c_ptr), value :: user_data
      integer(c_int), value :: commutative
      integer(c_int), intent(out) :: op
      integer(c_int) :: status
    end function c_op_create
    function c_op_free(op) bind(c, name="tlc_op_free") result(status)
      import :: c_int
      integer(c_int), intent(inout) :: op
      integer(c_int) :: status
    end function c_op_free
    function c_barrier(me) bind(c, name="tlc_barrier") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      integer(c_int) :: status
    end function c_barrier
    function c_bcast(me, buf, root) bind(c, name="tlc_f_bcast") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(inout) :: buf
      integer(c_int), value :: root
      integer(c_int) :: status
    end function c_bcast
    ! allreduce, scan, exscan, reduce_scatter_block
    function c_reduction(me, send, recv, op) bind(c) result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), value :: op
      integer(c_int) :: status
    end function c_reduction
    function c_reduce(me, send, recv, op, root) bind(c, name="tlc_f_reduce") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), value :: op, root
      integer(c_int) :: status
    end function c_reduce
    ! allgather, alltoall
    function c_movement(me, send, recv) bind(c) result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int) :: status
    end function c_movement
    ! gather, scatter
    function c_rooted(me, send, recv, root) bind(c) result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), value :: root
      integer(c_int) :: status
    end function c_rooted
    ! The v-variants: counts and displacements as C ints, with their lengths
    function c_allgatherv(me, send, recv, counts, n_counts, displs, n_displs) &
      bind(c, name="tlc_f_allgatherv") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), intent(in) :: counts(*), displs(*)
      integer(c_int), value :: n_counts, n_displs
      integer(c_int) :: status
    end function c_allgatherv
    function c_gatherv(me, send, recv, counts, n_counts, displs, n_displs, root) &
      bind(c, name="tlc_f_gatherv") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), intent(in) :: counts(*), displs(*)
      integer(c_int), value :: n_counts, n_displs, root
      integer(c_int) :: status
    end function c_gatherv
    function c_scatterv(me, send, counts, n_counts, displs, n_displs, recv, root) &
      bind(c, name="tlc_f_scatterv") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      integer(c_int), intent(in) :: counts(*), displs(*)
      integer(c_int), value :: n_counts, n_displs
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), value :: root
      integer(c_int) :: status
    end function c_scatterv
    function c_alltoallv(me, send, send_counts, n_send_counts, send_displs, n_send_displs, &
                         recv, recv_counts, n_recv_counts, recv_displs, n_recv_displs) &
      bind(c, name="tlc_f_alltoallv") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in) :: send
      integer(c_int), intent(in) :: send_counts(*), send_displs(*)
      integer(c_int), value :: n_send_counts, n_send_displs
      type(*), dimension(..), intent(inout) :: recv
      integer(c_int), intent(in) :: recv_counts(*), recv_displs(*)
      integer(c_int), value :: n_recv_counts, n_recv_displs
      integer(c_int) :: status
    end function c_alltoallv
    ! The nonblocking and persistent forms (form NONBLOCKING or PERSISTENT): the buffers are
    ! asynchronous, and passed on as they are (a buffer that is not contiguous is an error).
    function c_bcast_posted(me, buf, root, form, request) bind(c, name="tlc_f_bcast_posted") &
        result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(inout), asynchronous :: buf
      integer(c_int), value :: root, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_bcast_posted
    ! Each with an interface of its own: gfortran 12 miscompiles the first call through
    ! `procedure(shape), bind(c, name=...)` here (by reference, Fortran descriptors).
    function c_allreduce_posted(me, send, recv, op, form, request) &
        bind(c, name="tlc_f_allreduce_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: op, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_allreduce_posted
    function c_scan_posted(me, send, recv, op, form, request) &
        bind(c, name="tlc_f_scan_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: op, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_scan_posted
    function c_exscan_posted(me, send, recv, op, form, request) &
        bind(c, name="tlc_f_exscan_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: op, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_exscan_posted
    function c_reduce_scatter_block_posted(me, send, recv, op, form, request) &
        bind(c, name="tlc_f_reduce_scatter_block_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: op, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_reduce_scatter_block_posted
    function c_reduce_posted(me, send, recv, op, root, form, request) &
        bind(c, name="tlc_f_reduce_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: op, root, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_reduce_posted
    function c_allgather_posted(me, send, recv, form, request) &
        bind(c, name="tlc_f_allgather_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_allgather_posted
    function c_alltoall_posted(me, send, recv, form, request) &
        bind(c, name="tlc_f_alltoall_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_alltoall_posted
    function c_gather_posted(me, send, recv, root, form, request) &
        bind(c, name="tlc_f_gather_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: root, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_gather_posted
    function c_scatter_posted(me, send, recv, root, form, request) &
        bind(c, name="tlc_f_scatter_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: root, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_scatter_posted
    ! The v-variants' posted forms: the counts are converted (and kept with the request) by the
    ! C half.
    function c_allgatherv_posted(me, send, recv, counts, n_counts, displs, n_displs, form, &
                                 request) bind(c, name="tlc_f_allgatherv_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), intent(in) :: counts(*), displs(*)
      integer(c_int), value :: n_counts, n_displs, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_allgatherv_posted
    function c_gatherv_posted(me, send, recv, counts, n_counts, displs, n_displs, root, form, &
                              request) bind(c, name="tlc_f_gatherv_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), intent(in) :: counts(*), displs(*)
      integer(c_int), value :: n_counts, n_displs, root, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_gatherv_posted
    function c_scatterv_posted(me, send, counts, n_counts, displs, n_displs, recv, root, form, &
                               request) bind(c, name="tlc_f_scatterv_posted") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      integer(c_int), intent(in) :: counts(*), displs(*)
      integer(c_int), value :: n_counts, n_displs
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), value :: root, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_scatterv_posted
    function c_alltoallv_posted(me, send, send_counts, n_send_counts, send_displs, n_send_displs, &
                                recv, recv_counts, n_recv_counts, recv_displs, n_recv_displs, &
                                form, request) bind(c, name="tlc_f_alltoallv_posted") &
        result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(*), dimension(..), intent(in), asynchronous :: send
      integer(c_int), intent(in) :: send_counts(*), send_displs(*)
      integer(c_int), value :: n_send_counts, n_send_displs
      type(*), dimension(..), intent(inout), asynchronous :: recv
      integer(c_int), intent(in) :: recv_counts(*), recv_displs(*)
      integer(c_int), value :: n_recv_counts, n_recv_displs, form
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_alltoallv_posted
    function c_ibarrier(me, request) bind(c, name="tlc_ibarrier") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_ibarrier
    function c_barrier_init(me, request) bind(c, name="tlc_barrier_init") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function c_barrier_init
    function c_wait(request) bind(c, name="tlc_wait") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: request
      integer(c_int) :: status
    end function c_wait
    function c_start(request) bind(c, name="tlc_start") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: request
      integer(c_int) :: status
    end function c_start
    function c_request_free(request) bind(c, name="tlc_request_free") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: request
      integer(c_int) :: status
    end function c_request_free
    function c_test(request, flag) bind(c, name="tlc_test") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: request
      integer(c_int), intent(out) :: flag
      integer(c_int) :: status
    end function c_test
    function c_waitall(n, requests) bind(c, name="tlc_waitall") result(status)
      import :: c_size_t, c_int, tlc_request
      integer(c_size_t), value :: n
      type(tlc_request), intent(inout) :: requests(*)
      integer(c_int) :: status
    end function c_waitall
    function c_startall(n, requests) bind(c, name="tlc_startall") result(status)
      import :: c_size_t, c_int, tlc_request
      integer(c_size_t), value :: n
      type(tlc_request), intent(inout) :: requests(*)
      integer(c_int) :: status
    end function c_startall
    function c_waitany(n, requests, index) bind(c, name="tlc_waitany") result(status)
      import :: c_size_t, c_int, tlc_request
      integer(c_size_t), value :: n
      type(tlc_request), intent(inout) :: requests(*)
      integer(c_size_t), intent(out) :: index
      integer(c_int) :: status
    end function c_waitany
    function c_request_active(request) bind(c, name="tlc_request_active") result(active)
      import :: c_ptr, c_int
      type(c_ptr), value :: request
      integer(c_int) :: active
    end function c_request_active
  end interface

  ! The C functions of one shape, by name.
  procedure(c_team_fact), bind(c, name="tlc_team_threads") :: c_team_threads
  procedure(c_team_fact), bind(c, name="tlc_team_size") :: c_team_size
  procedure(c_team_fact), bind(c, name="tlc_team_process") :: c_team_process
  procedure(c_team_fact), bind(c, name="tlc_team_processes") :: c_team_processes
  procedure(c_team_fact), bind(c, name="tlc_rank") :: c_rank
  procedure(c_team_fact), bind(c, name="tlc_size") :: c_size
  procedure(c_team_fact), bind(c, name="tlc_local_index") :: c_local_index
  procedure(c_team_fact), bind(c, name="tlc_threads") :: c_threads
  procedure(c_team_fact), bind(c, name="tlc_process") :: c_process
  procedure(c_team_fact), bind(c, name="tlc_processes") :: c_processes
  procedure(c_reduction), bind(c, name="tlc_f_allreduce") :: c_allreduce
  procedure(c_reduction), bind(c, name="tlc_f_scan") :: c_scan
  procedure(c_reduction), bind(c, name="tlc_f_exscan") :: c_exscan
  procedure(c_reduction), bind(c, name="tlc_f_reduce_scatter_block") :: c_reduce_scatter_block
  procedure(c_movement), bind(c, name="tlc_f_allgather") :: c_allgather
  procedure(c_movement), bind(c, name="tlc_f_alltoall") :: c_alltoall
  procedure(c_rooted), bind(c, name="tlc_f_gather") :: c_gather
  procedure(c_rooted), bind(c, name="tlc_f_scatter") :: c_scatter

contains

  ! The message of the most recent failed call on the calling thread.
  ! The message of the calling thread's last failure ('' if none).
  function tlc_error_message() result(message)
    character(len=:), allocatable :: message
    call tlc_get_error_message(message)
  end function tlc_error_message

  ! The same message into an allocatable string. Threads that may ask at the same time should
  ! use this: gfortran (12 at least) keeps the length of a deferred-length function result in a
  ! static variable of the calling code, so two threads at one call of tlc_error_message() can
  ! read each other's length (an empty or cut message); a subroutine's argument has none.
  subroutine tlc_get_error_message(message)
    character(len=:), allocatable, intent(out) :: message
    call copy_c_string(c_error_message(), message)
  end subroutine tlc_get_error_message

  ! The library's version, 'major.minor.patch' (the C tlc_version(), TLC_VERSION_STRING).
  function tlc_version() result(version)
    character(len=:), allocatable :: version
    call copy_c_string(c_version(), version)
  end function tlc_version

  ! A Fortran copy of a NUL-terminated C string (a subroutine: see tlc_get_error_message).
  subroutine copy_c_string(text, string)
    type(c_ptr), intent(in) :: text
    character(len=:), allocatable, intent(out) :: string
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate (character(len=n) :: string)
    do i = 1, n
      string(i:i) = chars(i)
    end do
  end subroutine copy_c_string

  ! The one place that turns a status into ierr, or into a stop when ierr is absent.
  subroutine finish(status, where, ierr)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: where
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: message
    if (present(ierr)) then
      ierr = int(status)
    else if (status /= TLC_SUCCESS) then
      call tlc_get_error_message(message)
      write (error_unit, '(a)') 'tlc: '//where//' failed: '//message
      error stop 1
    end if
  end subroutine finish

  ! A NUL-terminated copy of a Fortran string, for the C interface.
  function c_string(text) result(chars)
    character(len=*), intent(in) :: text
    character(kind=c_char), allocatable :: chars(:)
    integer :: i
    allocate (chars(len(text) + 1))
    do i = 1, len(text)
      chars(i) = text(i:i)
    end do
    chars(len(text) + 1) = c_null_char
  end function c_string

  ! MPI_Init_thread(MPI_THREAD_MULTIPLE), or adopts an MPI the program initialised.
  subroutine tlc_init(ierr)
    integer, intent(out), optional :: ierr
    call finish(c_init(c_null_ptr, c_null_ptr), 'tlc_init', ierr)
  end subroutine tlc_init

  subroutine tlc_finalize(ierr)
    integer, intent(out), optional :: ierr
    call finish(c_finalize(), 'tlc_finalize', ierr)
  end subroutine tlc_finalize

  ! Collective over comm (a Fortran MPI handle, e.g. MPI_COMM_WORLD or comm%mpi_val; default
  ! MPI_COMM_WORLD). Options left out take their defaults (and the TLC_* variables).
  ! topology_xml (an hwloc XML file) or topology_synthetic (an hwloc synthetic description such
  ! as 'package:2 numa:2 core:8') places the team on that machine instead of this one.
  subroutine tlc_team_create(team, comm, threads, lanes, pin, timeout_seconds, algorithms, ierr, &
                             topology_xml, topology_synthetic)
    type(tlc_team), intent(out) :: team
    integer, intent(in), optional :: comm, threads, lanes
    logical, intent(in), optional :: pin
    real(c_double), intent(in), optional :: timeout_seconds
    character(len=*), intent(in), optional :: algorithms, topology_xml, topology_synthetic
    integer, intent(out), optional :: ierr
    type(c_team_options) :: options
    character(kind=c_char), allocatable, target :: algorithms_c(:), xml_c(:), synthetic_c(:)
    integer(c_int) :: has_comm, comm_c
    call c_team_options_init(options)
    if (present(threads)) options%threads = int(threads, c_int)
    if (present(lanes)) options%lanes = int(lanes, c_int)
    if (present(pin)) options%pin = merge(1_c_int, 0_c_int, pin)
    if (present(timeout_seconds)) options%timeout_seconds = timeout_seconds
    if (present(algorithms)) then
      algorithms_c = c_string(algorithms)
      options%algorithms = c_loc(algorithms_c)
    end if
    if (present(topology_xml)) then
      xml_c = c_string(topology_xml)
      options%topology_xml = c_loc(xml_c)
    end if
    if (present(topology_synthetic)) then
      synthetic_c = c_string(topology_synthetic)
      options%topology_synthetic = c_loc(synthetic_c)
    end if
    has_comm = merge(1_c_int, 0_c_int, present(comm))
    comm_c = 0
    if (present(comm)) comm_c = int(comm, c_int)
    call finish(c_team_create(has_comm, comm_c, options, team%handle), 'tlc_team_create', ierr)
  end subroutine tlc_team_create

  subroutine tlc_team_free(team, ierr)
    type(tlc_team), intent(inout) :: team
    integer, intent(out), optional :: ierr
    call finish(c_team_free(team%handle), 'tlc_team_free', ierr)
  end subroutine tlc_team_free

  ! Runs body(me, user_data) on each of the team's own threads and waits for them.
  subroutine tlc_team_run(team, body, user_data, ierr)
    type(tlc_team), intent(in) :: team
    procedure(tlc_body) :: body
    type(c_ptr), intent(in), optional :: user_data
    integer, intent(out), optional :: ierr
    type(c_ptr) :: data
    data = c_null_ptr
    if (present(user_data)) data = user_data
    call finish(c_team_run(team%handle, c_funloc(body), data), 'tlc_team_run', ierr)
  end subroutine tlc_team_run

  ! The calling thread (e.g. of an OpenMP region) becomes participant local_index of the team.
  ! With region_threads (OpenMP: omp_get_num_threads()), a region of another size than the
  ! team's threads fails at once (TLC_ERR_INVALID_ARGUMENT, the message names both sizes)
  ! instead of hanging in its first collective: tlc_team_attach_checked of the C interface.
  subroutine tlc_team_attach(team, local_index, me, ierr, region_threads)
    type(tlc_team), intent(in) :: team
    integer, intent(in) :: local_index
    type(tlc_participant), intent(out) :: me
    integer, intent(out), optional :: ierr
    integer, intent(in), optional :: region_threads
    if (present(region_threads)) then
      call finish(c_team_attach_checked(team%handle, int(local_index, c_int), &
                                        int(region_threads, c_int), me%handle), &
                  'tlc_team_attach', ierr)
    else
      call finish(c_team_attach(team%handle, int(local_index, c_int), me%handle), &
                  'tlc_team_attach', ierr)
    end if
  end subroutine tlc_team_attach

  subroutine tlc_team_detach(me, ierr)
    type(tlc_participant), intent(inout) :: me
    integer, intent(out), optional :: ierr
    call finish(c_team_detach(me%handle), 'tlc_team_detach', ierr)
  end subroutine tlc_team_detach

  integer function tlc_team_threads(team)
    type(tlc_team), intent(in) :: team
    tlc_team_threads = c_team_threads(team%handle)
  end function tlc_team_threads
  integer function tlc_team_size(team)
    type(tlc_team), intent(in) :: team
    tlc_team_size = c_team_size(team%handle)
  end function tlc_team_size
  integer function tlc_team_process(team)
    type(tlc_team), intent(in) :: team
    tlc_team_process = c_team_process(team%handle)
  end function tlc_team_process
  integer function tlc_team_processes(team)
    type(tlc_team), intent(in) :: team
    tlc_team_processes = c_team_processes(team%handle)
  end function tlc_team_processes

  integer function tlc_rank(me)
    type(tlc_participant), intent(in) :: me
    tlc_rank = c_rank(me%handle)
  end function tlc_rank
  integer function tlc_size(me)
    type(tlc_participant), intent(in) :: me
    tlc_size = c_size(me%handle)
  end function tlc_size
  integer function tlc_local_index(me)
    type(tlc_participant), intent(in) :: me
    tlc_local_index = c_local_index(me%handle)
  end function tlc_local_index
  integer function tlc_threads(me)
    type(tlc_participant), intent(in) :: me
    tlc_threads = c_threads(me%handle)
  end function tlc_threads
  integer function tlc_process(me)
    type(tlc_participant), intent(in) :: me
    tlc_process = c_process(me%handle)
  end function tlc_process
  integer function tlc_processes(me)
    type(tlc_participant), intent(in) :: me
    tlc_processes = c_processes(me%handle)
  end function tlc_processes

  ! Sub-teams, as MPI_Comm_split: collective over every thread of me's team. The threads with the
  ! same colour form one sub-team, ranked by key (ties by rank); sub is the caller's participant
  ! in it, on which every collective works, or null (tlc_participant_is_null) for TLC_UNDEFINED.
  ! The keys must keep the members of each process consecutive. tlc_split in C says more.
  subroutine tlc_split(me, color, key, sub, ierr)
    type(tlc_participant), intent(in) :: me
    integer, intent(in) :: color, key
    type(tlc_participant), intent(out) :: sub
    integer, intent(out), optional :: ierr
    call finish(c_split(me%handle, int(color, c_int), int(key, c_int), sub%handle), 'tlc_split', &
                ierr)
  end subroutine tlc_split

  ! The sub-teams of a shape of the team: TLC_BY_PROCESS, TLC_BY_NUMA or TLC_BY_RAIL.
  subroutine tlc_split_type(me, type, sub, ierr)
    type(tlc_participant), intent(in) :: me
    integer, intent(in) :: type
    type(tlc_participant), intent(out) :: sub
    integer, intent(out), optional :: ierr
    call finish(c_split_type(me%handle, int(type, c_int), sub%handle), 'tlc_split_type', ierr)
  end subroutine tlc_split_type

  ! Releases a participant of a sub-team (sub becomes null; a null one is ignored), on the thread
  ! that made it (in OpenMP: in the same parallel region); every member frees its own, before
  ! tlc_finalize. The sub-team does not need its parent, which may be freed first.
  subroutine tlc_participant_free(sub, ierr)
    type(tlc_participant), intent(inout) :: sub
    integer, intent(out), optional :: ierr
    call finish(c_participant_free(sub%handle), 'tlc_participant_free', ierr)
  end subroutine tlc_participant_free

  ! Whether the participant is null: not made yet, TLC_UNDEFINED's from tlc_split, or freed.
  logical function tlc_participant_is_null(me)
    type(tlc_participant), intent(in) :: me
    tlc_participant_is_null = .not. c_associated(me%handle)
  end function tlc_participant_is_null

  ! Registers a user op (usable with every type); ranks are combined in rank order unless
  ! commutative is .true.
  subroutine tlc_op_create(fn, commutative, op, user_data, ierr)
    procedure(tlc_user_function) :: fn
    logical, intent(in) :: commutative
    integer, intent(out) :: op
    type(c_ptr), intent(in), optional :: user_data
    integer, intent(out), optional :: ierr
    integer(c_int) :: handle, status
    type(c_ptr) :: data
    data = c_null_ptr
    if (present(user_data)) data = user_data
    handle = 0
    status = c_op_create(c_funloc(fn), data, merge(1_c_int, 0_c_int, commutative), handle)
    op = int(handle)
    call finish(status, 'tlc_op_create', ierr)
  end subroutine tlc_op_create

  subroutine tlc_op_free(op, ierr)
    integer, intent(inout) :: op
    integer, intent(out), optional :: ierr
    integer(c_int) :: handle, status
    handle = int(op, c_int)
    status = c_op_free(handle)
    op = int(handle)
    call finish(status, 'tlc_op_free', ierr)
  end subroutine tlc_op_free

  subroutine tlc_barrier(me, ierr)
    type(tlc_participant), intent(in) :: me
    integer, intent(out), optional :: ierr
    call finish(c_barrier(me%handle), 'tlc_barrier', ierr)
  end subroutine tlc_barrier

  ! buffer of root is copied into buffer of every rank.
  subroutine tlc_bcast(me, buffer, root, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(inout) :: buffer
    integer, intent(in) :: root
    integer, intent(out), optional :: ierr
    call finish(c_bcast(me%handle, buffer, int(root, c_int)), 'tlc_bcast', ierr)
  end subroutine tlc_bcast

  ! recv of root = op over all ranks of send (send may be TLC_IN_PLACE: the contribution is in
  ! recv). recv is not used at other ranks.
  subroutine tlc_reduce(me, send, recv, op, root, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: op, root
    integer, intent(out), optional :: ierr
    call finish(c_reduce(me%handle, send, recv, int(op, c_int), int(root, c_int)), &
                'tlc_reduce', ierr)
  end subroutine tlc_reduce

  ! recv = op over all ranks of send, element by element (send may be TLC_IN_PLACE).
  subroutine tlc_allreduce(me, send, recv, op, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: op
    integer, intent(out), optional :: ierr
    call finish(c_allreduce(me%handle, send, recv, int(op, c_int)), 'tlc_allreduce', ierr)
  end subroutine tlc_allreduce

  ! recv of rank r = op over ranks 0..r of send (send may be TLC_IN_PLACE).
  subroutine tlc_scan(me, send, recv, op, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: op
    integer, intent(out), optional :: ierr
    call finish(c_scan(me%handle, send, recv, int(op, c_int)), 'tlc_scan', ierr)
  end subroutine tlc_scan

  ! recv of rank r = op over ranks 0..r-1 of send; rank 0's recv is left untouched.
  subroutine tlc_exscan(me, send, recv, op, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: op
    integer, intent(out), optional :: ierr
    call finish(c_exscan(me%handle, send, recv, int(op, c_int)), 'tlc_exscan', ierr)
  end subroutine tlc_exscan

  ! recv of rank r = block r (size(recv) elements) of the reduction of all send buffers
  ! (size * size(recv) elements each). In place: recv holds the inputs, the result lands first.
  subroutine tlc_reduce_scatter_block(me, send, recv, op, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: op
    integer, intent(out), optional :: ierr
    call finish(c_reduce_scatter_block(me%handle, send, recv, int(op, c_int)), &
                'tlc_reduce_scatter_block', ierr)
  end subroutine tlc_reduce_scatter_block

  ! recv (size * size(send) elements) = the send buffers of all ranks in rank order.
  subroutine tlc_allgather(me, send, recv, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(out), optional :: ierr
    call finish(c_allgather(me%handle, send, recv), 'tlc_allgather', ierr)
  end subroutine tlc_allgather

  ! recv of root = the send buffers of all ranks in rank order; recv is not used elsewhere.
  subroutine tlc_gather(me, send, recv, root, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: root
    integer, intent(out), optional :: ierr
    call finish(c_gather(me%handle, send, recv, int(root, c_int)), 'tlc_gather', ierr)
  end subroutine tlc_gather

  ! recv of rank r = block r of the root's send (size * size(recv) elements); send is not used
  ! elsewhere. At the root, recv may be TLC_IN_PLACE.
  subroutine tlc_scatter(me, send, recv, root, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: root
    integer, intent(out), optional :: ierr
    call finish(c_scatter(me%handle, send, recv, int(root, c_int)), 'tlc_scatter', ierr)
  end subroutine tlc_scatter

  ! Block j of rank i's send goes to block i of rank j's recv; both hold size * n elements.
  subroutine tlc_alltoall(me, send, recv, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(out), optional :: ierr
    call finish(c_alltoall(me%handle, send, recv), 'tlc_alltoall', ierr)
  end subroutine tlc_alltoall

  ! The v-variants. counts and displs have one entry per rank; displacements count elements from
  ! the start of the buffer, starting at 0 (as in MPI). Blocks may not overlap in a receive
  ! buffer.

  ! recv(displs(q) + 1 : displs(q) + counts(q)) = the send buffer of rank q (counts(q) elements).
  ! send may be TLC_IN_PLACE: the caller's block is already in recv.
  subroutine tlc_allgatherv(me, send, recv, counts, displs, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: counts(:), displs(:)
    integer, intent(out), optional :: ierr
    call finish(c_allgatherv(me%handle, send, recv, int(counts, c_int), size(counts, kind=c_int), &
                             int(displs, c_int), size(displs, kind=c_int)), 'tlc_allgatherv', ierr)
  end subroutine tlc_allgatherv

  ! The same at the root only; recv, counts and displs are read at the root only (send may be
  ! TLC_IN_PLACE there).
  subroutine tlc_gatherv(me, send, recv, counts, displs, root, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: counts(:), displs(:), root
    integer, intent(out), optional :: ierr
    call finish(c_gatherv(me%handle, send, recv, int(counts, c_int), size(counts, kind=c_int), &
                          int(displs, c_int), size(displs, kind=c_int), int(root, c_int)), &
                'tlc_gatherv', ierr)
  end subroutine tlc_gatherv

  ! recv of rank q = send(displs(q) + 1 : displs(q) + counts(q)) of the root; send, counts and
  ! displs are read at the root only, where recv may be TLC_IN_PLACE.
  subroutine tlc_scatterv(me, send, counts, displs, recv, root, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    integer, intent(in) :: counts(:), displs(:)
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: root
    integer, intent(out), optional :: ierr
    call finish(c_scatterv(me%handle, send, int(counts, c_int), size(counts, kind=c_int), &
                           int(displs, c_int), size(displs, kind=c_int), recv, int(root, c_int)), &
                'tlc_scatterv', ierr)
  end subroutine tlc_scatterv

  ! send_counts(q) elements of send from send_displs(q) go to rank q, which receives them at
  ! recv_displs(p) (recv_counts(p) elements, equal to what rank p sends it).
  subroutine tlc_alltoallv(me, send, send_counts, send_displs, recv, recv_counts, recv_displs, &
                           ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), contiguous, intent(in) :: send
    integer, intent(in) :: send_counts(:), send_displs(:)
    type(*), dimension(..), contiguous, intent(inout) :: recv
    integer, intent(in) :: recv_counts(:), recv_displs(:)
    integer, intent(out), optional :: ierr
    call finish(c_alltoallv(me%handle, send, int(send_counts, c_int), &
                            size(send_counts, kind=c_int), int(send_displs, c_int), &
                            size(send_displs, kind=c_int), recv, int(recv_counts, c_int), &
                            size(recv_counts, kind=c_int), int(recv_displs, c_int), &
                            size(recv_displs, kind=c_int)), 'tlc_alltoallv', ierr)
  end subroutine tlc_alltoallv

  ! ---- Nonblocking and persistent collectives ----
  ! tlc_i<name>(me, <the arguments of tlc_<name>>, request, ierr) starts a collective and
  ! returns at once; tlc_<name>_init(the same) makes a persistent call, started by tlc_start.
  ! As in MPI: the buffers are tlc's until the request completes (until tlc_request_free for a
  ! persistent call), and must be declared `asynchronous` where they are declared (the dummies
  ! here are); they are passed on as they are, never copied, so a buffer that is not contiguous
  ! is an error. Every thread of the team starts the same nonblocking calls and persistent inits
  ! and starts in the same order, apart from the blocking calls.

  subroutine tlc_ibarrier(me, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_ibarrier(me%handle, request%handle), 'tlc_ibarrier', ierr)
  end subroutine tlc_ibarrier
  subroutine tlc_barrier_init(me, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_barrier_init(me%handle, request%handle), 'tlc_barrier_init', ierr)
  end subroutine tlc_barrier_init

  subroutine tlc_ibcast(me, buffer, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(inout), asynchronous :: buffer
    integer, intent(in) :: root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_bcast_posted(me%handle, buffer, int(root, c_int), NONBLOCKING, request%handle), &
                'tlc_ibcast', ierr)
  end subroutine tlc_ibcast
  subroutine tlc_bcast_init(me, buffer, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(inout), asynchronous :: buffer
    integer, intent(in) :: root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_bcast_posted(me%handle, buffer, int(root, c_int), PERSISTENT, request%handle), &
                'tlc_bcast_init', ierr)
  end subroutine tlc_bcast_init

  subroutine tlc_ireduce(me, send, recv, op, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op, root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_reduce_posted(me%handle, send, recv, int(op, c_int), int(root, c_int), &
                NONBLOCKING, request%handle), &
                'tlc_ireduce', ierr)
  end subroutine tlc_ireduce
  subroutine tlc_reduce_init(me, send, recv, op, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op, root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_reduce_posted(me%handle, send, recv, int(op, c_int), int(root, c_int), &
                PERSISTENT, request%handle), &
                'tlc_reduce_init', ierr)
  end subroutine tlc_reduce_init

  subroutine tlc_iallreduce(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_allreduce_posted(me%handle, send, recv, int(op, c_int), NONBLOCKING, &
                request%handle), &
                'tlc_iallreduce', ierr)
  end subroutine tlc_iallreduce
  subroutine tlc_allreduce_init(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_allreduce_posted(me%handle, send, recv, int(op, c_int), PERSISTENT, &
                request%handle), &
                'tlc_allreduce_init', ierr)
  end subroutine tlc_allreduce_init

  subroutine tlc_iscan(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_scan_posted(me%handle, send, recv, int(op, c_int), NONBLOCKING, &
                request%handle), &
                'tlc_iscan', ierr)
  end subroutine tlc_iscan
  subroutine tlc_scan_init(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_scan_posted(me%handle, send, recv, int(op, c_int), PERSISTENT, request%handle), &
                'tlc_scan_init', ierr)
  end subroutine tlc_scan_init

  subroutine tlc_iexscan(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_exscan_posted(me%handle, send, recv, int(op, c_int), NONBLOCKING, &
                request%handle), &
                'tlc_iexscan', ierr)
  end subroutine tlc_iexscan
  subroutine tlc_exscan_init(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_exscan_posted(me%handle, send, recv, int(op, c_int), PERSISTENT, &
                request%handle), &
                'tlc_exscan_init', ierr)
  end subroutine tlc_exscan_init

  subroutine tlc_ireduce_scatter_block(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_reduce_scatter_block_posted(me%handle, send, recv, int(op, c_int), &
                NONBLOCKING, request%handle), &
                'tlc_ireduce_scatter_block', ierr)
  end subroutine tlc_ireduce_scatter_block
  subroutine tlc_reduce_scatter_block_init(me, send, recv, op, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: op
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_reduce_scatter_block_posted(me%handle, send, recv, int(op, c_int), &
                PERSISTENT, request%handle), &
                'tlc_reduce_scatter_block_init', ierr)
  end subroutine tlc_reduce_scatter_block_init

  subroutine tlc_iallgather(me, send, recv, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_allgather_posted(me%handle, send, recv, NONBLOCKING, request%handle), &
                'tlc_iallgather', ierr)
  end subroutine tlc_iallgather
  subroutine tlc_allgather_init(me, send, recv, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_allgather_posted(me%handle, send, recv, PERSISTENT, request%handle), &
                'tlc_allgather_init', ierr)
  end subroutine tlc_allgather_init

  subroutine tlc_ialltoall(me, send, recv, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_alltoall_posted(me%handle, send, recv, NONBLOCKING, request%handle), &
                'tlc_ialltoall', ierr)
  end subroutine tlc_ialltoall
  subroutine tlc_alltoall_init(me, send, recv, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_alltoall_posted(me%handle, send, recv, PERSISTENT, request%handle), &
                'tlc_alltoall_init', ierr)
  end subroutine tlc_alltoall_init

  subroutine tlc_igather(me, send, recv, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_gather_posted(me%handle, send, recv, int(root, c_int), NONBLOCKING, &
                request%handle), &
                'tlc_igather', ierr)
  end subroutine tlc_igather
  subroutine tlc_gather_init(me, send, recv, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_gather_posted(me%handle, send, recv, int(root, c_int), PERSISTENT, &
                request%handle), &
                'tlc_gather_init', ierr)
  end subroutine tlc_gather_init

  subroutine tlc_iscatter(me, send, recv, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_scatter_posted(me%handle, send, recv, int(root, c_int), NONBLOCKING, &
                request%handle), &
                'tlc_iscatter', ierr)
  end subroutine tlc_iscatter
  subroutine tlc_scatter_init(me, send, recv, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_scatter_posted(me%handle, send, recv, int(root, c_int), PERSISTENT, &
                request%handle), &
                'tlc_scatter_init', ierr)
  end subroutine tlc_scatter_init

  ! The v-variants: counts and displacements as in the blocking forms; they are copied when the
  ! call starts (a persistent call keeps the copy of its init).
  subroutine tlc_iallgatherv(me, send, recv, counts, displs, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: counts(:), displs(:)
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_allgatherv_posted(me%handle, send, recv, int(counts, c_int), size(counts, &
                kind=c_int), &
                int(displs, c_int), size(displs, kind=c_int), NONBLOCKING, request%handle), &
                'tlc_iallgatherv', ierr)
  end subroutine tlc_iallgatherv
  subroutine tlc_allgatherv_init(me, send, recv, counts, displs, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: counts(:), displs(:)
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_allgatherv_posted(me%handle, send, recv, int(counts, c_int), size(counts, &
                kind=c_int), &
                int(displs, c_int), size(displs, kind=c_int), PERSISTENT, request%handle), &
                'tlc_allgatherv_init', ierr)
  end subroutine tlc_allgatherv_init
  subroutine tlc_igatherv(me, send, recv, counts, displs, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: counts(:), displs(:), root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_gatherv_posted(me%handle, send, recv, int(counts, c_int), size(counts, &
                kind=c_int), &
                int(displs, c_int), size(displs, kind=c_int), int(root, c_int), NONBLOCKING, &
                request%handle), &
                'tlc_igatherv', ierr)
  end subroutine tlc_igatherv
  subroutine tlc_gatherv_init(me, send, recv, counts, displs, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: counts(:), displs(:), root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_gatherv_posted(me%handle, send, recv, int(counts, c_int), size(counts, &
                kind=c_int), &
                int(displs, c_int), size(displs, kind=c_int), int(root, c_int), PERSISTENT, &
                request%handle), &
                'tlc_gatherv_init', ierr)
  end subroutine tlc_gatherv_init
  subroutine tlc_iscatterv(me, send, counts, displs, recv, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: counts(:), displs(:), root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_scatterv_posted(me%handle, send, int(counts, c_int), size(counts, kind=c_int), &
                int(displs, c_int), size(displs, kind=c_int), recv, int(root, c_int), &
                NONBLOCKING, request%handle), &
                'tlc_iscatterv', ierr)
  end subroutine tlc_iscatterv
  subroutine tlc_scatterv_init(me, send, counts, displs, recv, root, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: counts(:), displs(:), root
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_scatterv_posted(me%handle, send, int(counts, c_int), size(counts, kind=c_int), &
                int(displs, c_int), size(displs, kind=c_int), recv, int(root, c_int), &
                PERSISTENT, request%handle), &
                'tlc_scatterv_init', ierr)
  end subroutine tlc_scatterv_init
  subroutine tlc_ialltoallv(me, send, send_counts, send_displs, recv, recv_counts, &
      recv_displs, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: send_counts(:), send_displs(:), recv_counts(:), recv_displs(:)
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_alltoallv_posted(me%handle, send, int(send_counts, c_int), &
                size(send_counts, kind=c_int), &
                int(send_displs, c_int), size(send_displs, kind=c_int), recv, &
                int(recv_counts, c_int), size(recv_counts, kind=c_int), &
                int(recv_displs, c_int), size(recv_displs, kind=c_int), NONBLOCKING, &
                request%handle), &
                'tlc_ialltoallv', ierr)
  end subroutine tlc_ialltoallv
  subroutine tlc_alltoallv_init(me, send, send_counts, send_displs, recv, recv_counts, &
      recv_displs, request, ierr)
    type(tlc_participant), intent(in) :: me
    type(*), dimension(..), intent(in), asynchronous :: send
    type(*), dimension(..), intent(inout), asynchronous :: recv
    integer, intent(in) :: send_counts(:), send_displs(:), recv_counts(:), recv_displs(:)
    type(tlc_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call finish(c_alltoallv_posted(me%handle, send, int(send_counts, c_int), &
                size(send_counts, kind=c_int), &
                int(send_displs, c_int), size(send_displs, kind=c_int), recv, &
                int(recv_counts, c_int), size(recv_counts, kind=c_int), &
                int(recv_displs, c_int), size(recv_displs, kind=c_int), PERSISTENT, &
                request%handle), &
                'tlc_alltoallv_init', ierr)
  end subroutine tlc_alltoallv_init

  ! Waits until the call is complete for this thread; a nonblocking request becomes null, a
  ! persistent one inactive.
  subroutine tlc_wait(request, ierr)
    type(tlc_request), intent(inout) :: request
    integer, intent(out), optional :: ierr
    call finish(c_wait(request%handle), 'tlc_wait', ierr)
  end subroutine tlc_wait

  ! Advances the call: flag = .true. once it is complete (then as tlc_wait).
  subroutine tlc_test(request, flag, ierr)
    type(tlc_request), intent(inout) :: request
    logical, intent(out) :: flag
    integer, intent(out), optional :: ierr
    integer(c_int) :: done, status
    done = 1
    status = c_test(request%handle, done)
    flag = done /= 0
    call finish(status, 'tlc_test', ierr)
  end subroutine tlc_test

  ! Waits for every request (each one completed even when some fail; the first error returned).
  subroutine tlc_waitall(requests, ierr)
    type(tlc_request), intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    call finish(c_waitall(size(requests, kind=c_size_t), requests), 'tlc_waitall', ierr)
  end subroutine tlc_waitall

  ! Waits until one active request completes; index is its position in requests (from 1), or 0
  ! when none is active.
  subroutine tlc_waitany(requests, index, ierr)
    type(tlc_request), intent(inout) :: requests(:)
    integer, intent(out) :: index
    integer, intent(out), optional :: ierr
    integer(c_size_t) :: i
    integer(c_int) :: status
    i = 0
    status = c_waitany(size(requests, kind=c_size_t), requests, i)
    index = int(i) + 1
    if (i == size(requests, kind=c_size_t)) index = 0
    call finish(status, 'tlc_waitany', ierr)
  end subroutine tlc_waitany

  ! Starts a round of a persistent call.
  subroutine tlc_start(request, ierr)
    type(tlc_request), intent(inout) :: request
    integer, intent(out), optional :: ierr
    call finish(c_start(request%handle), 'tlc_start', ierr)
  end subroutine tlc_start

  ! Starts the persistent calls, in order.
  subroutine tlc_startall(requests, ierr)
    type(tlc_request), intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    call finish(c_startall(size(requests, kind=c_size_t), requests), 'tlc_startall', ierr)
  end subroutine tlc_startall

  ! Releases a persistent call (or a nonblocking request nobody will wait for), waiting for an
  ! active round first; request becomes null.
  subroutine tlc_request_free(request, ierr)
    type(tlc_request), intent(inout) :: request
    integer, intent(out), optional :: ierr
    call finish(c_request_free(request%handle), 'tlc_request_free', ierr)
  end subroutine tlc_request_free

  ! Whether the request is a call in progress for this thread.
  logical function tlc_request_active(request)
    type(tlc_request), intent(in) :: request
    tlc_request_active = c_request_active(request%handle) /= 0
  end function tlc_request_active

  ! Whether the request is null (never started, completed nonblocking, or freed).
  logical function tlc_request_is_null(request)
    type(tlc_request), intent(in) :: request
    tlc_request_is_null = .not. c_associated(request%handle)
  end function tlc_request_is_null

end module tlc
