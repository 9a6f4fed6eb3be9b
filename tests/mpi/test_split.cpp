// Sub-teams (Thread::split): random colours and keys on teams with random options (uneven
// threads per process, lanes, forced algorithms), tlc::undefined, nested splits, and every
// collective on the sub-teams against the sequential references, called alternately with calls on
// the parent; a 2-D grid of rows and columns; the shapes (by_process, by_numa, by_rail); and the
// errors: threads that disagree about a split, bad colours, keys that interleave processes, a
// collective on no participant, a sub-team that outlives its parent. (A failure in a sub-team
// that spans processes ends the job: tlc_fault.subteam-peer-throws, tests/mpi/fault_program.cpp.)
#include <atomic>
#include <barrier>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi/random_calls.hpp"

namespace {

using namespace tlc_test;

// What every process computes of a split from every rank's colour and key: the members of each
// colour in (key, rank) order, and for each of this process's threads its sub-team's TeamCtx and
// its rank there.
struct Expected {
  std::map<int, std::vector<int>> members;  // colour -> parent ranks, in sub-team rank order
  int sub_rank(int parent_rank, int colour) const {
    const auto& m = members.at(colour);
    return static_cast<int>(std::find(m.begin(), m.end(), parent_rank) - m.begin());
  }
  // The TeamCtx of colour's sub-team seen from the process whose threads are [first, first +
  // threads) of the parent.
  TeamCtx ctx(int colour, int first, int threads) const {
    const auto& m = members.at(colour);
    TeamCtx c;
    c.size = static_cast<int>(m.size());
    c.first = -1;
    for (int i = 0; i < c.size; ++i)
      if (m[static_cast<std::size_t>(i)] >= first &&
          m[static_cast<std::size_t>(i)] < first + threads) {
        if (c.first < 0) c.first = i;
        ++c.threads;
      }
    if (c.first < 0) c.first = 0;
    return c;
  }
};

Expected expected_split(const std::vector<int>& colour, const std::vector<int>& key) {
  Expected e;
  for (std::size_t r = 0; r < colour.size(); ++r)
    if (colour[r] != tlc::undefined) e.members[colour[r]].push_back(static_cast<int>(r));
  for (auto& [c, m] : e.members)
    std::stable_sort(m.begin(), m.end(), [&](int a, int b) {
      return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)];
    });
  return e;
}

// Every process's thread count, from the team (the same on every process).
std::vector<int> threads_per_process(tlc::Team& team) {
  std::vector<int> all(static_cast<std::size_t>(team.processes()));
  const int mine = team.threads();
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

int process_of(const std::vector<int>& threads, int rank) {
  for (std::size_t p = 0; p < threads.size(); ++p) {
    if (rank < threads[p]) return static_cast<int>(p);
    rank -= threads[p];
  }
  return -1;
}

// Random colours (some undefined) and keys that keep each process's members of a colour
// consecutive, in a random order of the processes and of the threads inside each.
void random_split(Rng& rng, const std::vector<int>& threads, int size, std::vector<int>& colour,
                  std::vector<int>& key) {
  const int colours = 1 + static_cast<int>(rng.below(3));
  colour.assign(static_cast<std::size_t>(size), 0);
  key.assign(static_cast<std::size_t>(size), 0);
  // Per colour, a random permutation of the processes (Fisher-Yates).
  const std::size_t processes = threads.size();
  std::vector<int> process_order(processes * static_cast<std::size_t>(colours));
  for (std::size_t c = 0; c < static_cast<std::size_t>(colours); ++c) {
    int* order = &process_order[c * processes];
    for (std::size_t p = 0; p < processes; ++p) order[p] = static_cast<int>(p);
    for (std::size_t p = processes; p > 1; --p) std::swap(order[p - 1], order[rng.below(p)]);
  }
  for (int r = 0; r < size; ++r) {
    const auto u = static_cast<std::size_t>(r);
    colour[u] = rng.chance(10) ? tlc::undefined : 3 * static_cast<int>(rng.below(colours));
    const int p = process_of(threads, r);
    const int c = colour[u] == tlc::undefined ? 0 : colour[u] / 3;
    key[u] =
        process_order[static_cast<std::size_t>(c) * threads.size() + static_cast<std::size_t>(p)] *
            1024 +
        static_cast<int>(rng.below(8));
  }
}

TEST(Split, RandomSubTeamsMatchTheReferences) {
  Rng rng{20261128};
  const int rounds = world_size() <= 2 ? 30 : 12;
  int mismatches = 0;
  for (int round = 0; round < rounds; ++round) {
    std::string label;
    const tlc::TeamOptions o = random_options(rng, label);
    tlc::Team team(MPI_COMM_WORLD, o);
    const std::vector<int> threads = threads_per_process(team);
    const int size = team.size(), first = team.first_rank(), here = team.threads();
    std::vector<int> colour, key;
    random_split(rng, threads, size, colour, key);
    const Expected e = expected_split(colour, key);
    // The nested split of every sub-team: by parity of the sub-team rank, keys reversed inside
    // each process block are not allowed, so keys keep the order.
    std::map<int, Expected> nested;
    for (const auto& [c, m] : e.members) {
      std::vector<int> nc(m.size()), nk(m.size());
      for (std::size_t i = 0; i < m.size(); ++i) {
        nc[i] = static_cast<int>(i % 2);
        nk[i] = static_cast<int>(i);
      }
      nested[c] = expected_split(nc, nk);
    }
    // The calls: per sub-team, per nested sub-team, and on the parent, drawn in the same order on
    // every process.
    const int batch = 1 + static_cast<int>(rng.below(8));
    std::map<int, std::vector<Check>> sub_calls;
    std::map<std::pair<int, int>, std::vector<Check>> nested_calls;
    std::vector<Check> parent_calls;
    const TeamCtx parent_ctx{size, first, here};
    for (const auto& [c, m] : e.members) {
      const TeamCtx ctx = e.ctx(c, first, here);
      for (int i = 0; i < batch; ++i) sub_calls[c].push_back(random_call(ctx, rng, false));
      for (int parity = 0; parity < 2; ++parity) {
        if (!nested[c].members.count(parity)) continue;
        // The nested sub-team's members, as ranks of the sub-team: this process's are those of
        // the sub-team's ranks [ctx.first, ctx.first + ctx.threads).
        const TeamCtx inner = nested[c].ctx(parity, ctx.first, ctx.threads);
        nested_calls[{c, parity}].push_back(random_call(inner, rng, false));
      }
    }
    for (int i = 0; i < batch; ++i) parent_calls.push_back(random_call(parent_ctx, rng, false));

    std::vector<std::string> identity(static_cast<std::size_t>(here));
    team.run([&](tlc::Thread& me) {
      const auto r = static_cast<std::size_t>(me.rank());
      tlc::Thread sub = me.split(colour[r], key[r]);
      std::string& seen = identity[static_cast<std::size_t>(me.local_index())];
      if (colour[r] == tlc::undefined) {
        if (sub) seen = "a participant for tlc::undefined";
        for (const Check& c : parent_calls) c.body(me);
        return;
      }
      const int want = e.sub_rank(me.rank(), colour[r]);
      if (!sub || sub.rank() != want ||
          sub.size() != static_cast<int>(e.members.at(colour[r]).size()))
        seen = "sub-team rank " + std::to_string(sub ? sub.rank() : -1) + " of " +
               std::to_string(sub ? sub.size() : -1) + ", expected " + std::to_string(want);
      // The two teams alternately.
      const auto& mine = sub_calls.at(colour[r]);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        mine[i].body(sub);
        parent_calls[i].body(me);
      }
      tlc::Thread inner = sub.split(sub.rank() % 2, sub.rank());
      for (const Check& c : nested_calls.at({colour[r], sub.rank() % 2})) c.body(inner);
      sub.barrier();
    });
    for (int t = 0; t < here; ++t) {
      const int rank = first + t;
      const auto u = static_cast<std::size_t>(rank);
      std::vector<std::pair<std::string, std::string>> problems;
      if (!identity[static_cast<std::size_t>(t)].empty())
        problems.push_back({"split", identity[static_cast<std::size_t>(t)]});
      for (const Check& c : parent_calls) problems.push_back({"parent " + c.what, c.verdict(t)});
      if (colour[u] != tlc::undefined) {
        const TeamCtx ctx = e.ctx(colour[u], first, here);
        const int sub_local = e.sub_rank(rank, colour[u]) - ctx.first;
        for (const Check& c : sub_calls.at(colour[u]))
          problems.push_back({"sub-team " + c.what, c.verdict(sub_local)});
        const int sub_rank = e.sub_rank(rank, colour[u]);
        const int parity = sub_rank % 2;
        const TeamCtx inner = nested.at(colour[u]).ctx(parity, ctx.first, ctx.threads);
        const int inner_local = nested.at(colour[u]).sub_rank(sub_rank, parity) - inner.first;
        for (const Check& c : nested_calls.at({colour[u], parity}))
          problems.push_back({"nested " + c.what, c.verdict(inner_local)});
      }
      for (const auto& [what, problem] : problems)
        if (!problem.empty() && mismatches++ < 25)
          ADD_FAILURE() << "round " << round << " (" << label << "), rank " << rank << ", colour "
                        << colour[u] << ", key " << key[u] << ": " << what << ": " << problem;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// A 2-D grid of the team's ranks (rows of `columns` ranks): every thread holds its row and its
// column and alternates between them; where a row or a column crosses processes, some
// processes host members of two sub-teams of each kind.
TEST(Split, GridRowsAndColumns) {
  for (const Shape& shape : shapes()) {
    tlc::Team team(MPI_COMM_WORLD, test_options(shape.threads_of(world_rank())));
    const int size = team.size();
    const int columns = size >= 4 ? (size % 3 == 0 ? 3 : 2) : 1;
    std::vector<std::string> errors(static_cast<std::size_t>(team.threads()));
    team.run([&](tlc::Thread& me) {
      const int row = me.rank() / columns, column = me.rank() % columns;
      tlc::Thread across = me.split(row, column);
      tlc::Thread down = me.split(column, row);
      std::string& error = errors[static_cast<std::size_t>(me.local_index())];
      for (int i = 0; i < 3; ++i) {
        // Row sum of ranks, column maximum, a row allgather (ranks in column order), a column
        // alltoall (the transpose of an FFT-like step).
        const long row_sum = across.allreduce(static_cast<long>(me.rank() + i));
        long want = 0;
        int in_row = 0;
        for (int r = row * columns; r < std::min(size, (row + 1) * columns); ++r, ++in_row)
          want += r + i;
        if (row_sum != want) error += "row sum " + std::to_string(row_sum) + " ";
        const int column_max = down.allreduce(me.rank(), tlc::max{});
        int last = column;
        while (last + columns < size) last += columns;
        if (column_max != last) error += "column max " + std::to_string(column_max) + " ";
        std::vector<int> everyone(static_cast<std::size_t>(across.size()));
        across.allgather(std::vector<int>{me.rank()}, everyone);
        for (int j = 0; j < across.size(); ++j)
          if (everyone[static_cast<std::size_t>(j)] != row * columns + j) error += "row allgather ";
        std::vector<int> send(static_cast<std::size_t>(down.size())), recv(send.size());
        for (int j = 0; j < down.size(); ++j)
          send[static_cast<std::size_t>(j)] = 1000 * me.rank() + j;
        down.alltoall(send, recv);
        for (int j = 0; j < down.size(); ++j)
          if (recv[static_cast<std::size_t>(j)] != 1000 * (j * columns + column) + down.rank())
            error += "column alltoall ";
        if (in_row != across.size()) error += "row size ";
      }
    });
    for (std::size_t t = 0; t < errors.size(); ++t)
      EXPECT_EQ(errors[t], "") << shape.name << ", thread " << t << " of process " << world_rank();
  }
}

// With one thread per process the sub-teams have the ranks of MPI_Comm_split of the processes
// with the same colours and keys (MPI everywhere): every collective on a sub-team against the same
// MPI collective on that communicator, bit for bit (integers: no rounding to differ), all fifteen.
TEST(Split, MatchesMpiCommSplit) {
  tlc::TeamOptions o = test_options(1);
  o.stats = true;
  tlc::Team team(MPI_COMM_WORLD, o);
  const int rank = world_rank(), size = world_size();
  const int colour = size > 2 ? rank % 2 : 0, key = -rank;  // keys reverse the order
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, colour, key, &comm);
  int n = 0, me_in = 0;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me_in);
  const int count = 37;
  std::vector<long> in(static_cast<std::size_t>(count * n));
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<long>(mix(static_cast<std::uint64_t>(rank) * 1000003 + i) % 100000) - 50000;
  // allgatherv: rank i of the sub-team contributes i + 1 elements.
  std::vector<int> vcounts(static_cast<std::size_t>(n)), vdispls(static_cast<std::size_t>(n));
  int vtotal = 0;
  for (int i = 0; i < n; ++i) {
    vcounts[static_cast<std::size_t>(i)] = i + 1;
    vdispls[static_cast<std::size_t>(i)] = vtotal;
    vtotal += i + 1;
  }
  std::map<std::string, std::vector<long>> mpi, ours;
  auto out = [&](std::size_t elements) { return std::vector<long>(elements, -7); };
  {
    auto b = std::vector<long>(in.begin(), in.begin() + count);
    MPI_Bcast(b.data(), count, MPI_LONG, n - 1, comm);
    mpi["bcast"] = b;
    auto r = out(count);
    MPI_Reduce(in.data(), r.data(), count, MPI_LONG, MPI_SUM, n / 2, comm);
    mpi["reduce"] = me_in == n / 2 ? r : std::vector<long>();
    auto a = out(count);
    MPI_Allreduce(in.data(), a.data(), count, MPI_LONG, MPI_MAX, comm);
    mpi["allreduce"] = a;
    auto g = out(static_cast<std::size_t>(count * n));
    MPI_Allgather(in.data(), count, MPI_LONG, g.data(), count, MPI_LONG, comm);
    mpi["allgather"] = g;
    auto t = out(static_cast<std::size_t>(count * n));
    MPI_Alltoall(in.data(), count, MPI_LONG, t.data(), count, MPI_LONG, comm);
    mpi["alltoall"] = t;
    auto sc = out(count);
    MPI_Scan(in.data(), sc.data(), count, MPI_LONG, MPI_SUM, comm);
    mpi["scan"] = sc;
    auto rs = out(count);
    MPI_Reduce_scatter_block(in.data(), rs.data(), count, MPI_LONG, MPI_SUM, comm);
    mpi["reduce_scatter_block"] = rs;
    auto ga = out(static_cast<std::size_t>(count * n));
    MPI_Gather(in.data(), count, MPI_LONG, ga.data(), count, MPI_LONG, 0, comm);
    mpi["gather"] = me_in == 0 ? ga : std::vector<long>();
    auto sa = out(count);
    MPI_Scatter(in.data(), count, MPI_LONG, sa.data(), count, MPI_LONG, n - 1, comm);
    mpi["scatter"] = sa;
    auto ex = out(count);
    MPI_Exscan(in.data(), ex.data(), count, MPI_LONG, MPI_SUM, comm);
    mpi["exscan"] = me_in == 0 ? std::vector<long>() : ex;  // undefined at rank 0 in MPI
    auto gv = out(static_cast<std::size_t>(vtotal));
    MPI_Allgatherv(in.data(), vcounts[static_cast<std::size_t>(me_in)], MPI_LONG, gv.data(),
                   vcounts.data(), vdispls.data(), MPI_LONG, comm);
    mpi["allgatherv"] = gv;
    auto gvr = out(static_cast<std::size_t>(vtotal));
    MPI_Gatherv(in.data(), vcounts[static_cast<std::size_t>(me_in)], MPI_LONG, gvr.data(),
                vcounts.data(), vdispls.data(), MPI_LONG, n - 1, comm);
    mpi["gatherv"] = me_in == n - 1 ? gvr : std::vector<long>();
    auto sv = out(static_cast<std::size_t>(me_in + 1));
    MPI_Scatterv(in.data(), vcounts.data(), vdispls.data(), MPI_LONG, sv.data(), me_in + 1,
                 MPI_LONG, 0, comm);
    mpi["scatterv"] = sv;
    // alltoallv: rank i sends i + 1 elements to every rank (each rank's counts its own).
    std::vector<int> a_send(static_cast<std::size_t>(n), me_in + 1), a_sdispl(a_send.size()),
        a_recv(a_send.size()), a_rdispl(a_send.size());
    for (int i = 0; i < n; ++i) {
      a_sdispl[static_cast<std::size_t>(i)] = i * (me_in + 1);
      a_recv[static_cast<std::size_t>(i)] = i + 1;
      a_rdispl[static_cast<std::size_t>(i)] = vdispls[static_cast<std::size_t>(i)];
    }
    auto av = out(static_cast<std::size_t>(vtotal));
    MPI_Alltoallv(in.data(), a_send.data(), a_sdispl.data(), MPI_LONG, av.data(), a_recv.data(),
                  a_rdispl.data(), MPI_LONG, comm);
    mpi["alltoallv"] = av;
    MPI_Barrier(comm);
  }
  tlc::TeamStats stats;
  team.run([&](tlc::Thread& me) {
    tlc::Thread sub = me.split(colour, key);
    if (sub.size() != n || sub.rank() != me_in) {
      ours["identity"] = {sub.size(), sub.rank()};
      return;
    }
    const std::span<const long> mine(in.data(), static_cast<std::size_t>(count));
    const std::span<const long> all(in);
    auto b = std::vector<long>(in.begin(), in.begin() + count);
    sub.bcast(b, n - 1);
    ours["bcast"] = b;
    auto r = out(count);
    sub.reduce(mine, r, n / 2);
    ours["reduce"] = sub.rank() == n / 2 ? r : std::vector<long>();
    auto a = out(count);
    sub.allreduce(mine, a, tlc::max{});
    ours["allreduce"] = a;
    auto g = out(static_cast<std::size_t>(count * n));
    sub.allgather(mine, g);
    ours["allgather"] = g;
    auto t = out(static_cast<std::size_t>(count * n));
    sub.alltoall(all, t);
    ours["alltoall"] = t;
    auto sc = out(count);
    sub.scan(mine, sc);
    ours["scan"] = sc;
    auto rs = out(count);
    sub.reduce_scatter_block(all, rs);
    ours["reduce_scatter_block"] = rs;
    auto ga = out(static_cast<std::size_t>(count * n));
    sub.gather(mine, ga, 0);
    ours["gather"] = sub.rank() == 0 ? ga : std::vector<long>();
    auto sa = out(count);
    sub.scatter(all, sa, n - 1);
    ours["scatter"] = sa;
    auto ex = out(count);
    sub.exscan(mine, ex);
    ours["exscan"] = sub.rank() == 0 ? std::vector<long>() : ex;
    auto gv = out(static_cast<std::size_t>(vtotal));
    const std::vector<std::size_t> counts(vcounts.begin(), vcounts.end());
    const std::vector<std::size_t> displs(vdispls.begin(), vdispls.end());
    sub.allgatherv(std::span<const long>(in.data(), counts[static_cast<std::size_t>(sub.rank())]),
                   gv, counts, displs);
    ours["allgatherv"] = gv;
    auto gvr = out(static_cast<std::size_t>(vtotal));
    sub.gatherv(std::span<const long>(in.data(), counts[static_cast<std::size_t>(sub.rank())]), gvr,
                counts, displs, n - 1);
    ours["gatherv"] = sub.rank() == n - 1 ? gvr : std::vector<long>();
    auto sv = out(static_cast<std::size_t>(sub.rank() + 1));
    sub.scatterv(all, counts, displs, sv, 0);
    ours["scatterv"] = sv;
    const auto un = static_cast<std::size_t>(n), mine_n = static_cast<std::size_t>(sub.rank() + 1);
    std::vector<std::size_t> a_send(un, mine_n), a_sdispl(un);
    for (std::size_t i = 0; i < un; ++i) a_sdispl[i] = i * mine_n;
    auto av = out(static_cast<std::size_t>(vtotal));
    sub.alltoallv(std::span<const long>(in.data(), un * mine_n), a_send, a_sdispl, av, counts,
                  displs);
    ours["alltoallv"] = av;
    sub.barrier();
    stats = sub.stats();
  });
  MPI_Comm_free(&comm);
  EXPECT_EQ(ours.count("identity"), 0u) << "sub-team size / rank " << ours["identity"][0] << " / "
                                        << ours["identity"][1] << ", MPI " << n << " / " << me_in;
  for (const auto& [what, expected] : mpi) EXPECT_EQ(ours[what], expected) << what;
  // The sub-team's own telemetry: its fifteen calls, nothing of the parent's split.
  std::uint64_t calls = 0;
  for (const auto& c : stats.collectives) calls += c.calls;
  EXPECT_TRUE(stats.enabled);
  EXPECT_EQ(calls, 15u);
}

// The nonblocking and persistent forms on a sub-team, overlapping a call on the parent.
TEST(Split, NonblockingAndPersistentOnASubTeam) {
  for (const Shape& shape : shapes()) {
    tlc::Team team(MPI_COMM_WORLD, test_options(shape.threads_of(world_rank())));
    const int size = team.size();
    std::vector<std::string> errors(static_cast<std::size_t>(team.threads()));
    team.run([&](tlc::Thread& me) {
      std::string& error = errors[static_cast<std::size_t>(me.local_index())];
      const int parity = me.rank() % 2;
      tlc::Thread sub = me.split(parity, me.rank());
      // The sum over the sub-team of (rank + round) for each element i: ranks of one parity.
      auto expected = [&](int round, int i) {
        long s = 0;
        for (int r = parity; r < size; r += 2) s += r + round + i;
        return s;
      };
      std::vector<long> send(5), recv(5);
      for (int i = 0; i < 5; ++i) send[static_cast<std::size_t>(i)] = me.rank() + i;
      tlc::Request request = sub.iallreduce(send, recv);
      const long total = me.allreduce(1L);  // the parent, while the sub-team's call is in flight
      request.wait();
      if (total != size) error += "parent ";
      for (int i = 0; i < 5; ++i)
        if (recv[static_cast<std::size_t>(i)] != expected(0, i)) error += "iallreduce ";
      tlc::Persistent every = sub.allreduce_init(send, recv);
      for (int round = 1; round <= 3; ++round) {
        for (int i = 0; i < 5; ++i) send[static_cast<std::size_t>(i)] = me.rank() + round + i;
        every.start();
        every.wait();
        for (int i = 0; i < 5; ++i)
          if (recv[static_cast<std::size_t>(i)] != expected(round, i))
            error += "persistent round " + std::to_string(round) + " ";
      }
    });
    for (std::size_t t = 0; t < errors.size(); ++t)
      EXPECT_EQ(errors[t], "") << shape.name << ", thread " << t << " of process " << world_rank();
  }
}

// The rail a thread's split(tlc::by_rail) joins, as docs/design.md section 13 defines it: the
// lane it drives, else one of its NUMA domain's lanes by its index; lanes stand for rails on a
// machine without any.
int rail_of(const tlc::Placement& placement, int t) {
  const auto id = [](const tlc::LanePlacement& lane) {
    return lane.rail >= 0 ? lane.rail : lane.lane;
  };
  for (const auto& lane : placement.lanes)
    if (lane.thread == t) return id(lane);
  std::vector<const tlc::LanePlacement*> near;
  for (const auto& lane : placement.lanes)
    if (lane.numa == placement.threads[static_cast<std::size_t>(t)].numa) near.push_back(&lane);
  if (near.empty())
    for (const auto& lane : placement.lanes) near.push_back(&lane);
  return id(*near[static_cast<std::size_t>(t) % near.size()]);
}

TEST(Split, ShapesOfTheTeam) {
  // Four threads over two NUMA domains of a synthetic machine in one process, three in the
  // others; two lanes.
  const int here = world_rank() == 0 ? 4 : 3;
  tlc::TeamOptions o = test_options(here);
  o.topology = numa_topology(4);
  o.lanes = 2;
  tlc::Team team(MPI_COMM_WORLD, o);
  const int first = team.first_rank();
  const tlc::Placement& placement = team.placement();
  std::vector<std::string> errors(static_cast<std::size_t>(here));
  team.run([&](tlc::Thread& me) {
    std::string& error = errors[static_cast<std::size_t>(me.local_index())];
    tlc::Thread mine = me.split(tlc::by_process);
    if (mine.size() != here || mine.processes() != 1 || mine.rank() != me.local_index())
      error += "by_process ";
    if (mine.allreduce(me.rank()) != here * first + here * (here - 1) / 2)
      error += "by_process sum ";
    tlc::Thread numa = me.split(tlc::by_numa);
    const int my_numa = placement.threads[static_cast<std::size_t>(me.local_index())].numa;
    int same_numa = 0, numa_rank = 0;
    for (int t = 0; t < here; ++t)
      if (placement.threads[static_cast<std::size_t>(t)].numa == my_numa) {
        if (t < me.local_index()) ++numa_rank;
        ++same_numa;
      }
    if (numa.size() != same_numa || numa.processes() != 1 || numa.rank() != numa_rank)
      error += "by_numa ";
    if (numa.allreduce(my_numa, tlc::min{}) != my_numa ||
        numa.allreduce(my_numa, tlc::max{}) != my_numa)
      error += "by_numa members ";
    tlc::Thread rail = me.split(tlc::by_rail);
    const int my_rail = rail_of(placement, me.local_index());
    if (rail.allreduce(my_rail, tlc::min{}) != my_rail ||
        rail.allreduce(my_rail, tlc::max{}) != my_rail)
      error += "by_rail members ";
    std::vector<int> count(2, 0);
    count[static_cast<std::size_t>(my_rail)] = 1;
    me.allreduce(count);
    if (rail.size() != count[static_cast<std::size_t>(my_rail)]) error += "by_rail size ";
  });
  for (std::size_t t = 0; t < errors.size(); ++t)
    EXPECT_EQ(errors[t], "") << "thread " << t << " of process " << world_rank();
}

std::string code_name(tlc::Errc code) {
  switch (code) {
    case tlc::Errc::mismatch:
      return "mismatch";
    case tlc::Errc::invalid_argument:
      return "invalid_argument";
    case tlc::Errc::unsupported:
      return "unsupported";
    default:
      return tlc::to_string(code);
  }
}

// Runs body on a team of `threads` per process with static leaders and returns what each thread
// threw ("" for nothing).
std::vector<std::string> errors_of(int threads, const std::function<void(tlc::Thread&)>& body) {
  tlc::Team team(MPI_COMM_WORLD, static_options(threads));
  std::vector<std::string> thrown(static_cast<std::size_t>(threads));
  try {
    team.run([&](tlc::Thread& me) {
      try {
        body(me);
      } catch (const tlc::Error& e) {
        thrown[static_cast<std::size_t>(me.local_index())] = code_name(e.code()) + ": " + e.what();
      }
    });
  } catch (...) {
  }
  return thrown;
}

TEST(Split, ThreadsThatDisagreeFailAlike) {
  const auto thrown = errors_of(3, [](tlc::Thread& me) {
    if (me.rank() == 1)
      (void)me.split(tlc::by_process);
    else
      (void)me.split(0, me.rank());
  });
  for (const auto& t : thrown) {
    EXPECT_NE(t.find("mismatch"), std::string::npos) << t;
    EXPECT_NE(t.find("rank 1 split(tlc::by_process)"), std::string::npos) << t;
  }
}

TEST(Split, BadColourFailsEveryThread) {
  const auto thrown =
      errors_of(2, [](tlc::Thread& me) { (void)me.split(me.rank() == me.size() - 1 ? -3 : 0, 0); });
  for (const auto& t : thrown) {
    EXPECT_NE(t.find("invalid_argument"), std::string::npos) << t;
    EXPECT_NE(t.find("colour -3"), std::string::npos) << t;
  }
}

TEST(Split, KeysThatInterleaveProcessesAreUnsupported) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  // Ranks ordered by local index first: thread 0 of every process, then thread 1 of every one.
  const auto thrown = errors_of(
      2, [](tlc::Thread& me) { (void)me.split(0, me.local_index() * 100 + me.process()); });
  for (const auto& t : thrown) {
    EXPECT_NE(t.find("unsupported"), std::string::npos) << t;
    EXPECT_NE(t.find("process-major"), std::string::npos) << t;
  }
}

TEST(Split, UndefinedIsNoParticipant) {
  const auto thrown = errors_of(2, [](tlc::Thread& me) {
    tlc::Thread sub = me.split(me.local_index() == 0 ? tlc::undefined : 1, 0);
    if (me.local_index() == 0) {
      if (sub) throw std::logic_error("a participant for tlc::undefined");
      sub.barrier();  // throws: no participant
    }
  });
  EXPECT_NE(thrown[0].find("no participant"), std::string::npos) << thrown[0];
  EXPECT_EQ(thrown[1], "");
}

// The sub-team needs nothing of its parent: made by attached threads, used after the parent
// Team is destroyed.
TEST(Split, SubTeamOutlivesItsParent) {
  const int threads = 2;
  auto team = std::make_unique<tlc::Team>(MPI_COMM_WORLD, test_options(threads));
  std::barrier meet(threads + 1);
  std::vector<long> sums(threads, -1);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      try {
        tlc::Thread sub;
        {
          tlc::Thread me = team->attach(t);
          tlc::Thread made = me.split(0, -me.rank());  // reversed: the last rank first
          sub = std::move(made);
        }
        meet.arrive_and_wait();  // the parent's participants are gone
        meet.arrive_and_wait();  // and so is the parent
        sums[static_cast<std::size_t>(t)] = sub.allreduce(static_cast<long>(sub.rank()) * 10);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
        meet.arrive_and_wait();
        meet.arrive_and_wait();
      }
    });
  meet.arrive_and_wait();
  team.reset();
  meet.arrive_and_wait();
  for (auto& w : workers) w.join();
  const long n = threads * world_size();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(errors[static_cast<std::size_t>(t)], "");
    EXPECT_EQ(sums[static_cast<std::size_t>(t)], 10 * n * (n - 1) / 2);
  }
}

}  // namespace
