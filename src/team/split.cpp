// Sub-teams: Thread::split, as MPI_Comm_split does for ranks (docs/design.md section 13).
//
// Steps of a split, every thread of the parent team:
//   1. an allgather of (kind, colour, key) on the parent, a collective like any other (checked
//      and watched); every thread then knows every rank's pair and computes the same layout:
//      the members of each colour in (key, rank) order, with the errors every thread throws
//      alike (threads that disagree about the kind of split, a negative colour, keys that
//      interleave processes);
//   2. local thread 0 makes the sub-teams its process hosts, in ascending colour order on every
//      process: a communicator of the sub-team's processes by MPI_Comm_create_group on the
//      parent's (collective over those processes only; the common order keeps a process that
//      hosts members of several sub-teams from crossing the others), then a TeamImpl on it,
//      whose construction makes its own lanes and parts as a Team's does;
//   3. a barrier of the parent publishes them; each thread takes its own.
// A sub-team's ranks are process-major like every team's, so the keys must keep the members of
// each process consecutive; the processes are ordered as their blocks are. Its lanes are the
// parent's, as many as the process with the fewest members has threads, each driven by one of
// the sub-team's own threads. It owns all it needs, so its parent may be destroyed first.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <tlc/error.hpp>
#include <tlc/thread.hpp>

#include "team/team_impl.hpp"

namespace tlc::detail {

// What every thread computes from the gathered (kind, colour, key) of the whole team.
struct SplitLayout {
  struct Hosted {
    int color = 0;
    std::vector<int> processes;  // parent process ranks, in the sub-team's process order
    std::vector<int> members;    // this process's members: parent local indices, in order
    int lanes = 1;               // agreed by the sub-team's processes
  };
  std::vector<Hosted> hosted;  // the sub-teams with members here, by ascending colour
  // For each local thread of the parent: the index into hosted (-1: undefined) and its local
  // index in that sub-team.
  std::vector<int> team_of, index_in_team;
};

namespace {

// What each thread contributes to the split's allgather: an element type of its own, so that
// the call's fingerprint (type and size) tells it from a user's allgather of three ints.
struct SplitWord {
  std::int32_t kind, color, key;
};

constexpr const char* kind_name(int kind) {
  switch (kind) {
    case 0:
      return "split(color, key)";
    case 1 + static_cast<int>(SplitType::process):
      return "split(tlc::by_process)";
    case 1 + static_cast<int>(SplitType::numa):
      return "split(tlc::by_numa)";
    default:
      return "split(tlc::by_rail)";
  }
}

// all: (kind, colour, key) of every rank of the parent, in rank order.
SplitLayout lay_out(const std::vector<SplitWord>& all, const Roster& roster, int parent_lanes) {
  const int n = roster.size();
  auto kind = [&](int r) { return all[static_cast<std::size_t>(r)].kind; };
  auto color = [&](int r) { return all[static_cast<std::size_t>(r)].color; };
  auto key = [&](int r) { return all[static_cast<std::size_t>(r)].key; };
  for (int r = 1; r < n; ++r)
    if (kind(r) != kind(0))
      throw Error(Errc::mismatch, "tlc: threads of the team split differently: rank 0 calls " +
                                      std::string(kind_name(kind(0))) + ", rank " +
                                      std::to_string(r) + " " + kind_name(kind(r)));
  std::map<int, std::vector<int>> members_of;  // colour -> parent ranks, by (key, rank)
  for (int r = 0; r < n; ++r) {
    if (color(r) == undefined) continue;
    if (color(r) < 0)
      throw Error(Errc::invalid_argument,
                  "tlc: split: rank " + std::to_string(r) + " passed colour " +
                      std::to_string(color(r)) +
                      "; a colour is non-negative, or tlc::undefined to join no sub-team");
    members_of[color(r)].push_back(r);
  }
  SplitLayout layout;
  layout.team_of.assign(static_cast<std::size_t>(roster.threads()), -1);
  layout.index_in_team.assign(static_cast<std::size_t>(roster.threads()), -1);
  for (auto& [c, ranks] : members_of) {
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return key(a) < key(b); });
    SplitLayout::Hosted team;
    team.color = c;
    std::vector<int> count;  // members per process, in block order
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const int p = roster.process_of(ranks[i]);
      if (i > 0 && p == roster.process_of(ranks[i - 1])) {
        ++count.back();
        continue;
      }
      if (std::find(team.processes.begin(), team.processes.end(), p) != team.processes.end())
        throw Error(Errc::unsupported,
                    "tlc: split: the keys of colour " + std::to_string(c) + " put rank " +
                        std::to_string(ranks[i - 1]) + " between ranks of process " +
                        std::to_string(p) +
                        ": a team's ranks are process-major (the threads of each process "
                        "consecutive), so give the members of each process consecutive keys");
      team.processes.push_back(p);
      count.push_back(1);
    }
    team.lanes = std::min(parent_lanes, *std::min_element(count.begin(), count.end()));
    for (int r : ranks)
      if (roster.process_of(r) == roster.process()) {
        const int local = r - roster.first_rank();
        layout.team_of[static_cast<std::size_t>(local)] = static_cast<int>(layout.hosted.size());
        layout.index_in_team[static_cast<std::size_t>(local)] =
            static_cast<int>(team.members.size());
        team.members.push_back(local);
      }
    if (!team.members.empty()) layout.hosted.push_back(std::move(team));
  }
  return layout;
}

// The parent's placement narrowed to the members: their places, and `lanes` of the parent's
// lanes, each driven by the member that drives it in the parent or else by a member that
// drives none yet.
Placement narrow(const Placement& parent, const std::vector<int>& members, int lanes) {
  Placement p;
  p.pinned = parent.pinned;
  for (std::size_t i = 0; i < members.size(); ++i) {
    ThreadPlacement t = parent.threads[static_cast<std::size_t>(members[i])];
    t.local_index = static_cast<int>(i);
    t.lanes.clear();
    p.threads.push_back(std::move(t));
  }
  for (int l = 0; l < lanes; ++l) {
    LanePlacement lane = parent.lanes[static_cast<std::size_t>(l)];
    const auto it = std::find(members.begin(), members.end(), lane.thread);
    int driver = it != members.end() ? static_cast<int>(it - members.begin()) : -1;
    if (driver < 0 || !p.threads[static_cast<std::size_t>(driver)].lanes.empty())
      for (std::size_t i = 0; i < p.threads.size(); ++i)
        if (p.threads[i].lanes.empty()) {
          driver = static_cast<int>(i);
          break;
        }
    if (driver < 0) driver = l % static_cast<int>(p.threads.size());
    lane.thread = driver;
    p.threads[static_cast<std::size_t>(driver)].lanes.push_back(l);
    p.lanes.push_back(lane);
  }
  return p;
}

}  // namespace

TeamImpl::TeamImpl(const TeamImpl& parent, MPI_Comm group_comm, const std::vector<int>& members,
                   int lanes)
    : topology_(parent.topology_) {
  comm_ = std::make_unique<ProcessComm>(group_comm);
  placement_ = narrow(parent.placement_, members, lanes);
  connect(parent.config_, parent.oversubscribed_, parent.serialized_);
}

std::pair<int, int> TeamImpl::shape_colour(int me, SplitType type) const {
  const int rank = global_rank(me);
  const auto& threads = placement_.threads;
  const ThreadPlacement& mine = threads[static_cast<std::size_t>(me)];
  switch (type) {
    case SplitType::process:
      return {first_rank(), rank};
    case SplitType::numa: {
      // The rank of the first thread of this process in my NUMA domain: unique per domain.
      int first = me;
      for (int t = 0; t < me; ++t)
        if (threads[static_cast<std::size_t>(t)].numa == mine.numa) {
          first = t;
          break;
        }
      return {global_rank(first), rank};
    }
    case SplitType::rail:
    default: {
      // My rail: the one of the lane I drive, else one of the lanes in my NUMA domain (spread
      // over them by index), else one of all lanes; a machine without rails counts lanes.
      std::vector<const LanePlacement*> near;
      for (const auto& lane : placement_.lanes)
        if (lane.thread == me) near = {&lane};
      if (near.empty())
        for (const auto& lane : placement_.lanes)
          if (lane.numa == mine.numa) near.push_back(&lane);
      if (near.empty())
        for (const auto& lane : placement_.lanes) near.push_back(&lane);
      const LanePlacement& lane = *near[static_cast<std::size_t>(me) % near.size()];
      return {lane.rail >= 0 ? lane.rail : lane.lane, rank};
    }
  }
}

void TeamImpl::build_sub_teams(const SplitLayout& layout) {
  split_teams_.assign(static_cast<std::size_t>(threads_), nullptr);
  split_index_ = layout.index_in_team;
  split_error_.clear();
  try {
    std::vector<std::shared_ptr<TeamImpl>> made;
    for (const SplitLayout::Hosted& team : layout.hosted) {
      MPI_Comm group = comm_->create_group(team.processes);
      try {
        made.push_back(std::make_shared<TeamImpl>(*this, group, team.members, team.lanes));
      } catch (...) {
        MPI_Comm_free(&group);
        throw;
      }
      MPI_Comm_free(&group);  // the sub-team has its own duplicates
    }
    for (int t = 0; t < threads_; ++t) {
      const int h = layout.team_of[static_cast<std::size_t>(t)];
      if (h >= 0) split_teams_[static_cast<std::size_t>(t)] = made[static_cast<std::size_t>(h)];
    }
  } catch (const Error& e) {
    split_error_ = e.what();
    split_error_code_ = static_cast<int>(e.code());
  } catch (const std::exception& e) {
    split_error_ = std::string("tlc: split: ") + e.what();
    split_error_code_ = static_cast<int>(Errc::mpi);
  }
}

Thread TeamImpl::split(Thread& me, int kind, int color, int key) {
  TeamImpl& team = *me.team_;
  const int local = me.local_index();
  const SplitWord mine{kind, color, key};
  std::vector<SplitWord> all(static_cast<std::size_t>(team.size()));
  me.allgather(std::span<const SplitWord>(&mine, 1), all);
  const SplitLayout layout = lay_out(all, team.roster(), team.lanes());
  if (local == 0) team.build_sub_teams(layout);
  // Publishes thread 0's work: no thread can be back in a split (and its allgather) before
  // every thread has taken its sub-team below.
  me.barrier();
  if (!team.split_error_.empty())
    throw Error(static_cast<Errc>(team.split_error_code_), team.split_error_);
  std::shared_ptr<TeamImpl> sub = std::move(team.split_teams_[static_cast<std::size_t>(local)]);
  if (!sub) return Thread();  // tlc::undefined
  return Thread(std::move(sub), team.split_index_[static_cast<std::size_t>(local)]);
}

void TeamImpl::leave_sub_team(int local_index, bool unwinding) noexcept {
  try {
    if (unwinding && !aborted()) abort(who(local_index) + " left its sub-team with an exception");
    rendezvous_.leave(local_index);
  } catch (...) {
    // Leaving only tells the others; there is nobody to tell of a failure to tell.
  }
}

}  // namespace tlc::detail

namespace tlc {

Thread Thread::split(int color, int key) {
  if (!team_ || !alive_->load(std::memory_order_relaxed)) throw_unusable();
  return detail::TeamImpl::split(*this, 0, color, key);
}

Thread Thread::split(SplitType type) {
  if (!team_ || !alive_->load(std::memory_order_relaxed)) throw_unusable();
  const auto [color, key] = team_->shape_colour(local_, type);
  return detail::TeamImpl::split(*this, 1 + static_cast<int>(type), color, key);
}

}  // namespace tlc
