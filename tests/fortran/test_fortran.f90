! The Fortran module under mpiexec, from an OpenMP program: every thread of the parallel region
! attaches as a participant and calls the collectives on several kinds and ranks (scalars,
! sections, in place, a non-commutative user op), checking every element against a reference
! computed here, then meets the error paths through ierr. Stops with a non-zero code on any
! difference.
module test_support
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, error_unit
  use tlc, only: tlc_get_error_message
  implicit none
  integer(int64), parameter :: prime = 997
contains
  ! An affine map x -> m x + c (mod prime), packed as m * 1000 + c: composition is associative
  ! and not commutative. a (lower ranks) applies first.
  pure integer(int64) function compose(a, b)
    integer(int64), intent(in) :: a, b
    integer(int64) :: ma, ca, mb, cb
    ma = a / 1000; ca = mod(a, 1000_int64)
    mb = b / 1000; cb = mod(b, 1000_int64)
    compose = mod(mb * ma, prime) * 1000 + mod(mb * ca + cb, prime)
  end function compose

  subroutine compose_op(a, b, out, count, user_data) bind(c)
    type(c_ptr), value :: a, b, out, user_data
    integer(c_size_t), value :: count
    integer(int64), pointer :: x(:), y(:), z(:)
    integer(int64) :: r
    integer(c_size_t) :: i
    call c_f_pointer(a, x, [count])
    call c_f_pointer(b, y, [count])
    call c_f_pointer(out, z, [count])
    do i = 1, count
      r = compose(x(i), y(i))
      z(i) = r
    end do
    if (c_associated(user_data)) continue
  end subroutine compose_op

  ! An error path: ierr must be expected and the message must contain fragment.
  ! The calling thread's last error (tlc_get_error_message: threads of a region ask at once).
  subroutine check_error(ierr, expected, fragment, what, rank, fails)
    integer, intent(in) :: ierr, expected, rank
    character(len=*), intent(in) :: fragment, what
    integer, intent(inout) :: fails
    character(len=:), allocatable :: message
    call tlc_get_error_message(message)
    if (ierr == expected .and. index(message, fragment) > 0) return
    fails = fails + 1
    !$omp critical (report)
    write (error_unit, '(a,i0,a,a,a,i0,a,a)') 'rank ', rank, ': ', what, ': ierr ', ierr, &
      ', message: ', message
    !$omp end critical (report)
  end subroutine check_error

  integer(int64) function affine_of(rank, i)
    integer, intent(in) :: rank, i
    affine_of = int(mod(2 * (rank + i), 7) + 1, int64) * 1000 + int(mod(rank * 3 + i, 11), int64)
  end function affine_of

  subroutine check(ok, what, rank, fails)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: rank
    integer, intent(inout) :: fails
    if (ok) return
    fails = fails + 1
    !$omp critical (report)
    write (error_unit, '(a,i0,a,a)') 'rank ', rank, ': wrong result: ', what
    !$omp end critical (report)
  end subroutine check
end module test_support

program test_fortran
  use tlc
  use test_support
  use omp_lib
  implicit none
  type(tlc_team) :: team
  type(tlc_participant) :: me
  integer :: threads, fails, total, worst, user_op
  integer :: r, p, i, j, k, q, ierr
  integer(int32) :: xi(10), yi(10), gi(3), ai(2, 16), bi(2, 16), gather2(3, 16)
  integer(int32), allocatable :: all_i(:), vsend(:), vrecv(:), vfull(:), vmine(:)
  integer, allocatable :: vcounts(:), vdispls(:), scounts(:), sdispls(:), rcounts(:), rdispls(:)
  integer :: n
  integer(int64) :: xl(2, 2, 2), yl(2, 2, 2), aff(5), aff_all(5), aff_scan(5), ref
  real(real32) :: s, ssum
  real(real64) :: xd(3, 4), yd(3, 4), bd(6), rd(2), sd(32), section(10), packed(5)
  real(real64), allocatable :: gd(:)
  complex(real64) :: z(4)
  logical :: flag, any_flag

  call tlc_init()
  call tlc_team_create(team, threads=2)
  threads = tlc_team_threads(team)
  call tlc_op_create(compose_op, .false., user_op)
  worst = 0

  !$omp parallel num_threads(threads) default(shared) &
  !$omp   private(me, fails, total, r, p, i, j, k, q, ierr, xi, yi, gi, ai, bi, gather2, all_i, &
  !$omp           xl, yl, aff, aff_all, aff_scan, ref, s, ssum, xd, yd, bd, rd, sd, section, &
  !$omp           packed, gd, z, flag, any_flag, vsend, vrecv, vfull, vmine, vcounts, vdispls, &
  !$omp           scounts, sdispls, rcounts, rdispls, n) reduction(max:worst)
  fails = 0
  call tlc_team_attach(team, omp_get_thread_num(), me)
  r = tlc_rank(me)
  p = tlc_size(me)
  call check(p <= 16, 'team larger than the test buffers', r, fails)

  ! integer(int32), rank 1, sum
  xi = [(r + i, i = 1, 10)]
  call tlc_allreduce(me, xi, yi, TLC_SUM)
  call check(all(yi == [(p * i + p * (p - 1) / 2, i = 1, 10)]), 'allreduce int32 sum', r, fails)

  ! real(real64), rank 2, max
  xd = reshape([((real(r * i - j, real64), i = 1, 3), j = 1, 4)], [3, 4])
  call tlc_allreduce(me, xd, yd, TLC_MAX)
  do j = 1, 4
    do i = 1, 3
      call check(yd(i, j) == real((p - 1) * i - j, real64), 'allreduce real64 max', r, fails)
    end do
  end do

  ! complex(real64), in place
  z = [(cmplx(r + k, -k, real64), k = 1, 4)]
  call tlc_allreduce(me, TLC_IN_PLACE, z, TLC_SUM)
  do k = 1, 4
    call check(z(k) == cmplx(p * k + p * (p - 1) / 2, -p * k, real64), 'allreduce complex in place', &
               r, fails)
  end do

  ! real(real32) scalar
  s = real(r + 1, real32)
  call tlc_allreduce(me, s, ssum, TLC_SUM)
  call check(ssum == real(p * (p + 1) / 2, real32), 'allreduce real32 scalar', r, fails)

  ! integer(int64), rank 3
  xl = int(r, int64) * 100 + reshape([(int(k, int64), k = 1, 8)], [2, 2, 2])
  call tlc_allreduce(me, xl, yl, TLC_SUM)
  call check(all(yl == int(p * (p - 1) / 2, int64) * 100 + &
                 int(p, int64) * reshape([(int(k, int64), k = 1, 8)], [2, 2, 2])), &
             'allreduce int64 rank 3', r, fails)

  ! default logical, or
  flag = r == p - 1
  call tlc_allreduce(me, flag, any_flag, TLC_LOR)
  call check(any_flag, 'allreduce logical or', r, fails)

  ! a strided section: the module copies in and out
  section = -1
  packed = [(real(r * 10 + k, real64), k = 1, 5)]
  call tlc_allreduce(me, packed, section(1:10:2), TLC_SUM)
  do k = 1, 5
    call check(section(2 * k - 1) == real(10 * p * (p - 1) / 2 + p * k, real64), &
               'allreduce into a section', r, fails)
    call check(section(2 * k) == -1, 'allreduce section gap', r, fails)
  end do

  ! bcast from the last rank
  bd = -1
  if (r == p - 1) bd = [(real(k * k, real64), k = 1, 6)]
  call tlc_bcast(me, bd, p - 1)
  call check(all(bd == [(real(k * k, real64), k = 1, 6)]), 'bcast real64', r, fails)

  ! reduce to rank 0
  yi = -7
  call tlc_reduce(me, xi, yi, TLC_SUM, 0)
  if (r == 0) then
    call check(all(yi == [(p * i + p * (p - 1) / 2, i = 1, 10)]), 'reduce int32', r, fails)
  else
    call check(all(yi == -7), 'reduce wrote a non-root recv', r, fails)
  end if

  ! scan and exscan
  xl = int(r + 1, int64)
  call tlc_scan(me, xl, yl, TLC_SUM)
  call check(all(yl == int((r + 1) * (r + 2) / 2, int64)), 'scan int64', r, fails)
  yi = -7
  call tlc_exscan(me, xi, yi, TLC_SUM)
  if (r == 0) then
    call check(all(yi == -7), 'exscan touched rank 0', r, fails)
  else
    call check(all(yi == [(r * i + r * (r - 1) / 2, i = 1, 10)]), 'exscan int32', r, fails)
  end if

  ! a non-commutative user op: rank order must be kept
  aff = [(affine_of(r, k), k = 1, 5)]
  call tlc_allreduce(me, aff, aff_all, user_op)
  call tlc_scan(me, aff, aff_scan, user_op)
  do k = 1, 5
    ref = affine_of(0, k)
    do q = 1, p - 1
      ref = compose(ref, affine_of(q, k))
      if (q == r) call check(aff_scan(k) == ref, 'scan with a user op', r, fails)
    end do
    if (r == 0) call check(aff_scan(k) == affine_of(0, k), 'scan with a user op at 0', r, fails)
    call check(aff_all(k) == ref, 'allreduce with a user op', r, fails)
  end do

  ! allgather into a rank-2 array: column q + 1 is rank q's send
  gi = [(r * 10 + k, k = 1, 3)]
  gather2 = -1
  call tlc_allgather(me, gi, gather2(:, 1:p))
  do q = 0, p - 1
    call check(all(gather2(:, q + 1) == [(q * 10 + k, k = 1, 3)]), 'allgather', r, fails)
  end do

  ! gather at rank 0 and scatter from the last rank
  allocate (gd(2 * p))
  gd = -1
  call tlc_gather(me, [real(r, real64), real(-r, real64)], gd, 0)
  if (r == 0) then
    do q = 0, p - 1
      call check(gd(2 * q + 1) == q .and. gd(2 * q + 2) == -q, 'gather', r, fails)
    end do
  end if
  if (r == p - 1) gd = [(real(k, real64), k = 1, 2 * p)]
  rd = -1
  call tlc_scatter(me, gd, rd, p - 1)
  call check(rd(1) == 2 * r + 1 .and. rd(2) == 2 * r + 2, 'scatter', r, fails)
  deallocate (gd)

  ! alltoall: column q + 1 goes to rank q
  ai = -1
  do q = 0, p - 1
    ai(:, q + 1) = [r * 100 + q, -(r * 100 + q)]
  end do
  bi = -1
  call tlc_alltoall(me, ai(:, 1:p), bi(:, 1:p))
  do q = 0, p - 1
    call check(bi(1, q + 1) == q * 100 + r .and. bi(2, q + 1) == -(q * 100 + r), 'alltoall', r, &
               fails)
  end do

  ! reduce_scatter_block: block q of every send is (q, r)
  do q = 0, p - 1
    sd(2 * q + 1) = q
    sd(2 * q + 2) = r
  end do
  call tlc_reduce_scatter_block(me, sd(1:2 * p), rd, TLC_SUM)
  call check(rd(1) == r * p .and. rd(2) == p * (p - 1) / 2, 'reduce_scatter_block', r, fails)

  ! allgather of every rank's count into an allocatable
  allocate (all_i(p))
  call tlc_allgather(me, r, all_i)
  call check(all(all_i == [(q, q = 0, p - 1)]), 'allgather scalar', r, fails)
  deallocate (all_i)

  ! The v-variants: rank q's block holds q + 1 elements, blocks one element apart in the
  ! gathered layout (the gaps must stay untouched).
  allocate (vcounts(p), vdispls(p))
  vcounts = [(q + 1, q = 0, p - 1)]
  vdispls(1) = 0
  do q = 2, p
    vdispls(q) = vdispls(q - 1) + vcounts(q - 1) + 1
  end do
  n = vdispls(p) + vcounts(p)
  allocate (vsend(r + 1), vrecv(n), vfull(n), vmine(r + 1))
  vsend = [(r * 100 + k, k = 1, r + 1)]
  vrecv = -1
  call tlc_allgatherv(me, vsend, vrecv, vcounts, vdispls)
  do q = 0, p - 1
    call check(all(vrecv(vdispls(q + 1) + 1:vdispls(q + 1) + vcounts(q + 1)) == &
                   [(q * 100 + k, k = 1, q + 1)]), 'allgatherv', r, fails)
    if (q < p - 1) call check(vrecv(vdispls(q + 2)) == -1, 'allgatherv wrote a gap', r, fails)
  end do
  vrecv = -1
  call tlc_gatherv(me, vsend, vrecv, vcounts, vdispls, p - 1)
  do q = 0, p - 1
    if (r == p - 1) then
      call check(all(vrecv(vdispls(q + 1) + 1:vdispls(q + 1) + vcounts(q + 1)) == &
                     [(q * 100 + k, k = 1, q + 1)]), 'gatherv', r, fails)
    else
      call check(all(vrecv == -1), 'gatherv wrote a non-root recv', r, fails)
    end if
  end do
  vfull = -1
  if (r == 0) then
    do q = 0, p - 1
      vfull(vdispls(q + 1) + 1:vdispls(q + 1) + vcounts(q + 1)) = [(q * 1000 + k, k = 1, q + 1)]
    end do
  end if
  vmine = -1
  call tlc_scatterv(me, vfull, vcounts, vdispls, vmine, 0)
  call check(all(vmine == [(r * 1000 + k, k = 1, r + 1)]), 'scatterv', r, fails)
  ! alltoallv: rank r sends q + 1 elements to rank q, so it receives r + 1 from everyone.
  allocate (scounts(p), sdispls(p), rcounts(p), rdispls(p))
  scounts = vcounts
  sdispls = [(q * (q + 1) / 2, q = 0, p - 1)]
  rcounts = r + 1
  rdispls = [((r + 1) * q, q = 0, p - 1)]
  deallocate (vsend, vrecv)
  allocate (vsend(p * (p + 1) / 2), vrecv((r + 1) * p))
  do q = 0, p - 1
    vsend(sdispls(q + 1) + 1:sdispls(q + 1) + scounts(q + 1)) = [(r * 100 + q * 10 + k, k = 1, q + 1)]
  end do
  vrecv = -1
  call tlc_alltoallv(me, vsend, scounts, sdispls, vrecv, rcounts, rdispls)
  do q = 0, p - 1
    call check(all(vrecv(rdispls(q + 1) + 1:rdispls(q + 1) + r + 1) == &
                   [(q * 100 + r * 10 + k, k = 1, r + 1)]), 'alltoallv', r, fails)
  end do
  ! Their errors: the wrong number of counts, a negative count, a block past the buffer.
  vrecv = -3
  call tlc_allgatherv(me, vsend(1:r + 1), vrecv, vcounts(1:p - 1), vdispls, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'one per rank', &
                   'allgatherv with one count too few', r, fails)
  scounts(1) = -1
  call tlc_alltoallv(me, vsend, scounts, sdispls, vrecv, rcounts, rdispls, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'negative', &
                   'alltoallv with a negative count', r, fails)
  call tlc_allgatherv(me, vsend(1:r + 1), vrecv(1:1), vcounts, vdispls, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'reach', &
                   'allgatherv into a recv too short for its displacements', r, fails)
  call check(all(vrecv == -3), 'a failed v-variant wrote recv', r, fails)
  deallocate (vcounts, vdispls, scounts, sdispls, rcounts, rdispls, vsend, vrecv, vfull, vmine)

  ! Errors through ierr: every thread passes the same bad argument; nothing hangs, nothing is
  ! written, and the team stays usable.
  bd = 5
  call tlc_bcast(me, bd, p, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'root', &
                   'bcast to a root outside the team', r, fails)
  yi = -3
  call tlc_allreduce(me, xi(1:4), yi(1:3), TLC_SUM, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'holds 3', &
                   'allreduce into a short recv', r, fails)
  call check(all(yi == -3), 'a failed allreduce wrote recv', r, fails)
  call tlc_allreduce(me, xi, yd, TLC_SUM, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'types', &
                   'allreduce of int32 into real64', r, fails)
  call tlc_allreduce(me, xd, yd, TLC_BXOR, ierr)
  call check_error(ierr, TLC_ERR_INVALID_ARGUMENT, 'TLC_BXOR', &
                   'allreduce of real64 with TLC_BXOR', r, fails)
  call tlc_allreduce(me, xi, yi, TLC_SUM, ierr)
  call check(ierr == TLC_SUCCESS .and. all(yi == [(p * i + p * (p - 1) / 2, i = 1, 10)]), &
             'allreduce after the errors', r, fails)

  ! Every thread learns the whole team's failures.
  call tlc_allreduce(me, fails, total, TLC_SUM)
  worst = max(worst, total, fails)
  call tlc_team_detach(me)
  !$omp end parallel

  call tlc_op_free(user_op)
  call tlc_team_free(team)

  ! Another machine's topology: three threads placed on a described machine of two NUMA domains;
  ! an XML file that does not exist is an error through ierr.
  call tlc_team_create(team, threads=3, pin=.false., topology_synthetic='package:1 numa:2 core:2 pu:1', &
                       ierr=ierr)
  if (ierr /= TLC_SUCCESS .or. tlc_team_threads(team) /= 3) then
    write (error_unit, '(a,i0,a)') 'synthetic topology: ierr ', ierr, ' ' // tlc_error_message()
    worst = max(worst, 1)
  end if
  call tlc_team_free(team)
  call tlc_team_create(team, topology_xml='/nonexistent/tlc-topology.xml', ierr=ierr)
  if (ierr == TLC_SUCCESS .or. index(tlc_error_message(), '/nonexistent/tlc-topology.xml') == 0) then
    write (error_unit, '(a)') 'missing topology XML: ' // tlc_error_message()
    worst = max(worst, 1)
  end if
  call tlc_finalize()
  if (worst > 0) then
    write (error_unit, '(a,i0,a)') 'tlc Fortran test: FAILED (', worst, ' failures)'
    error stop 1
  end if
  print '(a)', 'tlc Fortran test: passed'
end program test_fortran
