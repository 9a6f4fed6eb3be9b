// grid2d: a 2-D grid of ranks, R rows x C columns (rank = row * C + col), the communication
// pattern of a 2-D domain decomposition or of a pencil FFT. Every iteration, every rank
//   - sums a vector of n doubles over its row (row allreduce),
//   - sums the same vector over its column (column allreduce),
//   - exchanges it with its row in C blocks of n / C (row alltoall: the transpose of a 2-D FFT).
//
// One source, two forms of the same program (--form):
//   tlc   one process per node, a team of threads in it; each thread is a grid rank, and its row
//         and column are sub-teams, me.split(row, col) and me.split(col, row);
//   mpi   MPI everywhere: one MPI rank per grid rank, rows and columns by MPI_Comm_split with the
//         same colours and keys;
//   both  launched with P * T MPI ranks and --threads T: the mpi form on all of them, then the tlc
//         form on P processes (every T-th rank) of T threads each, the same grid; rank 0 gathers
//         both forms' results and compares them element by element.
// The team's ranks are process-major, so a sub-team's keys must keep each process's members
// consecutive. Ordering members by their global rank always does: a row's ranks are consecutive
// and a column's ascend, so key = col for a row and key = row for a column are safe.
//
// The data are doubles with small integer values, so every sum is exact whatever the order of
// additions and both forms must agree bit for bit. Every form checks every element of every
// result against the values computed locally from the formula (an untimed pass of --iterations
// iterations with different data in each), prints PASS or FAIL and exits 1 on any mismatch.
// Then it times --repeat repetitions of --iterations iterations (and of the row allreduce alone)
// and prints the median per-iteration time (the slowest rank's).
//
//   TLC_NODE=process mpiexec -n 2 ./grid2d --form tlc --threads 2      # 2 x 2 grid of threads
//   mpiexec -n 4 ./grid2d --form mpi                                   # the same, MPI everywhere
//   TLC_NODE=process mpiexec -n 4 ./grid2d --form both --threads 2     # both, compared
#include <tlc/tlc.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string form = "tlc";  // tlc, mpi, both
  int threads = 0;           // tlc: threads per process (0: TLC_THREADS, else one per core)
  int rows = 0, cols = 0;    // 0: chosen from the grid's size
  long n = 4096;             // doubles per rank (rounded up to a multiple of the columns)
  int iterations = 100;
  int repeat = 5;
};

[[noreturn]] void usage(const std::string& what) {
  throw std::invalid_argument(
      what +
      "\nusage: grid2d [--form tlc|mpi|both] [--threads T] [--rows R] [--cols C] [--n N]"
      " [--iterations I] [--repeat K]");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("grid2d: " + a + " needs a value");
      return argv[++i];
    };
    auto number = [&]() -> long {
      const std::string v = value();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || x < 0) usage("grid2d: " + a + " " + v + ": not a count");
      return x;
    };
    if (a == "--form")
      o.form = value();
    else if (a == "--threads")
      o.threads = static_cast<int>(number());
    else if (a == "--rows")
      o.rows = static_cast<int>(number());
    else if (a == "--cols")
      o.cols = static_cast<int>(number());
    else if (a == "--n")
      o.n = number();
    else if (a == "--iterations")
      o.iterations = static_cast<int>(number());
    else if (a == "--repeat")
      o.repeat = static_cast<int>(number());
    else
      usage("grid2d: unknown option " + a);
  }
  if (o.form != "tlc" && o.form != "mpi" && o.form != "both")
    usage("grid2d: unknown form " + o.form);
  if (o.form == "both" && o.threads < 1) usage("grid2d: --form both needs --threads T");
  if (o.n < 1 || o.iterations < 1 || o.repeat < 1)
    usage("grid2d: --n, --iterations and --repeat must be positive");
  return o;
}

// The grid's shape for `size` ranks: as asked, else the smallest C >= sqrt(size) that divides it
// (2 ranks: one row of 2, so the row collectives have partners).
struct Grid {
  int rows = 1, cols = 1;
  long n = 1, block = 1;  // doubles per rank, and per alltoall block (n = cols * block)
};

Grid make_grid(const Options& o, int size) {
  Grid g;
  if (o.rows > 0 && o.cols > 0) {
    g.rows = o.rows;
    g.cols = o.cols;
  } else if (o.cols > 0 || o.rows > 0) {
    g.cols = o.cols > 0 ? o.cols : size / o.rows;
    g.rows = size / g.cols;
  } else {
    g.cols = size;
    for (int c = 1; c <= size; ++c)
      if (size % c == 0 && static_cast<long>(c) * c >= size) {
        g.cols = c;
        break;
      }
    g.rows = size / g.cols;
  }
  if (g.rows < 1 || g.cols < 1 || g.rows * g.cols != size)
    throw std::invalid_argument("grid2d: a " + std::to_string(g.rows) + " x " +
                                std::to_string(g.cols) + " grid does not have " +
                                std::to_string(size) + " ranks");
  g.block = (o.n + g.cols - 1) / g.cols;
  g.n = g.block * g.cols;
  return g;
}

// The input of rank r in iteration it: integers below 4096, so sums over up to 2^40 ranks are
// exact in a double.
double value(int r, int it, long i) {
  return static_cast<double>((static_cast<long>(r) * 131 + i * 7 + static_cast<long>(it) * 17) %
                             4096);
}

// One rank's buffers: its input and the three results.
struct Buffers {
  std::vector<double> x, row_sum, col_sum, transposed;
  explicit Buffers(long n) : x(n), row_sum(n), col_sum(n), transposed(n) {}
  void fill(int rank, int it) {
    for (long i = 0; i < static_cast<long>(x.size()); ++i) x[i] = value(rank, it, i);
  }
};

// Compares every element of the three results of `rank` in iteration `it` with the formula;
// adds the mismatches to `bad` and prints the rank's first.
void check(const Grid& g, int rank, int it, const Buffers& b, const char* form, long& bad) {
  const int row = rank / g.cols, col = rank % g.cols;
  auto compare = [&](const char* what, long i, double got, double want) {
    if (got == want) return;
    if (bad++ == 0)
      std::printf("grid2d %s: rank %d iteration %d: %s[%ld] = %.17g, expected %.17g\n", form, rank,
                  it, what, i, got, want);
  };
  for (long i = 0; i < g.n; ++i) {
    double row_sum = 0, col_sum = 0;
    for (int c = 0; c < g.cols; ++c) row_sum += value(row * g.cols + c, it, i);
    for (int r = 0; r < g.rows; ++r) col_sum += value(r * g.cols + col, it, i);
    compare("row allreduce", i, b.row_sum[i], row_sum);
    compare("column allreduce", i, b.col_sum[i], col_sum);
    // Block j of the result is block `col` of the input of the row's rank j.
    const long j = i / g.block, k = i % g.block;
    compare("row alltoall", i, b.transposed[i], value(row * g.cols + j, it, col * g.block + k));
  }
}

// The same iteration in either form: C is the grid (rows, columns and the whole grid).
template <class C>
void iteration(C& comm, Buffers& b) {
  comm.row_allreduce(b.x, b.row_sum);
  comm.col_allreduce(b.x, b.col_sum);
  comm.row_alltoall(b.x, b.transposed);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Outcome {
  long mismatches = 0;                  // over the grid
  std::vector<double> iteration_times;  // seconds per iteration, one per repetition
  std::vector<double> row_times;        // the row allreduce alone
  std::vector<double> final_results;    // rank 0 (both): every rank's results, in rank order
};

// The program of one grid rank, in either form: the checked pass, then the timed repetitions.
template <class C>
void program(C& comm, const Grid& g, const Options& o, bool gather, Outcome& out,
             const char* form) {
  const int rank = comm.rank();
  Buffers b(g.n);
  long bad = 0;
  for (int it = 0; it < o.iterations; ++it) {
    b.fill(rank, it);
    iteration(comm, b);
    check(g, rank, it, b, form, bad);
  }
  const long mismatches = comm.sum(bad);
  bad = 0;
  if (gather) {
    // The last iteration's three results of every rank, for the comparison of the two forms.
    std::vector<double> mine;
    mine.reserve(3 * g.n);
    for (const auto* v : {&b.row_sum, &b.col_sum, &b.transposed})
      mine.insert(mine.end(), v->begin(), v->end());
    std::vector<double> all(rank == 0 ? mine.size() * g.rows * g.cols : 0);
    comm.gather(mine, all);
    if (rank == 0) out.final_results = std::move(all);
  }

  // Timed: the same data in every iteration (iteration 0's), the slowest rank's time.
  b.fill(rank, 0);
  std::vector<double> iteration_times, row_times;
  for (int rep = 0; rep < o.repeat; ++rep) {
    comm.barrier();
    auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < o.iterations; ++it) iteration(comm, b);
    auto t1 = std::chrono::steady_clock::now();
    iteration_times.push_back(comm.max(std::chrono::duration<double>(t1 - t0).count()) /
                              o.iterations);
    comm.barrier();
    t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < o.iterations; ++it) comm.row_allreduce(b.x, b.row_sum);
    t1 = std::chrono::steady_clock::now();
    row_times.push_back(comm.max(std::chrono::duration<double>(t1 - t0).count()) / o.iterations);
  }
  // The timed iterations' results too (iteration 0's data).
  check(g, rank, 0, b, form, bad);
  const long timed_bad = comm.sum(bad);
  if (rank == 0) {
    out.mismatches = mismatches + timed_bad;
    out.iteration_times = std::move(iteration_times);
    out.row_times = std::move(row_times);
  }
}

// The grid in MPI everywhere: one MPI rank per grid rank.
class MpiGrid {
 public:
  MpiGrid(MPI_Comm world, const Grid& g) : world_(world), cols_(g.cols) {
    MPI_Comm_rank(world_, &rank_);
    MPI_Comm_split(world_, rank_ / g.cols, rank_ % g.cols, &row_);
    MPI_Comm_split(world_, rank_ % g.cols, rank_ / g.cols, &col_);
  }
  ~MpiGrid() {
    MPI_Comm_free(&row_);
    MPI_Comm_free(&col_);
  }
  MpiGrid(const MpiGrid&) = delete;
  MpiGrid& operator=(const MpiGrid&) = delete;

  int rank() const { return rank_; }
  void row_allreduce(const std::vector<double>& x, std::vector<double>& y) {
    MPI_Allreduce(x.data(), y.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM, row_);
  }
  void col_allreduce(const std::vector<double>& x, std::vector<double>& y) {
    MPI_Allreduce(x.data(), y.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM, col_);
  }
  void row_alltoall(const std::vector<double>& x, std::vector<double>& y) {
    const int block = static_cast<int>(x.size()) / cols_;
    MPI_Alltoall(x.data(), block, MPI_DOUBLE, y.data(), block, MPI_DOUBLE, row_);
  }
  void barrier() { MPI_Barrier(world_); }
  double max(double t) {
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, world_);
    return t;
  }
  long sum(long x) {
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG, MPI_SUM, world_);
    return x;
  }
  void gather(const std::vector<double>& mine, std::vector<double>& all) {
    MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
               static_cast<int>(mine.size()), MPI_DOUBLE, 0, world_);
  }

 private:
  MPI_Comm world_, row_ = MPI_COMM_NULL, col_ = MPI_COMM_NULL;
  int cols_, rank_ = 0;
};

// The grid on tlc: every thread of the team a grid rank, its row and column sub-teams made once
// (a split makes MPI communicators: split once, call often).
class TlcGrid {
 public:
  TlcGrid(tlc::Thread& me, const Grid& g)
      : me_(me),
        row_(me.split(me.rank() / g.cols, me.rank() % g.cols)),
        col_(me.split(me.rank() % g.cols, me.rank() / g.cols)) {}

  int rank() const { return me_.rank(); }
  void row_allreduce(const std::vector<double>& x, std::vector<double>& y) {
    row_.allreduce(std::span<const double>(x), std::span<double>(y));
  }
  void col_allreduce(const std::vector<double>& x, std::vector<double>& y) {
    col_.allreduce(std::span<const double>(x), std::span<double>(y));
  }
  void row_alltoall(const std::vector<double>& x, std::vector<double>& y) {
    row_.alltoall(std::span<const double>(x), std::span<double>(y));
  }
  void barrier() { me_.barrier(); }
  double max(double t) { return me_.allreduce(t, tlc::max{}); }
  long sum(long x) { return me_.allreduce(x); }
  void gather(const std::vector<double>& mine, std::vector<double>& all) {
    me_.gather(std::span<const double>(mine), std::span<double>(all), 0);
  }

 private:
  tlc::Thread& me_;
  tlc::Thread row_, col_;
};

void report(const char* form, const Grid& g, const Options& o, const Outcome& out,
            const std::string& shape) {
  std::printf(
      "grid2d %s: %s, grid %d x %d, n %ld doubles (alltoall blocks of %ld), %d iterations\n", form,
      shape.c_str(), g.rows, g.cols, g.n, g.block, o.iterations);
  auto line = [&](const char* what, const std::vector<double>& t) {
    std::printf("grid2d %s: %-14s %.4f ms per iteration (median of %zu, %.4f to %.4f)\n", form,
                what, 1e3 * median(t), t.size(), 1e3 * *std::min_element(t.begin(), t.end()),
                1e3 * *std::max_element(t.begin(), t.end()));
  };
  line("iteration", out.iteration_times);
  line("row allreduce", out.row_times);
  if (out.mismatches == 0)
    std::printf(
        "grid2d %s: PASS: every element of the row allreduce, column allreduce and row alltoall "
        "as expected, %d checked iterations and the timed ones\n",
        form, o.iterations);
  else
    std::printf("grid2d %s: FAIL: %ld elements differ from the expected values\n", form,
                out.mismatches);
  std::fflush(stdout);
}

Outcome run_mpi(MPI_Comm world, const Options& o, bool gather) {
  int size = 1;
  MPI_Comm_size(world, &size);
  const Grid g = make_grid(o, size);
  Outcome out;
  {
    MpiGrid comm(world, g);
    program(comm, g, o, gather, out, "mpi");
    if (comm.rank() == 0)
      report("mpi", g, o, out, std::to_string(size) + " MPI ranks (MPI everywhere)");
  }
  return out;
}

Outcome run_tlc(MPI_Comm comm, const Options& o, bool gather) {
  tlc::TeamOptions options;
  options.threads = o.threads;
  tlc::Team team(comm, options);
  Outcome out;
  team.run([&](tlc::Thread& me) {
    const Grid g = make_grid(o, me.size());
    TlcGrid grid(me, g);
    Outcome mine;
    program(grid, g, o, gather, mine, "tlc");
    if (me.rank() == 0) {
      out = std::move(mine);
      report("tlc", g, o, out,
             std::to_string(me.processes()) + " processes x " + std::to_string(me.threads()) +
                 " threads");
    }
  });
  return out;
}

// Waits for a barrier of `comm` without spinning, for the ranks that sit out the tlc form in
// --form both: polling MPI would take the cores the team's threads need.
void wait_politely(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const Options o = parse(argc, argv);
    MPI_Comm world = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    if (o.form == "mpi") {
      if (run_mpi(world, o, false).mismatches != 0) status = 1;
    } else if (o.form == "tlc") {
      if (run_tlc(world, o, false).mismatches != 0) status = 1;
    } else {
      if (size % o.threads != 0)
        throw std::invalid_argument("grid2d: --form both: " + std::to_string(size) +
                                    " MPI ranks are not processes of " + std::to_string(o.threads) +
                                    " threads");
      const Outcome mpi = run_mpi(world, o, true);
      // The tlc form on every T-th rank, T threads each: team rank p * T + t is on world rank
      // p * T, the grid the same.
      MPI_Comm hosts = MPI_COMM_NULL;
      MPI_Comm_split(world, rank % o.threads == 0 ? 0 : MPI_UNDEFINED, rank, &hosts);
      Outcome tlc_out;
      if (hosts != MPI_COMM_NULL) {
        tlc_out = run_tlc(hosts, o, true);
        MPI_Comm_free(&hosts);
      }
      wait_politely(world);
      if (rank == 0) {
        long differ = 0;
        const std::size_t count = mpi.final_results.size();
        if (tlc_out.final_results.size() != count) {
          std::printf("grid2d: FAIL: tlc gathered %zu values, MPI everywhere %zu\n",
                      tlc_out.final_results.size(), count);
          differ = 1;
        }
        for (std::size_t i = 0; i < std::min(count, tlc_out.final_results.size()); ++i)
          if (mpi.final_results[i] != tlc_out.final_results[i] && differ++ == 0)
            std::printf("grid2d: value %zu (rank %zu): tlc %.17g, MPI everywhere %.17g\n", i,
                        i / (count / static_cast<std::size_t>(size)), tlc_out.final_results[i],
                        mpi.final_results[i]);
        if (differ == 0 && mpi.mismatches == 0 && tlc_out.mismatches == 0)
          std::printf(
              "grid2d: PASS: tlc and MPI everywhere agree element by element (%zu values of the "
              "last checked iteration)\n",
              count);
        else {
          std::printf(
              "grid2d: FAIL: %ld values differ between the forms; %ld (MPI everywhere) and %ld "
              "(tlc) differ from the expected values\n",
              differ, mpi.mismatches, tlc_out.mismatches);
          status = 1;
        }
      }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, world);
    MPI_Comm_free(&world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "grid2d failed on process %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return status;
}
