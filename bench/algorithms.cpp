// tlc-bench --algorithms: the inter-process algorithms of one collective against each other and
// against raw MPI, in the same run on the same data.
//
// Per size (bytes per thread buffer, x4 steps from --min-size, --max-size always measured):
//   - MPI: the main thread of every process calls the MPI collective on MPI_COMM_WORLD, one rank
//     per process, with the buffers one tlc thread has (same bytes per rank). With one thread per
//     process this is exactly the collective tlc runs, so it is the baseline tlc's inter-process
//     algorithms must match; with more threads it is the inter-process part alone.
//   - tlc, once per inter-process algorithm of the collective (every entry of tlc::algorithms()
//     with single_process == false: hierarchical, full_lane and the multi-sender ones registered
//     for it), forced through TeamOptions::algorithms, and once with the selector deciding. Each
//     has a team of its own, made once before the sweep; every thread calls the collective on its
//     own buffers.
// Per size, every implementation is prepared (buffers first-touched by the threads that use
// them) and checked once into poisoned buffers against the sequential reference; each is warmed
// up and gets its own iteration count as in the sweep (calibrate(): adaptive, min(256 MiB / size,
// 0.2 s / warm-up time per call) in [4, 1000]). The timed calls are split into --reps
// repetitions, a repetition's time being the maximum over all threads of all processes of the
// per-thread mean. As in --intra, the repetitions of all implementations are taken in turn (each
// after one untimed call, the order rotating), times are the median repetition and ratios the
// median over the repetitions of tlc / MPI within one repetition: on this kind of machine (a VM
// sharing its host's caches) the speed of memory drifts by 2x within seconds, and pairing keeps
// the drift out of the ratios. An algorithm whose result is wrong is reported on stderr and left
// out of the rows that follow; the run goes on with the others.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

namespace {

// ---------------------------------------------------------------------------------------------
// The collectives, their buffers and their results

struct AlgoSpec {
  const char* name;
  tlc::Collective collective;
  const char* tlc_what;
  const char* mpi_what;
  const char* env;  // TLC_ALGO_<COLLECTIVE>, which would force the selector's team too
};

const AlgoSpec kSpecs[] = {
    {"bcast", tlc::Collective::bcast, "me.bcast(buf, 0)", "MPI_Bcast(root 0)", "TLC_ALGO_BCAST"},
    {"reduce", tlc::Collective::reduce, "me.reduce(send, recv, 0, std::plus<>)",
     "MPI_Reduce(SUM, root 0)", "TLC_ALGO_REDUCE"},
    {"allreduce", tlc::Collective::allreduce, "me.allreduce(send, recv, std::plus<>)",
     "MPI_Allreduce(SUM)", "TLC_ALGO_ALLREDUCE"},
    {"allgather", tlc::Collective::allgather, "me.allgather(send, recv)", "MPI_Allgather",
     "TLC_ALGO_ALLGATHER"},
    {"alltoall", tlc::Collective::alltoall, "me.alltoall(send, recv)", "MPI_Alltoall",
     "TLC_ALGO_ALLTOALL"},
    {"reduce_scatter_block", tlc::Collective::reduce_scatter_block,
     "me.reduce_scatter_block(send, recv, std::plus<>)", "MPI_Reduce_scatter_block(SUM)",
     "TLC_ALGO_REDUCE_SCATTER_BLOCK"},
    {"scan", tlc::Collective::scan, "me.scan(send, recv, std::plus<>)", "MPI_Scan(SUM)",
     "TLC_ALGO_SCAN"},
    {"gather", tlc::Collective::gather, "me.gather(send, recv, 0)", "MPI_Gather(root 0)",
     "TLC_ALGO_GATHER"},
    {"scatter", tlc::Collective::scatter, "me.scatter(send, recv, 0)", "MPI_Scatter(root 0)",
     "TLC_ALGO_SCATTER"},
};

std::string spec_names() {
  std::string names;
  for (const AlgoSpec& s : kSpecs) names += (names.empty() ? "" : ", ") + std::string(s.name);
  return names;
}

// Buffer sizes in elements of rank `rank` of `size` for n elements per thread buffer. n is the
// send buffer of every rank (bcast: its one buffer), except for scatter, where it is the receive
// buffer; alltoall and reduce_scatter_block cut it into one block per rank.
struct Buffers {
  std::size_t send = 0;
  std::size_t recv = 0;
};

Buffers buffers_of(tlc::Collective c, std::size_t n, int size, int rank) {
  const auto ranks = static_cast<std::size_t>(size);
  switch (c) {
    case tlc::Collective::bcast:
      return {n, 0};
    case tlc::Collective::reduce:
      return {n, rank == 0 ? n : 0};
    case tlc::Collective::allgather:
      return {n, ranks * n};
    case tlc::Collective::gather:
      return {n, rank == 0 ? ranks * n : 0};
    case tlc::Collective::scatter:
      return {rank == 0 ? ranks * n : 0, n};
    case tlc::Collective::reduce_scatter_block:
      return {n, n / ranks};
    default:  // allreduce, alltoall, scan
      return {n, n};
  }
}

// Every rank's send buffer holds input_value(rank, j); the root's scatter buffer therefore holds
// input_value(0, j) over all blocks. `sums` adds all ranks, `prefix` ranks 0..rank.
double expected_at(tlc::Collective c, std::size_t n, int rank, int size, const Expected& sums,
                   const Expected& prefix, std::size_t i) {
  const auto r = static_cast<std::size_t>(rank);
  const std::size_t block = n / static_cast<std::size_t>(size);
  switch (c) {
    case tlc::Collective::bcast:
      return input_value(0, i);
    case tlc::Collective::reduce:
    case tlc::Collective::allreduce:
      return sums.at(i);
    case tlc::Collective::scan:
      return prefix.at(i);
    case tlc::Collective::allgather:
    case tlc::Collective::gather:
      return input_value(static_cast<int>(i / n), i % n);
    case tlc::Collective::scatter:
      return input_value(0, r * n + i);
    case tlc::Collective::alltoall:
      // Block `rank` of sender q's buffer lands in block q.
      return input_value(static_cast<int>(i / block), r * block + i % block);
    case tlc::Collective::reduce_scatter_block:
      return sums.at(r * block + i);
    default:
      return 0;
  }
}

std::string check_output(tlc::Collective c, const double* out, std::size_t out_count, std::size_t n,
                         int rank, int size, const std::string& who) {
  const Expected sums(size);
  const Expected prefix(rank + 1);
  return first_mismatch(
      out, out_count, [&](std::size_t i) { return expected_at(c, n, rank, size, sums, prefix, i); },
      who);
}

// What a rank checks after a call: bcast's one buffer (the root's is its input, left alone),
// else the receive buffer.
struct Output {
  double* data = nullptr;
  std::size_t count = 0;
  bool poisoned = true;
};

Output output_of(tlc::Collective c, double* send, double* recv, const Buffers& b, int rank) {
  if (c == tlc::Collective::bcast) return {send, b.send, rank != 0};
  return {recv, b.recv, true};
}

// ---------------------------------------------------------------------------------------------
// tlc: one team, every thread on its own buffers

class TlcCollective : public Case {
 public:
  TlcCollective(tlc::Team& team, tlc::Collective c, std::string label)
      : team_(team),
        collective_(c),
        label_(std::move(label)),
        send_(static_cast<std::size_t>(team.threads())),
        recv_(static_cast<std::size_t>(team.threads())) {}

  void prepare(std::size_t count) override {
    count_ = count;
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const Buffers b = buffers_of(collective_, count, me.size(), me.rank());
      // Free the previous buffers first so that peak memory stays at one size.
      send_[t].reset();
      recv_[t].reset();
      if (count == 0) return;
      send_[t] = untouched_buffer(b.send);
      recv_[t] = untouched_buffer(b.recv);
      for (std::size_t i = 0; i < b.send; ++i) send_[t][i] = input_value(me.rank(), i);
      for (std::size_t i = 0; i < b.recv; ++i) recv_[t][i] = 0;
    });
  }

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(send_.size());
    team_.run([&](tlc::Thread& me) {
      const int t = me.local_index();
      seconds[static_cast<std::size_t>(t)].value = timed_loop(
          loop, t, me.threads(), [&] { call(me); }, [&] { me.barrier(); });
    });
    return global_max(max_of(seconds));
  }

  std::string verify() override {
    std::vector<std::string> errors(send_.size());
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const Buffers b = buffers_of(collective_, count_, me.size(), me.rank());
      const Output out = output_of(collective_, send_[t].get(), recv_[t].get(), b, me.rank());
      if (out.poisoned) poison(out.data, out.count);
      call(me);
      errors[t] =
          check_output(collective_, out.data, out.count, count_, me.rank(), me.size(),
                       "tlc " + label_ + ", rank " + std::to_string(me.rank()) + " (thread " +
                           std::to_string(t) + " of process " + std::to_string(me.process()) + ")");
    });
    for (const std::string& e : errors)
      if (!e.empty()) return e;
    return {};
  }

 private:
  void call(tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    const Buffers b = buffers_of(collective_, count_, me.size(), me.rank());
    double* send = send_[t].get();
    std::span<const double> in(send, b.send);
    std::span<double> out(recv_[t].get(), b.recv);
    switch (collective_) {
      case tlc::Collective::bcast:
        me.bcast(std::span<double>(send, b.send), 0);
        break;
      case tlc::Collective::reduce:
        me.reduce(in, out, 0, std::plus<>{});
        break;
      case tlc::Collective::allreduce:
        me.allreduce(in, out, std::plus<>{});
        break;
      case tlc::Collective::allgather:
        me.allgather(in, out);
        break;
      case tlc::Collective::alltoall:
        me.alltoall(in, out);
        break;
      case tlc::Collective::reduce_scatter_block:
        me.reduce_scatter_block(in, out, std::plus<>{});
        break;
      case tlc::Collective::scan:
        me.scan(in, out, std::plus<>{});
        break;
      case tlc::Collective::gather:
        me.gather(in, out, 0);
        break;
      case tlc::Collective::scatter:
        me.scatter(in, out, 0);
        break;
      default:
        throw std::logic_error("tlc-bench --algorithms: collective without a call");
    }
  }

  tlc::Team& team_;
  tlc::Collective collective_;
  std::string label_;
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;
  std::size_t count_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Raw MPI: one rank per process, the buffers of one tlc thread

class MpiCollective : public Case {
 public:
  MpiCollective(tlc::Collective c, int process, int processes)
      : collective_(c), process_(process), processes_(processes) {}

  void prepare(std::size_t count) override {
    count_ = count;
    const Buffers b = buffers_of(collective_, count, processes_, process_);
    send_.clear();
    recv_.clear();
    send_.shrink_to_fit();
    recv_.shrink_to_fit();
    send_.resize(b.send);
    recv_.assign(b.recv, 0.0);
    for (std::size_t i = 0; i < b.send; ++i) send_[i] = input_value(process_, i);
  }

  double time(const Loop& loop) override {
    return global_max(timed_loop(
        loop, 0, 1, [&] { call(); }, [] { MPI_Barrier(MPI_COMM_WORLD); }));
  }

  std::string verify() override {
    const Buffers b = buffers_of(collective_, count_, processes_, process_);
    const Output out = output_of(collective_, send_.data(), recv_.data(), b, process_);
    if (out.poisoned) poison(out.data, out.count);
    call();
    return check_output(collective_, out.data, out.count, count_, process_, processes_,
                        "MPI baseline, process " + std::to_string(process_));
  }

 private:
  void call() {
    const int n = mpi_count(count_);
    const int block = n / processes_;
    double* send = send_.empty() ? nullptr : send_.data();
    double* recv = recv_.empty() ? nullptr : recv_.data();
    switch (collective_) {
      case tlc::Collective::bcast:
        MPI_Bcast(send, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
      case tlc::Collective::reduce:
        MPI_Reduce(send, recv, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
      case tlc::Collective::allreduce:
        MPI_Allreduce(send, recv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
      case tlc::Collective::allgather:
        MPI_Allgather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
      case tlc::Collective::alltoall:
        MPI_Alltoall(send, block, MPI_DOUBLE, recv, block, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
      case tlc::Collective::reduce_scatter_block:
        MPI_Reduce_scatter_block(send, recv, block, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
      case tlc::Collective::scan:
        MPI_Scan(send, recv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
      case tlc::Collective::gather:
        MPI_Gather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
      case tlc::Collective::scatter:
        MPI_Scatter(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
      default:
        throw std::logic_error("tlc-bench --algorithms: collective without an MPI call");
    }
  }

  tlc::Collective collective_;
  int process_;
  int processes_;
  std::size_t count_ = 0;
  std::vector<double> send_;
  std::vector<double> recv_;
};

// ---------------------------------------------------------------------------------------------
// Sizes and the selector's label

// Element counts: x4 from --min-size, plus --max-size itself when the steps miss it; alltoall and
// reduce_scatter_block round up to a whole number of elements per block of every rank.
std::vector<std::size_t> counts_for(tlc::Collective c, const Options& o, int ranks) {
  std::vector<std::size_t> bytes;
  for (std::size_t b = std::max<std::size_t>(o.min_size, 1); b <= o.max_size;) {
    bytes.push_back(b);
    if (b > o.max_size / 4) break;
    b *= 4;
  }
  if (bytes.back() != o.max_size) bytes.push_back(o.max_size);
  const bool blocked = c == tlc::Collective::alltoall || c == tlc::Collective::reduce_scatter_block;
  const auto r = static_cast<std::size_t>(ranks);
  std::vector<std::size_t> counts;
  for (const std::size_t b : bytes) {
    std::size_t count = std::max<std::size_t>((b + sizeof(double) - 1) / sizeof(double), 1);
    if (blocked) count = (count + r - 1) / r * r;
    if (counts.empty() || counts.back() != count) counts.push_back(count);
  }
  return counts;
}

// What the selector picks for n elements per thread buffer, asked the way a call asks it: the
// bytes of one rank's block, or of the whole buffer where the block is a slice of it (alltoall,
// scatter, reduce_scatter_block). The label is what select_algorithm answers, which honours
// TLC_ALGO_<COLLECTIVE> and TLC_COST_* as the team does.
std::string selector_pick(tlc::Collective c, std::size_t n, const tlc::Team& team) {
  std::vector<int> domains;
  for (const tlc::ThreadPlacement& t : team.placement().threads)
    if (std::find(domains.begin(), domains.end(), t.numa) == domains.end())
      domains.push_back(t.numa);
  std::size_t block = n;
  if (c == tlc::Collective::alltoall || c == tlc::Collective::reduce_scatter_block)
    block = n / static_cast<std::size_t>(team.size());
  std::size_t bytes = block * sizeof(double);
  if (c == tlc::Collective::alltoall || c == tlc::Collective::reduce_scatter_block ||
      c == tlc::Collective::scatter)
    bytes *= static_cast<std::size_t>(team.size());
  tlc::SelectionQuery query;
  query.collective = c;
  query.bytes = bytes;
  query.processes = team.processes();
  query.threads = team.threads();
  query.lanes = team.lanes();
  query.numa_domains = std::max<int>(1, static_cast<int>(domains.size()));
  return tlc::select_algorithm(query).name;
}

// ---------------------------------------------------------------------------------------------
// Reporting

struct Column {
  std::string name;  // algorithm, or "selector"
  std::string note;  // why the column is empty ("" while it is measured)
};

struct AlgoInfo {
  const AlgoSpec* spec = nullptr;
  int processes = 0;
  int threads = 0;
  int lanes = 0;
  bool pinned = false;
  std::string node_env;
  std::string mpi_version;
  std::string thread_level;
  std::string iters_policy;
  std::string forced_env;  // TLC_ALGO_<COLLECTIVE>=... when set
  double skew_us = 0;
};

struct AlgoRow {
  std::size_t bytes = 0;
  double mpi_s = 0;
  std::vector<double> tlc_s;     // per column, median repetition; NaN: not measured
  std::vector<double> over_mpi;  // per column, median over the repetitions of tlc / MPI
  std::string pick;              // the selector's choice
};

class AlgoReporter {
 public:
  AlgoReporter(Format format, std::ostream& out) : format_(format), out_(out) {}

  void begin(const AlgoInfo& info, const std::vector<Column>& columns) {
    info_ = info;
    columns_ = columns;
    const AlgoSpec& spec = *info.spec;
    if (format_ == Format::table) {
      out_ << "# tlc-bench --algorithms " << spec.name << ": tlc: every thread " << spec.tlc_what
           << " over double; MPI: main thread " << spec.mpi_what
           << " on MPI_COMM_WORLD, one rank per process, the buffers of one tlc thread\n"
           << "# processes: " << info.processes << ", threads per process: " << info.threads
           << ", lanes: " << info.lanes << ", tlc threads pinned: " << (info.pinned ? "yes" : "no")
           << (info.node_env.empty() ? "" : ", TLC_NODE=" + info.node_env) << "\n"
           << "# MPI: " << mpi_summary(info.mpi_version) << " (" << info.thread_level << ")\n"
           << "# iterations: " << info.iters_policy << "\n"
           << "# bytes: per thread buffer (send buffer; scatter: receive buffer; alltoall and "
              "reduce_scatter_block: the send buffer, one block per rank)\n"
           << "# times in us: max over all threads of all processes of the mean per call "
              "(median repetition); repetitions of all implementations taken in turn\n"
           << "# /mpi: median over the repetitions of tlc time / MPI time within one repetition "
              "(< 1: faster than MPI)\n"
           << "# tlc columns: the algorithm forced through TeamOptions::algorithms, one team "
              "each; selector: no algorithm forced, pick: what the selector chooses\n";
      if (!info.forced_env.empty())
        out_ << "# warning: " << info.forced_env << " is set: the selector's team runs it too\n";
      if (info.skew_us > 0)
        out_ << "# arrival skew: thread t of T arrives t*" << info.skew_us
             << "/T us late (tlc only); times are exit - arrival\n";
      for (const Column& c : columns)
        if (!c.note.empty()) out_ << "# " << c.name << ": " << c.note << "\n";
      std::string line = pad("bytes", 10) + " " + pad("mpi_us", 10);
      for (const Column& c : columns) line += " " + pad(c.name, width(c)) + " " + pad("/mpi", 5);
      out_ << line << "  pick" << std::endl;
    } else if (format_ == Format::csv) {
      out_ << "collective,processes,threads,lanes,bytes,mpi_us";
      for (const Column& c : columns) out_ << ',' << c.name << "_us," << c.name << "/mpi";
      out_ << ",selector_pick" << std::endl;
    } else {
      out_ << "{\n"
           << "  \"benchmark\": \"tlc-bench --algorithms\",\n"
           << "  \"collective\": " << json_string(spec.name) << ",\n"
           << "  \"processes\": " << info.processes << ",\n"
           << "  \"threads\": " << info.threads << ",\n"
           << "  \"lanes\": " << info.lanes << ",\n"
           << "  \"pinned\": " << (info.pinned ? "true" : "false") << ",\n"
           << "  \"tlc_node\": " << json_string(info.node_env) << ",\n"
           << "  \"iterations\": " << json_string(info.iters_policy) << ",\n"
           << "  \"skew_us\": " << json_number("%g", info.skew_us) << ",\n"
           << "  \"mpi_library\": " << json_string(info.mpi_version) << ",\n"
           << "  \"mpi_thread_level\": " << json_string(info.thread_level) << ",\n"
           << "  \"algorithms\": [";
      for (std::size_t i = 0; i < columns.size(); ++i)
        out_ << (i ? ", " : "") << "{\"name\": " << json_string(columns[i].name)
             << ", \"note\": " << json_string(columns[i].note) << "}";
      out_ << "],\n  \"rows\": [";
    }
    out_.flush();
  }

  void row(const AlgoRow& r) {
    const double mpi_us = r.mpi_s * 1e6;
    if (format_ == Format::table) {
      std::string line = pad(std::to_string(r.bytes), 10) + " " + pad(number("%.2f", mpi_us), 10);
      for (std::size_t i = 0; i < columns_.size(); ++i)
        line += " " + pad(number("%.2f", r.tlc_s[i] * 1e6), width(columns_[i])) + " " +
                pad(number("%.2f", r.over_mpi[i]), 5);
      out_ << line << "  " << r.pick << std::endl;
    } else if (format_ == Format::csv) {
      out_ << info_.spec->name << ',' << info_.processes << ',' << info_.threads << ','
           << info_.lanes << ',' << r.bytes << ',' << number("%.4f", mpi_us);
      for (std::size_t i = 0; i < columns_.size(); ++i)
        out_ << ',' << number("%.4f", r.tlc_s[i] * 1e6) << ',' << number("%.4f", r.over_mpi[i]);
      out_ << ',' << r.pick << std::endl;
    } else {
      out_ << (rows_ ? ",\n" : "\n") << "    {\"bytes\": " << r.bytes
           << ", \"mpi_us\": " << json_number("%.4f", mpi_us);
      for (std::size_t i = 0; i < columns_.size(); ++i)
        out_ << ", " << json_string(columns_[i].name + "_us") << ": "
             << json_number("%.4f", r.tlc_s[i] * 1e6) << ", "
             << json_string(columns_[i].name + "/mpi") << ": "
             << json_number("%.4f", r.over_mpi[i]);
      out_ << ", \"selector_pick\": " << json_string(r.pick) << "}";
      out_.flush();
      ++rows_;
    }
  }

  // A column stops being measured (wrong result): said in the table, kept in JSON.
  void dropped(const std::string& name, std::size_t bytes, const std::string& what) {
    if (format_ == Format::table)
      out_ << "# " << name << " dropped from " << bytes << " bytes on: " << what << std::endl;
  }

  void end(double seconds) {
    if (format_ == Format::table)
      out_ << "# run took " << number("%.1f", seconds) << " s" << std::endl;
    else if (format_ == Format::json)
      out_ << "\n  ],\n  \"seconds\": " << json_number("%.1f", seconds) << "\n}" << std::endl;
  }

 private:
  static std::size_t width(const Column& c) { return std::max<std::size_t>(c.name.size(), 9); }
  static std::string pad(const std::string& s, std::size_t w) {
    return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
  }

  Format format_;
  std::ostream& out_;
  AlgoInfo info_;
  std::vector<Column> columns_;
  int rows_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The run

std::string algo_iteration_policy(const Options& o) {
  const std::string iters =
      o.iters ? "fixed " + std::to_string(*o.iters)
              : "adaptive per implementation, min(256 MiB / size, 0.2 s / warm-up time per call) "
                "in [4, 1000]";
  const std::string warmup = o.warmup ? std::to_string(*o.warmup) : "adaptive";
  return iters + ", median of " + std::to_string(o.reps) +
         " repetitions taken in turn with the other implementations, warm-up " + warmup;
}

// --algorithm with --algorithms: a comma-separated list of the forced algorithms to keep.
std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

// A slot of the sweep: a team (none for a column that could not be built) and its case.
struct Slot {
  Column column;
  std::unique_ptr<tlc::Team> team;
  std::unique_ptr<Case> c;
  bool wrong = false;
};

// Prepares and checks one implementation. Returns "" or what is wrong, the same on every process
// (a wrong result on one process is reported there on stderr and makes the others fail it too).
std::string prepare_and_check(Case& c, std::size_t count) {
  c.prepare(count);
  const std::string what = c.verify();
  const int bad_here = what.empty() ? 0 : 1;
  int bad = 0;
  MPI_Allreduce(&bad_here, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!bad) return {};
  if (bad_here) {
    std::fprintf(stderr, "tlc-bench --algorithms: WRONG RESULT with %zu bytes per thread: %s\n",
                 count * sizeof(double), what.c_str());
    std::fflush(stderr);
  }
  c.prepare(0);
  return bad_here ? what : "wrong result on another process";
}

// One implementation during one size.
struct Timing {
  Case* c = nullptr;
  Slot* slot = nullptr;  // nullptr: the MPI baseline
  int iters = 0;
  std::vector<double> seconds;  // per repetition
};

void sweep(const Options& o, const AlgoSpec& spec, std::vector<Slot>& slots, tlc::Team& selector,
           const tlc::Environment& env, int process, int processes) {
  AlgoReporter reporter(o.format, std::cout);
  AlgoInfo info;
  info.spec = &spec;
  info.processes = processes;
  info.threads = selector.threads();
  info.lanes = selector.lanes();
  info.pinned = selector.placement().pinned;
  if (const char* node = std::getenv("TLC_NODE")) info.node_env = node;
  if (const char* forced = std::getenv(spec.env))
    info.forced_env = std::string(spec.env) + "=" + forced;
  info.mpi_version = tlc::Environment::mpi_library_version();
  info.thread_level = tlc::Environment::thread_level_name(env.thread_level());
  info.iters_policy = algo_iteration_policy(o);
  info.skew_us = o.skew_us;
  std::vector<Column> columns;
  for (const Slot& s : slots) columns.push_back(s.column);
  if (process == 0) reporter.begin(info, columns);

  // The MPI baseline takes no skew: it is one rank per process, the time of the collective.
  Options mpi_options = o;
  mpi_options.skew_us = 0;
  MpiCollective mpi(spec.collective, process, processes);
  const int reps = o.reps;
  const Clock::time_point start = Clock::now();
  for (const std::size_t count : counts_for(spec.collective, o, selector.size())) {
    const std::size_t bytes = count * sizeof(double);
    AlgoRow row;
    row.bytes = bytes;
    row.pick = selector_pick(spec.collective, count, selector);

    // Buffers of every implementation, each checked once, then warm-up and iteration counts.
    std::vector<Timing> timings;
    if (std::string wrong = prepare_and_check(mpi, count); !wrong.empty())
      throw std::runtime_error("the MPI baseline is wrong: " + wrong);
    timings.push_back({&mpi, nullptr, calibrate(mpi, bytes, mpi_options, IterationLimits{}), {}});
    for (Slot& s : slots) {
      if (!s.c || s.wrong) continue;
      if (std::string wrong = prepare_and_check(*s.c, count); !wrong.empty()) {
        s.wrong = true;
        if (process == 0) reporter.dropped(s.column.name, bytes, wrong);
        continue;
      }
      timings.push_back({s.c.get(), &s, calibrate(*s.c, bytes, o, IterationLimits{}), {}});
    }

    // Repetitions in turn, each after one untimed call, the order rotating from one repetition
    // to the next: on a shared machine cache and memory bandwidth drift by 2x within seconds,
    // and taking the implementations moments apart keeps the drift out of the ratios.
    std::vector<std::vector<double>> ratios(timings.size());
    for (int r = 0; r < reps; ++r) {
      for (std::size_t k = 0; k < timings.size(); ++k) {
        Timing& t = timings[(k + static_cast<std::size_t>(r)) % timings.size()];
        const double skew = t.slot ? o.skew_us : 0;
        t.seconds.push_back(t.c->time({1, calls_in(t.iters, reps, r), skew}));
      }
      for (std::size_t k = 1; k < timings.size(); ++k)
        ratios[k].push_back(timings[k].seconds.back() / timings[0].seconds.back());
    }

    row.mpi_s = median(timings[0].seconds);
    for (Slot& s : slots) {
      double seconds = std::nan("");
      double ratio = std::nan("");
      for (std::size_t k = 1; k < timings.size(); ++k)
        if (timings[k].slot == &s) {
          seconds = median(timings[k].seconds);
          ratio = median(ratios[k]);
        }
      row.tlc_s.push_back(seconds);
      row.over_mpi.push_back(ratio);
    }
    for (Timing& t : timings) t.c->prepare(0);  // frees the large buffers before the next size
    if (process == 0) reporter.row(row);
  }
  if (process == 0) reporter.end(seconds_since(start));
  std::fflush(stdout);
}

}  // namespace

int run_algorithms(const Options& o, const tlc::Environment& env) {
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const AlgoSpec* spec = nullptr;
  for (const AlgoSpec& s : kSpecs)
    if (o.collective == s.name) spec = &s;
  if (!spec) {
    if (process == 0)
      std::cerr << "tlc-bench --algorithms: unknown collective '" << o.collective
                << "' (available: " << spec_names() << ")\n";
    return 2;
  }

  // The inter-process algorithms of the collective, in registry order, then the selector.
  std::vector<std::string> names;
  for (const tlc::AlgorithmDescription& a : tlc::algorithms())
    if (a.collective == spec->collective && !a.single_process) names.push_back(a.name);
  if (!o.algorithm.empty()) {
    const std::vector<std::string> keep = split_names(o.algorithm);
    for (const std::string& k : keep)
      if (k != "selector" && std::find(names.begin(), names.end(), k) == names.end()) {
        if (process == 0)
          std::cerr << "tlc-bench --algorithms: " << spec->name
                    << " has no inter-process algorithm '" << k << "' (tlc-info --algorithms)\n";
        return 2;
      }
    std::erase_if(names, [&](const std::string& n) {
      return std::find(keep.begin(), keep.end(), n) == keep.end();
    });
  }

  auto options_for = [&](const std::string& name) {
    tlc::TeamOptions team_options;
    team_options.threads = o.threads;
    team_options.lanes = o.lanes;
    team_options.pin = o.pin;
    if (!name.empty()) team_options.algorithms[spec->collective] = name;
    return team_options;
  };
  // Team construction is collective and agrees on errors across processes: a forced algorithm
  // that cannot be built becomes an empty column on every process, with the reason.
  std::unique_ptr<tlc::Team> selector;
  try {
    selector = std::make_unique<tlc::Team>(MPI_COMM_WORLD, options_for(""));
  } catch (const std::exception& e) {
    if (process == 0)
      std::cerr << "tlc-bench --algorithms: cannot build the team: " << e.what() << "\n";
    return 1;
  }
  std::vector<Slot> slots;
  for (const std::string& name : names) {
    Slot s;
    s.column.name = name;
    try {
      s.team = std::make_unique<tlc::Team>(MPI_COMM_WORLD, options_for(name));
      s.c = std::make_unique<TlcCollective>(*s.team, spec->collective, name);
    } catch (const std::exception& e) {
      s.column.note = std::string("cannot build the team: ") + e.what();
    }
    slots.push_back(std::move(s));
  }
  Slot own;
  own.column.name = "selector";
  own.c = std::make_unique<TlcCollective>(*selector, spec->collective, "selector");
  slots.push_back(std::move(own));

  // Later failures may hit one process only while the others wait in a collective.
  try {
    sweep(o, *spec, slots, *selector, env, process, processes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc-bench --algorithms: process %d: %s\n", process, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}

}  // namespace tlc_bench
