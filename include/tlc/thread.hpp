// tlc::Thread: one participant of a team. Every thread of the team calls the same collectives in
// the same order, as MPI ranks do; ranks are global and process-major.
#pragma once

#include <cstddef>
#include <functional>
#include <ranges>
#include <span>
#include <type_traits>

#include <tlc/ops.hpp>
#include <tlc/types.hpp>

namespace tlc {

namespace detail {
class TeamImpl;

// The type-erased form of a reduction call: what the compiled algorithms work on.
struct ReduceCall {
  const void* send = nullptr;  // == recv for in-place
  void* recv = nullptr;
  std::size_t count = 0;       // elements sent by this thread
  std::size_t recv_count = 0;  // elements the receive buffer holds (validated per collective)
  TypeInfo type{};
  BuiltinOp op = BuiltinOp::none;
  CombineFn combine = nullptr;
  const void* op_object = nullptr;
  bool commutative = false;
};

void barrier(TeamImpl& team, int local_index);
void allreduce(TeamImpl& team, int local_index, const ReduceCall& call);

template <class Op, class T>
ReduceCall make_reduce_call(const T* send, T* recv, std::size_t count, std::size_t recv_count,
                            const Op& op) {
  static_assert(std::is_invocable_r_v<T, const Op&, const T&, const T&>,
                "a reduction op must be callable as T op(const T&, const T&)");
  ReduceCall call;
  call.send = send;
  call.recv = recv;
  call.count = count;
  call.recv_count = recv_count;
  call.type = type_info_of<T>();
  call.op = builtin_op<Op>::value;
  call.combine = &combine<T, Op>;
  call.op_object = &op;
  call.commutative = is_commutative<Op>::value;
  return call;
}
}  // namespace detail

template <class R>
concept ElementRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    Element<std::remove_cv_t<std::ranges::range_value_t<R>>>;

template <class R>
concept MutableElementRange =
    ElementRange<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

class Thread {
 public:
  Thread(Thread&& other) noexcept;
  Thread& operator=(Thread&& other) noexcept;
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;
  // Releases an attached slot. Destroyed during stack unwinding, it aborts the team so that the
  // other threads wake with tlc::TeamAborted instead of waiting for this one forever.
  ~Thread();

  int rank() const noexcept { return rank_; }          // global rank, process-major
  int size() const noexcept { return size_; }          // threads of all processes
  int local_index() const noexcept { return local_; }  // index inside this process
  int threads() const noexcept { return threads_; }    // threads of this process
  int process() const noexcept { return process_; }    // rank of this process
  int processes() const noexcept { return processes_; }

  void barrier() { detail::barrier(*team_, local_); }

  // recv[i] = op over all ranks r (in rank order) of send_r[i]; recv.size() == send.size().
  template <ElementRange Send, MutableElementRange Recv, class Op = std::plus<>>
  requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<Send>>,
                        std::ranges::range_value_t<Recv>>
  void allreduce(Send&& send, Recv&& recv, Op op = {}) {
    using T = std::ranges::range_value_t<Recv>;
    std::span<const T> s(send);
    std::span<T> r(recv);
    detail::allreduce(*team_, local_,
                      detail::make_reduce_call<Op, T>(s.data(), r.data(), s.size(), r.size(), op));
  }

  // In place: buf holds this thread's contribution on entry and the result on return.
  template <MutableElementRange Buf, class Op = std::plus<>>
  requires(!std::ranges::range<Op>) void allreduce(Buf&& buf, Op op = {}) {
    using T = std::ranges::range_value_t<Buf>;
    std::span<T> b(buf);
    detail::allreduce(*team_, local_,
                      detail::make_reduce_call<Op, T>(b.data(), b.data(), b.size(), b.size(), op));
  }

 private:
  friend class Team;
  friend class detail::TeamImpl;
  Thread(detail::TeamImpl* team, int local_index, bool attached);

  detail::TeamImpl* team_ = nullptr;
  int local_ = 0;
  int rank_ = 0;
  int size_ = 0;
  int threads_ = 0;
  int process_ = 0;
  int processes_ = 0;
  bool attached_ = false;
  int uncaught_at_attach_ = 0;
};

}  // namespace tlc
