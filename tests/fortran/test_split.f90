! Sub-teams from Fortran (the Fortran side of tests/capi/test_split.c): the threads of an OpenMP
! region attach, split by parity of rank and compare the sub-team's size, ranks, allreduce and
! allgather with values computed here from the parent ranks; split by process; TLC_UNDEFINED
! gives a null participant; a collective on a null or freed participant, a type that is no
! shape, and a negative colour fail through ierr. Stops with a non-zero code on any difference.
module split_support
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
contains
  subroutine check(ok, what, rank, fails)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: rank
    integer, intent(inout) :: fails
    if (ok) return
    fails = fails + 1
    !$omp critical (report)
    write (error_unit, '(a,i0,a,a)') 'rank ', rank, ': wrong: ', what
    !$omp end critical (report)
  end subroutine check
end module split_support

program test_split
  use tlc
  use split_support
  use omp_lib
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64, error_unit
  implicit none
  integer, parameter :: team_threads = 2, n = 50
  type(tlc_team) :: team
  type(tlc_participant) :: me, sub, inner
  integer :: ierr, fails, total, worst, rank, size, local, processes, members, position, r, i
  integer(int64) :: mine, sum_sub, expected, firsts, first
  real(real64) :: x(n), y(n)
  integer(int32), allocatable :: gathered(:)
  integer(int32) :: rank32
  logical :: ok

  call tlc_init()
  call omp_set_dynamic(.false.)
  call tlc_team_create(team, threads=team_threads, timeout_seconds=60.0d0)
  worst = 0
  !$omp parallel num_threads(tlc_team_threads(team)) default(shared) &
  !$omp   private(me, sub, inner, ierr, fails, total, rank, size, local, processes, members, &
  !$omp           position, r, i, mine, sum_sub, expected, firsts, first, x, y, gathered, &
  !$omp           rank32, ok) reduction(max:worst)
  fails = 0
  call tlc_team_attach(team, omp_get_thread_num(), me, region_threads=omp_get_num_threads())
  rank = tlc_rank(me)
  size = tlc_size(me)
  local = tlc_local_index(me)
  processes = tlc_processes(me)

  ! ---- split by parity of rank ----
  members = 0
  position = -1
  expected = 0
  do r = 0, size - 1
    if (mod(r, 2) /= mod(rank, 2)) cycle
    if (r == rank) position = members
    members = members + 1
    expected = expected + r
  end do
  call tlc_split(me, mod(rank, 2), rank, sub, ierr)
  call check(ierr == TLC_SUCCESS .and. .not. tlc_participant_is_null(sub), 'parity split: '// &
             tlc_error_message(), rank, fails)
  if (ierr == TLC_SUCCESS) then
    call check(tlc_size(sub) == members, 'parity split: size', rank, fails)
    call check(tlc_rank(sub) == position, 'parity split: rank', rank, fails)
    mine = rank
    sum_sub = -1
    call tlc_allreduce(sub, mine, sum_sub, TLC_SUM)
    call check(sum_sub == expected, 'allreduce on the sub-team', rank, fails)
    do i = 1, n
      x(i) = rank * 1000.0d0 + i
    end do
    call tlc_allreduce(sub, x, y, TLC_SUM)
    ok = .true.
    do i = 1, n
      if (y(i) /= expected * 1000.0d0 + members * real(i, real64)) ok = .false.
    end do
    call check(ok, 'allreduce of real64 on the sub-team', rank, fails)
    ! The parent between two calls of the sub-team.
    call tlc_allreduce(me, mine, sum_sub, TLC_SUM)
    call check(sum_sub == int(size, int64) * (size - 1) / 2, 'allreduce on the parent', rank, &
               fails)
    allocate (gathered(members))
    rank32 = rank
    call tlc_allgather(sub, rank32, gathered)
    ok = .true.
    do i = 1, members
      if (gathered(i) /= mod(rank, 2) + 2 * (i - 1)) ok = .false.
    end do
    call check(ok, 'allgather on the sub-team', rank, fails)
    deallocate (gathered)
    call tlc_participant_free(sub)
    call check(tlc_participant_is_null(sub), 'freed participant not null', rank, fails)
  end if

  ! ---- split by process ----
  call tlc_split_type(me, TLC_BY_PROCESS, sub, ierr)
  call check(ierr == TLC_SUCCESS .and. .not. tlc_participant_is_null(sub), 'by process: '// &
             tlc_error_message(), rank, fails)
  if (ierr == TLC_SUCCESS) then
    call check(tlc_size(sub) == tlc_threads(me) .and. tlc_rank(sub) == local .and. &
               tlc_processes(sub) == 1, 'by process: facts', rank, fails)
    mine = rank
    call tlc_allreduce(sub, mine, sum_sub, TLC_SUM)
    first = rank - local
    call check(sum_sub == first * tlc_threads(me) + tlc_threads(me) * (tlc_threads(me) - 1) / 2, &
               'allreduce by process', rank, fails)
    call tlc_participant_free(sub)
  end if

  ! ---- TLC_UNDEFINED: thread 0 of each process joins none ----
  first = 0
  if (local == 0) first = rank
  call tlc_allreduce(me, first, firsts, TLC_SUM)
  call tlc_split(me, merge(TLC_UNDEFINED, 3, local == 0), 0, sub, ierr)
  call check(ierr == TLC_SUCCESS, 'split with TLC_UNDEFINED: '//tlc_error_message(), rank, fails)
  if (local == 0) then
    call check(tlc_participant_is_null(sub), 'TLC_UNDEFINED gave a participant', rank, fails)
    call tlc_allreduce(sub, mine, sum_sub, TLC_SUM, ierr)
    block
      character(len=:), allocatable :: message
      call tlc_get_error_message(message)  ! not tlc_error_message(): the threads ask at once
      call check(ierr == TLC_ERR_INVALID_ARGUMENT .and. index(message, 'me is NULL') > 0, &
                 'allreduce on a null participant', rank, fails)
    end block
    call tlc_participant_free(sub, ierr)
    call check(ierr == TLC_SUCCESS, 'free of a null participant', rank, fails)
  else if (.not. tlc_participant_is_null(sub)) then
    call check(tlc_size(sub) == size - processes, 'without thread 0: size', rank, fails)
    mine = rank
    call tlc_allreduce(sub, mine, sum_sub, TLC_SUM)
    call check(sum_sub == int(size, int64) * (size - 1) / 2 - firsts, &
               'allreduce without thread 0', rank, fails)
    ! A split of the sub-team.
    call tlc_split_type(sub, TLC_BY_PROCESS, inner, ierr)
    call check(ierr == TLC_SUCCESS, 'nested split: '//tlc_error_message(), rank, fails)
    if (ierr == TLC_SUCCESS) then
      call check(tlc_size(inner) == tlc_threads(me) - 1, 'nested split: size', rank, fails)
      call tlc_barrier(inner)
      call tlc_participant_free(inner)
    end if
    call tlc_participant_free(sub)
    ! A collective on the freed participant: an error code, not a crash.
    call tlc_barrier(sub, ierr)
    call check(ierr == TLC_ERR_INVALID_ARGUMENT, 'barrier on a freed participant', rank, fails)
  else
    call check(.false., 'colour 3: no participant', rank, fails)
  end if

  ! ---- errors ----
  call tlc_split(me, -5, 0, sub, ierr)
  call check(ierr == TLC_ERR_INVALID_ARGUMENT .and. tlc_participant_is_null(sub), &
             'negative colour', rank, fails)
  ! Thread 0 passes a type that is no shape: it gets the argument error, the others a mismatch.
  call tlc_split_type(me, merge(99, TLC_BY_PROCESS, local == 0), sub, ierr)
  call check(ierr == merge(TLC_ERR_INVALID_ARGUMENT, TLC_ERR_MISMATCH, local == 0) .and. &
             tlc_participant_is_null(sub), 'one bad type: '//tlc_error_message(), rank, fails)
  call tlc_team_detach(sub, ierr)  ! null: ignored
  call check(ierr == TLC_SUCCESS, 'detach of null', rank, fails)

  ! Every thread learns the whole team's failures.
  call tlc_allreduce(me, fails, total, TLC_SUM)
  worst = max(worst, total, fails)
  call tlc_team_detach(me)
  !$omp end parallel
  call tlc_team_free(team)
  call tlc_finalize()
  if (worst > 0) then
    write (error_unit, '(a,i0,a)') 'tlc Fortran split test: FAILED (', worst, ' failures)'
    error stop 1
  end if
  print '(a)', 'tlc Fortran split test: passed'
end program test_split
