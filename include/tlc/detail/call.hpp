// The type-erased form of a collective call: what the compiled algorithms work on. The thin
// templates of tlc::Thread reduce every call to a Call (docs/design.md section 11). Internal:
// applications use tlc::Thread.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include <tlc/detail/export.hpp>
#include <tlc/ops.hpp>
#include <tlc/options.hpp>
#include <tlc/types.hpp>

namespace tlc {
namespace detail {
class TeamImpl;
// What hands a Call built without the templates of tlc::Thread (the C interface's, from a
// tlc_datatype and a tlc_op) to a Thread: defined where it is used.
struct CallAccess;

// v-variants only: one entry per global rank, in elements. Kept out of Call itself, which every
// call builds: zeroing four more spans cost more than the whole of an 8-byte allreduce's work.
struct VariantLayout {
  std::span<const std::size_t> send_counts, send_displs, recv_counts, recv_displs;
};

struct Call {
  Collective collective = Collective::barrier;
  const void* send = nullptr;  // == recv for in-place forms
  void* recv = nullptr;
  std::size_t send_count = 0;  // elements the send buffer holds
  std::size_t recv_count = 0;  // elements the receive buffer holds
  bool in_place = false;       // this thread's contribution is in recv (layout per collective)
  int root = -1;               // global thread rank; -1 for collectives without a root
  TypeInfo type{};
  // Reductions only.
  BuiltinOp op = BuiltinOp::none;
  CombineFn combine = nullptr;
  const void* op_object = nullptr;
  OpEqualFn op_equal = nullptr;    // compares op objects of the call's op type, where it can
  OpDigestFn op_digest = nullptr;  // the op object's bytes as one word (TLC_CHECK), where it can
  bool commutative = true;
  // v-variants only (the caller's, alive during the call); empty spans for the others.
  const VariantLayout* layout = nullptr;
  std::span<const std::size_t> send_counts() const noexcept {
    return layout ? layout->send_counts : std::span<const std::size_t>{};
  }
  std::span<const std::size_t> send_displs() const noexcept {
    return layout ? layout->send_displs : std::span<const std::size_t>{};
  }
  std::span<const std::size_t> recv_counts() const noexcept {
    return layout ? layout->recv_counts : std::span<const std::size_t>{};
  }
  std::span<const std::size_t> recv_displs() const noexcept {
    return layout ? layout->recv_displs : std::span<const std::size_t>{};
  }
};

TLC_API void run_collective(TeamImpl& team, int local_index, const Call& call);

template <class T>
Call make_call(Collective collective, const T* send, std::size_t send_count, T* recv,
               std::size_t recv_count) {
  Call call;
  call.collective = collective;
  call.send = send;
  call.send_count = send_count;
  call.recv = recv;
  call.recv_count = recv_count;
  call.type = type_info_of<T>();
  return call;
}

template <class T, class Op>
void set_op(Call& call, const Op& op) {
  static_assert(std::is_invocable_r_v<T, const Op&, const T&, const T&>,
                "a reduction op must be callable as T op(const T&, const T&)");
  call.op = builtin_op<Op>::value;
  call.combine = &combine<T, Op>;
  call.op_object = &op;
  call.op_equal = op_equal_of<Op>();
  call.op_digest = op_digest_of<Op>();
  call.commutative = is_commutative<Op>::value;
}
}  // namespace detail
}  // namespace tlc
