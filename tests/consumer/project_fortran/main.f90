! Fortran consumer of the installed tlc package: a two-thread team per process (tlc_team_run)
! runs an allreduce of a few integers and checks it against the closed form; process 0 prints
! "consumer ok" once every process agreed. Built by CMake (CMakeLists.txt) and by mpif90 with
! pkg-config (Makefile).
module consumer_body
  use tlc
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: wrong(2) = 0  ! one entry per thread of the team: no shared counter
contains
  subroutine body(handle, user_data) bind(c)
    type(c_ptr), value :: handle, user_data
    type(tlc_participant) :: me
    integer :: send(7), recv(7), i, s, ierr
    me = tlc_participant(handle)
    send = [((tlc_rank(me) + 1) * i, i = 1, 7)]
    call tlc_allreduce(me, send, recv, TLC_SUM, ierr)
    s = tlc_size(me)
    if (ierr /= TLC_SUCCESS .or. any(recv /= [(i * s * (s + 1) / 2, i = 1, 7)])) &
      wrong(tlc_local_index(me) + 1) = 1
  end subroutine body
end module consumer_body

program consumer
  use tlc
  use consumer_body
  implicit none
  include 'mpif.h'
  type(tlc_team) :: team
  integer :: ierr, process, failed

  call tlc_init()
  if (len(tlc_version()) == 0) wrong(1) = 1  ! "major.minor.patch"
  call tlc_team_create(team, threads=2, timeout_seconds=120.0d0)
  call tlc_team_run(team, body)
  process = tlc_team_process(team)
  call tlc_team_free(team)
  failed = maxval(wrong)
  call MPI_Allreduce(MPI_IN_PLACE, failed, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call tlc_finalize()
  if (failed /= 0) error stop 1
  if (process == 0) print '(a)', 'consumer ok'
end program consumer
