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

  ! The form argument of the tlc_f_<name> entries of tlc_fortran.c.
  integer(c_int), parameter :: BLOCKING = 0, NONBLOCKING = 1, PERSISTENT = 2

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
    function c_team_run(team, body, user_data) bind(c, name="tlc_team_run") result(status)
      import :: c_ptr, c_funptr, c_int
      type(c_ptr), value :: team, user_data
      type(c_funptr), value :: body
      integer(c_int) :: status
    end function c_team_run
    ! The shape of the calls that make a handle from a handle and a number (tlc_team_attach,
    ! tlc_split_type).
    function c_handle_from(handle, number, made) bind(c) result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: handle
      integer(c_int), value :: number
      type(c_ptr), intent(out) :: made
      integer(c_int) :: status
    end function c_handle_from
    function c_team_attach_checked(team, local_index, region_threads, me) &
        bind(c, name="tlc_team_attach_checked") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: team
      integer(c_int), value :: local_index, region_threads
      type(c_ptr), intent(out) :: me
      integer(c_int) :: status
    end function c_team_attach_checked
    function c_split(me, color, key, sub) bind(c, name="tlc_split") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: me
      integer(c_int), value :: color, key
      type(c_ptr), intent(out) :: sub
      integer(c_int) :: status
    end function c_split
    ! The shape of the calls on one handle that may change it (tlc_wait, tlc_team_free & co.).
    function c_handle_op(handle) bind(c) result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: handle
      integer(c_int) :: status
    end function c_handle_op
    ! The shape of the numbers a handle gives (tlc_team_threads & co., tlc_request_active).
    function c_team_fact(team) bind(c) result(n)
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
    ! tlc_f_<name>(me, ..., form, request) of every collective (tlc_fortran.c)
    include 'tlc_collective_interfaces.inc'
    function c_test(request, flag) bind(c, name="tlc_test") result(status)
      import :: c_ptr, c_int
      type(c_ptr), intent(inout) :: request
      integer(c_int), intent(out) :: flag
      integer(c_int) :: status
    end function c_test
    function c_requests_op(n, requests) bind(c) result(status)  ! tlc_waitall, tlc_startall
      import :: c_size_t, c_int, tlc_request
      integer(c_size_t), value :: n
      type(tlc_request), intent(inout) :: requests(*)
      integer(c_int) :: status
    end function c_requests_op
    function c_waitany(n, requests, index) bind(c, name="tlc_waitany") result(status)
      import :: c_size_t, c_int, tlc_request
      integer(c_size_t), value :: n
      type(tlc_request), intent(inout) :: requests(*)
      integer(c_size_t), intent(out) :: index
      integer(c_int) :: status
    end function c_waitany
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
  procedure(c_team_fact), bind(c, name="tlc_request_active") :: c_request_active
  procedure(c_handle_op), bind(c, name="tlc_team_free") :: c_team_free
  procedure(c_handle_from), bind(c, name="tlc_team_attach") :: c_team_attach
  procedure(c_handle_from), bind(c, name="tlc_split_type") :: c_split_type
  procedure(c_handle_op), bind(c, name="tlc_team_detach") :: c_team_detach
  procedure(c_handle_op), bind(c, name="tlc_participant_free") :: c_participant_free
  procedure(c_handle_op), bind(c, name="tlc_wait") :: c_wait
  procedure(c_handle_op), bind(c, name="tlc_start") :: c_start
  procedure(c_handle_op), bind(c, name="tlc_request_free") :: c_request_free
  procedure(c_requests_op), bind(c, name="tlc_waitall") :: c_waitall
  procedure(c_requests_op), bind(c, name="tlc_startall") :: c_startall

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

  ! ---- Collectives ----
  ! Each in three forms: tlc_<name>(me, ..., ierr) blocks until this thread's part is done.
  ! tlc_i<name>(me, <the arguments of tlc_<name>>, request, ierr) starts a collective and
  ! returns at once; tlc_<name>_init(the same) makes a persistent call, started by tlc_start.
  ! As in MPI: the buffers are tlc's until the request completes (until tlc_request_free for a
  ! persistent call), and must be declared `asynchronous` where they are declared (the dummies
  ! here are); they are passed on as they are, never copied, so a buffer that is not contiguous
  ! is an error. Every thread of the team starts the same nonblocking calls and persistent inits
  ! and starts in the same order, apart from the blocking calls.

  include 'tlc_collectives.inc'

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
