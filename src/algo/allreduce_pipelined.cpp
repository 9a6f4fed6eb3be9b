// Pipelined allreduce across processes: the intra-process phases of chunk i+1 overlap the
// network phase of chunk i (Traff & Hunold, shared/seeds/003_153763b6ba621384.txt sec. 5, on
// pipelining the node-local and lane phases; Jain et al., 002_..., sec. III-E for the chunked
// shared buffer).
//
// Roles: drivers run the inter-process allreduce of each chunk (hierarchical: thread 0 on the
// process communicator; full_lane: each lane thread on its part of the chunk, on its lane).
// Workers reduce and copy out: the threads that drive nothing, or every thread when all of them
// drive a lane.
// Phases, per chunk i of C bytes (K chunks, two staging regions used alternately):
//   1. Workers wait until chunk i-2 has been copied out by everybody (its region is free),
//      reduce their slice of chunk i of all inputs into region i%2, post "reduced i".
//   2. Drivers wait for "reduced i" from all workers, run the MPI allreduce on (their part of)
//      the region, post "sent i".
//   3. Every thread waits for "sent i" from all drivers and copies chunk i into its own output,
//      post "copied i". Workers do this for chunk i-1 right after reducing chunk i, so their
//      reduction of chunk i overlaps the network phase of chunk i-1.
// Cost: (K + 1) * max(C/(W*beta_mem) + gamma*C*T/W, network(C)) instead of K times their sum
// (W workers, T threads).
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

bool pipeline_allreduce(std::size_t bytes) { return bytes >= 2 * pipeline_chunk_bytes; }

void allreduce_pipelined(TeamImpl& team, int me, const CallView& view, Algorithm algorithm) {
  const Call& c = view[me].call;
  const int threads = team.threads();
  const std::size_t e = c.type.size, n = view[me].count;
  const bool lanes = algorithm != Algorithm::hierarchical;
  const int L = lanes ? team.lanes() : 1;
  // A chunk is one pipeline unit per lane: each lane's MPI call keeps pipeline_chunk_bytes, so
  // more lanes do not mean more, smaller MPI calls (on a global-lock MPI, where lanes run one
  // after the other, 1 MiB chunks cut in 4 made 4 lanes twice as slow as 1 at 16 MiB).
  const std::size_t chunk =
      std::max<std::size_t>(1, pipeline_chunk_bytes * static_cast<std::size_t>(L) / e);
  const std::size_t chunks = (n + chunk - 1) / chunk;

  // Who drives, who works.
  auto drives = [&](int t) {
    if (!lanes) return t == 0;
    for (int l = 0; l < L; ++l)
      if (team.lane_thread(l) == t) return true;
    return false;
  };
  int drivers = 0;
  for (int t = 0; t < threads; ++t) drivers += drives(t) ? 1 : 0;
  const bool dedicated = drivers < threads;
  auto works = [&](int t) { return !dedicated || !drives(t); };
  int workers = 0, my_work = -1;
  for (int t = 0; t < threads; ++t) {
    if (t == me && works(t)) my_work = workers;
    workers += works(t) ? 1 : 0;
  }
  const bool driver = drives(me);

  team.grow_staging(me, 2 * chunk * e);
  std::byte* staging = team.staging();
  auto region = [&](std::size_t i) { return staging + (i % 2) * chunk * e; };
  auto chunk_size = [&](std::size_t i) { return std::min(chunk, n - i * chunk); };
  std::uint64_t& base = team.pipeline_chunks(me);
  const auto all = [](int) { return true; };

  auto inputs = input_pointers(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) inputs[static_cast<std::size_t>(t)] = contribution_of(view, t);
  auto reduce = [&](std::size_t i) {
    if (i >= 2) team.wait_posted(TeamImpl::copied, base + i - 1, all);
    const std::size_t offset = i * chunk * e;
    thread_local std::vector<const void*> shifted;
    shifted.resize(static_cast<std::size_t>(threads));
    for (std::size_t t = 0; t < shifted.size(); ++t)
      shifted[t] = static_cast<const std::byte*>(inputs[t]) + offset;
    void* out = region(i);
    reduce_slice_to_all(shifted, std::span<void* const>(&out, 1), e,
                        slice_of(chunk_size(i), e, my_work, workers), c.combine, c.op_object);
    team.post(me, TeamImpl::reduced, base + i + 1);
  };
  auto network = [&](std::size_t i) {
    team.wait_posted(TeamImpl::reduced, base + i + 1, works);
    try {
      if (!lanes) {
        team.comm().allreduce_in_place(region(i), chunk_size(i), c);
      } else {
        for (int l = 0; l < L; ++l) {
          if (team.lane_thread(l) != me) continue;
          const Slice s = slice_of(chunk_size(i), e, l, L);
          team.lane(l).allreduce_in_place(region(i) + s.begin * e, s.size(), c);
        }
      }
    } catch (...) {
      team.abort("an inter-process allreduce of a pipelined chunk failed");
      throw;
    }
    team.post(me, TeamImpl::sent, base + i + 1);
  };
  auto copy_out = [&](std::size_t i) {
    team.wait_posted(TeamImpl::sent, base + i + 1, drives);
    std::memcpy(static_cast<std::byte*>(c.recv) + i * chunk * e, region(i), chunk_size(i) * e);
    team.post(me, TeamImpl::copied, base + i + 1);
  };

  for (std::size_t i = 0; i < chunks; ++i) {
    if (my_work >= 0) reduce(i);
    if (driver) {
      network(i);
      copy_out(i);
    } else if (i >= 1) {
      copy_out(i - 1);
    }
  }
  if (!driver) copy_out(chunks - 1);
  base += chunks;
}

}  // namespace tlc::detail
