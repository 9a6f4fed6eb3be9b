// The registry of benchmarked collectives: their buffers, their sequential reference, the bytes
// they must move and nccl-tests' bus-bandwidth factors. Every implementation (cases.cpp) sizes,
// fills and checks its buffers through these functions, so that all of them run on the same data
// and are held to the same reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "bench.hpp"

namespace tlc_bench {

const std::vector<CollectiveDef>& collectives() {
  using C = tlc::Collective;
  static const std::vector<CollectiveDef> table = {
      {"barrier", Kind::barrier, C::barrier, "-", -1, false, "me.barrier()", "MPI_Barrier", "0"},
      {"bcast", Kind::bcast, C::bcast, "-", 0, false, "me.bcast(buf, 0)", "MPI_Bcast(root 0)",
       "T*n (the root's buffer read once, T-1 buffers written)"},
      {"reduce", Kind::reduce, C::reduce, "sum", 0, true, "me.reduce(send, recv, 0, std::plus<>)",
       "MPI_Reduce(SUM, root 0)", "T*n + n (every input read, the root's output written)"},
      {"allreduce", Kind::allreduce, C::allreduce, "sum", -1, true,
       "me.allreduce(send, recv, std::plus<>)", "MPI_Allreduce(SUM)",
       "2*T*n (every input read, every output written)"},
      {"allgather", Kind::allgather, C::allgather, "-", -1, true, "me.allgather(send, recv)",
       "MPI_Allgather", "T*n + T*T*n (every input read, T outputs of T*n written)"},
      {"alltoall", Kind::alltoall, C::alltoall, "-", -1, true, "me.alltoall(send, recv)",
       "MPI_Alltoall", "2*T*n, n = send buffer (every input read, every output written)"},
      {"reduce_scatter_block", Kind::reduce_scatter_block, C::reduce_scatter_block, "sum", -1, true,
       "me.reduce_scatter_block(send, recv, std::plus<>)", "MPI_Reduce_scatter_block(SUM)",
       "T*n + n, n = send buffer (every input read, a block of n/T written per thread)"},
      {"scan", Kind::scan, C::scan, "sum", -1, true, "me.scan(send, recv, std::plus<>)",
       "MPI_Scan(SUM)", "2*T*n (every input read, every output written)"},
      {"exscan", Kind::exscan, C::exscan, "sum", -1, true, "me.exscan(send, recv, std::plus<>)",
       "MPI_Exscan(SUM)", "2*T*n (every input read, every output but rank 0's written)"},
      {"gather", Kind::gather, C::gather, "-", 0, false, "me.gather(send, recv, 0)",
       "MPI_Gather(root 0)", "2*T*n (every input read, the root's T*n written)"},
      {"scatter", Kind::scatter, C::scatter, "-", 0, false, "me.scatter(send, recv, 0)",
       "MPI_Scatter(root 0)",
       "2*T*n, n = receive buffer (the root's T*n read, every output "
       "written)"},
  };
  return table;
}

const CollectiveDef* find_collective(const std::string& name) {
  for (const CollectiveDef& def : collectives())
    if (name == def.name) return &def;
  return nullptr;
}

std::string collective_names() {
  std::string names;
  for (const CollectiveDef& def : collectives())
    names += (names.empty() ? "" : ", ") + std::string(def.name);
  return names;
}

Layout layout(Kind kind, std::size_t n, int ranks, int rank, bool in_place) {
  const auto r = static_cast<std::size_t>(ranks);
  switch (kind) {
    case Kind::barrier:
      return {0, 0};
    case Kind::bcast:
      return {0, n};
    case Kind::reduce:
      return {n, rank == 0 ? n : 0};
    case Kind::allreduce:
    case Kind::alltoall:
    case Kind::scan:
    case Kind::exscan:
      return {n, n};
    case Kind::allgather:
      return {in_place ? r * n : n, r * n};
    case Kind::reduce_scatter_block:
      return {n, n / r};
    case Kind::gather:
      return {n, rank == 0 ? r * n : 0};
    case Kind::scatter:
      return {rank == 0 ? r * n : 0, n};
  }
  return {};
}

Reference::Reference(Kind kind, std::size_t n, int ranks)
    : kind_(kind), n_(n), ranks_(ranks), prefix_(static_cast<std::size_t>(ranks) * 11) {
  for (int q = 0; q < ranks; ++q)
    for (std::size_t i = 0; i < 11; ++i)
      prefix_[static_cast<std::size_t>(q) * 11 + i] =
          input_value(q, i) + (q > 0 ? prefix_[static_cast<std::size_t>(q - 1) * 11 + i] : 0.0);
}

double Reference::prefix(int rank, std::size_t i) const {
  return prefix_[static_cast<std::size_t>(rank) * 11 + i % 11];
}

double Reference::at(int rank, std::size_t i) const {
  const std::size_t block = n_ / static_cast<std::size_t>(ranks_);
  switch (kind_) {
    case Kind::barrier:
      return 0;
    case Kind::bcast:
      return input_value(0, i);
    case Kind::reduce:
    case Kind::allreduce:
      return prefix(ranks_ - 1, i);
    case Kind::scan:
      return prefix(rank, i);
    case Kind::exscan:
      return rank > 0 ? prefix(rank - 1, i) : 0;
    case Kind::allgather:
    case Kind::gather:
      return input_value(static_cast<int>(i / n_), i % n_);
    case Kind::scatter:
      return input_value(0, static_cast<std::size_t>(rank) * n_ + i);
    case Kind::alltoall:
      // Block `rank` of sender q's buffer lands in block q.
      return input_value(static_cast<int>(i / block),
                         static_cast<std::size_t>(rank) * block + i % block);
    case Kind::reduce_scatter_block:
      return prefix(ranks_ - 1, static_cast<std::size_t>(rank) * block + i);
  }
  return 0;
}

void fill_input(Kind kind, double* send, std::size_t n, int ranks, int rank, bool in_place) {
  if (kind == Kind::allgather && in_place) {
    // This rank's block already at its place; the other blocks are poisoned by the check.
    const std::size_t total = static_cast<std::size_t>(ranks) * n;
    for (std::size_t i = 0; i < total; ++i) send[i] = 0;
    for (std::size_t i = 0; i < n; ++i)
      send[static_cast<std::size_t>(rank) * n + i] = input_value(rank, i);
    return;
  }
  if (kind == Kind::scatter && rank != 0) return;  // only the root has a send buffer
  const std::size_t count = kind == Kind::scatter ? static_cast<std::size_t>(ranks) * n : n;
  // The root of bcast and scatter holds rank 0's data.
  const int owner = kind == Kind::bcast || kind == Kind::scatter ? 0 : rank;
  for (std::size_t i = 0; i < count; ++i) send[i] = input_value(owner, i);
}

void refill_input(Kind kind, int root, double* send, double* recv, std::size_t n, int ranks,
                  int rank, bool in_place) {
  if (n == 0 || kind == Kind::barrier) return;
  if (kind == Kind::bcast) {
    if (rank == root) fill_input(kind, recv, n, ranks, rank, false);
    return;
  }
  fill_input(kind, send, n, ranks, rank, in_place);
}

std::size_t count_wrong(const Reference& ref, const double* out, std::size_t count, int rank,
                        const std::string& who, std::string& first, std::size_t step) {
  std::size_t wrong = 0;
  if (!ref.defined(rank)) return 0;
  for (std::size_t i = 0; i < count; i += i < 64 || i + step >= count ? 1 : step) {
    const double want = ref.at(rank, i);
    if (out[i] == want) continue;
    if (wrong++ == 0 && first.empty()) {
      char text[160];
      std::snprintf(text, sizeof text, ": element %zu of %zu is %.17g, expected %.17g", i, count,
                    out[i], want);
      first = who + text;
    }
  }
  return wrong;
}

double moved_bytes(Kind kind, int threads, std::size_t n) {
  const double t = threads;
  const double bytes = static_cast<double>(n * sizeof(double));
  switch (kind) {
    case Kind::barrier:
      return 0;
    case Kind::bcast:
      return t * bytes;
    case Kind::reduce:
    case Kind::reduce_scatter_block:
      return t * bytes + bytes;
    case Kind::allreduce:
    case Kind::alltoall:
    case Kind::scan:
    case Kind::exscan:
    case Kind::gather:
    case Kind::scatter:
      return 2 * t * bytes;
    case Kind::allgather:
      return t * bytes + t * t * bytes;
  }
  return 0;
}

double bus_factor(Kind kind, int ranks) {
  const double r = ranks;
  switch (kind) {
    case Kind::allreduce:
      return 2 * (r - 1) / r;
    case Kind::allgather:
    case Kind::gather:
    case Kind::scatter:
      return r - 1;
    case Kind::alltoall:
    case Kind::reduce_scatter_block:
      return (r - 1) / r;
    case Kind::barrier:
      return std::nan("");
    case Kind::bcast:
    case Kind::reduce:
    case Kind::scan:
    case Kind::exscan:
      return 1;
  }
  return 1;
}

std::vector<std::size_t> element_counts(const Options& o, int step, std::size_t multiple) {
  std::vector<std::size_t> counts;
  multiple = std::max<std::size_t>(multiple, 1);
  auto add = [&](std::size_t bytes) {
    std::size_t count = std::max<std::size_t>((bytes + sizeof(double) - 1) / sizeof(double), 1);
    count = (count + multiple - 1) / multiple * multiple;
    if (counts.empty() || counts.back() < count) counts.push_back(count);
  };
  const std::size_t factor = static_cast<std::size_t>(std::max(step, 2));
  std::size_t bytes = std::max<std::size_t>(o.min_size, 1);
  for (;;) {
    add(bytes);
    if (bytes > o.max_size / factor) break;
    bytes *= factor;
  }
  add(o.max_size);
  return counts;
}

void poison(double* data, std::size_t count) {
  std::fill(data, data + count, std::numeric_limits<double>::quiet_NaN());
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace tlc_bench
