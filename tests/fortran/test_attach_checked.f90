! tlc_team_attach with region_threads= from an OpenMP region (the Fortran side of
! tests/capi/test_attach_checked.c). As is, the region has the team's size and every thread
! attaches and sums its rank; with OMP_THREAD_LIMIT=1 the region has one thread for a team of
! two and the attach must fail at once with TLC_ERR_INVALID_ARGUMENT and a message naming the
! team's size (the team's time-out turns a missing check into a failure, not a hang).
program test_attach_checked
  use tlc
  use omp_lib
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  integer, parameter :: team_threads = 2
  type(tlc_team) :: team
  type(tlc_participant) :: me
  integer :: ierr, wrong, region_size
  integer(int64) :: rank, total
  character(len=64) :: expected

  call tlc_init()
  call omp_set_dynamic(.false.)
  call tlc_team_create(team, threads=team_threads, timeout_seconds=20.0d0)
  write (expected, '(a,i0,a)') 'the team has ', team_threads, ' threads'
  wrong = 0
  region_size = 0
  !$omp parallel num_threads(tlc_team_threads(team)) private(me, ierr, rank, total) &
  !$omp reduction(+:wrong)
  !$omp single
  region_size = omp_get_num_threads()
  !$omp end single
  call tlc_team_attach(team, omp_get_thread_num(), me, ierr, region_threads=omp_get_num_threads())
  if (omp_get_num_threads() == team_threads) then
    rank = 0
    if (ierr == TLC_SUCCESS) then
      rank = tlc_rank(me)
      call tlc_allreduce(me, rank, total, TLC_SUM, ierr)
    end if
    if (ierr /= TLC_SUCCESS) then
      wrong = wrong + 1
    else if (total /= int(tlc_size(me), int64) * (tlc_size(me) - 1) / 2) then
      wrong = wrong + 1
    end if
    call tlc_team_detach(me)
  else
    if (ierr /= TLC_ERR_INVALID_ARGUMENT .or. &
        index(tlc_error_message(), trim(expected)) == 0) then
      print '(a,i0,a)', 'a region of one thread attached to a team of two: ierr ', ierr, &
        ', '//tlc_error_message()
      if (ierr == TLC_SUCCESS) then
        call tlc_barrier(me, ierr)  ! what an unchecked attach leads to: the team's time-out
        call tlc_team_detach(me)
      end if
      wrong = wrong + 1
    else
      print '(a)', 'refused as expected: '//tlc_error_message()
    end if
  end if
  !$omp end parallel
  call tlc_team_free(team)
  call tlc_finalize()
  if (wrong /= 0) error stop 1  ! a non-zero exit of any process fails the job
  print '(a,i0,a)', 'attach_checked ok (region of ', region_size, ' threads)'
end program test_attach_checked
