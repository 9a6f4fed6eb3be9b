/// @file
/// tlc::Thread: one participant of a team. Every thread of the team calls the same collectives in
/// the same order, as MPI ranks do; ranks are global and process-major.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <ranges>
#include <span>
#include <type_traits>

#include <tlc/detail/call.hpp>
#include <tlc/detail/export.hpp>
#include <tlc/error.hpp>
#include <tlc/ops.hpp>
#include <tlc/options.hpp>
#include <tlc/request.hpp>
#include <tlc/stats.hpp>
#include <tlc/types.hpp>

namespace tlc {

/// Marks the in-place form of gather (at the root: the root's own block is already in place in
/// the receive buffer) and scatter (at the root: the root keeps its block in the send buffer),
/// as MPI_IN_PLACE does.
struct in_place_t {
  explicit in_place_t() = default;
};
inline constexpr in_place_t in_place{};  ///< tlc::in_place, the in-place marker

template <class R>
concept ElementRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    Element<std::remove_cv_t<std::ranges::range_value_t<R>>>;

template <class R>
concept MutableElementRange =
    ElementRange<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

/// One value of an element type (not a buffer), and an op that combines two of them: the scalar
/// forms of the reductions.
template <class T>
concept Scalar = Element<T> && !std::ranges::range<T>;
template <class Op, class T>
concept OpOf = std::is_invocable_r_v<T, const Op&, const T&, const T&>;

/// The colour of a thread that joins no sub-team in Thread::split (as MPI_UNDEFINED for
/// MPI_Comm_split); the Thread it gets back is no participant (`bool(sub)` is false).
inline constexpr int undefined = -32766;

/// The shapes the team already has, as colours for Thread::split: the threads of my process
/// (tlc::by_process), of my NUMA domain in my process (tlc::by_numa), and the threads of every
/// process that use the same rail as I do (tlc::by_rail).
enum class SplitType { process, numa, rail };
inline constexpr SplitType by_process = SplitType::process;  ///< the threads of my process
inline constexpr SplitType by_numa = SplitType::numa;        ///< my NUMA domain, in my process
inline constexpr SplitType by_rail = SplitType::rail;        ///< my rail, across processes

template <class Send, class Recv>
concept SameElements = std::same_as<std::remove_cv_t<std::ranges::range_value_t<Send>>,
                                    std::ranges::range_value_t<Recv>>;

/// One participant of a team: what a body of Team::run gets, what Team::attach returns, and a
/// sub-team's participant from Thread::split.
/// Every thread of the team calls the same collectives in the same order, as MPI ranks do.
class TLC_API Thread {
 public:
  /// No participant (yet): a place to move one into later, as split(tlc::undefined, ...)
  /// returns.
  Thread() = default;
  /// Moves the participant (tlc::current_thread() follows it).
  Thread(Thread&& other) noexcept;
  /// Moves the participant (tlc::current_thread() follows it).
  Thread& operator=(Thread&& other) noexcept;
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;
  /// Releases an attached slot. Destroyed during stack unwinding, it aborts the team so that the
  /// other threads wake with tlc::TeamAborted instead of waiting for this one forever.
  ~Thread();

  int rank() const noexcept { return rank_; }            ///< global rank, process-major
  int size() const noexcept { return size_; }            ///< threads of all processes
  int local_index() const noexcept { return local_; }    ///< index inside this process
  int threads() const noexcept { return threads_; }      ///< threads of this process
  int process() const noexcept { return process_; }      ///< rank of this process
  int processes() const noexcept { return processes_; }  ///< processes of the team

  /// Whether this is a participant: false once moved from, and for the Thread that
  /// split(tlc::undefined, ...) returns.
  explicit operator bool() const noexcept { return team_ != nullptr; }

  /// Sub-teams, as MPI_Comm_split does for ranks: collective over every thread of the team, each
  /// with its own colour and key. The threads with the same colour form one sub-team, ranked by
  /// key, ties by rank; tlc::undefined joins none. Returns the caller's participant in its
  /// sub-team: a team of its own with every collective, used in any order consistent per team.
  /// A team's ranks are process-major, so the keys must keep each process's members
  /// consecutive (tlc::Error unsupported otherwise). Slow (it makes MPI communicators): split
  /// once, call often. The sub-team lives until its last participant is destroyed and does not
  /// need its parent any more. Disagreeing arguments throw tlc::Error on every thread.
  Thread split(int color, int key = 0);
  /// The shapes of the team as sub-teams (tlc::by_process, tlc::by_numa, tlc::by_rail).
  Thread split(SplitType type);
  /// This process's arrival telemetry of this participant's team, as Team::stats() (for a
  /// sub-team, its own; TLC_STATS=1 or TeamOptions::stats).
  TeamStats stats() const;

  // Every thread of the team calls the same collectives in the same order, as MPI ranks do.
  // Sizes are in elements. A root is a global thread rank. Buffers a rank does not use (the
  // receive buffer of a non-root in reduce/gather, the send buffer of a non-root in scatter)
  // may be empty. Bad arguments throw tlc::Error on every thread of the process before any
  // buffer is written.

  /// Returns once every thread of the team has entered it.
  void barrier() { run(barrier_call); }

  /// buf of the root is copied into buf of every rank; all pass the same size.
  template <MutableElementRange Buf>
  void bcast(Buf&& buf, int root) {
    run(bcast_call(buf_span(buf), root));
  }

  /// recv of the root = op over all ranks (rank order) of send; recv.size() == send.size() there.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv>
  void reduce(Send&& send, Recv&& recv, int root, Op op = {}) {
    run(reduction(Collective::reduce, send_span(send), buf_span(recv), root, op));
  }
  /// In place: buf is every rank's contribution; the root's buf receives the result.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) void reduce(Buf&& buf, int root, Op op = {}) {
    run(in_place_reduction(Collective::reduce, buf_span(buf), root, op));
  }

  /// recv[i] = op over all ranks r (in rank order) of send_r[i]; recv.size() == send.size().
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv>
  void allreduce(Send&& send, Recv&& recv, Op op = {}) {
    run(reduction(Collective::allreduce, send_span(send), buf_span(recv), -1, op));
  }
  /// In place: buf holds this thread's contribution on entry and the result on return.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) void allreduce(Buf&& buf, Op op = {}) {
    run(in_place_reduction(Collective::allreduce, buf_span(buf), -1, op));
  }

  /// Scalar forms: one value in, one out (norms and dot products), e.g.
  /// `double sum = me.allreduce(x);`. reduce returns the result at the root and x elsewhere;
  /// exscan returns T{} at rank 0.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  T allreduce(const T& x, Op op = {}) {
    return one_value(Collective::allreduce, x, -1, op);
  }
  /// The scalar reduce: the result at the root, x elsewhere.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  T reduce(const T& x, int root, Op op = {}) {
    return one_value(Collective::reduce, x, root, op);
  }
  /// The scalar scan: op over ranks 0..rank() of x.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  T scan(const T& x, Op op = {}) {
    return one_value(Collective::scan, x, -1, op);
  }
  /// The scalar exscan: op over ranks 0..rank()-1 of x, T{} at rank 0.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  T exscan(const T& x, Op op = {}) {
    const T v = one_value(Collective::exscan, x, -1, op);
    return rank_ == 0 ? T{} : v;
  }

  /// recv = the send buffers of all ranks in rank order; recv.size() == size() * send.size().
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void allgather(Send&& send, Recv&& recv) {
    run(movement(Collective::allgather, send_span(send), buf_span(recv), -1));
  }
  /// In place: buf.size() == size() * n, this rank's block already at buf[rank() * n].
  template <MutableElementRange Buf>
  void allgather(Buf&& buf) {
    run(in_place_movement(Collective::allgather, buf_span(buf), -1));
  }

  /// recv[displs[r] ...] = the send buffer of rank r, which holds counts[r] elements.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void allgatherv(Send&& send, Recv&& recv, std::span<const std::size_t> counts,
                  std::span<const std::size_t> displs) {
    auto call = movement(Collective::allgatherv, send_span(send), buf_span(recv), -1);
    const detail::VariantLayout layout{{}, {}, counts, displs};
    call.layout = &layout;
    run(call);
  }
  /// In place: this rank's block is already at buf[displs[rank()]].
  template <MutableElementRange Buf>
  void allgatherv(Buf&& buf, std::span<const std::size_t> counts,
                  std::span<const std::size_t> displs) {
    auto call = in_place_movement(Collective::allgatherv, buf_span(buf), -1);
    const detail::VariantLayout layout{{}, {}, counts, displs};
    call.layout = &layout;
    run(call);
  }

  /// recv of the root = the send buffers of all ranks in rank order (size() * send.size()).
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void gather(Send&& send, Recv&& recv, int root) {
    run(movement(Collective::gather, send_span(send), buf_span(recv), root));
  }
  /// At the root only: its own block is already at recv[root * n].
  template <MutableElementRange Recv>
  void gather(in_place_t, Recv&& recv, int root) {
    run(in_place_movement(Collective::gather, buf_span(recv), root));
  }

  /// recv of the root at displs[r] = the send buffer of rank r (counts[r] elements). counts and
  /// displs are read at the root only.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void gatherv(Send&& send, Recv&& recv, std::span<const std::size_t> counts,
               std::span<const std::size_t> displs, int root) {
    auto call = movement(Collective::gatherv, send_span(send), buf_span(recv), root);
    const detail::VariantLayout layout{{}, {}, counts, displs};
    call.layout = &layout;
    run(call);
  }
  /// In place at the root: its own block is already at its place in recv.
  template <MutableElementRange Recv>
  void gatherv(in_place_t, Recv&& recv, std::span<const std::size_t> counts,
               std::span<const std::size_t> displs, int root) {
    auto call = in_place_movement(Collective::gatherv, buf_span(recv), root);
    const detail::VariantLayout layout{{}, {}, counts, displs};
    call.layout = &layout;
    run(call);
  }

  /// recv of rank r = block r of the root's send buffer (send.size() == size() * recv.size()).
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void scatter(Send&& send, Recv&& recv, int root) {
    run(movement(Collective::scatter, send_span(send), buf_span(recv), root));
  }
  /// At the root only: the root's block stays in send.
  template <ElementRange Send>
  void scatter(Send&& send, in_place_t, int root) {
    run(scatter_in_place_call(Collective::scatter, send_span(send), root));
  }

  /// recv of rank r = counts[r] elements of the root's send buffer from displs[r]. counts and
  /// displs are read at the root only.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void scatterv(Send&& send, std::span<const std::size_t> counts,
                std::span<const std::size_t> displs, Recv&& recv, int root) {
    auto call = movement(Collective::scatterv, send_span(send), buf_span(recv), root);
    const detail::VariantLayout layout{counts, displs, {}, {}};
    call.layout = &layout;
    run(call);
  }
  /// In place at the root: its own block stays in send.
  template <ElementRange Send>
  void scatterv(Send&& send, std::span<const std::size_t> counts,
                std::span<const std::size_t> displs, in_place_t, int root) {
    auto call = scatter_in_place_call(Collective::scatterv, send_span(send), root);
    const detail::VariantLayout layout{counts, displs, {}, {}};
    call.layout = &layout;
    run(call);
  }

  /// Block j of rank i's send goes to block i of rank j's recv; both hold size() * n elements.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void alltoall(Send&& send, Recv&& recv) {
    run(movement(Collective::alltoall, send_span(send), buf_span(recv), -1));
  }
  /// In place: buf holds size() blocks, this rank's own block is already at its place.
  template <MutableElementRange Buf>
  void alltoall(Buf&& buf) {
    run(in_place_movement(Collective::alltoall, buf_span(buf), -1));
  }

  /// send_counts[j] elements from send[send_displs[j]] go to rank j, which receives them at
  /// recv[recv_displs[i]] (recv_counts[i] elements, equal to what rank i sends it).
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv>
  void alltoallv(Send&& send, std::span<const std::size_t> send_counts,
                 std::span<const std::size_t> send_displs, Recv&& recv,
                 std::span<const std::size_t> recv_counts,
                 std::span<const std::size_t> recv_displs) {
    auto call = movement(Collective::alltoallv, send_span(send), buf_span(recv), -1);
    const detail::VariantLayout layout{send_counts, send_displs, recv_counts, recv_displs};
    call.layout = &layout;
    run(call);
  }

  /// recv of rank r = block r (recv.size() elements) of the element-wise reduction of all send
  /// buffers (size() * recv.size() elements each).
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv>
  void reduce_scatter_block(Send&& send, Recv&& recv, Op op = {}) {
    run(reduction(Collective::reduce_scatter_block, send_span(send), buf_span(recv), -1, op));
  }
  /// In place: buf holds size() * n inputs; the result block lands in buf[0, n).
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) void reduce_scatter_block(Buf&& buf, Op op = {}) {
    run(in_place_reduction(Collective::reduce_scatter_block, buf_span(buf), -1, op));
  }

  /// recv of rank r = op over ranks 0..r (in rank order) of send.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv>
  void scan(Send&& send, Recv&& recv, Op op = {}) {
    run(reduction(Collective::scan, send_span(send), buf_span(recv), -1, op));
  }
  /// In place: buf holds the contribution and receives the result.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) void scan(Buf&& buf, Op op = {}) {
    run(in_place_reduction(Collective::scan, buf_span(buf), -1, op));
  }

  /// recv of rank r = op over ranks 0..r-1; rank 0's recv is left untouched.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv>
  void exscan(Send&& send, Recv&& recv, Op op = {}) {
    run(reduction(Collective::exscan, send_span(send), buf_span(recv), -1, op));
  }
  /// In place: buf holds the contribution and receives the result (untouched at rank 0).
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) void exscan(Buf&& buf, Op op = {}) {
    run(in_place_reduction(Collective::exscan, buf_span(buf), -1, op));
  }

  // ---- Nonblocking and persistent forms (tlc/request.hpp) ----
  // Every collective above, in every form, also as i<name>(same arguments) returning a
  // tlc::Request, and <name>_init(same arguments) returning a tlc::Persistent. Arguments are
  // checked as for the blocking call: a thread's own bad arguments throw at once (and fail the
  // call on the other threads, whose requests then throw). Buffers and count arrays must stay
  // valid and untouched until the request completes.
  /// Nonblocking barrier: the arguments of barrier; completes through the tlc::Request.
  Request ibarrier() { return start(barrier_call); }
  /// Persistent barrier: the arguments of barrier, set up once; tlc::Persistent::start runs it.
  Persistent barrier_init() { return persist(barrier_call); }
  /// Nonblocking bcast: the arguments of bcast; completes through the tlc::Request.
  template <MutableElementRange Buf>
  Request ibcast(Buf&& buf, int root) {
    return start(bcast_call(buf_span(buf), root));
  }
  /// Persistent bcast: the arguments of bcast, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf>
  Persistent bcast_init(Buf&& buf, int root) {
    return persist(bcast_call(buf_span(buf), root));
  }
  /// Nonblocking reduce: the arguments of reduce; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Request ireduce(Send&& send, Recv&& recv, int root,
                                                    Op op = {}) {
    return start(reduction(Collective::reduce, send_span(send), buf_span(recv), root, op), {}, op);
  }
  /// Persistent reduce: the arguments of reduce, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Persistent reduce_init(Send&& send, Recv&& recv, int root,
                                                           Op op = {}) {
    return persist(reduction(Collective::reduce, send_span(send), buf_span(recv), root, op), {},
                   op);
  }
  /// Nonblocking reduce: the arguments of reduce; completes through the tlc::Request.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Request ireduce(Buf&& buf, int root, Op op = {}) {
    return start(in_place_reduction(Collective::reduce, buf_span(buf), root, op), {}, op);
  }  /// Scalar nonblocking reduce: x becomes the result at the root once the request completes and
  /// stays this thread's value elsewhere.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  Request ireduce(T& x, int root, Op op = {}) {
    return start(in_place_reduction(Collective::reduce, std::span<T>(&x, 1), root, op), {}, op);
  }

  /// Persistent reduce: the arguments of reduce, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Persistent reduce_init(Buf&& buf, int root, Op op = {}) {
    return persist(in_place_reduction(Collective::reduce, buf_span(buf), root, op), {}, op);
  }
  /// Nonblocking allreduce: the arguments of allreduce; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Request iallreduce(Send&& send, Recv&& recv, Op op = {}) {
    return start(reduction(Collective::allreduce, send_span(send), buf_span(recv), -1, op), {}, op);
  }
  /// Persistent allreduce: the arguments of allreduce, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Persistent allreduce_init(Send&& send, Recv&& recv,
                                                              Op op = {}) {
    return persist(reduction(Collective::allreduce, send_span(send), buf_span(recv), -1, op), {},
                   op);
  }
  /// Nonblocking allreduce: the arguments of allreduce; completes through the tlc::Request.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Request iallreduce(Buf&& buf, Op op = {}) {
    return start(in_place_reduction(Collective::allreduce, buf_span(buf), -1, op), {}, op);
  }  /// Scalar nonblocking allreduce: x is this thread's value, and the result once the request
  /// completes (x is tlc's until then, as a buffer is), e.g. `tlc::Request r =
  /// me.iallreduce(dot);`.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  Request iallreduce(T& x, Op op = {}) {
    return start(in_place_reduction(Collective::allreduce, std::span<T>(&x, 1), -1, op), {}, op);
  }

  /// Persistent allreduce: the arguments of allreduce, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Persistent allreduce_init(Buf&& buf, Op op = {}) {
    return persist(in_place_reduction(Collective::allreduce, buf_span(buf), -1, op), {}, op);
  }
  /// Nonblocking allgather: the arguments of allgather; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request iallgather(Send&& send, Recv&& recv) {
    return start(movement(Collective::allgather, send_span(send), buf_span(recv), -1));
  }
  /// Persistent allgather: the arguments of allgather, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent allgather_init(Send&& send, Recv&& recv) {
    return persist(movement(Collective::allgather, send_span(send), buf_span(recv), -1));
  }
  /// Nonblocking allgather: the arguments of allgather; completes through the tlc::Request.
  template <MutableElementRange Buf>
  Request iallgather(Buf&& buf) {
    return start(in_place_movement(Collective::allgather, buf_span(buf), -1));
  }
  /// Persistent allgather: the arguments of allgather, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf>
  Persistent allgather_init(Buf&& buf) {
    return persist(in_place_movement(Collective::allgather, buf_span(buf), -1));
  }
  /// Nonblocking allgatherv: the arguments of allgatherv; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request iallgatherv(Send&& send, Recv&& recv,
                                                        std::span<const std::size_t> counts,
                                                        std::span<const std::size_t> displs) {
    auto call = movement(Collective::allgatherv, send_span(send), buf_span(recv), -1);
    return start(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Persistent allgatherv: the arguments of allgatherv, set up once; tlc::Persistent::start runs
  /// it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent
  allgatherv_init(Send&& send, Recv&& recv, std::span<const std::size_t> counts,
                  std::span<const std::size_t> displs) {
    auto call = movement(Collective::allgatherv, send_span(send), buf_span(recv), -1);
    return persist(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Nonblocking allgatherv: the arguments of allgatherv; completes through the tlc::Request.
  template <MutableElementRange Buf>
  Request iallgatherv(Buf&& buf, std::span<const std::size_t> counts,
                      std::span<const std::size_t> displs) {
    auto call = in_place_movement(Collective::allgatherv, buf_span(buf), -1);
    return start(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Persistent allgatherv: the arguments of allgatherv, set up once; tlc::Persistent::start runs
  /// it.
  template <MutableElementRange Buf>
  Persistent allgatherv_init(Buf&& buf, std::span<const std::size_t> counts,
                             std::span<const std::size_t> displs) {
    auto call = in_place_movement(Collective::allgatherv, buf_span(buf), -1);
    return persist(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Nonblocking gather: the arguments of gather; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request igather(Send&& send, Recv&& recv, int root) {
    return start(movement(Collective::gather, send_span(send), buf_span(recv), root));
  }
  /// Persistent gather: the arguments of gather, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent gather_init(Send&& send, Recv&& recv, int root) {
    return persist(movement(Collective::gather, send_span(send), buf_span(recv), root));
  }
  /// Nonblocking gather: the arguments of gather; completes through the tlc::Request.
  template <MutableElementRange Recv>
  Request igather(in_place_t, Recv&& recv, int root) {
    return start(in_place_movement(Collective::gather, buf_span(recv), root));
  }
  /// Persistent gather: the arguments of gather, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Recv>
  Persistent gather_init(in_place_t, Recv&& recv, int root) {
    return persist(in_place_movement(Collective::gather, buf_span(recv), root));
  }
  /// Nonblocking gatherv: the arguments of gatherv; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request igatherv(Send&& send, Recv&& recv,
                                                     std::span<const std::size_t> counts,
                                                     std::span<const std::size_t> displs,
                                                     int root) {
    auto call = movement(Collective::gatherv, send_span(send), buf_span(recv), root);
    return start(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Persistent gatherv: the arguments of gatherv, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent gatherv_init(Send&& send, Recv&& recv,
                                                            std::span<const std::size_t> counts,
                                                            std::span<const std::size_t> displs,
                                                            int root) {
    auto call = movement(Collective::gatherv, send_span(send), buf_span(recv), root);
    return persist(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Nonblocking gatherv: the arguments of gatherv; completes through the tlc::Request.
  template <MutableElementRange Recv>
  Request igatherv(in_place_t, Recv&& recv, std::span<const std::size_t> counts,
                   std::span<const std::size_t> displs, int root) {
    auto call = in_place_movement(Collective::gatherv, buf_span(recv), root);
    return start(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Persistent gatherv: the arguments of gatherv, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Recv>
  Persistent gatherv_init(in_place_t, Recv&& recv, std::span<const std::size_t> counts,
                          std::span<const std::size_t> displs, int root) {
    auto call = in_place_movement(Collective::gatherv, buf_span(recv), root);
    return persist(call, detail::VariantLayout{{}, {}, counts, displs});
  }
  /// Nonblocking scatter: the arguments of scatter; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request iscatter(Send&& send, Recv&& recv, int root) {
    return start(movement(Collective::scatter, send_span(send), buf_span(recv), root));
  }
  /// Persistent scatter: the arguments of scatter, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent scatter_init(Send&& send, Recv&& recv, int root) {
    return persist(movement(Collective::scatter, send_span(send), buf_span(recv), root));
  }
  /// Nonblocking scatter: the arguments of scatter; completes through the tlc::Request.
  template <ElementRange Send>
  Request iscatter(Send&& send, in_place_t, int root) {
    return start(scatter_in_place_call(Collective::scatter, send_span(send), root));
  }
  /// Persistent scatter: the arguments of scatter, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send>
  Persistent scatter_init(Send&& send, in_place_t, int root) {
    return persist(scatter_in_place_call(Collective::scatter, send_span(send), root));
  }
  /// Nonblocking scatterv: the arguments of scatterv; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request iscatterv(Send&& send,
                                                      std::span<const std::size_t> counts,
                                                      std::span<const std::size_t> displs,
                                                      Recv&& recv, int root) {
    auto call = movement(Collective::scatterv, send_span(send), buf_span(recv), root);
    return start(call, detail::VariantLayout{counts, displs, {}, {}});
  }
  /// Persistent scatterv: the arguments of scatterv, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent scatterv_init(Send&& send,
                                                             std::span<const std::size_t> counts,
                                                             std::span<const std::size_t> displs,
                                                             Recv&& recv, int root) {
    auto call = movement(Collective::scatterv, send_span(send), buf_span(recv), root);
    return persist(call, detail::VariantLayout{counts, displs, {}, {}});
  }
  /// Nonblocking scatterv: the arguments of scatterv; completes through the tlc::Request.
  template <ElementRange Send>
  Request iscatterv(Send&& send, std::span<const std::size_t> counts,
                    std::span<const std::size_t> displs, in_place_t, int root) {
    auto call = scatter_in_place_call(Collective::scatterv, send_span(send), root);
    return start(call, detail::VariantLayout{counts, displs, {}, {}});
  }
  /// Persistent scatterv: the arguments of scatterv, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send>
  Persistent scatterv_init(Send&& send, std::span<const std::size_t> counts,
                           std::span<const std::size_t> displs, in_place_t, int root) {
    auto call = scatter_in_place_call(Collective::scatterv, send_span(send), root);
    return persist(call, detail::VariantLayout{counts, displs, {}, {}});
  }
  /// Nonblocking alltoall: the arguments of alltoall; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request ialltoall(Send&& send, Recv&& recv) {
    return start(movement(Collective::alltoall, send_span(send), buf_span(recv), -1));
  }
  /// Persistent alltoall: the arguments of alltoall, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent alltoall_init(Send&& send, Recv&& recv) {
    return persist(movement(Collective::alltoall, send_span(send), buf_span(recv), -1));
  }
  /// Nonblocking alltoall: the arguments of alltoall; completes through the tlc::Request.
  template <MutableElementRange Buf>
  Request ialltoall(Buf&& buf) {
    return start(in_place_movement(Collective::alltoall, buf_span(buf), -1));
  }
  /// Persistent alltoall: the arguments of alltoall, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf>
  Persistent alltoall_init(Buf&& buf) {
    return persist(in_place_movement(Collective::alltoall, buf_span(buf), -1));
  }
  /// Nonblocking alltoallv: the arguments of alltoallv; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Request ialltoallv(Send&& send,
                                                       std::span<const std::size_t> send_counts,
                                                       std::span<const std::size_t> send_displs,
                                                       Recv&& recv,
                                                       std::span<const std::size_t> recv_counts,
                                                       std::span<const std::size_t> recv_displs) {
    auto call = movement(Collective::alltoallv, send_span(send), buf_span(recv), -1);
    return start(call, detail::VariantLayout{send_counts, send_displs, recv_counts, recv_displs});
  }
  /// Persistent alltoallv: the arguments of alltoallv, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv>
  requires SameElements<Send, Recv> Persistent alltoallv_init(
      Send&& send, std::span<const std::size_t> send_counts,
      std::span<const std::size_t> send_displs, Recv&& recv,
      std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs) {
    auto call = movement(Collective::alltoallv, send_span(send), buf_span(recv), -1);
    return persist(call, detail::VariantLayout{send_counts, send_displs, recv_counts, recv_displs});
  }
  /// Nonblocking reduce_scatter_block: the arguments of reduce_scatter_block; completes through the
  /// tlc::Request.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Request ireduce_scatter_block(Send&& send, Recv&& recv,
                                                                  Op op = {}) {
    return start(
        reduction(Collective::reduce_scatter_block, send_span(send), buf_span(recv), -1, op), {},
        op);
  }
  /// Persistent reduce_scatter_block: the arguments of reduce_scatter_block, set up once;
  /// tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Persistent reduce_scatter_block_init(Send&& send, Recv&& recv,
                                                                         Op op = {}) {
    return persist(
        reduction(Collective::reduce_scatter_block, send_span(send), buf_span(recv), -1, op), {},
        op);
  }
  /// Nonblocking reduce_scatter_block: the arguments of reduce_scatter_block; completes through the
  /// tlc::Request.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Request ireduce_scatter_block(Buf&& buf, Op op = {}) {
    return start(in_place_reduction(Collective::reduce_scatter_block, buf_span(buf), -1, op), {},
                 op);
  }
  /// Persistent reduce_scatter_block: the arguments of reduce_scatter_block, set up once;
  /// tlc::Persistent::start runs it.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Persistent reduce_scatter_block_init(Buf&& buf, Op op = {}) {
    return persist(in_place_reduction(Collective::reduce_scatter_block, buf_span(buf), -1, op), {},
                   op);
  }
  /// Nonblocking scan: the arguments of scan; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Request iscan(Send&& send, Recv&& recv, Op op = {}) {
    return start(reduction(Collective::scan, send_span(send), buf_span(recv), -1, op), {}, op);
  }
  /// Persistent scan: the arguments of scan, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Persistent scan_init(Send&& send, Recv&& recv, Op op = {}) {
    return persist(reduction(Collective::scan, send_span(send), buf_span(recv), -1, op), {}, op);
  }
  /// Nonblocking scan: the arguments of scan; completes through the tlc::Request.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Request iscan(Buf&& buf, Op op = {}) {
    return start(in_place_reduction(Collective::scan, buf_span(buf), -1, op), {}, op);
  }  /// Scalar nonblocking scan: x becomes op over ranks 0..rank() once the request completes.
  template <Scalar T, OpOf<T> Op = std::plus<>>
  Request iscan(T& x, Op op = {}) {
    return start(in_place_reduction(Collective::scan, std::span<T>(&x, 1), -1, op), {}, op);
  }

  /// Persistent scan: the arguments of scan, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Persistent scan_init(Buf&& buf, Op op = {}) {
    return persist(in_place_reduction(Collective::scan, buf_span(buf), -1, op), {}, op);
  }
  /// Nonblocking exscan: the arguments of exscan; completes through the tlc::Request.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Request iexscan(Send&& send, Recv&& recv, Op op = {}) {
    return start(reduction(Collective::exscan, send_span(send), buf_span(recv), -1, op), {}, op);
  }
  /// Persistent exscan: the arguments of exscan, set up once; tlc::Persistent::start runs it.
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires SameElements<Send, Recv> Persistent exscan_init(Send&& send, Recv&& recv, Op op = {}) {
    return persist(reduction(Collective::exscan, send_span(send), buf_span(recv), -1, op), {}, op);
  }
  /// Nonblocking exscan: the arguments of exscan; completes through the tlc::Request.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Request iexscan(Buf&& buf, Op op = {}) {
    return start(in_place_reduction(Collective::exscan, buf_span(buf), -1, op), {}, op);
  }  /// Scalar nonblocking exscan: x becomes op over ranks 0..rank()-1 once the request completes;
  /// at rank 0 it is left as it was (the blocking scalar form returns T{} there).
  template <Scalar T, OpOf<T> Op = std::plus<>>
  Request iexscan(T& x, Op op = {}) {
    return start(in_place_reduction(Collective::exscan, std::span<T>(&x, 1), -1, op), {}, op);
  }

  /// Persistent exscan: the arguments of exscan, set up once; tlc::Persistent::start runs it.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) Persistent exscan_init(Buf&& buf, Op op = {}) {
    return persist(in_place_reduction(Collective::exscan, buf_span(buf), -1, op), {}, op);
  }

 private:
  template <class R>
  static auto send_span(R&& range) {
    return std::span<const std::remove_cv_t<std::ranges::range_value_t<R>>>(range);
  }
  template <class R>
  static auto buf_span(R&& range) {
    return std::span<std::ranges::range_value_t<R>>(range);
  }
  template <class T>
  static detail::Call bcast_call(std::span<T> b, int root) {
    auto call = detail::make_call(Collective::bcast, b.data(), b.size(), b.data(), b.size());
    call.in_place = true;
    call.root = root;
    return call;
  }
  template <class T>
  static detail::Call scatter_in_place_call(Collective collective, std::span<const T> s, int root) {
    auto call = detail::make_call<T>(collective, s.data(), s.size(), nullptr, 0);
    call.in_place = true;
    call.root = root;
    return call;
  }
  // The nonblocking and persistent forms keep the op object alive with the call (the caller's
  // is a parameter that dies on return): an empty op is one static instance, any other a copy.
  template <class Op>
  static std::shared_ptr<const void> keep_op(detail::Call& call, const Op& op) {
    if constexpr (std::is_empty_v<Op> && std::is_default_constructible_v<Op>) {
      static const Op instance{};
      call.op_object = &instance;
      return nullptr;
    } else {
      auto held = std::make_shared<const Op>(op);
      call.op_object = held.get();
      return held;
    }
  }
  Request start(const detail::Call& call, const detail::VariantLayout& layout = {}) {
    return start_posted(call, layout, nullptr);
  }
  template <class Op>
  Request start(detail::Call call, const detail::VariantLayout& layout, const Op& op) {
    auto held = keep_op(call, op);
    return start_posted(call, layout, std::move(held));
  }
  Persistent persist(const detail::Call& call, const detail::VariantLayout& layout = {}) {
    return init_persistent(call, layout, nullptr);
  }
  template <class Op>
  Persistent persist(detail::Call call, const detail::VariantLayout& layout, const Op& op) {
    auto held = keep_op(call, op);
    return init_persistent(call, layout, std::move(held));
  }
  Request start_posted(const detail::Call& call, const detail::VariantLayout& layout,
                       std::shared_ptr<const void> held_op);
  Persistent init_persistent(const detail::Call& call, const detail::VariantLayout& layout,
                             std::shared_ptr<const void> held_op);

  /// A constant: a barrier builds no descriptor on the caller's stack.
  static constexpr detail::Call barrier_call{};
  void run(const detail::Call& call) {
    if (!team_ || !alive_->load(std::memory_order_relaxed)) [[unlikely]]
      throw_unusable();
    detail::run_collective(*team_, local_, call);
  }
  /// tlc::Error: this Thread was moved from, or its team is gone.
  [[noreturn]] void throw_unusable() const;
  void release() noexcept;

  template <class T>
  static detail::Call movement(Collective collective, std::span<const T> send, std::span<T> recv,
                               int root) {
    auto call =
        detail::make_call<T>(collective, send.data(), send.size(), recv.data(), recv.size());
    call.root = root;
    return call;
  }
  template <class T>
  static detail::Call in_place_movement(Collective collective, std::span<T> buf, int root) {
    auto call = detail::make_call<T>(collective, buf.data(), buf.size(), buf.data(), buf.size());
    call.in_place = true;
    call.root = root;
    return call;
  }
  template <class T, class Op>
  static detail::Call reduction(Collective collective, std::span<const T> send, std::span<T> recv,
                                int root, const Op& op) {
    auto call = movement(collective, send, recv, root);
    detail::set_op<T>(call, op);
    return call;
  }
  /// The scalar forms: x in, the collective's result for this rank out.
  template <class T, class Op>
  T one_value(Collective collective, const T& x, int root, const Op& op) {
    T v = x;
    run(in_place_reduction(collective, std::span<T>(&v, 1), root, op));
    return v;
  }
  template <class T, class Op>
  static detail::Call in_place_reduction(Collective collective, std::span<T> buf, int root,
                                         const Op& op) {
    auto call = in_place_movement(collective, buf, root);
    detail::set_op<T>(call, op);
    return call;
  }

  friend class Team;
  friend class detail::TeamImpl;
  friend struct detail::CallAccess;
  Thread(detail::TeamImpl* team, int local_index, bool attached);
  /// A participant of a sub-team, which it owns with the sub-team's other participants.
  Thread(std::shared_ptr<detail::TeamImpl> sub_team, int local_index);

  detail::TeamImpl* team_ = nullptr;  ///< null once moved from
  /// False once the team is destroyed; shared with the team, so that a Thread that outlives its
  /// team (a misuse) gets an error instead of touching freed memory.
  std::shared_ptr<const std::atomic<bool>> alive_;
  /// Where this participant's Thread object lives now (moves update it, destruction clears it),
  /// shared with the OS thread that created it, for current_thread().
  std::shared_ptr<std::atomic<Thread*>> self_;
  int local_ = 0;
  int rank_ = 0;
  int size_ = 0;
  int threads_ = 0;
  int process_ = 0;
  int processes_ = 0;
  bool attached_ = false;
  int uncaught_at_attach_ = 0;
  /// A sub-team's participants own it together (Thread::split); null for a Team's.
  std::shared_ptr<detail::TeamImpl> sub_team_;
};

/// The participant the calling OS thread runs as (inside Team::run) or has attached
/// (Team::attach), wherever its Thread object has been moved since, or nullptr (none, or that
/// Thread has been destroyed): for library code deep in an application (a dot product with no
/// context argument) that must reach the team. A Thread handed to another OS thread stays the
/// current participant of the thread that attached it.
TLC_API Thread* current_thread() noexcept;

/// The same participant as a reference, for code that must run on a participant: outside a
/// Team::run body or an attachment (where current_thread() is nullptr and dereferencing it would
/// crash) it throws tlc::Error with code invalid_argument. Guard code that may also run outside
/// a team with `if (tlc::Thread* me = tlc::current_thread())` instead.
inline Thread& this_thread() {
  if (Thread* me = current_thread()) return *me;
  throw Error(Errc::invalid_argument,
              "tlc::this_thread(): the calling thread is no participant of a team (call it "
              "inside Team::run or between Team::attach and the end of its Thread; "
              "tlc::current_thread() returns nullptr there instead)");
}

}  // namespace tlc
