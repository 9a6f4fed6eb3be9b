// Validation of a call, before any data moves (docs/design.md section 9): each thread checks its
// own arguments (the verdict travels in its descriptor and its fingerprint, so every thread of the
// process reports it), and after the begin step every thread checks what only the descriptors of
// all threads show (user op objects, v-variant counts against the sizes the ranks pass).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <tlc/error.hpp>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"

namespace tlc::detail {

namespace {

class Checker {
 public:
  Checker(const Call& call, int rank, int size) : c_(call), rank_(rank), size_(size) {}

  // Fills d.count, d.contribution and d.contribution_bytes, or returns what is wrong.
  std::string check(CallDescriptor& d) {
    const std::size_t e = c_.type.size;
    if (c_.send_count > 0 && !c_.send) return "send buffer is null but holds " + n(c_.send_count);
    if (c_.recv_count > 0 && !c_.recv)
      return "receive buffer is null but holds " + n(c_.recv_count);
    if (traits_of(c_.collective).has_root && (c_.root < 0 || c_.root >= size_))
      return "root " + std::to_string(c_.root) + " is not a rank of the team (0.." +
             std::to_string(size_ - 1) + ")";
    if (traits_of(c_.collective).reduction && !c_.combine) return "no reduction op";
    const bool root = c_.root == rank_;
    const auto U = static_cast<std::size_t>(size_);
    std::string problem;
    switch (c_.collective) {
      case Collective::barrier:
        return {};
      case Collective::bcast:
        d.count = c_.recv_count;
        if (root) contribute(c_.recv, c_.recv_count);
        return {};
      case Collective::reduce:
        d.count = c_.send_count;
        if (root && !c_.in_place && c_.recv_count != c_.send_count)
          return "the root's receive buffer holds " + n(c_.recv_count) + ", the send buffer " +
                 n(c_.send_count) + " (they must be equal)";
        contribute(c_.send, c_.send_count);
        return root && !c_.in_place ? separate(c_.send_count, c_.recv_count) : "";
      case Collective::allreduce:
      case Collective::scan:
      case Collective::exscan:
        d.count = c_.send_count;
        if (c_.recv_count != c_.send_count)
          return "receive buffer holds " + n(c_.recv_count) + ", send buffer " + n(c_.send_count) +
                 " (they must be equal)";
        contribute(c_.send, c_.send_count);
        return c_.in_place ? "" : separate(c_.send_count, c_.recv_count);
      case Collective::allgather:
        if (c_.in_place) {
          if (auto p = divisible(c_.recv_count, "receive"); !p.empty()) return p;
          d.count = c_.recv_count / U;
          contribute(static_cast<const std::byte*>(c_.recv) + rank_ * d.count * e, d.count);
          return {};
        }
        d.count = c_.send_count;
        if (c_.recv_count != U * c_.send_count) return must_hold("receive", U * c_.send_count);
        contribute(c_.send, c_.send_count);
        return separate(c_.send_count, c_.recv_count);
      case Collective::gather:
        if (c_.in_place) {
          if (!root) return "the in_place form of gather is for the root only";
          if (auto p = divisible(c_.recv_count, "receive"); !p.empty()) return p;
          d.count = c_.recv_count / U;
          contribute(static_cast<const std::byte*>(c_.recv) + rank_ * d.count * e, d.count);
          return {};
        }
        d.count = c_.send_count;
        if (root && c_.recv_count != U * c_.send_count)
          return must_hold("the root's receive", U * c_.send_count);
        contribute(c_.send, c_.send_count);
        return root ? separate(c_.send_count, c_.recv_count) : "";
      case Collective::scatter:
        if (c_.in_place) {
          if (!root) return "the in_place form of scatter is for the root only";
          if (auto p = divisible(c_.send_count, "send"); !p.empty()) return p;
          d.count = c_.send_count / U;
        } else {
          d.count = c_.recv_count;
          if (root && c_.send_count != U * c_.recv_count)
            return must_hold("the root's send", U * c_.recv_count);
        }
        if (root) contribute(c_.send, c_.send_count);
        return root && !c_.in_place ? separate(c_.send_count, c_.recv_count) : "";
      case Collective::alltoall:
        if (c_.in_place) {
          if (auto p = divisible(c_.recv_count, "receive"); !p.empty()) return p;
          d.count = c_.recv_count / U;
          contribute(c_.recv, c_.recv_count);
          return {};
        }
        if (c_.send_count != c_.recv_count)
          return "send buffer holds " + n(c_.send_count) + ", receive buffer " + n(c_.recv_count) +
                 " (they must be equal)";
        if (auto p = divisible(c_.send_count, "send"); !p.empty()) return p;
        d.count = c_.send_count / U;
        contribute(c_.send, c_.send_count);
        return separate(c_.send_count, c_.recv_count);
      case Collective::reduce_scatter_block:
        if (c_.in_place) {
          if (auto p = divisible(c_.recv_count, "receive"); !p.empty()) return p;
          d.count = c_.recv_count / U;
          contribute(c_.recv, c_.recv_count);
          return {};
        }
        d.count = c_.recv_count;
        if (c_.send_count != U * c_.recv_count) return must_hold("send", U * c_.recv_count);
        contribute(c_.send, c_.send_count);
        return separate(c_.send_count, c_.recv_count);
      case Collective::allgatherv:
        if (auto p = layout(Side::recv); !p.empty()) return p;
        if (c_.in_place) {
          const std::size_t mine = c_.recv_counts()[rank_];
          contribute(static_cast<const std::byte*>(c_.recv) + c_.recv_displs()[rank_] * e, mine);
          return {};
        }
        if (c_.send_count != c_.recv_counts()[rank_])
          return "send buffer holds " + n(c_.send_count) + " but counts[" + std::to_string(rank_) +
                 "] is " + std::to_string(c_.recv_counts()[rank_]);
        contribute(c_.send, c_.send_count);
        return separate(c_.send_count, c_.recv_count);
      case Collective::gatherv:
        if (root) {
          if (auto p = layout(Side::recv); !p.empty()) return p;
          if (c_.in_place) {
            contribute(static_cast<const std::byte*>(c_.recv) + c_.recv_displs()[rank_] * e,
                       c_.recv_counts()[rank_]);
            return {};
          }
        } else if (c_.in_place) {
          return "the in_place form of gatherv is for the root only";
        }
        contribute(c_.send, c_.send_count);
        return root ? separate(c_.send_count, c_.recv_count) : "";
      case Collective::scatterv:
        if (c_.in_place && !root) return "the in_place form of scatterv is for the root only";
        if (!root) return {};
        if (auto p = layout(Side::send); !p.empty()) return p;
        contribute(c_.send, c_.send_count);
        return c_.in_place ? "" : separate(c_.send_count, c_.recv_count);
      case Collective::alltoallv:
        if (auto p = layout(Side::send); !p.empty()) return p;
        if (auto p = layout(Side::recv); !p.empty()) return p;
        contribute(c_.send, c_.send_count);
        return separate(c_.send_count, c_.recv_count);
    }
    return problem;
  }

 private:
  const Call& c_;
  int rank_, size_;
  CallDescriptor* d_ = nullptr;
  const void* contribution_ = nullptr;
  std::size_t contribution_count_ = 0;

 public:
  const void* contribution() const { return contribution_; }
  std::size_t contribution_count() const { return contribution_count_; }

 private:
  void contribute(const void* p, std::size_t count) {
    contribution_ = p;
    contribution_count_ = count;
  }
  static std::string n(std::size_t count) { return std::to_string(count) + " elements"; }
  std::string must_hold(const char* which, std::size_t expected) const {
    return std::string(which) + " buffer holds " +
           n(std::string(which).find("send") != std::string::npos ? c_.send_count : c_.recv_count) +
           " but must hold " + n(expected) + " (" + std::to_string(size_) + " ranks)";
  }
  std::string divisible(std::size_t count, const char* which) const {
    if (count % static_cast<std::size_t>(size_) == 0) return {};
    return std::string("in-place ") + which + " buffer holds " + n(count) +
           ", not a multiple of the team size " + std::to_string(size_);
  }
  // Non-in-place forms: the two buffers must not overlap at all.
  std::string separate(std::size_t send_count, std::size_t recv_count) const {
    const std::size_t e = c_.type.size;
    if (overlap(c_.send, send_count * e, c_.recv, recv_count * e))
      return "send and receive buffers overlap (use the in-place form)";
    return {};
  }
  // A v-variant's layout of one side: a block per rank, each inside the buffer; receive blocks,
  // which are written, also disjoint (as in MPI: two writers of one element would leave
  // whichever came last). Send blocks, only read, may overlap.
  enum class Side { send, recv };
  std::string layout(Side side) const {
    const bool recv = side == Side::recv;
    const char* which = recv ? "recv" : "send";
    const std::span<const std::size_t> counts = recv ? c_.recv_counts() : c_.send_counts();
    const std::span<const std::size_t> displs = recv ? c_.recv_displs() : c_.send_displs();
    const std::size_t buffer = recv ? c_.recv_count : c_.send_count;
    const auto U = static_cast<std::size_t>(size_);
    if (counts.size() != U || displs.size() != U)
      return std::string(which) + " counts and displacements must have one entry per rank (" +
             std::to_string(size_) + "), got " + std::to_string(counts.size()) + " and " +
             std::to_string(displs.size());
    for (std::size_t r = 0; r < U; ++r)
      if (counts[r] > 0 && (displs[r] > buffer || counts[r] > buffer - displs[r]))
        return std::string(which) + " block of rank " + std::to_string(r) + " (" +
               std::to_string(counts[r]) + " elements at " + std::to_string(displs[r]) +
               ") lies outside the " + which + " buffer of " + n(buffer);
    return recv ? overlapping_blocks(counts, displs) : std::string();
  }
  static std::string overlapping_blocks(std::span<const std::size_t> counts,
                                        std::span<const std::size_t> displs) {
    thread_local std::vector<std::size_t> order;  // ranks with a block, by displacement
    order.clear();
    for (std::size_t r = 0; r < counts.size(); ++r)
      if (counts[r] > 0) order.push_back(r);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return displs[a] < displs[b] || (displs[a] == displs[b] && a < b);
    });
    for (std::size_t i = 1; i < order.size(); ++i) {
      const std::size_t a = order[i - 1], b = order[i];
      if (displs[b] < displs[a] + counts[a])  // in range: both blocks lie inside the buffer
        return "recv blocks overlap: rank " + std::to_string(a) + "'s " +
               std::to_string(counts[a]) + " elements at " + std::to_string(displs[a]) +
               " and rank " + std::to_string(b) + "'s " + std::to_string(counts[b]) + " at " +
               std::to_string(displs[b]);
    }
    return {};
  }
};

}  // namespace

std::string check_own_arguments(const Call& call, int rank, int size, CallDescriptor& d) {
  Checker checker(call, rank, size);
  std::string problem = checker.check(d);
  d.contribution = checker.contribution();
  d.contribution_bytes = checker.contribution_count() * call.type.size;
  return problem;
}

std::string check_arguments(const Call& call, int rank, int size) {
  Call c = call;
  if (CombineFn kernel = builtin_combine(c.op, c.type)) c.combine = kernel;
  CallDescriptor d;
  Checker checker(c, rank, size);
  return checker.check(d);
}

namespace {

// Checks across the threads of a process that per-thread checks cannot make (v-variant counts
// against the sizes the ranks pass); "" when consistent.
std::string cross_check(const Rendezvous::CallView& view) {
  const Roster& team = view.rendezvous->roster();
  const Call& first = view[0].call;
  const int threads = team.threads();
  auto local_of = [&](int rank) {
    const int t = rank - team.first_rank();
    return t >= 0 && t < threads ? t : -1;
  };
  auto mismatch = [&](int holder, const char* what, int rank, std::size_t expected,
                      std::size_t got) {
    return team.who(holder) + " expects " + std::to_string(expected) + " elements " + what +
           " rank " + std::to_string(rank) + ", which passes " + std::to_string(got);
  };
  switch (first.collective) {
    case Collective::allgatherv:
      // Every rank's count must be the same in every thread's counts.
      for (int t = 1; t < threads; ++t)
        if (!std::equal(view[t].call.recv_counts().begin(), view[t].call.recv_counts().end(),
                        first.recv_counts().begin(), first.recv_counts().end()))
          return team.who(0) + " and " + team.who(t) + " pass different counts";
      return {};
    case Collective::gatherv:
    case Collective::scatterv: {
      const int root = local_of(first.root);
      if (root < 0) return {};
      const Call& rc = view[root].call;
      const bool gather = first.collective == Collective::gatherv;
      for (int t = 0; t < threads; ++t) {
        if (t == root && rc.in_place) continue;
        const int rank = team.global_rank(t);
        const std::size_t expected = gather ? rc.recv_counts()[static_cast<std::size_t>(rank)]
                                            : rc.send_counts()[static_cast<std::size_t>(rank)];
        const std::size_t got = gather ? view[t].call.send_count : view[t].call.recv_count;
        if (expected != got) return mismatch(root, gather ? "from" : "for", rank, expected, got);
      }
      return {};
    }
    case Collective::alltoallv:
      for (int s = 0; s < threads; ++s)
        for (int t = 0; t < threads; ++t) {
          const auto sr = static_cast<std::size_t>(team.global_rank(s));
          const auto tr = static_cast<std::size_t>(team.global_rank(t));
          if (view[s].call.send_counts()[tr] != view[t].call.recv_counts()[sr])
            return team.who(t) + " expects " + std::to_string(view[t].call.recv_counts()[sr]) +
                   " elements from rank " + std::to_string(sr) + ", which sends " +
                   std::to_string(view[s].call.send_counts()[tr]);
        }
      return {};
    default:
      return {};
  }
}

}  // namespace

std::string compare_processes(TeamImpl& team, const CallView& view) {
  std::vector<const Call*> calls(static_cast<std::size_t>(team.threads()));
  for (int t = 0; t < team.threads(); ++t) calls[static_cast<std::size_t>(t)] = &view[t].call;
  std::vector<std::int64_t> mine(call_signature_size());
  write_call_signature(calls, team.global_rank(0), team.size(), view[0].count, mine.data());
  return compare_signatures(team.check_comm().allgather(mine), team.processes());
}
std::string compare_processes(TeamImpl& team, const CallDescriptor& d) {
  const Call* call = &d.call;  // never a v-variant: the one thread's call speaks for all
  std::vector<std::int64_t> mine(call_signature_size());
  write_call_signature({&call, 1}, team.global_rank(0), team.size(), d.count, mine.data());
  return compare_signatures(team.check_comm().allgather(mine), team.processes());
}

std::string disagreement(const CallView& view) {
  const Roster& team = view.rendezvous->roster();
  if (team.threads() == 1) return {};
  const Call& first = view[0].call;
  for (int i = 1; i < team.threads(); ++i)
    if (view[i].call.combine != first.combine)
      return team.who(0) + " passed op " + to_string(first.op) + " but " + team.who(i) +
             " passed a different op (" + to_string(view[i].call.op) + ")";
  return cross_check(view);
}

namespace {

// The same op type (equal combine functions), but objects of it may hold different state: each
// thread would then combine with its own op and the threads' results would differ. Compared
// where the op type has operator== (Call::op_equal).
std::string unequal_ops(const CallView& view) {
  const Roster& team = view.rendezvous->roster();
  const Call& first = view[0].call;
  for (int i = 1; i < team.threads(); ++i)
    if (view[i].call.op_object != first.op_object &&
        !first.op_equal(first.op_object, view[i].call.op_object))
      return team.who(0) + " and " + team.who(i) +
             " passed op objects of the same type that compare unequal (different state)";
  return {};
}

}  // namespace

CallView begin_validated(TeamImpl& team, int me, CallDescriptor&& d, bool carry) {
  const CallView view = team.rendezvous().begin_call(me, std::move(d), carry);
  // Equal fingerprints: every thread published its descriptor. These checks read memory the
  // callers own (v-variant counts, through their descriptors), so no thread may leave with the
  // error before all are done reading; all reach the same verdict and wait alike.
  const CallDescriptor& first = view[0];
  std::string problem = disagreement(view);
  if (problem.empty() && first.call.op_equal) {
    // The op objects live in their callers' frames, and a thread may return as soon as its own
    // part is done (carried calls have no closing rendezvous): nobody leaves before every thread
    // has compared. Not in calls led by arrival (dynamic), whose early threads have left already.
    problem = unequal_ops(view);
    if (problem.empty()) team.rendezvous().sync(me);
  }
  if (problem.empty() && team.checks_call(first.count * first.call.type.size)) {
    // Before any data moves, the processes compare their calls: thread 0 asks, the others wait.
    // Thread 0 first waits until every thread here has finished the checks above (which read
    // thread 0's arrays): once it has the verdict it may throw and return, and its arrays go.
    const std::uint64_t s = team.rendezvous().next_step(me);
    team.rendezvous().arrive(me, s);
    if (me == 0) {
      team.rendezvous().wait_all_arrived(s);
      try {
        team.process_verdict() = compare_processes(team, view);
      } catch (...) {
        team.abort("the TLC_CHECK exchange between processes failed");
        throw;
      }
      team.rendezvous().release(s);
    } else {
      team.rendezvous().wait_released(s);
    }
    if (team.process_verdict().empty()) return view;
    ProcessFailures::failure_agreed_across_processes();  // every thread of every process throws it
    throw Error(Errc::mismatch, std::string("tlc ") + to_string(first.call.collective) + ": " +
                                    team.process_verdict());
  }
  if (problem.empty()) return view;
  team.rendezvous().sync(me);
  throw Error(Errc::mismatch,
              std::string("tlc ") + to_string(first.call.collective) + ": " + problem);
}

}  // namespace tlc::detail
