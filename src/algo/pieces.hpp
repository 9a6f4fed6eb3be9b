// The layout of a staging region that holds pieces of many blocks (the movers: a piece of every
// rank's block; alltoall: a piece of every block from every local sender to every rank).
//
// The region holds lane part after lane part: lane l's parts of pieces 0, 1, ..., J-1, in that
// order. Lane l carries slice_of(count_j, e, l, L) of piece j (64-byte granules), so each
// process's pieces of one lane are contiguous and one call per lane moves them; a piece is cut
// the same way on every process, so sender's and receiver's parts match. With one lane the
// region is the pieces packed in order, which for whole rank blocks is the rank-packed layout
// MPI's v-collectives use.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <mpi.h>

#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

class PieceLayout {
 public:
  // J pieces, piece j holding count_of(j) elements of e bytes, cut over L lanes.
  template <class CountOf>
  void build(std::size_t pieces, int lanes, std::size_t e, CountOf&& count_of) {
    J_ = pieces;
    L_ = lanes;
    e_ = e;
    counts_.resize(J_);
    for (std::size_t j = 0; j < J_; ++j) counts_[j] = count_of(j);
    offsets_.resize(static_cast<std::size_t>(L_) * (J_ + 1));
    std::size_t at = 0;
    for (int l = 0; l < L_; ++l)
      for (std::size_t j = 0; j <= J_; ++j) {
        offsets_[index(l, j)] = at;
        if (j < J_) at += part(l, j).size() * e_;
      }
    total_ = at;
  }

  // The layout of chunk i, count_of(i, j) elements in piece j, built again only when the chunk
  // differs from the last one asked for since new_call() (the pipeline asks for one chunk
  // several times in a row).
  void new_call() noexcept { chunk_ = ~std::size_t{0}; }
  template <class CountOf>
  const PieceLayout& of_chunk(std::size_t i, std::size_t pieces, int lanes, std::size_t e,
                              CountOf&& count_of) {
    if (chunk_ != i) {
      build(pieces, lanes, e, [&](std::size_t j) { return count_of(i, j); });
      chunk_ = i;
    }
    return *this;
  }

  std::size_t total() const noexcept { return total_; }  // bytes
  std::size_t count(std::size_t j) const noexcept { return counts_[j]; }
  // The elements of piece j that lane l carries, relative to the piece.
  Slice part(int l, std::size_t j) const noexcept {
    // One lane carries whole pieces: no cut to compute (small direct calls build this per call).
    return L_ == 1 ? Slice{0, counts_[j]} : slice_of(counts_[j], e_, l, L_);
  }
  // Bytes from the region's start to lane l's part of piece j (j == J: the end of lane l).
  std::size_t offset(int l, std::size_t j) const noexcept { return offsets_[index(l, j)]; }
  // Bytes of lane l's parts of pieces [first, end).
  std::size_t bytes(int l, std::size_t first, std::size_t end) const noexcept {
    return offset(l, end) - offset(l, first);
  }

  // Lane l as one group of pieces per process, process p holding pieces [starts[p],
  // starts[p + 1]): byte counts and displacements from the start of lane l's parts, as MPI's
  // v-collectives take them.
  void lane_groups(int l, std::span<const std::size_t> starts, std::vector<MPI_Count>& bytes,
                   std::vector<MPI_Aint>& displs) const {
    const std::size_t P = starts.size() - 1;
    bytes.resize(P);
    displs.resize(P);
    const std::size_t base = offset(l, 0);
    for (std::size_t p = 0; p < P; ++p) {
      bytes[p] = static_cast<MPI_Count>(this->bytes(l, starts[p], starts[p + 1]));
      displs[p] = static_cast<MPI_Aint>(offset(l, starts[p]) - base);
    }
  }

 private:
  std::size_t index(int l, std::size_t j) const noexcept {
    return static_cast<std::size_t>(l) * (J_ + 1) + j;
  }
  std::size_t J_ = 0;
  int L_ = 1;
  std::size_t e_ = 1;
  std::size_t total_ = 0;
  std::size_t chunk_ = ~std::size_t{0};  // of_chunk's last chunk
  std::vector<std::size_t> counts_;
  std::vector<std::size_t> offsets_;
};

// The MPI layouts of lane groups as the byte sizes and offsets tlc's point-to-point algorithms
// take.
inline void as_sizes(std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs,
                     std::vector<std::size_t>& sizes, std::vector<std::size_t>& offsets) {
  sizes.assign(bytes.begin(), bytes.end());
  offsets.assign(displs.begin(), displs.end());
}

}  // namespace tlc::detail
