// cg: a conjugate-gradient solver for the 3-D Poisson problem -laplace(u) = 1 on the unit cube
// with u = 0 on the boundary (7-point stencil, n x n x n unknowns), as a hybrid MPI+OpenMP
// application: the domain is split across MPI processes in z, each process exchanges one halo
// plane with each neighbour by MPI point-to-point, and OpenMP threads share the loops.
//
// One source, two algorithms, each with two versions of its global sums (--mode):
//   master-only    classic CG, the classic pattern: `omp for reduction` into a shared sum, one
//                  MPI_Allreduce by the master thread, barriers around it, for each of the two
//                  dot products of an iteration;
//   tlc            classic CG, every OpenMP thread attached to a tlc team for the whole solve,
//                  summing its own share of the loop with me.allreduce, reached through
//                  tlc::current_thread() from a dot product that has no team argument (as in a
//                  numerical library);
//   mpi-pipelined  pipelined CG (Ghysels and Vanroose, "Hiding global synchronization latency
//                  in the preconditioned Conjugate Gradient algorithm", Parallel Computing 2014;
//                  unpreconditioned): its two dot products (gamma = (r,r), delta = (w,r)) are
//                  summed in one reduction of 2 doubles per iteration, started before and
//                  completed after the matrix-vector product q = A w, so the reduction can
//                  overlap the stencil. Master-only form: `omp for reduction`, the master
//                  starts MPI_Iallreduce, everyone applies the stencil, the master waits,
//                  barriers. With OMP_NUM_THREADS=1 and one process per core this is the MPI
//                  everywhere version of pipelined CG (one MPI_Iallreduce per iteration);
//   tlc-pipelined  pipelined CG with every thread attached: each thread starts
//                  me.iallreduce of its share of the two sums, applies its share of the
//                  stencil, then waits for its request.
// Everything else (loops, halo exchange) is the same code. --mode both runs master-only and tlc
// on the same problem; --mode compare runs all four. Both print the residual histories side by
// side and fail (exit 1) unless every version reaches --tol and the checks hold:
//   - two versions of one algorithm take the same iterations and their residuals agree to a
//     relative --agree: over all iterations for classic CG, over the first --window for
//     pipelined CG (the versions sum the threads' shares in different orders);
//   - (compare) classic against pipelined CG, the tlc versions: residuals within a relative
//     --pipelined-agree over the first --window iterations.
// Pipelined CG is classic CG in exact arithmetic, but it keeps w = A r, s = A p and z = A s by
// recurrences whose rounding errors are never corrected and reach the residual (Cools et al.,
// SIAM J. Matrix Anal. Appl. 2018, on its attainable accuracy). So its residuals differ from
// another computation's by amounts set by the rounding of the first iterations, which do not
// shrink with the residual, so relative to the residual the difference grows as it falls: a
// relative tolerance holds only for the iterations before the residual drops too far. Each line of
// the checks says through which iteration its tolerance held. After each solve the true residual
// ||b - A x|| / ||b|| is computed and printed beside the recurrence's. --no-overlap, a control
// for measurements: the pipelined versions complete their reduction as soon as they start it,
// before the halo exchange and the product (the same arithmetic, nothing overlapped; the
// master-only form then needs one more barrier, after the product).
//
//   mpiexec -n 2 ./cg --n 64 --mode compare       # 2 processes x OMP_NUM_THREADS threads
//   OMP_NUM_THREADS=2 mpiexec -n 1 ./cg --n 128 --mode tlc-pipelined --repeat 5
#include <tlc/openmp.hpp>
#include <tlc/tlc.hpp>

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Options {
  long n = 32;  // unknowns per dimension
  double tol = 1e-8;
  int max_iterations = 10000;
  std::string mode = "both";       // master-only, tlc, mpi-pipelined, tlc-pipelined, both, compare
  int repeat = 1;                  // solves per version, alternating; the median time is reported
  double agree = 1e-9;             // relative tolerance between two versions of one algorithm
  double pipelined_agree = 1e-10;  // relative tolerance between classic and pipelined CG ...
  int window = 50;                 // ... over their first `window` residuals
  bool overlap = true;             // pipelined: complete the sums after the product (else before)
  bool history = true;             // print the residual history (both, compare)

  bool master_only() const { return mode == "master-only" || mode == "both" || mode == "compare"; }
  bool tlc() const { return mode == "tlc" || mode == "both" || mode == "compare"; }
  bool mpi_pipelined() const { return mode == "mpi-pipelined" || mode == "compare"; }
  bool tlc_pipelined() const { return mode == "tlc-pipelined" || mode == "compare"; }
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
    else if (a == "--pipelined-agree")
      o.pipelined_agree = std::stod(value());
    else if (a == "--window")
      o.window = std::stoi(value());
    else if (a == "--no-history")
      o.history = false;
    else if (a == "--no-overlap")
      o.overlap = false;
    else
      throw std::invalid_argument(
          "unknown argument " + a +
          " (--n N --tol T --max-iterations K --mode master-only|tlc|"
          "mpi-pipelined|tlc-pipelined|both|compare --repeat R "
          "--agree A --pipelined-agree A --window K --no-history --no-overlap)");
  }
  if (!o.master_only() && !o.tlc() && !o.mpi_pipelined() && !o.tlc_pipelined())
    throw std::invalid_argument(
        "--mode must be master-only, tlc, mpi-pipelined, tlc-pipelined, both or compare");
  if (o.n < 2 || o.repeat < 1 || o.max_iterations < 1 || o.window < 1)
    throw std::invalid_argument("bad size");
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
  std::vector<double> residuals;  // ||r_k|| / ||r_0||, k = 1 .. iterations (the recurrence's)
  double seconds = 0;             // the iteration loop, slowest process
  double true_residual = 0;       // ||b - A x|| / ||b|| for the x returned
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

// Pipelined CG (Ghysels and Vanroose 2014, their pipelined CG without a preconditioner). With
// w = A r, s = A p, z = A s and q = A w kept by recurrences, both dot products of an iteration,
// gamma = (r, r) and delta = (w, r), are taken from vectors known before its one matrix-vector
// product q = A w: they are summed in one reduction of 2 doubles, started before the product
// and completed after it.
//
// The two versions of that reduction. Every thread of the region calls start(slab, r, w),
// which starts the global sums of gamma and delta, then (between start and finish) takes part
// in the halo exchange and applies its share of the stencil, then calls finish(), which returns
// {gamma, delta} on every thread. `synchronizes`: start and finish each pass a barrier of the
// region after the thread's work before them; otherwise the solver adds the barriers.

// Master-only: `omp for reduction` into shared sums; the master copies them out, starts
// MPI_Iallreduce on the copy, and waits for it in finish; the other threads wait at a barrier.
double mo_gamma = 0.0, mo_delta = 0.0;  // shared by the threads of the region; zero between calls
double mo_sums[2];                      // the master's MPI_Iallreduce buffer
MPI_Request mo_request = MPI_REQUEST_NULL;

struct PipelinedMasterOnly {
  static constexpr bool synchronizes = true;
  void start(const Slab& slab, const double* r, const double* w) {
#pragma omp for schedule(static) reduction(+ : mo_gamma, mo_delta)
    for (long i = slab.begin(); i < slab.end(); ++i) {
      mo_gamma += r[i] * r[i];
      mo_delta += w[i] * r[i];
    }
    // implicit barrier: the process's sums are complete, and every thread has read mo_sums of
    // the call before
#pragma omp master
    {
      mo_sums[0] = mo_gamma;
      mo_sums[1] = mo_delta;
      mo_gamma = mo_delta = 0.0;  // for the next call, which begins behind barriers of this one
      MPI_Iallreduce(MPI_IN_PLACE, mo_sums, 2, MPI_DOUBLE, MPI_SUM, slab.comm, &mo_request);
    }
  }
  std::array<double, 2> finish() {
#pragma omp master
    MPI_Wait(&mo_request, MPI_STATUS_IGNORE);
#pragma omp barrier
    return {mo_sums[0], mo_sums[1]};
  }
};

// tlc: each thread sums its share of the loop and starts the team's sum of the shares of all
// threads of all processes; the buffers are tlc's until the request completes.
struct PipelinedTlc {
  static constexpr bool synchronizes = false;
  std::array<double, 2> mine{}, sums{};  // this thread's
  tlc::Request request;
  void start(const Slab& slab, const double* r, const double* w) {
    double gamma = 0.0, delta = 0.0;
#pragma omp for schedule(static) nowait
    for (long i = slab.begin(); i < slab.end(); ++i) {
      gamma += r[i] * r[i];
      delta += w[i] * r[i];
    }
    mine = {gamma, delta};
    request = tlc::current_thread()->iallreduce(mine, sums);
  }
  std::array<double, 2> finish() {
    request.wait();
    return sums;
  }
};

struct PipelinedVectors {
  std::vector<double> x, r, w, p, s, z, q;
  explicit PipelinedVectors(const Slab& slab)
      : x(slab.stored()),
        r(slab.stored()),
        w(slab.stored()),
        p(slab.stored()),
        s(slab.stored()),
        z(slab.stored()),
        q(slab.stored()) {}
};

// Pipelined CG from x = 0, run by every thread of an OpenMP region; Sums is one of the two
// versions above. Iteration k completes gamma_k = ||r_k||^2 and so records the same residual
// as iteration k of solve(); it stops there, after its product q_k = A w_k, whose result is
// then not needed. The loop also runs k = 0, whose reduction gives ||r_0||^2 (solve() takes
// that dot product before its clock starts).
template <class Sums>
void solve_pipelined(const Slab& slab, const Options& o, PipelinedVectors& v, Result& result) {
  double* const x = v.x.data();
  double* const r = v.r.data();
  double* const w = v.w.data();
  double* const p = v.p.data();
  double* const s = v.s.data();
  double* const z = v.z.data();
  double* const q = v.q.data();
#pragma omp for schedule(static)
  for (long i = slab.begin(); i < slab.end(); ++i) {
    x[i] = 0.0;
    r[i] = 1.0;  // b - A x with b = 1
    w[i] = p[i] = s[i] = z[i] = q[i] = 0.0;
  }  // implicit barrier
#pragma omp single
  exchange_halos(slab, r);      // implicit barrier
  apply_laplacian(slab, r, w);  // w_0 = A r_0
  Sums sums;                    // this thread's
  double gamma0 = 0.0, gamma_before = 0.0, alpha_before = 0.0;
#pragma omp barrier
#pragma omp master
  result.seconds = MPI_Wtime();
  for (int k = 0;; ++k) {
    sums.start(slab, r, w);  // gamma_k = (r_k, r_k), delta_k = (w_k, r_k), all processes
    std::array<double, 2> reduced{};
    if (!o.overlap) reduced = sums.finish();  // --no-overlap: the control, nothing overlapped
    if constexpr (!Sums::synchronizes) {
#pragma omp barrier  // every thread's part of w is written: the halo exchange reads it
    }
#pragma omp single
    exchange_halos(slab, w);      // implicit barrier: w and its halos are complete
    apply_laplacian(slab, w, q);  // q_k = A w_k, while the sums are under way
    if (o.overlap) reduced = sums.finish();
    if (!Sums::synchronizes || !o.overlap) {
#pragma omp barrier  // every thread's product has read w: the update below writes it
    }
    const auto [gamma, delta] = reduced;
    if (k == 0) {
      gamma0 = gamma;
    } else {
      const double relative = std::sqrt(gamma / gamma0);
#pragma omp master
      {
        result.iterations = k;
        result.residuals.push_back(relative);
      }
      // every thread holds the same sums: the same decision
      if (relative <= o.tol || k >= o.max_iterations) break;
    }
    const double beta = k == 0 ? 0.0 : gamma / gamma_before;
    const double alpha = k == 0 ? gamma / delta : gamma / (delta - beta * gamma / alpha_before);
#pragma omp for schedule(static) nowait
    for (long i = slab.begin(); i < slab.end(); ++i) {
      z[i] = q[i] + beta * z[i];
      s[i] = w[i] + beta * s[i];
      p[i] = r[i] + beta * p[i];
      x[i] += alpha * p[i];
      r[i] -= alpha * s[i];
      w[i] -= alpha * z[i];
    }
    gamma_before = gamma;
    alpha_before = alpha;
  }
#pragma omp barrier
#pragma omp master
  result.seconds = MPI_Wtime() - result.seconds;
}

// ||b - A x|| / ||b|| for the x of a solve (plain OpenMP and MPI; scratch receives A x).
double true_residual(const Slab& slab, std::vector<double>& x, std::vector<double>& scratch,
                     int threads) {
  double sum = 0.0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    exchange_halos(slab, x.data());
    apply_laplacian(slab, x.data(), scratch.data());
#pragma omp for schedule(static) reduction(+ : sum)
    for (long i = slab.begin(); i < slab.end(); ++i) {
      const double d = 1.0 - scratch[i];
      sum += d * d;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, slab.comm);
  return std::sqrt(sum / static_cast<double>(slab.n * slab.n * slab.n));
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
  result.true_residual = true_residual(s, v.x, v.q, threads);
  return result;
}

Result solve_tlc(const Slab& s, const Options& o, Vectors& v, tlc::Team& team) {
  Result result;
  // Every thread attached for the whole region; an error on any thread comes out here.
  tlc::openmp::parallel(team,
                        [&](tlc::Thread&) { solve<dot_tlc>(s, o, v.x, v.r, v.p, v.q, result); });
  result.true_residual = true_residual(s, v.x, v.q, team.threads());
  return result;
}

Result solve_mpi_pipelined(const Slab& s, const Options& o, PipelinedVectors& v, int threads) {
  Result result;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(threads)
  solve_pipelined<PipelinedMasterOnly>(s, o, v, result);
  result.true_residual = true_residual(s, v.x, v.q, threads);
  return result;
}

Result solve_tlc_pipelined(const Slab& s, const Options& o, PipelinedVectors& v, tlc::Team& team) {
  Result result;
  tlc::openmp::parallel(team,
                        [&](tlc::Thread&) { solve_pipelined<PipelinedTlc>(s, o, v, result); });
  result.true_residual = true_residual(s, v.x, v.q, team.threads());
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

    struct Version {
      const char* name;
      bool run;
      Result result;
      std::vector<double> times;
    };
    enum { master_only, tlc_classic, mpi_pipelined, tlc_pipelined };
    Version versions[] = {{"master-only", o.master_only(), {}, {}},
                          {"tlc", o.tlc(), {}, {}},
                          {"mpi-pipelined", o.mpi_pipelined(), {}, {}},
                          {"tlc-pipelined", o.tlc_pipelined(), {}, {}}};
    std::vector<Vectors> classic;  // allocated for the versions that run
    std::vector<PipelinedVectors> pipelined;
    if (o.master_only() || o.tlc()) classic.emplace_back(s);
    if (o.mpi_pipelined() || o.tlc_pipelined()) pipelined.emplace_back(s);

    for (int rep = 0; rep < o.repeat; ++rep) {
      for (int which = 0; which < 4; ++which) {
        Version& version = versions[which];
        if (!version.run) continue;
        switch (which) {
          case master_only:
            version.result = solve_master_only(s, o, classic[0], team.threads());
            break;
          case tlc_classic:
            version.result = solve_tlc(s, o, classic[0], team);
            break;
          case mpi_pipelined:
            version.result = solve_mpi_pipelined(s, o, pipelined[0], team.threads());
            break;
          default:
            version.result = solve_tlc_pipelined(s, o, pipelined[0], team);
            break;
        }
        MPI_Allreduce(MPI_IN_PLACE, &version.result.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
        version.times.push_back(version.result.per_iteration());
      }
    }

    if (rank == 0) {
      std::printf("cg: %ld^3 unknowns, %d processes x %d threads, tol %g%s\n", o.n, processes,
                  team.threads(), o.tol,
                  o.overlap ? "" : " (--no-overlap: pipelined sums completed before the product)");
      for (const Version& version : versions) {
        if (!version.run) continue;
        const Result& r = version.result;
        std::printf(
            "%-14s %d iterations, relative residual %.6e (true %.6e), %.3f ms per iteration "
            "(median of %zu solves, %.3f to %.3f)\n",
            (std::string(version.name) + ":").c_str(), r.iterations,
            r.residuals.empty() ? 1.0 : r.residuals.back(), r.true_residual,
            1e3 * median(version.times), version.times.size(),
            1e3 * *std::min_element(version.times.begin(), version.times.end()),
            1e3 * *std::max_element(version.times.begin(), version.times.end()));
      }
    }

    // Checks, on every process (they see the same sums).
    for (const Version& version : versions) {
      const Result& r = version.result;
      if (version.run && (r.residuals.empty() || r.residuals.back() > o.tol)) {
        if (rank == 0)
          std::printf("FAILED: %s: the residual did not drop below %g\n", version.name, o.tol);
        status = 1;
      }
    }
    auto relative_difference = [](double a, double b) {
      return std::abs(a - b) / std::max(std::abs(a), std::abs(b));
    };
    // The pairs compared: two versions of one algorithm, and classic against pipelined CG.
    const int classic_one = versions[tlc_classic].run ? tlc_classic : master_only;
    const int pipelined_one = versions[tlc_pipelined].run ? tlc_pipelined : mpi_pipelined;
    const bool same_algorithm[2] = {versions[master_only].run && versions[tlc_classic].run,
                                    versions[mpi_pipelined].run && versions[tlc_pipelined].run};
    const bool across = versions[classic_one].run && versions[pipelined_one].run;
    const std::pair<int, int> pairs[3] = {
        {master_only, tlc_classic}, {mpi_pipelined, tlc_pipelined}, {classic_one, pipelined_one}};
    const bool compared[3] = {same_algorithm[0], same_algorithm[1], across};

    std::size_t rows = 0;
    for (const Version& version : versions)
      if (version.run) rows = std::max(rows, version.result.residuals.size());
    if (rank == 0 && o.history && (compared[0] || compared[1] || compared[2])) {
      std::printf("%5s", "iter");
      for (const Version& version : versions)
        if (version.run) std::printf(" %22s", version.name);
      for (int c = 0; c < 3; ++c)
        if (compared[c])
          std::printf(" %10s", c < 2 ? (c == 0 ? "diff(cl)" : "diff(pl)") : "cl-vs-pl");
      std::printf("\n");
      for (std::size_t k = 0; k < rows; ++k) {
        std::printf("%5zu", k + 1);
        for (const Version& version : versions) {
          if (!version.run) continue;
          if (k < version.result.residuals.size())
            std::printf(" %22.15e", version.result.residuals[k]);
          else
            std::printf(" %22s", "");
        }
        for (int c = 0; c < 3; ++c) {
          if (!compared[c]) continue;
          const auto& a = versions[pairs[c].first].result.residuals;
          const auto& b = versions[pairs[c].second].result.residuals;
          if (k < a.size() && k < b.size())
            std::printf(" %10.2e", relative_difference(a[k], b[k]));
          else
            std::printf(" %10s", "");
        }
        std::printf("\n");
      }
    }

    // The checks of a pair: the same iterations (two versions of one algorithm), and residuals
    // within a relative tolerance over the first `window` iterations (all of them for classic
    // CG's two versions). Printed with how far the tolerance holds, the largest relative
    // difference over all iterations, and the largest difference in units of ||r_0||.
    for (int c = 0; c < 3; ++c) {
      if (!compared[c]) continue;
      const Result& a = versions[pairs[c].first].result;
      const Result& b = versions[pairs[c].second].result;
      const char* first = versions[pairs[c].first].name;
      const char* second = versions[pairs[c].second].name;
      const bool same_iterations_required = c < 2;
      const double tolerance = c < 2 ? o.agree : o.pipelined_agree;
      const std::size_t common = std::min(a.residuals.size(), b.residuals.size());
      const std::size_t checked = c == 0 ? common : std::min<std::size_t>(common, o.window);
      double worst_checked = 0, worst = 0, worst_absolute = 0;
      std::size_t holds = 0;  // residuals 1 .. holds within the tolerance
      for (std::size_t k = 0; k < common; ++k) {
        const double diff = relative_difference(a.residuals[k], b.residuals[k]);
        if (k < checked) worst_checked = std::max(worst_checked, diff);
        if (holds == k && diff <= tolerance) holds = k + 1;
        worst = std::max(worst, diff);
        worst_absolute = std::max(worst_absolute, std::abs(a.residuals[k] - b.residuals[k]));
      }
      const bool failed =
          worst_checked > tolerance || (same_iterations_required && a.iterations != b.iterations);
      if (failed) status = 1;
      if (rank != 0) continue;
      if (c == 0 && !failed)  // the line example_cg's test looks for
        std::printf(
            "agree: %d iterations each, residuals within %.2e relative (allowed %.1e): %s and "
            "%s\n",
            a.iterations, worst, o.agree, first, second);
      else
        std::printf(
            "%s: %s %d iterations, %s %d; residuals within %.2e relative over the first %zu "
            "(allowed %.1e); within it through iteration %zu of %zu; up to %.2e relative and "
            "%.2e ||r_0|| over all\n",
            failed ? "FAILED" : (c == 1 ? "agree" : "classic and pipelined agree"), first,
            a.iterations, second, b.iterations, worst_checked, checked, tolerance, holds, common,
            worst, worst_absolute);
    }
    MPI_Comm_free(&comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cg failed on process %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return status;
}
