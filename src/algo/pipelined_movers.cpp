// Pipelined movers across processes: allgather, gather, scatter, alltoall and
// reduce_scatter_block of large blocks, in chunks, through the engine of algo/pipeline.hpp
// (Traff & Hunold, [TraffHunold] sec. 5). Non-v forms only; the
// v-variants run the unpipelined compositions of algo/hierarchical.cpp.
//
// Chunk i is elements [iC, iC + C) of every rank block (of every destination block for
// alltoall and reduce_scatter_block), so chunk i of a mover is itself a mover: the same MPI
// collective on pieces of C elements instead of blocks of n. C is the team's chunk bytes per
// lane over the number of ranks N, so that one lane's MPI call moves about one chunk size.
// Region layout (two staging regions used in turn): lane l carries part l of the chunk
// (Pipeline::lane_part); the region holds, lane part after lane part, one piece per rank
// packed in rank order, so that every process's pieces of one lane part are contiguous and one
// MPI call per lane moves them:
//   region + (ranks * part.begin + index * part.size()) * e
// Per collective (T threads here, P processes):
//   allgather: produce: the workers copy the local threads' pieces in; network:
//              MPI_Allgatherv in place, process p's T_p pieces at its first rank;
//              consume: each thread copies all N pieces into its output.
//   gather:    as allgather, MPI_Gatherv to the root's process; only the root consumes.
//   scatter:   produce: the root process's workers copy the N pieces of the root's send buffer
//              in; network: MPI_Scatterv from the root's process; consume: each thread copies
//              its own piece out.
//   alltoall:  produce: every local thread's piece for every rank, ordered [destination
//              process][local sender][destination rank]; network: MPI_Alltoallv into a second
//              region ordered [source rank][local receiver]; consume: each thread copies the N
//              pieces addressed to it.
//   reduce_scatter_block: produce: the workers reduce their slice of the chunk of every rank
//              block over the local threads (rank order) into the region; network:
//              MPI_Reduce_scatter (process p's T_p pieces) into a second region of T pieces;
//              consume: each thread copies its own piece out.
// Nobody reads another thread's output, and every input has been read once the last chunk is
// on its way, so no closing rendezvous is needed.
// Cost per chunk as the unpipelined composition on C-element pieces; in all
// (K + 1) * max(intra(C), network(C)) instead of K times their sum, plus N * L copies of at
// least 64 bytes per thread and chunk.
#include <cstring>
#include <vector>

#include "algo/algorithms.hpp"
#include "algo/pipeline.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

// A region holding `ranks` pieces per lane part, as laid out above.
struct Packed {
  std::byte* base;
  std::size_t ranks;
  std::size_t e;
  std::byte* piece(Slice part, std::size_t index) const {
    return base + (ranks * part.begin + index * part.size()) * e;
  }
};

// Per-process byte counts and displacements of one lane part, process p holding
// threads_of(p) * per_rank pieces from index first_rank_of(p) * per_rank on.
struct PartLayout {
  std::vector<MPI_Count> bytes;
  std::vector<MPI_Aint> displs;
  void build(const TeamImpl& team, std::size_t piece_bytes, std::size_t per_rank) {
    const auto P = static_cast<std::size_t>(team.processes());
    bytes.resize(P);
    displs.resize(P);
    for (std::size_t p = 0; p < P; ++p) {
      const auto q = static_cast<int>(p);
      bytes[p] = static_cast<MPI_Count>(static_cast<std::size_t>(team.threads_of(q)) * per_rank *
                                        piece_bytes);
      displs[p] = static_cast<MPI_Aint>(static_cast<std::size_t>(team.first_rank_of(q)) * per_rank *
                                        piece_bytes);
    }
  }
};

void copy_part(void* to, const void* from, std::size_t bytes) {
  if (bytes && to != from) std::memcpy(to, from, bytes);
}

class MoverPipeline {
 public:
  MoverPipeline(TeamImpl& team, int me, const CallView& view, const Plan& plan)
      : team_(team),
        me_(me),
        view_(view),
        c_(view[me].call),
        e_(c_.type.size),
        n_(view[me].count),
        N_(static_cast<std::size_t>(team.size())),
        T_(static_cast<std::size_t>(team.threads())),
        first_(static_cast<std::size_t>(team.first_rank())),
        pipe_(team, me, e_, n_, plan, N_) {}

  void run() {
    switch (c_.collective) {
      case Collective::allgather:
        return allgather();
      case Collective::gather:
        return gather();
      case Collective::scatter:
        return scatter();
      case Collective::alltoall:
        return alltoall();
      case Collective::reduce_scatter_block:
        return reduce_scatter_block();
      default:
        return;
    }
  }

 private:
  // Two regions of `bytes` each, used in turn by the chunks.
  std::byte* regions(std::size_t bytes) {
    team_.grow_staging(me_, 2 * bytes);
    region_bytes_ = bytes;
    return team_.staging();
  }
  std::byte* region(std::size_t i) const { return team_.staging() + (i % 2) * region_bytes_; }
  // Region i as N rank pieces per lane part (allgather, gather, scatter).
  Packed rank_packed(std::size_t i) const { return {region(i), N_, e_}; }
  std::size_t chunk_bytes() const { return pipe_.chunk_elements() * e_; }
  // Byte offset of lane part `part` of chunk i inside a rank block.
  std::size_t at(std::size_t i, Slice part) const { return pipe_.offset(i) + part.begin * e_; }
  template <class F>
  void for_parts(std::size_t i, F&& f) const {
    for (int l = 0; l < pipe_.lanes(); ++l) f(pipe_.lane_part(i, l));
  }
  // Runs this worker's share of the copies of `plan`.
  void run_share(const CopyPlan& plan) const { plan.run_share(pipe_.worker(), pipe_.workers()); }

  // The local threads' pieces of chunk i into their rank's place in a rank-packed region.
  void pack_local(std::size_t i, const Packed& r) {
    thread_local CopyPlan plan;
    plan.clear();
    for (std::size_t t = 0; t < T_; ++t)
      for_parts(i, [&](Slice part) {
        plan.add(contribution_of(view_, static_cast<int>(t)) + at(i, part), part.size() * e_,
                 r.piece(part, first_ + t));
      });
    run_share(plan);
  }
  // Every rank's piece of chunk i out of a rank-packed region into rank blocks of out.
  void unpack_all(std::size_t i, const Packed& r, std::byte* out, std::size_t skip) const {
    for (std::size_t rank = 0; rank < N_; ++rank) {
      if (rank == skip) continue;
      for_parts(i, [&](Slice part) {
        copy_part(out + rank * n_ * e_ + at(i, part), r.piece(part, rank), part.size() * e_);
      });
    }
  }
  std::size_t my_rank() const { return first_ + static_cast<std::size_t>(me_); }
  static constexpr std::size_t none = ~std::size_t{0};

  void allgather() {
    regions(N_ * chunk_bytes());
    thread_local PartLayout layout;
    pipe_.run([&](std::size_t i) { pack_local(i, rank_packed(i)); },
              [&](std::size_t i, ProcessComm& comm, Slice part) {
                layout.build(team_, part.size() * e_, 1);
                comm.allgatherv_in_place(rank_packed(i).piece(part, 0), layout.bytes,
                                         layout.displs);
              },
              [&](std::size_t i) {
                unpack_all(i, rank_packed(i), static_cast<std::byte*>(c_.recv),
                           c_.in_place ? my_rank() : none);
              },
              false);
  }

  void gather() {
    regions(N_ * chunk_bytes());
    const int root_process = team_.process_of(c_.root);
    const bool here = root_process == team_.process();
    const bool root = static_cast<std::size_t>(c_.root) == my_rank();
    thread_local PartLayout layout;
    pipe_.run([&](std::size_t i) { pack_local(i, rank_packed(i)); },
              [&](std::size_t i, ProcessComm& comm, Slice part) {
                const Packed r = rank_packed(i);
                if (here) {
                  layout.build(team_, part.size() * e_, 1);
                  comm.gatherv(nullptr, 0, r.piece(part, 0), layout.bytes, layout.displs,
                               root_process);
                } else {
                  comm.gatherv(r.piece(part, first_), T_ * part.size() * e_, nullptr, {}, {},
                               root_process);
                }
              },
              [&](std::size_t i) {
                if (root)
                  unpack_all(i, rank_packed(i), static_cast<std::byte*>(c_.recv),
                             c_.in_place ? my_rank() : none);
              },
              false);
  }

  void scatter() {
    regions(N_ * chunk_bytes());
    const int root_process = team_.process_of(c_.root);
    const bool here = root_process == team_.process();
    const bool keep = static_cast<std::size_t>(c_.root) == my_rank() && c_.in_place;
    thread_local PartLayout layout;
    pipe_.run(
        [&](std::size_t i) {
          if (!here) return;
          const std::byte* source = contribution_of(view_, c_.root - team_.first_rank());
          const Packed r = rank_packed(i);
          thread_local CopyPlan plan;
          plan.clear();
          for (std::size_t rank = 0; rank < N_; ++rank)
            for_parts(i, [&](Slice part) {
              plan.add(source + rank * n_ * e_ + at(i, part), part.size() * e_,
                       r.piece(part, rank));
            });
          run_share(plan);
        },
        [&](std::size_t i, ProcessComm& comm, Slice part) {
          const Packed r = rank_packed(i);
          if (here) {
            layout.build(team_, part.size() * e_, 1);
            comm.scatterv(r.piece(part, 0), layout.bytes, layout.displs, nullptr, 0, root_process);
          } else {
            comm.scatterv(nullptr, {}, {}, r.piece(part, first_), T_ * part.size() * e_,
                          root_process);
          }
        },
        [&](std::size_t i) {
          if (keep) return;
          const Packed r = rank_packed(i);
          for_parts(i, [&](Slice part) {
            copy_part(static_cast<std::byte*>(c_.recv) + at(i, part), r.piece(part, my_rank()),
                      part.size() * e_);
          });
        },
        false);
  }

  void alltoall() {
    // Send side [destination process q][local sender s][destination rank of q], receive side
    // [source rank][local receiver]: T * N pieces each.
    const std::size_t side = T_ * N_ * chunk_bytes();
    regions(2 * side);
    auto sent = [&](std::size_t i) { return Packed{region(i), T_ * N_, e_}; };
    auto received = [&](std::size_t i) { return Packed{region(i) + side, T_ * N_, e_}; };
    const int P = team_.processes();
    thread_local std::vector<std::size_t> send_index;  // [s * N + t]: piece index, sender s to t
    send_index.resize(T_ * N_);
    for (int q = 0; q < P; ++q) {
      const auto first_q = static_cast<std::size_t>(team_.first_rank_of(q));
      const auto threads_q = static_cast<std::size_t>(team_.threads_of(q));
      for (std::size_t s = 0; s < T_; ++s)
        for (std::size_t t = 0; t < threads_q; ++t)
          send_index[s * N_ + first_q + t] = T_ * first_q + s * threads_q + t;
    }
    thread_local PartLayout send_layout, recv_layout;
    pipe_.run(
        [&](std::size_t i) {
          const Packed r = sent(i);
          thread_local CopyPlan plan;
          plan.clear();
          for (std::size_t s = 0; s < T_; ++s) {
            const std::byte* source = contribution_of(view_, static_cast<int>(s));
            for (std::size_t t = 0; t < N_; ++t)
              for_parts(i, [&](Slice part) {
                plan.add(source + t * n_ * e_ + at(i, part), part.size() * e_,
                         r.piece(part, send_index[s * N_ + t]));
              });
          }
          run_share(plan);
        },
        [&](std::size_t i, ProcessComm& comm, Slice part) {
          // To process q: T * T_q pieces; from process p: T_p * T pieces.
          const std::size_t piece = part.size() * e_;
          send_layout.build(team_, piece, T_);
          recv_layout.build(team_, piece, T_);
          comm.alltoallv(sent(i).piece(part, 0), send_layout.bytes, send_layout.displs,
                         received(i).piece(part, 0), recv_layout.bytes, recv_layout.displs);
        },
        [&](std::size_t i) {
          const Packed r = received(i);
          auto* out = static_cast<std::byte*>(c_.recv);
          for (std::size_t s = 0; s < N_; ++s)
            for_parts(i, [&](Slice part) {
              copy_part(out + s * n_ * e_ + at(i, part),
                        r.piece(part, s * T_ + static_cast<std::size_t>(me_)), part.size() * e_);
            });
        },
        false);
  }

  void reduce_scatter_block() {
    // N pieces reduced over the local threads, then this process's T pieces of the reduction.
    const std::size_t reduced_bytes = N_ * chunk_bytes();
    regions(reduced_bytes + T_ * chunk_bytes());
    auto reduced = [&](std::size_t i) { return Packed{region(i), N_, e_}; };
    auto mine = [&](std::size_t i) { return Packed{region(i) + reduced_bytes, T_, e_}; };
    thread_local std::vector<MPI_Count> counts;
    pipe_.run(
        [&](std::size_t i) {
          const Slice work = pipe_.work_slice(i);
          const Packed r = reduced(i);
          auto inputs = input_pointers(T_);
          for_parts(i, [&](Slice part) {
            const Slice s{std::max(work.begin, part.begin), std::min(work.end, part.end)};
            if (s.begin >= s.end) return;
            for (std::size_t rank = 0; rank < N_; ++rank) {
              for (std::size_t t = 0; t < T_; ++t)
                inputs[t] = contribution_of(view_, static_cast<int>(t)) + rank * n_ * e_ +
                            pipe_.offset(i) + s.begin * e_;
              void* out = r.piece(part, rank) + (s.begin - part.begin) * e_;
              reduce_slice_to_all(inputs, std::span<void* const>(&out, 1), e_, Slice{0, s.size()},
                                  c_.combine, c_.op_object);
            }
          });
        },
        [&](std::size_t i, ProcessComm& comm, Slice part) {
          counts.resize(static_cast<std::size_t>(team_.processes()));
          for (int p = 0; p < team_.processes(); ++p)
            counts[static_cast<std::size_t>(p)] =
                static_cast<MPI_Count>(static_cast<std::size_t>(team_.threads_of(p)) * part.size());
          comm.reduce_scatter(reduced(i).piece(part, 0), mine(i).piece(part, 0), counts, c_);
        },
        [&](std::size_t i) {
          const Packed r = mine(i);
          for_parts(i, [&](Slice part) {
            copy_part(static_cast<std::byte*>(c_.recv) + at(i, part),
                      r.piece(part, static_cast<std::size_t>(me_)), part.size() * e_);
          });
        },
        false);
  }

  TeamImpl& team_;
  int me_;
  const CallView& view_;
  const Call& c_;
  std::size_t e_, n_, N_, T_, first_;
  Pipeline pipe_;
  std::size_t region_bytes_ = 0;
};

}  // namespace

void run_pipelined_mover(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  MoverPipeline(team, me, view, plan).run();
}

}  // namespace tlc::detail
