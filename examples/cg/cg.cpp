// cg: a conjugate-gradient solver for the 3-D Poisson problem -laplace(u) = 1 on the unit cube
// with u = 0 on the boundary (7-point stencil, n x n x n unknowns), as a hybrid MPI+OpenMP
// application: the domain is split across MPI processes in z, each process exchanges one halo
// plane with each neighbour by MPI point-to-point, and OpenMP threads share the loops.
//
// One source, two versions of the dot products (chosen at run time, --mode):
//   master-only  the classic pattern: `omp for reduction` into a shared sum, one MPI_Allreduce
//                by the master thread, barriers around it;
//   tlc          every OpenMP thread is attached to a tlc team for the whole solve and sums its
//                own share of the loop with me.allreduce, reached through tlc::current_thread()
//                from a dot product that has no team argument (as in a numerical library).
// Everything else (loops, halo exchange, iteration) is the same code. --mode both runs the two
// on the same problem, prints their residual histories side by side and fails (exit 1) unless
// they take the same iterations, their residuals agree to a relative --agree tolerance (the
// two sum the threads' shares in different orders, so not bit for bit) and both reach --tol.
//
//   mpiexec -n 2 ./cg --n 64 --mode both          # 2 processes x OMP_NUM_THREADS threads
//   OMP_NUM_THREADS=2 mpiexec -n 1 ./cg --n 128 --mode tlc --repeat 5
#include <tlc/openmp.hpp>
#include <tlc/tlc.hpp>

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
  long n = 32;  // unknowns per dimension
  double tol = 1e-8;
  int max_iterations = 10000;
  std::string mode = "both";  // master-only, tlc, both
  int repeat = 1;             // solves per version, alternating; the median time is reported
  double agree = 1e-9;        // relative tolerance between the two versions' residuals
  bool history = true;        // print the residual history (both)
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--n")
      o.n = std::stol(value());
    else if (a == "--tol")
      o.tol = std::stod(value());
    else if (a == "--max-iterations")
      o.max_iterations = std::stoi(value());
    else if (a == "--mode")
      o.mode = value();
    else if (a == "--repeat")
      o.repeat = std::stoi(value());
    else if (a == "--agree")
      o.agree = std::stod(value());
    else if (a == "--no-history")
      o.history = false;
    else
      throw std::invalid_argument("unknown argument " + a +
                                  " (--n N --tol T --max-iterations K --mode "
                                  "master-only|tlc|both --repeat R --agree A --no-history)");
  }
  if (o.mode != "master-only" && o.mode != "tlc" && o.mode != "both")
    throw std::invalid_argument("--mode must be master-only, tlc or both");
  if (o.n < 2 || o.repeat < 1 || o.max_iterations < 1) throw std::invalid_argument("bad size");
  return o;
}

// This process's slab: planes [first_plane, first_plane + planes) of the n planes in z, stored
// with one halo plane below and one above (zero where the slab touches the boundary).
struct Slab {
  long n = 0;
  long plane = 0;  // n * n
  long planes = 0;
  long first_plane = 0;
  int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // the application's own, for halos and master-only sums

  long begin() const { return plane; }                  // first owned point
  long end() const { return (planes + 1) * plane; }     // one past the last owned point
  long stored() const { return (planes + 2) * plane; }  // with the halos
};

Slab make_slab(long n, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (n < size) throw std::invalid_argument("--n must be at least the number of processes");
  Slab s;
  s.n = n;
  s.plane = n * n;
  s.planes = n / size + (rank < n % size ? 1 : 0);
  s.first_plane = rank * (n / size) + std::min<long>(rank, n % size);
  s.below = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  s.above = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  s.comm = comm;
  return s;
}

// Fills p's halo planes from the neighbours (one thread calls it).
void exchange_halos(const Slab& s, double* p) {
  MPI_Sendrecv(p + s.begin(), static_cast<int>(s.plane), MPI_DOUBLE, s.below, 0, p + s.end(),
               static_cast<int>(s.plane), MPI_DOUBLE, s.above, 0, s.comm, MPI_STATUS_IGNORE);
  MPI_Sendrecv(p + s.end() - s.plane, static_cast<int>(s.plane), MPI_DOUBLE, s.above, 1, p,
               static_cast<int>(s.plane), MPI_DOUBLE, s.below, 1, s.comm, MPI_STATUS_IGNORE);
}

// q = A p on the owned points, A the 7-point Laplacian (6 on the diagonal, -1 off it); the
// halos of p must be current. Called by every thread of the region; no barrier at the end
// (each thread's points are those of every other `schedule(static)` loop over the same range).
void apply_laplacian(const Slab& s, const double* p, double* q) {
  const long n = s.n, plane = s.plane;
#pragma omp for schedule(static) nowait
  for (long idx = s.begin(); idx < s.end(); ++idx) {
    const long i = idx % n, j = (idx / n) % n;
    double v = 6.0 * p[idx] - p[idx - plane] - p[idx + plane];
    if (i > 0) v -= p[idx - 1];
    if (i < n - 1) v -= p[idx + 1];
    if (j > 0) v -= p[idx - n];
    if (j < n - 1) v -= p[idx + n];
    q[idx] = v;
  }
}

// The two versions of the global dot product, called by every thread of the region; each
// returns the sum over all points of all processes on every thread.

// Master-only: a shared sum, reduced by OpenMP, then one MPI_Allreduce by the master thread.
double dot_master_only(const Slab& s, const double* a, const double* b) {
  static double sum;  // shared by the threads of the region
#pragma omp single
  sum = 0.0;  // implicit barrier
#pragma omp for schedule(static) reduction(+ : sum)
  for (long i = s.begin(); i < s.end(); ++i) sum += a[i] * b[i];
    // implicit barrier: the process's sum is complete
#pragma omp master
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, s.comm);
#pragma omp barrier
  const double result = sum;
#pragma omp barrier  // everyone has read it before the next call resets it
  return result;
}

// tlc: each thread sums its share of the loop and the team sums the shares of all threads of
// all processes. No team argument: the participant attached on this thread is found from the
// thread itself, as a dot product deep in a numerical library would find it.
double dot_tlc(const Slab& s, const double* a, const double* b) {
  double mine = 0.0;
#pragma omp for schedule(static) nowait
  for (long i = s.begin(); i < s.end(); ++i) mine += a[i] * b[i];
  return tlc::current_thread()->allreduce(mine);
}

struct Result {
  int iterations = 0;
  std::vector<double> residuals;  // ||r_k|| / ||r_0||, k = 1 .. iterations
  double seconds = 0;             // the iteration loop, slowest process
  double per_iteration() const { return iterations ? seconds / iterations : 0; }
};

// Conjugate gradients from x = 0, run by every thread of an OpenMP region; dot is one of the
// two versions above. The master thread records the history and the time.
template <double (*dot)(const Slab&, const double*, const double*)>
void solve(const Slab& s, const Options& o, std::vector<double>& x, std::vector<double>& r,
           std::vector<double>& p, std::vector<double>& q, Result& result) {
#pragma omp for schedule(static)
  for (long i = s.begin(); i < s.end(); ++i) {
    x[i] = 0.0;
    r[i] = 1.0;  // b - A x with b = 1 (h^2 folded into the right-hand side)
    p[i] = r[i];
  }  // implicit barrier
  double rr = dot(s, r.data(), r.data());
  const double rr0 = rr;
#pragma omp barrier
#pragma omp master
  result.seconds = MPI_Wtime();
  for (int k = 1; k <= o.max_iterations; ++k) {
#pragma omp single
    exchange_halos(s, p.data());  // implicit barrier: p and its halos are complete
    apply_laplacian(s, p.data(), q.data());
    const double alpha = rr / dot(s, p.data(), q.data());
#pragma omp for schedule(static) nowait
    for (long i = s.begin(); i < s.end(); ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_next = dot(s, r.data(), r.data());
    const double relative = std::sqrt(rr_next / rr0);
#pragma omp master
    {
      result.iterations = k;
      result.residuals.push_back(relative);
    }
    if (relative <= o.tol) break;  // every thread holds the same sums: the same decision
    const double beta = rr_next / rr;
    rr = rr_next;
#pragma omp for schedule(static)
    for (long i = s.begin(); i < s.end(); ++i) p[i] = r[i] + beta * p[i];
    // implicit barrier: the halo exchange reads p
  }
#pragma omp barrier
#pragma omp master
  result.seconds = MPI_Wtime() - result.seconds;
}

struct Vectors {
  std::vector<double> x, r, p, q;
  explicit Vectors(const Slab& s) : x(s.stored()), r(s.stored()), p(s.stored()), q(s.stored()) {}
};

Result solve_master_only(const Slab& s, const Options& o, Vectors& v, int threads) {
  Result result;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(threads)
  solve<dot_master_only>(s, o, v.x, v.r, v.p, v.q, result);
  return result;
}

Result solve_tlc(const Slab& s, const Options& o, Vectors& v, tlc::Team& team) {
  Result result;
  // Every thread attached for the whole region; an error on any thread comes out here.
  tlc::openmp::parallel(team,
                        [&](tlc::Thread&) { solve<dot_tlc>(s, o, v.x, v.r, v.p, v.q, result); });
  return result;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 ? values[m] : 0.5 * (values[m - 1] + values[m]);
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  int rank = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  int status = 0;
  try {
    const Options o = parse(argc, argv);
    // A team of OpenMP's size (OMP_NUM_THREADS), for both versions.
    tlc::Team team(MPI_COMM_WORLD, tlc::openmp::team_options());
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const Slab s = make_slab(o.n, comm);
    Vectors v(s);
    const bool run_master_only = o.mode != "tlc", run_tlc = o.mode != "master-only";

    Result old_way, new_way;
    std::vector<double> old_times, new_times;
    for (int rep = 0; rep < o.repeat; ++rep) {
      if (run_master_only) {
        old_way = solve_master_only(s, o, v, team.threads());
        MPI_Allreduce(MPI_IN_PLACE, &old_way.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
        old_times.push_back(old_way.per_iteration());
      }
      if (run_tlc) {
        new_way = solve_tlc(s, o, v, team);
        MPI_Allreduce(MPI_IN_PLACE, &new_way.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
        new_times.push_back(new_way.per_iteration());
      }
    }

    if (rank == 0) {
      std::printf("cg: %ld^3 unknowns, %d processes x %d threads, tol %g\n", o.n, processes,
                  team.threads(), o.tol);
      auto report = [&](const char* name, const Result& r, const std::vector<double>& times) {
        std::printf(
            "%-12s %d iterations, relative residual %.6e, %.3f ms per iteration (median "
            "of %zu solves)\n",
            name, r.iterations, r.residuals.empty() ? 1.0 : r.residuals.back(), 1e3 * median(times),
            times.size());
      };
      if (run_master_only) report("master-only:", old_way, old_times);
      if (run_tlc) report("tlc:", new_way, new_times);
    }

    // Checks, on every process (they see the same sums).
    auto converged = [&](const Result& r) {
      return !r.residuals.empty() && r.residuals.back() <= o.tol;
    };
    if ((run_master_only && !converged(old_way)) || (run_tlc && !converged(new_way))) {
      if (rank == 0) std::printf("FAILED: the residual did not drop below %g\n", o.tol);
      status = 1;
    }
    if (run_master_only && run_tlc) {
      double worst = 0;
      const std::size_t common = std::min(old_way.residuals.size(), new_way.residuals.size());
      if (rank == 0 && o.history)
        std::printf("%5s %22s %22s %10s\n", "iter", "master-only", "tlc", "rel.diff");
      for (std::size_t k = 0; k < common; ++k) {
        const double a = old_way.residuals[k], b = new_way.residuals[k];
        const double diff = std::abs(a - b) / std::max(std::abs(a), std::abs(b));
        worst = std::max(worst, diff);
        if (rank == 0 && o.history) std::printf("%5zu %22.15e %22.15e %10.2e\n", k + 1, a, b, diff);
      }
      if (old_way.iterations != new_way.iterations || worst > o.agree) {
        if (rank == 0)
          std::printf(
              "FAILED: master-only took %d iterations, tlc %d; residuals differ by up to "
              "%.2e relative (allowed %.1e)\n",
              old_way.iterations, new_way.iterations, worst, o.agree);
        status = 1;
      } else if (rank == 0) {
        std::printf("agree: %d iterations each, residuals within %.2e relative (allowed %.1e)\n",
                    old_way.iterations, worst, o.agree);
      }
    }
    MPI_Comm_free(&comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cg failed on process %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return status;
}
