! The nonblocking and persistent collectives of the Fortran module under mpiexec, from an OpenMP
! program whose threads attach: rounds of tlc_iallreduce (built-in op, and a non-commutative user
! op in place), tlc_ibcast from a moving root and tlc_ialltoall, outstanding at once and
! completed in an order that differs between threads and rounds (tlc_test loops, tlc_wait,
! tlc_waitany, tlc_waitall); a persistent tlc_allreduce_init started for many rounds with its
! buffers refilled in between; every element checked against a reference computed here. Then a
! buffer that is not contiguous, which a nonblocking call must refuse (it could only pass a copy
! that dies with the call). Then every collective in every form against its blocking form
! (every_form_support). Stops with a non-zero code on any difference.
module nonblocking_support
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64, error_unit
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
    integer(c_size_t) :: i
    call c_f_pointer(a, x, [count])
    call c_f_pointer(b, y, [count])
    call c_f_pointer(out, z, [count])
    do i = 1, count
      z(i) = compose(x(i), y(i))
    end do
    if (c_associated(user_data)) continue
  end subroutine compose_op

  ! The contribution of rank r to element i of round k of collective salt.
  pure integer(int64) function val(r, k, i, salt)
    integer, intent(in) :: r, k, i, salt
    val = int(r + 1, int64) * 1000003_int64 + int(k, int64) * 7919_int64 + int(i, int64) * 31 &
          + salt
  end function val

  pure integer(int64) function map_of(r, k, i)
    integer, intent(in) :: r, k, i
    map_of = int(mod(2 * (r + i + k), 7) + 1, int64) * 1000 + int(mod(r * 3 + i + k, 11), int64)
  end function map_of

  ! The displacements of blocks of these counts, one element apart.
  pure subroutine gapped(counts, displs)
    integer, intent(in) :: counts(:)
    integer, intent(out) :: displs(:)
    integer :: q
    displs(1) = 0
    do q = 2, size(counts)
      displs(q) = displs(q - 1) + counts(q - 1) + 1
    end do
  end subroutine gapped

  subroutine check(ok, what, rank, round, fails)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: rank, round
    integer, intent(inout) :: fails
    if (ok) return
    fails = fails + 1
    if (fails > 20) return
    !$omp critical (report)
    write (error_unit, '(a,i0,a,i0,a,a)') 'rank ', rank, ', round ', round, ': ', what
    !$omp end critical (report)
  end subroutine check

  subroutine check_ierr(ierr, expected, what, rank, fails)
    integer, intent(in) :: ierr, expected, rank
    character(len=*), intent(in) :: what
    integer, intent(inout) :: fails
    if (ierr == expected) return
    fails = fails + 1
    !$omp critical (report)
    write (error_unit, '(a,i0,a,a,a,i0,a,i0)') 'rank ', rank, ': ', what, ': ierr ', ierr, &
      ', expected ', expected
    !$omp end critical (report)
  end subroutine check_ierr
end module nonblocking_support

! Every collective in its three forms: the nonblocking tlc_i<name> and the persistent
! tlc_<name>_init (started twice) must leave what the blocking tlc_<name> leaves, element by
! element, from the same inputs (test_fortran.f90 checks the blocking forms against references).
! The v-variants' blocks have gaps of one element, which every form must leave alone.
module every_form_support
  use tlc
  use nonblocking_support
  implicit none
  integer, parameter :: collectives = 15, blk = 3
  character(len=*), parameter :: names(collectives) = [character(len=20) :: 'barrier', &
    'bcast', 'reduce', 'allreduce', 'scan', 'exscan', 'reduce_scatter_block', 'allgather', &
    'gather', 'scatter', 'alltoall', 'allgatherv', 'gatherv', 'scatterv', 'alltoallv']
contains
  ! Completes the call just made in `form` (1 nonblocking, 2 persistent: started twice).
  subroutine complete(form, request)
    integer, intent(in) :: form
    type(tlc_request), intent(inout) :: request
    if (form == 1) then
      call tlc_wait(request)
    else if (form == 2) then
      call tlc_start(request)
      call tlc_wait(request)
      call tlc_start(request)
      call tlc_wait(request)
      call tlc_request_free(request)
    end if
  end subroutine complete

  ! Collective c in `form` (0 blocking) on this thread's inputs; recv is what it leaves.
  subroutine run(me, c, form, recv)
    type(tlc_participant), intent(in) :: me
    integer, intent(in) :: c, form
    integer(int64), allocatable, asynchronous, intent(out) :: recv(:)
    integer(int64), allocatable, asynchronous :: send(:)
    integer, allocatable :: counts(:), displs(:), rcounts(:), rdispls(:)
    type(tlc_request) :: req
    integer :: r, p, q, i, root
    r = tlc_rank(me)
    p = tlc_size(me)
    root = mod(c, p)
    ! v-variants: rank q's block has mod(q, 3) + 1 elements (alltoallv: mod(r + q, 3) + 1 from
    ! r to q), one element apart.
    allocate (counts(p), displs(p), rcounts(p), rdispls(p))
    do q = 0, p - 1
      counts(q + 1) = mod(q, 3) + 1
      rcounts(q + 1) = mod(r + q, 3) + 1
    end do
    call gapped(counts, displs)
    call gapped(rcounts, rdispls)
    allocate (send(p * blk + displs(p) + counts(p)))
    do i = 1, size(send)
      send(i) = val(r, c, i, 11)
    end do
    allocate (recv(p * blk + displs(p) + counts(p)))
    recv = -1
    select case (trim(names(c)))
    case ('barrier')
      if (form == 0) call tlc_barrier(me)
      if (form == 1) call tlc_ibarrier(me, req)
      if (form == 2) call tlc_barrier_init(me, req)
    case ('bcast')
      if (r == root) recv(1:blk) = send(1:blk)
      if (form == 0) call tlc_bcast(me, recv(1:blk), root)
      if (form == 1) call tlc_ibcast(me, recv(1:blk), root, req)
      if (form == 2) call tlc_bcast_init(me, recv(1:blk), root, req)
    case ('reduce')
      if (form == 0) call tlc_reduce(me, send(1:blk), recv(1:blk), TLC_SUM, root)
      if (form == 1) call tlc_ireduce(me, send(1:blk), recv(1:blk), TLC_SUM, root, req)
      if (form == 2) call tlc_reduce_init(me, send(1:blk), recv(1:blk), TLC_SUM, root, req)
    case ('allreduce')
      if (form == 0) call tlc_allreduce(me, send(1:blk), recv(1:blk), TLC_MAX)
      if (form == 1) call tlc_iallreduce(me, send(1:blk), recv(1:blk), TLC_MAX, req)
      if (form == 2) call tlc_allreduce_init(me, send(1:blk), recv(1:blk), TLC_MAX, req)
    case ('scan')
      if (form == 0) call tlc_scan(me, send(1:blk), recv(1:blk), TLC_SUM)
      if (form == 1) call tlc_iscan(me, send(1:blk), recv(1:blk), TLC_SUM, req)
      if (form == 2) call tlc_scan_init(me, send(1:blk), recv(1:blk), TLC_SUM, req)
    case ('exscan')
      if (form == 0) call tlc_exscan(me, send(1:blk), recv(1:blk), TLC_SUM)
      if (form == 1) call tlc_iexscan(me, send(1:blk), recv(1:blk), TLC_SUM, req)
      if (form == 2) call tlc_exscan_init(me, send(1:blk), recv(1:blk), TLC_SUM, req)
    case ('reduce_scatter_block')
      if (form == 0) call tlc_reduce_scatter_block(me, send(1:p * blk), recv(1:blk), TLC_SUM)
      if (form == 1) call tlc_ireduce_scatter_block(me, send(1:p * blk), recv(1:blk), TLC_SUM, req)
      if (form == 2) &
        call tlc_reduce_scatter_block_init(me, send(1:p * blk), recv(1:blk), TLC_SUM, req)
    case ('allgather')
      if (form == 0) call tlc_allgather(me, send(1:blk), recv(1:p * blk))
      if (form == 1) call tlc_iallgather(me, send(1:blk), recv(1:p * blk), req)
      if (form == 2) call tlc_allgather_init(me, send(1:blk), recv(1:p * blk), req)
    case ('gather')
      if (form == 0) call tlc_gather(me, send(1:blk), recv(1:p * blk), root)
      if (form == 1) call tlc_igather(me, send(1:blk), recv(1:p * blk), root, req)
      if (form == 2) call tlc_gather_init(me, send(1:blk), recv(1:p * blk), root, req)
    case ('scatter')
      if (form == 0) call tlc_scatter(me, send(1:p * blk), recv(1:blk), root)
      if (form == 1) call tlc_iscatter(me, send(1:p * blk), recv(1:blk), root, req)
      if (form == 2) call tlc_scatter_init(me, send(1:p * blk), recv(1:blk), root, req)
    case ('alltoall')
      if (form == 0) call tlc_alltoall(me, send(1:p * blk), recv(1:p * blk))
      if (form == 1) call tlc_ialltoall(me, send(1:p * blk), recv(1:p * blk), req)
      if (form == 2) call tlc_alltoall_init(me, send(1:p * blk), recv(1:p * blk), req)
    case ('allgatherv')
      associate (mine => send(1:counts(r + 1)))
        if (form == 0) call tlc_allgatherv(me, mine, recv, counts, displs)
        if (form == 1) call tlc_iallgatherv(me, mine, recv, counts, displs, req)
        if (form == 2) call tlc_allgatherv_init(me, mine, recv, counts, displs, req)
      end associate
    case ('gatherv')
      associate (mine => send(1:counts(r + 1)))
        if (form == 0) call tlc_gatherv(me, mine, recv, counts, displs, root)
        if (form == 1) call tlc_igatherv(me, mine, recv, counts, displs, root, req)
        if (form == 2) call tlc_gatherv_init(me, mine, recv, counts, displs, root, req)
      end associate
    case ('scatterv')
      associate (mine => recv(1:counts(r + 1)))
        if (form == 0) call tlc_scatterv(me, send, counts, displs, mine, root)
        if (form == 1) call tlc_iscatterv(me, send, counts, displs, mine, root, req)
        if (form == 2) call tlc_scatterv_init(me, send, counts, displs, mine, root, req)
      end associate
    case ('alltoallv')
      if (form == 0) call tlc_alltoallv(me, send, rcounts, rdispls, recv, rcounts, rdispls)
      if (form == 1) call tlc_ialltoallv(me, send, rcounts, rdispls, recv, rcounts, rdispls, req)
      if (form == 2) &
        call tlc_alltoallv_init(me, send, rcounts, rdispls, recv, rcounts, rdispls, req)
    end select
    call complete(form, req)
  end subroutine run

  subroutine every_form(me, fails)
    type(tlc_participant), intent(in) :: me
    integer, intent(inout) :: fails
    integer(int64), allocatable, asynchronous :: blocking(:), other(:)
    integer :: c, form
    do c = 1, collectives
      call run(me, c, 0, blocking)
      do form = 1, 2
        call run(me, c, form, other)
        call check(all(other == blocking), trim(names(c)) // ': the ' // &
                   trim(merge('nonblocking', 'persistent ', form == 1)) // &
                   ' form differs from the blocking one', tlc_rank(me), form, fails)
      end do
    end do
  end subroutine every_form
end module every_form_support

program test_nonblocking
  use tlc
  use nonblocking_support
  use every_form_support
  use omp_lib
  implicit none
  integer, parameter :: n = 23, block = 3, rounds = 20, persistent_rounds = 100
  type(tlc_team) :: team
  type(tlc_participant) :: me
  type(tlc_request) :: requests(4), call_p
  integer :: threads, fails, total, worst, user_op
  integer :: r, p, k, i, j, q, root, first, idx, ierr
  integer(int64), asynchronous :: sum_send(n), sum_recv(n), user_buf(n), psend(n), precv(n)
  real(real64), asynchronous :: bcast_buf(n)
  integer(int32), allocatable, asynchronous :: a2a_send(:), a2a_recv(:)
  integer(int32), asynchronous :: strided(2 * n), strided_out(n)
  integer(int64), allocatable, asynchronous :: vsend(:), vrecv(:), gsend(:), grecv(:)
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), gc(:), gd(:)
  integer(int64) :: want, map
  logical :: flag

  call tlc_init()
  call tlc_team_create(team, threads=2)
  threads = tlc_team_threads(team)
  call tlc_op_create(compose_op, .false., user_op)
  worst = 0

  !$omp parallel num_threads(threads) default(shared) &
  !$omp   private(me, requests, call_p, fails, total, r, p, k, i, j, q, root, first, idx, ierr, &
  !$omp           sum_send, sum_recv, user_buf, psend, precv, bcast_buf, a2a_send, a2a_recv, &
  !$omp           strided, strided_out, want, map, flag, vsend, vrecv, gsend, grecv, sc, sd, rc, &
  !$omp           rd, gc, gd) reduction(max:worst)
  fails = 0
  call tlc_team_attach(team, omp_get_thread_num(), me, region_threads=omp_get_num_threads())
  r = tlc_rank(me)
  p = tlc_size(me)
  allocate (a2a_send(p * block), a2a_recv(p * block))

  do k = 0, rounds - 1
    root = mod(k, p)
    do i = 1, n
      sum_send(i) = val(r, k, i, 1)
      sum_recv(i) = -1
      user_buf(i) = map_of(r, k, i)
      bcast_buf(i) = -1
      if (r == root) bcast_buf(i) = real(val(r, k, i, 2), real64)
    end do
    do i = 1, p * block
      a2a_send(i) = int(val(r, k, i, 3), int32)
      a2a_recv(i) = -1
    end do

    call tlc_iallreduce(me, sum_send, sum_recv, TLC_SUM, requests(1))
    call tlc_ibcast(me, bcast_buf, root, requests(2))
    call tlc_barrier(me)  ! a blocking call among the nonblocking ones
    call tlc_ialltoall(me, a2a_send, a2a_recv, requests(3))
    call tlc_iallreduce(me, TLC_IN_PLACE, user_buf, user_op, requests(4))
    do i = 1, 4
      call check(tlc_request_active(requests(i)), 'a started request is not active', r, k, fails)
    end do

    ! Out of order: one by a tlc_test loop, one by tlc_wait, one by tlc_waitany, the rest by
    ! tlc_waitall; which one first depends on the rank and the round.
    first = mod(r + k, 4) + 1
    flag = .false.
    do while (.not. flag)
      call tlc_test(requests(first), flag)
    end do
    call check(tlc_request_is_null(requests(first)), 'a tested request is not null', r, k, fails)
    call tlc_wait(requests(mod(first + 1, 4) + 1))
    call tlc_waitany(requests, idx)
    call check(idx >= 1 .and. idx <= 4, 'tlc_waitany index', r, k, fails)
    if (idx >= 1 .and. idx <= 4) &
      call check(tlc_request_is_null(requests(idx)), 'tlc_waitany left its request', r, k, fails)
    call tlc_waitall(requests)
    do i = 1, 4
      call check(tlc_request_is_null(requests(i)), 'a completed request is not null', r, k, fails)
    end do
    call tlc_waitany(requests, idx)
    call check(idx == 0, 'tlc_waitany of null requests', r, k, fails)

    do i = 1, n
      want = 0
      map = map_of(0, k, i)
      do q = 0, p - 1
        want = want + val(q, k, i, 1)
      end do
      do q = 1, p - 1
        map = compose(map, map_of(q, k, i))
      end do
      call check(sum_recv(i) == want, 'tlc_iallreduce sum', r, k, fails)
      call check(user_buf(i) == map, 'tlc_iallreduce with a user op in place', r, k, fails)
      call check(bcast_buf(i) == real(val(root, k, i, 2), real64), 'tlc_ibcast', r, k, fails)
    end do
    ! block q of my recv = block r of rank q's send
    do q = 0, p - 1
      do j = 1, block
        call check(a2a_recv(q * block + j) == int(val(q, k, r * block + j, 3), int32), &
                   'tlc_ialltoall', r, k, fails)
      end do
    end do
  end do

  ! A persistent allreduce, its send buffer refilled before every start.
  call tlc_allreduce_init(me, psend, precv, TLC_SUM, call_p)
  call check(.not. tlc_request_is_null(call_p) .and. .not. tlc_request_active(call_p), &
             'persistent call after init', r, -1, fails)
  do k = 0, persistent_rounds - 1
    do i = 1, n
      psend(i) = val(r, k, i, 7)
      precv(i) = -1
    end do
    call tlc_start(call_p)
    if (mod(r + k, 2) == 0) then
      call tlc_wait(call_p)
    else
      flag = .false.
      do while (.not. flag)
        call tlc_test(call_p, flag)
      end do
    end if
    call check(.not. tlc_request_is_null(call_p), 'a persistent request became null', r, k, fails)
    do i = 1, n
      want = 0
      do q = 0, p - 1
        want = want + val(q, k, i, 7)
      end do
      call check(precv(i) == want, 'persistent allreduce', r, k, fails)
    end do
  end do
  call tlc_request_free(call_p)
  call check(tlc_request_is_null(call_p), 'tlc_request_free left the request', r, -1, fails)

  ! tlc_ialltoallv: rank r sends mod(r + q, 3) + 1 elements to rank q, blocks one element apart;
  ! the counts arrays are changed right after the start (tlc copied them).
  allocate (sc(p), sd(p), rc(p), rd(p))
  do q = 0, p - 1
    sc(q + 1) = mod(r + q, 3) + 1
    rc(q + 1) = mod(q + r, 3) + 1
  end do
  call gapped(sc, sd)
  call gapped(rc, rd)
  allocate (vsend(sd(p) + sc(p)), vrecv(rd(p) + rc(p)))
  vsend = -2
  do q = 0, p - 1
    do j = 1, sc(q + 1)
      vsend(sd(q + 1) + j) = val(r, 500, q * 10 + j, 9)
    end do
  end do
  vrecv = -1
  call tlc_ialltoallv(me, vsend, sc, sd, vrecv, rc, rd, requests(1))
  sc = 0
  rd = -5
  call tlc_wait(requests(1))
  call gapped(rc, rd)
  do q = 0, p - 1
    do j = 1, rc(q + 1)
      call check(vrecv(rd(q + 1) + j) == val(q, 500, r * 10 + j, 9), 'tlc_ialltoallv', r, -1, &
                 fails)
    end do
    if (q < p - 1) call check(vrecv(rd(q + 1) + rc(q + 1) + 1) == -1, &
                              'tlc_ialltoallv wrote a gap', r, -1, fails)
  end do

  ! A persistent allgatherv over 3 rounds: rank q contributes q + 1 elements.
  allocate (gc(p), gd(p), gsend(r + 1))
  do q = 0, p - 1
    gc(q + 1) = q + 1
    gd(q + 1) = q * (q + 1) / 2
  end do
  allocate (grecv(p * (p + 1) / 2))
  call tlc_allgatherv_init(me, gsend, grecv, gc, gd, call_p)
  do k = 0, 2
    do j = 1, r + 1
      gsend(j) = val(r, k, j, 10)
    end do
    grecv = -1
    call tlc_start(call_p)
    call tlc_wait(call_p)
    do q = 0, p - 1
      do j = 1, q + 1
        call check(grecv(gd(q + 1) + j) == val(q, k, j, 10), 'persistent allgatherv', r, k, fails)
      end do
    end do
  end do
  call tlc_request_free(call_p)

  ! A buffer that is not contiguous: refused on every thread (nothing is copied for a
  ! nonblocking call), and the team goes on.
  strided = 1
  call tlc_iallreduce(me, strided(1::2), strided_out, TLC_SUM, requests(1), ierr)
  call check_ierr(ierr, TLC_ERR_INVALID_ARGUMENT, 'iallreduce of a strided section', r, fails)
  block
    character(len=:), allocatable :: message
    call tlc_get_error_message(message)  ! not tlc_error_message(): the threads ask at once
    call check(index(message, 'not contiguous') > 0, &
               'iallreduce of a strided section: message ' // message, r, -1, fails)
  end block
  call check(tlc_request_is_null(requests(1)), 'a refused request is not null', r, -1, fails)
  call tlc_iallreduce(me, strided(1:n), strided_out, TLC_SUM, requests(1))
  call tlc_wait(requests(1))
  call check(all(strided_out == p), 'iallreduce after the refusal', r, -1, fails)

  call every_form(me, fails)

  call tlc_allreduce(me, fails, total, TLC_SUM)
  worst = max(worst, total, fails)
  call tlc_team_detach(me)
  !$omp end parallel

  call tlc_op_free(user_op)
  call tlc_team_free(team)
  call tlc_finalize()
  if (worst > 0) then
    write (error_unit, '(a,i0,a)') 'tlc Fortran nonblocking test: FAILED (', worst, ' failures)'
    error stop 1
  end if
  print '(a)', 'tlc Fortran nonblocking test: passed'
end program test_nonblocking
