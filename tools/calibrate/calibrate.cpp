// tlc-calibrate's measurements and fits (calibrate.hpp). The fits, in the order they run:
//   sync_us, call_us     a barrier of process 0's team (one rendezvous, the inline form), and a
//                        64-byte allreduce (the general path) on a team of one thread;
//   memory_gbs, cache_*  memcpy on every thread of that team at once, sizes quadrupling, fitted
//                        as the model prices copies (fit_copy_rates);
//   reduce_gbs           a sum kernel over doubles on every thread at once, inside the caches;
//   alpha_us, lane_gbs,  ping-pong between processes 0 and 1 on one communicator (one lane),
//   lane_memory_gbs,     sizes doubling up to max_bytes; t = alpha + n beta (another beta for
//   eager_kib,           the bytes the caches do not hold, a handshake past an eager limit)
//   handshake_us         fitted by least squares of the relative error, so small and large
//                        sizes count alike ([ParkerHarms] sec. IV, the Hockney model);
//   lane_parallelism     two lanes exchanging at once against one, where every process has two
//                        cores for its two lane threads (else left to run-time detection);
//   mpi_*_alpha, _beta   MPI's own collectives between all processes, sizes quadrupling: the
//                        factors of the start-up and per-byte terms of the MPICH algorithm the
//                        model prices them as, fitted as the ping-pong.
// The intra-process fits run first, on process 0 while the others sleep, so that they have the
// node's cores and the ping-pong's fit knows the cache size. Every fit measures sizes in passes
// and the table measures its entries in rounds, so that a disturbance of the machine spoils one
// pass or round rather than every repetition of a point.
// Buffers are page-aligned: glibc's memcpy can be many times slower when the destination sits a
// few bytes after the source modulo 4 KiB, which neither tlc's buffers nor the model know about.
#include "calibrate.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tlc/tlc.hpp>

#include "select/planner.hpp"
#include "select/tuning.hpp"
#include "team/config.hpp"
#include "team/team_access.hpp"

namespace tlc_calibrate {

namespace {

namespace td = tlc::detail;
using Clock = std::chrono::steady_clock;

double now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// A loop count of the default measuring effort scaled to `effort`, at least `least`.
int scaled(double iterations, double effort, int least = 1) {
  return std::max(least, static_cast<int>(iterations * effort));
}

// Returns when every process of comm has called it, asleep meanwhile: MPICH's blocking calls
// poll without end, and the processes that wait here would take cores from process 0's fits.
void sleeping_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &request);
  for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done;)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// A page-aligned buffer of bytes, filled so that its pages exist before anything is timed.
class Buffer {
 public:
  explicit Buffer(std::size_t bytes, unsigned char fill = 1)
      : bytes_(bytes),
        data_(static_cast<std::byte*>(
            std::aligned_alloc(4096, std::max<std::size_t>(4096, round(bytes))))) {
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), fill, bytes_);
  }
  std::byte* data() const { return data_.get(); }
  std::size_t size() const { return bytes_; }
  template <class T>
  std::span<T> as() const {
    return {reinterpret_cast<T*>(data_.get()), bytes_ / sizeof(T)};
  }

 private:
  static std::size_t round(std::size_t b) { return (b + 4095) / 4096 * 4096; }
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::size_t bytes_;
  std::unique_ptr<std::byte, Free> data_;
};

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && b >= 1024) {
    b /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, b == std::floor(b) ? "%.0f %s" : "%.1f %s", b, units[u]);
  return text;
}

// ---------------------------------------------------------------------------------------------
// The Hockney fit

struct Point {
  double bytes;
  double seconds;
};

struct Fit {
  double alpha = 0;
  double beta = 0;          // seconds per byte inside the caches
  double memory_beta = 0;   // seconds per byte beyond them
  double eager = 0;         // largest message without the handshake
  double handshake = 0;     // start-up added past `eager`
  double error = INFINITY;  // sum of squared relative deviations
  double worst = 0;         // largest |predicted / measured - 1| over the points
  double worst_bytes = 0;
  double model(double n, const td::CostParameters& p) const {
    const double h = td::lane_held(n, p);
    return alpha + (n > eager ? handshake : 0.0) + n * (h * beta + (1 - h) * memory_beta);
  }
};

// Solves the k x k system a x = r by Gaussian elimination with partial pivoting; false when it
// is singular.
bool solve(int k, double a[4][4], double r[4], double x[4]) {
  for (int col = 0; col < k; ++col) {
    int pivot = col;
    for (int i = col + 1; i < k; ++i)
      if (std::abs(a[i][col]) > std::abs(a[pivot][col])) pivot = i;
    if (!(std::abs(a[pivot][col]) > 1e-300)) return false;
    std::swap(a[pivot], a[col]);
    std::swap(r[pivot], r[col]);
    for (int i = col + 1; i < k; ++i) {
      const double f = a[i][col] / a[col][col];
      for (int j = col; j < k; ++j) a[i][j] -= f * a[col][j];
      r[i] -= f * r[col];
    }
  }
  for (int i = k - 1; i >= 0; --i) {
    double sum = r[i];
    for (int j = i + 1; j < k; ++j) sum -= a[i][j] * x[j];
    x[i] = sum / a[i][i];
  }
  return true;
}

// Hockney's t = alpha + n beta ([ParkerHarms] sec. IV), with two refinements the fit keeps only
// where they help: the bytes beyond what the caches hold (td::lane_held) at their own beta, and
// a handshake added to messages past an eager limit (tried at every measured size). Least
// squares of the relative error, minimising sum ((model_i - t_i) / t_i)^2, which is linear in
// alpha, the betas and the handshake for a given limit.
Fit fit_hockney(const std::vector<Point>& points, const td::CostParameters& p) {
  auto fit = [&](bool memory, double eager) {
    const bool step = eager > 0;
    const int k = 2 + (memory ? 1 : 0) + (step ? 1 : 0);
    double a[4][4] = {}, r[4] = {}, c[4] = {};
    for (const Point& pt : points) {
      const double h = memory ? td::lane_held(pt.bytes, p) : 1.0;
      double x[4] = {1, h * pt.bytes, 0, 0};
      int i = 2;
      if (memory) x[i++] = (1 - h) * pt.bytes;
      if (step) x[i++] = pt.bytes > eager ? 1 : 0;
      for (double& v : x) v /= pt.seconds;
      for (int u = 0; u < k; ++u) {
        r[u] += x[u];
        for (int w = 0; w < k; ++w) a[u][w] += x[u] * x[w];
      }
    }
    Fit f;
    if (!solve(k, a, r, c)) return f;
    f.alpha = c[0];
    f.beta = c[1];
    f.memory_beta = memory ? c[2] : c[1];
    if (step) {
      f.eager = eager;
      f.handshake = c[k - 1];
    }
    const bool sane =
        f.alpha > 0 && f.beta > 0 && f.memory_beta >= f.beta && (!step || f.handshake > 0);
    if (!sane) return Fit{};
    f.error = 0;
    for (const Point& pt : points) {
      const double d = f.model(pt.bytes, p) / pt.seconds - 1;
      f.error += d * d;
    }
    return f;
  };
  Fit best;
  for (const bool memory : {false, true}) {
    if (const Fit f = fit(memory, 0); f.error < best.error) best = f;
    for (std::size_t i = 0; i + 2 < points.size(); ++i)
      if (const Fit f = fit(memory, points[i].bytes); f.error < best.error) best = f;
  }
  // Nothing sane (a curve that bends the other way): the smallest time, and the slope through
  // the largest point.
  if (std::isinf(best.error)) {
    best.alpha = points.front().seconds;
    best.beta = best.memory_beta =
        std::max(1e-15, (points.back().seconds - best.alpha) / points.back().bytes);
  }
  for (const Point& pt : points) {
    const double dev = std::abs(best.model(pt.bytes, p) / pt.seconds - 1);
    if (dev > best.worst) {
      best.worst = dev;
      best.worst_bytes = pt.bytes;
    }
  }
  return best;
}

// One-way time of a ping-pong of n bytes between ranks 0 and 1 of `pair` (median of 9
// repetitions in three passes), on rank 0; the same sizes on both.
std::vector<Point> ping_pong(MPI_Comm pair, std::size_t max_bytes, double effort) {
  int rank = 0;
  MPI_Comm_rank(pair, &rank);
  const int peer = 1 - rank;
  // Three passes over the sizes, so that a disturbance of the machine spoils one pass of a size
  // rather than all of its repetitions; the median of all counts.
  std::vector<std::size_t> sizes;
  for (std::size_t n = 8; n <= max_bytes; n *= 2) sizes.push_back(n);
  std::vector<std::vector<double>> one_way(sizes.size());
  Buffer buffer(max_bytes);
  for (int pass = 0; pass < 3; ++pass)
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::size_t n = sizes[k];
      const int count = static_cast<int>(n);
      auto exchange = [&](int times) {
        for (int i = 0; i < times; ++i) {
          if (rank == 0) {
            MPI_Send(buffer.data(), count, MPI_BYTE, peer, 0, pair);
            MPI_Recv(buffer.data(), count, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(buffer.data(), count, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE);
            MPI_Send(buffer.data(), count, MPI_BYTE, peer, 0, pair);
          }
        }
      };
      exchange(3);
      double t0 = now();
      exchange(1);
      // Rank 0's probe decides how many round trips fit the time of one repetition.
      int iters = static_cast<int>(std::clamp(4e-3 * effort / (now() - t0), 2.0, 20000.0));
      MPI_Bcast(&iters, 1, MPI_INT, 0, pair);
      for (int r = 0; r < 3; ++r) {
        t0 = now();
        exchange(iters);
        one_way[k].push_back((now() - t0) / (2.0 * iters));
      }
    }
  std::vector<Point> points;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    points.push_back({static_cast<double>(sizes[k]), median(one_way[k])});
  return points;
}

// How many of two lanes progress at once: two threads per process, each exchanging n bytes on
// its own communicator, against one. Both ranks of `pair` return the same answer.
int lane_parallelism(MPI_Comm pair, std::size_t n) {
  int rank = 0;
  MPI_Comm_rank(pair, &rank);
  const int peer = 1 - rank, count = static_cast<int>(n);
  MPI_Comm lanes[2];
  for (MPI_Comm& l : lanes) MPI_Comm_dup(pair, &l);
  Buffer buffers[2] = {Buffer(n), Buffer(n)};
  auto exchange = [&](int l, int times) {
    for (int i = 0; i < times; ++i) {
      if (rank == 0) {
        MPI_Send(buffers[l].data(), count, MPI_BYTE, peer, 0, lanes[l]);
        MPI_Recv(buffers[l].data(), count, MPI_BYTE, peer, 0, lanes[l], MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffers[l].data(), count, MPI_BYTE, peer, 0, lanes[l], MPI_STATUS_IGNORE);
        MPI_Send(buffers[l].data(), count, MPI_BYTE, peer, 0, lanes[l]);
      }
    }
  };
  constexpr int times = 50;
  std::vector<double> one, two;
  for (int r = 0; r < 5; ++r) {
    MPI_Barrier(pair);
    double t0 = now();
    exchange(0, times);
    one.push_back(now() - t0);
    MPI_Barrier(pair);
    t0 = now();
    std::thread other([&] { exchange(1, times); });
    exchange(0, times);
    other.join();
    two.push_back(now() - t0);
  }
  for (MPI_Comm& l : lanes) MPI_Comm_free(&l);
  // Two lanes in parallel move twice the bytes in the time of one.
  double speedup = 2 * median(one) / median(two);
  MPI_Bcast(&speedup, 1, MPI_DOUBLE, 0, pair);
  return speedup >= 1.5 ? 2 : 1;
}

// Seconds per call of MPI's own collective c on n bytes per process (all processes of `comm`,
// the slowest one's median of 3 repetitions); the same on every process.
double time_mpi(MPI_Comm comm, tlc::Collective c, std::size_t n, Buffer& in, Buffer& out,
                double effort) {
  int processes = 1;
  MPI_Comm_size(comm, &processes);
  const int bytes = static_cast<int>(n), doubles = static_cast<int>(n / sizeof(double));
  auto call = [&] {
    switch (c) {
      case tlc::Collective::bcast:
        MPI_Bcast(out.data(), bytes, MPI_BYTE, 0, comm);
        break;
      case tlc::Collective::reduce:
        MPI_Reduce(in.data(), out.data(), doubles, MPI_DOUBLE, MPI_SUM, 0, comm);
        break;
      case tlc::Collective::allreduce:
        MPI_Allreduce(in.data(), out.data(), doubles, MPI_DOUBLE, MPI_SUM, comm);
        break;
      case tlc::Collective::allgather:
        MPI_Allgather(in.data(), bytes, MPI_BYTE, out.data(), bytes, MPI_BYTE, comm);
        break;
      case tlc::Collective::alltoall:
        MPI_Alltoall(in.data(), bytes, MPI_BYTE, out.data(), bytes, MPI_BYTE, comm);
        break;
      default:
        break;
    }
  };
  for (int i = 0; i < 3; ++i) call();
  MPI_Barrier(comm);
  double t0 = now();
  call();
  double probe = now() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &probe, 1, MPI_DOUBLE, MPI_MAX, comm);
  const int iters =
      static_cast<int>(std::clamp(4e-3 * effort / std::max(probe, 1e-9), 1.0, 20000.0));
  std::vector<double> reps;
  for (int r = 0; r < 3; ++r) {
    MPI_Barrier(comm);
    t0 = now();
    for (int i = 0; i < iters; ++i) call();
    double t = (now() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    reps.push_back(t);
  }
  return median(reps);
}

// The factors of MPI's collective c against the model's MPICH algorithm on the fitted alpha,
// beta and gamma: t = a start + b bytes, least squares of the relative error as for the
// Hockney fit. Every process measures; process 0's answer counts. Returns the worst deviation.
double fit_mpi_factors(tlc::Collective c, std::size_t max_bytes, td::CostParameters& p,
                       bool verbose, bool talk, double effort) {
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const std::size_t blocks = c == tlc::Collective::alltoall || c == tlc::Collective::allgather
                                 ? static_cast<std::size_t>(processes)
                                 : 1;
  Buffer in(max_bytes * blocks), out(max_bytes * blocks);
  std::fill(in.as<double>().begin(), in.as<double>().end(), 1.0);
  struct Sample {
    double start, bytes, seconds;
  };
  std::vector<std::size_t> sizes;
  for (std::size_t n = 8; n <= max_bytes; n *= 4) sizes.push_back(n);
  std::vector<std::vector<double>> times(sizes.size());
  for (int pass = 0; pass < 3; ++pass)  // as the ping-pong: passes over the sizes
    for (std::size_t k = 0; k < sizes.size(); ++k)
      times[k].push_back(time_mpi(MPI_COMM_WORLD, c, sizes[k], in, out, effort));
  std::vector<Sample> samples;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const td::MpiTerms terms = td::mpi_terms({c, sizes[k], processes, processes, 1, true, true}, p);
    samples.push_back({terms.start, terms.bytes, median(times[k])});
  }
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (const Sample& x : samples) {
    const double w = 1 / (x.seconds * x.seconds);
    s00 += w * x.start * x.start;
    s01 += w * x.start * x.bytes;
    s11 += w * x.bytes * x.bytes;
    r0 += w * x.start * x.seconds;
    r1 += w * x.bytes * x.seconds;
  }
  const double det = s00 * s11 - s01 * s01;
  double a = det > 0 ? (r0 * s11 - r1 * s01) / det : 1;
  double b = det > 0 ? (s00 * r1 - s01 * r0) / det : 1;
  // A factor that comes out negative means the two parts cannot be told apart: one factor for
  // the whole time instead.
  if (!(a > 0) || !(b > 0)) {
    double num = 0, den = 0;
    for (const Sample& x : samples) {
      const double model = x.start + x.bytes;
      num += model / x.seconds;
      den += model * model / (x.seconds * x.seconds);
    }
    a = b = den > 0 ? num / den : 1;
  }
  double worst = 0;
  for (const Sample& x : samples)
    worst = std::max(worst, std::abs((a * x.start + b * x.bytes) / x.seconds - 1));
  if (talk) {
    const auto i = static_cast<std::size_t>(c);
    p.mpi_alpha[i] = a;
    p.mpi_beta[i] = b;
    if (verbose) {
      std::size_t n = 8;
      for (const Sample& x : samples) {
        std::printf("  %-10s %10s  %10.3f us  model %10.3f us\n", tlc::to_string(c),
                    human_bytes(static_cast<double>(n)).c_str(), x.seconds * 1e6,
                    (a * x.start + b * x.bytes) * 1e6);
        n *= 4;
      }
    }
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------
// Inside a process

struct IntraFit {
  int threads = 1;
  std::optional<double> sync;  // per rendezvous round (log2 T rounds for T threads)
  double call = 0;
  double memory = 0, cache = 0, cache_bytes = 0;
  double reduce = 0;
  std::vector<std::pair<double, double>> copy_rates;  // working set, bytes/s per thread
};

// The copy rates as the model sees them (predict_call): of a working set W the share
// h = min(1, cache / W) moves at the cache rate c, the rest at the memory rate m, so
// 1 / rate = h / c + (1 - h) / m. Fitted by least squares of log(rate), which weighs a rate
// twice too high as much as one twice too low, over a grid of the three (the points are few).
void fit_copy_rates(IntraFit& fit) {
  const auto& points = fit.copy_rates;
  double low = INFINITY, high = 0;
  for (const auto& [working_set, rate] : points) {
    low = std::min(low, rate);
    high = std::max(high, rate);
  }
  auto error = [&](double cache, double c, double m) {
    double e = 0;
    for (const auto& [working_set, rate] : points) {
      const double h = std::min(1.0, cache / working_set);
      const double d = std::log(rate * (h / c + (1 - h) / m));
      e += d * d;
    }
    return e;
  };
  constexpr int steps = 64;
  const double span = std::log(high / low) + 1e-9;
  double best = INFINITY;
  for (double cache = points.front().first; cache <= points.back().first; cache *= std::sqrt(2.0))
    for (int i = 0; i <= steps; ++i)
      for (int j = 0; j <= i; ++j) {  // memory no faster than the caches
        const double c = low * std::exp(span * i / steps), m = low * std::exp(span * j / steps);
        const double e = error(cache, c, m);
        if (e < best) {
          best = e;
          fit.cache = c;
          fit.memory = m;
          fit.cache_bytes = cache;
        }
      }
}

// A quick figure of how fast the machine is now, taken before the fits and after the table: on
// a shared or virtual machine cross-core latencies change from run to run and sometimes within
// one, and a table whose machine changed under it misleads. An 8-byte MPI_Allreduce between all
// processes, or with one process a barrier of its team's threads.
double machine_probe(int processes, int threads, double effort) {
  if (processes >= 2) {
    Buffer in(64), out(64);
    return time_mpi(MPI_COMM_WORLD, tlc::Collective::allreduce, 8, in, out, effort);
  }
  tlc::TeamOptions options;
  options.threads = threads;
  tlc::Team team(MPI_COMM_SELF, options);
  double seconds = 0;
  team.run([&](tlc::Thread& me) {
    const int iters = scaled(20000, effort, 10);
    for (int i = 0; i < iters / 10; ++i) me.barrier();
    std::vector<double> reps;
    for (int r = 0; r < 5; ++r) {
      me.barrier();
      const double t0 = now();
      for (int i = 0; i < iters; ++i) me.barrier();
      reps.push_back(me.allreduce((now() - t0) / iters, tlc::max{}));
    }
    if (me.local_index() == 0) seconds = median(reps);
  });
  return seconds;
}

IntraFit measure_intra(int threads, bool verbose, double effort) {
  tlc::TeamOptions options;
  options.threads = threads;
  tlc::Team team(MPI_COMM_SELF, options);
  IntraFit fit;
  fit.threads = team.threads();
  const auto T = static_cast<std::size_t>(fit.threads);
  std::vector<double> barrier_s(1), flat_s(1);
  constexpr std::size_t copy_sizes[] = {16 << 10, 64 << 10, 256 << 10, 1 << 20,
                                        4 << 20,  16 << 20, 64 << 20};
  constexpr std::size_t sizes = std::size(copy_sizes);
  std::vector<double> copy(sizes);
  double reduce = 0;
  team.run([&](tlc::Thread& me) {
    // One rendezvous per call: the single-process barrier is a begin line per thread.
    auto time_calls = [&](auto&& call, int iters) {
      for (int i = 0; i < iters / 10 + 10; ++i) call();
      std::vector<double> reps;
      for (int r = 0; r < 5; ++r) {
        me.barrier();
        const double t0 = now();
        for (int i = 0; i < iters; ++i) call();
        reps.push_back(me.allreduce((now() - t0) / iters, tlc::max{}));
      }
      return median(reps);
    };
    const double barrier = time_calls([&] { me.barrier(); }, scaled(20000, effort, 10));
    std::vector<double> in(8, 1.0), out(8);  // 64 bytes: past the inline form, flat carried
    const double flat = time_calls([&] { me.allreduce(in, out); }, scaled(20000, effort, 10));
    if (me.local_index() == 0) {
      barrier_s[0] = barrier;
      flat_s[0] = flat;
    }
    // Copy rates, every thread at once; the slowest thread's rate counts.
    for (std::size_t k = 0; k < sizes; ++k) {
      const std::size_t s = copy_sizes[k];
      Buffer from(s, 1), to(s, 2);
      const int iters =
          scaled(static_cast<double>(std::size_t{512} << 20) / static_cast<double>(s), effort, 3);
      std::memcpy(to.data(), from.data(), s);
      me.barrier();
      const double t0 = now();
      for (int i = 0; i < iters; ++i) {
        std::memcpy(to.data(), from.data(), s);
        asm volatile("" ::: "memory");
      }
      const double rate = static_cast<double>(s) * iters / (now() - t0);
      const double slowest = me.allreduce(rate, tlc::min{});
      if (me.local_index() == 0) copy[k] = slowest;
    }
    // Combine rate: dst += src over doubles, inside the caches.
    {
      const std::size_t s = 128 << 10;
      Buffer a(s), b(s);
      std::span<double> x = a.as<double>(), y = b.as<double>();
      std::fill(x.begin(), x.end(), 1.0);
      std::fill(y.begin(), y.end(), 0.5);
      const int iters = scaled(4000, effort, 10);
      me.barrier();
      const double t0 = now();
      for (int i = 0; i < iters; ++i) {
        for (std::size_t j = 0; j < x.size(); ++j) x[j] += y[j];
        asm volatile("" ::: "memory");
      }
      const double rate = static_cast<double>(s) * iters / (now() - t0);
      const double slowest = me.allreduce(rate, tlc::min{});
      if (me.local_index() == 0) reduce = slowest;
    }
  });
  if (T > 1) fit.sync = barrier_s[0] / std::ceil(std::log2(static_cast<double>(T)));
  // tlc's own work per call: the same allreduce on a team of one thread, where nobody waits.
  {
    tlc::TeamOptions one;
    one.threads = 1;
    tlc::Team alone(MPI_COMM_SELF, one);
    alone.run([&](tlc::Thread& me) {
      std::vector<double> in(8, 1.0), out(8);
      const int iters = scaled(20000, effort, 10);
      for (int i = 0; i < iters / 10; ++i) me.allreduce(in, out);
      std::vector<double> reps;
      for (int r = 0; r < 5; ++r) {
        const double t0 = now();
        for (int i = 0; i < iters; ++i) me.allreduce(in, out);
        reps.push_back((now() - t0) / iters);
      }
      fit.call = std::max(0.01e-6, median(reps));
    });
  }
  fit.reduce = reduce;
  for (std::size_t k = 0; k < sizes; ++k)
    fit.copy_rates.emplace_back(2.0 * static_cast<double>(copy_sizes[k] * T), copy[k]);
  fit_copy_rates(fit);
  if (verbose) {
    std::printf(
        "  barrier of %zu threads %.3f us, flat allreduce of 64 B %.3f us (one thread: %.3f "
        "us)\n",
        T, barrier_s[0] * 1e6, flat_s[0] * 1e6, fit.call * 1e6);
    for (const auto& [working_set, rate] : fit.copy_rates) {
      const double h = std::min(1.0, fit.cache_bytes / working_set);
      std::printf("  memcpy, working set %10s: %6.2f GB/s per thread  model %6.2f GB/s\n",
                  human_bytes(working_set).c_str(), rate / 1e9,
                  1e-9 / (h / fit.cache + (1 - h) / fit.memory));
    }
    std::printf("  sum kernel: %.2f GB/s per thread\n", reduce / 1e9);
  }
  return fit;
}

// ---------------------------------------------------------------------------------------------
// Predicted against measured

struct Row {
  tlc::Collective collective;
  std::size_t bytes;
  std::string algorithm;  // name:form
  double predicted = 0;
  double measured = 0;
  bool chosen = false;  // the fitted model's plan runs this algorithm at this size
};

tlc::Collective collective_named(const std::string& name) {
  for (int c = 0; c <= static_cast<int>(tlc::Collective::exscan); ++c)
    if (name == tlc::to_string(static_cast<tlc::Collective>(c)))
      return static_cast<tlc::Collective>(c);
  throw std::invalid_argument("--collective: unknown collective '" + name + "'");
}

bool supported(tlc::Collective c) {
  return c == tlc::Collective::allreduce || c == tlc::Collective::allgather ||
         c == tlc::Collective::bcast || c == tlc::Collective::alltoall ||
         c == tlc::Collective::reduce;
}

td::PlanQuery query(tlc::Collective c, std::size_t bytes) {
  return {c, std::max<std::size_t>(1, bytes / sizeof(double)), sizeof(double), true, false};
}

// Seconds per call of `call` on every thread (the slowest thread's median over reps), for a
// buffer of `bytes` per rank. Large buffers get at least the calls tlc-bench's sweeps give them
// (min(1 GiB / bytes, 0.2 s / call), bench/driver.cpp): around the last-level cache a call runs
// faster after several of its kind than after one or two, and the times written to the tuning
// file must be those the sweeps measure.
template <class Call>
double time_collective(tlc::Thread& me, std::size_t bytes, Call&& call, const CalibrateOptions& o) {
  call();
  call();
  me.barrier();
  double t0 = now();
  call();
  const double probe = std::max(me.allreduce(now() - t0, tlc::max{}), 1e-9);
  const double reps_count = std::max(1, o.reps);
  const double by_budget = o.seconds_per_point * o.effort / reps_count / probe;
  const double as_swept =
      std::min(static_cast<double>(std::size_t{1} << 30) / static_cast<double>(bytes),
               0.2 / probe) *
      o.effort / reps_count;
  const int iters = static_cast<int>(std::clamp(std::max(by_budget, as_swept), 1.0, 1e5));
  std::vector<double> reps;
  for (int r = 0; r < std::max(1, o.reps); ++r) {
    me.barrier();
    t0 = now();
    for (int i = 0; i < iters; ++i) call();
    reps.push_back(me.allreduce((now() - t0) / iters, tlc::max{}));
  }
  return median(reps);
}

// Measures collective c with algorithm `name` forced at every size; rank 0 of the world gets
// the times (seconds per call) in `times`.
void measure_forced(tlc::Collective c, const std::string& name, const CalibrateOptions& o,
                    const std::vector<std::size_t>& sizes, std::vector<double>& times) {
  tlc::TeamOptions options;
  options.threads = o.threads;
  options.lanes = o.lanes;
  options.algorithms[c] = name;
  options.fallback = "error";
  tlc::Team team(MPI_COMM_WORLD, options);
  times.assign(sizes.size(), 0);
  team.run([&](tlc::Thread& me) {
    const auto N = static_cast<std::size_t>(me.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::size_t count = std::max<std::size_t>(1, sizes[k] / sizeof(double));
      const std::size_t blocks = c == tlc::Collective::alltoall ? N : 1;
      const std::size_t out_blocks =
          c == tlc::Collective::allgather || c == tlc::Collective::alltoall ? N : 1;
      Buffer send(count * blocks * sizeof(double)), recv(count * out_blocks * sizeof(double));
      std::span<double> in = send.as<double>(), out = recv.as<double>();
      std::fill(in.begin(), in.end(), 1.0);
      double t = 0;
      switch (c) {
        case tlc::Collective::allreduce:
          t = time_collective(
              me, send.size(), [&] { me.allreduce(in, out); }, o);
          break;
        case tlc::Collective::reduce:
          t = time_collective(
              me, send.size(), [&] { me.reduce(in, out, 0); }, o);
          break;
        case tlc::Collective::allgather:
          t = time_collective(
              me, send.size(), [&] { me.allgather(in, out); }, o);
          break;
        case tlc::Collective::alltoall:
          t = time_collective(
              me, send.size(), [&] { me.alltoall(in, out); }, o);
          break;
        case tlc::Collective::bcast:
          t = time_collective(
              me, send.size(), [&] { me.bcast(out, 0); }, o);
          break;
        default:
          break;
      }
      if (me.rank() == 0) times[k] = t;
    }
  });
}

bool within(double predicted, double measured, double tolerance) {
  return std::abs(predicted - measured) <= tolerance * measured;
}

void print_table(const std::vector<Row>& rows, const std::string& shape) {
  std::printf(
      "\npredicted against measured, %s (ratio = predicted / measured; '*' the fitted "
      "model's choice; '!' more than 25%% off):\n",
      shape.c_str());
  std::printf("  %-10s %9s  %-28s %12s %12s %7s\n", "collective", "bytes", "algorithm:form",
              "predicted us", "measured us", "ratio");
  for (const Row& r : rows) {
    const double ratio = r.predicted / r.measured;
    std::printf("  %-10s %9s %c%-28s %12.2f %12.2f %7.2f %s\n", tlc::to_string(r.collective),
                human_bytes(static_cast<double>(r.bytes)).c_str(), r.chosen ? '*' : ' ',
                r.algorithm.c_str(), r.predicted * 1e6, r.measured * 1e6, ratio,
                within(r.predicted, r.measured, 0.25) ? "" : "!");
  }
  // Per collective: how many predictions are within 25%, for all algorithms and for the chosen
  // ones, and whether the choice is within 10% of the fastest forced algorithm (issue 15's
  // acceptance).
  std::printf("\nsummary:\n");
  for (std::size_t i = 0; i < rows.size();) {
    const tlc::Collective c = rows[i].collective;
    int all = 0, all_in = 0, chosen = 0, chosen_in = 0, sizes = 0, good_choice = 0;
    double worst_choice = 1;
    std::size_t worst_bytes = 0;
    std::size_t j = i;
    while (j < rows.size() && rows[j].collective == c) {
      const std::size_t bytes = rows[j].bytes;
      double best = INFINITY, picked = NAN;
      for (; j < rows.size() && rows[j].collective == c && rows[j].bytes == bytes; ++j) {
        const Row& r = rows[j];
        ++all;
        all_in += within(r.predicted, r.measured, 0.25);
        best = std::min(best, r.measured);
        if (r.chosen) {
          ++chosen;
          chosen_in += within(r.predicted, r.measured, 0.25);
          picked = r.measured;
        }
      }
      if (!std::isnan(picked)) {
        ++sizes;
        good_choice += picked <= 1.10 * best;
        if (picked / best > worst_choice) {
          worst_choice = picked / best;
          worst_bytes = bytes;
        }
      }
    }
    std::printf(
        "  %-10s predictions within 25%%: %d/%d entries, %d/%d of the chosen algorithm; the "
        "choice within 10%% of the fastest forced algorithm at %d/%d sizes",
        tlc::to_string(c), all_in, all, chosen_in, chosen, good_choice, sizes);
    if (worst_choice > 1.10)
      std::printf(" (worst %.2fx at %s)", worst_choice,
                  human_bytes(static_cast<double>(worst_bytes)).c_str());
    std::printf("\n");
    i = j;
  }
}

std::string utc_date() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return text;
}

std::string first_line(const std::string& text) {
  std::string line;
  for (char ch : text.substr(0, text.find('\n'))) {
    const bool space = ch == ' ' || ch == '\t' || ch == '\r';
    if (!space)
      line += ch;
    else if (!line.empty() && line.back() != ' ')
      line += ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

int calibrate(const CalibrateOptions& o) {
  tlc::Environment env;
  int rank = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const bool talk = rank == 0;
  std::vector<tlc::Collective> collectives;
  for (const std::string& name : o.collectives) {
    const tlc::Collective c = collective_named(name);
    if (!supported(c))
      throw std::invalid_argument(
          "--collective: the table measures allreduce, reduce, allgather, "
          "bcast and alltoall, not " +
          name);
    collectives.push_back(c);
  }
  // MPI's collectives whose factors are fitted (the ones the tuning file has keys for).
  const tlc::Collective mpi_collectives[] = {tlc::Collective::bcast, tlc::Collective::reduce,
                                             tlc::Collective::allreduce, tlc::Collective::allgather,
                                             tlc::Collective::alltoall};
  // What the configuration says now: the starting point, and what a single process keeps.
  const td::Config configured = td::Config::read(tlc::TeamOptions{});
  td::CostParameters fitted = configured.plan.costs;
  // The measured times of the configuration's tuning file: those of other shapes are kept, this
  // shape's are replaced by the table's.
  td::MeasuredTimes measured = configured.plan.measured;
  std::vector<std::string> notes;

  // Inside a process: process 0's team, the others asleep so that it has the node's cores.
  int intra_threads = processes == 1 ? o.threads : 0;
  const double probe_before = machine_probe(processes, intra_threads, o.effort);
  if (talk) {
    std::printf("intra-process measurements on process 0\n");
    std::fflush(stdout);
    const IntraFit f = measure_intra(intra_threads, o.verbose, o.effort);
    intra_threads = f.threads;
    if (f.sync) {
      fitted.rendezvous = *f.sync;
    } else {
      notes.push_back("sync_us not measured: the team has one thread");
    }
    fitted.call_overhead = f.call;
    fitted.memory_bandwidth = f.memory;
    fitted.cache_bandwidth = f.cache;
    fitted.cache_bytes = f.cache_bytes;
    fitted.reduce_bandwidth = f.reduce;
  }
  sleeping_barrier(MPI_COMM_WORLD);
  // The ping-pong's fit needs the cache size.
  MPI_Bcast(&fitted, sizeof fitted, MPI_BYTE, 0, MPI_COMM_WORLD);

  // Between processes: ranks 0 and 1.
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  if (processes >= 2) {
    if (talk)
      std::printf("ping-pong between processes 0 and 1, 8 B .. %s\n",
                  human_bytes(static_cast<double>(o.max_bytes)).c_str());
    std::fflush(stdout);
    if (pair != MPI_COMM_NULL) {
      const std::vector<Point> points = ping_pong(pair, o.max_bytes, o.effort);
      if (talk) {
        const Fit f = fit_hockney(points, fitted);
        fitted.alpha = f.alpha;
        fitted.lane_bandwidth = 1 / f.beta;
        fitted.lane_memory_bandwidth = 1 / f.memory_beta;
        fitted.handshake = f.handshake;
        if (f.handshake > 0) fitted.eager_bytes = f.eager;
        if (o.verbose)
          for (const Point& p : points)
            std::printf("  %10s  %10.3f us  model %10.3f us\n", human_bytes(p.bytes).c_str(),
                        p.seconds * 1e6, f.model(p.bytes, fitted) * 1e6);
        char line[240];
        std::snprintf(line, sizeof line,
                      "Hockney fit of the ping-pong, 8 B .. %s: alpha %.3f us, beta %.4f ns/B "
                      "(%.2f GB/s), beyond the caches %.4f ns/B (%.2f GB/s), handshake %.3f us "
                      "past %s; worst point %.0f%% off at %s",
                      human_bytes(static_cast<double>(o.max_bytes)).c_str(), f.alpha * 1e6,
                      f.beta * 1e9, 1e-9 / f.beta, f.memory_beta * 1e9, 1e-9 / f.memory_beta,
                      f.handshake * 1e6, human_bytes(f.eager).c_str(), f.worst * 100,
                      human_bytes(f.worst_bytes).c_str());
        notes.push_back(line);
      }
      // Lanes in parallel need a core for each lane thread of each process.
      MPI_Comm node;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
      int on_node = 1;
      MPI_Comm_size(node, &on_node);
      MPI_Comm_free(&node);
      int spare = std::thread::hardware_concurrency() / std::max(1, on_node) >= 2 ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &spare, 1, MPI_INT, MPI_MIN, pair);
      if (spare) {
        const int parallel = lane_parallelism(pair, std::min<std::size_t>(o.max_bytes, 1 << 20));
        if (talk) {
          fitted.lane_parallelism = parallel;
          notes.push_back("two lanes at once against one: " + std::to_string(parallel) +
                          " lane(s) progress in parallel");
        }
      } else if (talk) {
        notes.push_back(
            "lane_parallelism not measured: a process has fewer than two cores for "
            "two lane threads; left to run-time detection");
      }
    }
    sleeping_barrier(MPI_COMM_WORLD);
  } else {
    notes.push_back(
        "one process: the inter-process keys (alpha_us, lane_gbs, lane_memory_gbs, eager_kib, "
        "handshake_us, mpi_*) keep the configured values (TLC_TUNING, TLC_COST_*, else the "
        "defaults); run with mpiexec -n 2 to fit them");
  }
  if (pair != MPI_COMM_NULL) MPI_Comm_free(&pair);

  // MPI's own collectives between all processes, priced on the fitted alpha, betas and gamma.
  MPI_Bcast(&fitted, sizeof fitted, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (processes >= 2) {
    if (talk) {
      std::printf("MPI's collectives between all %d processes\n", processes);
      std::fflush(stdout);
    }
    for (const tlc::Collective c : mpi_collectives) {
      const double worst = fit_mpi_factors(c, o.max_bytes, fitted, o.verbose, talk, o.effort);
      if (talk) {
        const auto i = static_cast<std::size_t>(c);
        char line[200];
        std::snprintf(line, sizeof line,
                      "MPI's %s against the model's MPICH algorithm: start-up x %.2f, per byte x "
                      "%.2f; worst point %.0f%% off",
                      tlc::to_string(c), fitted.mpi_alpha[i], fitted.mpi_beta[i], worst * 100);
        notes.push_back(line);
      }
    }
  }

  // The tuning file, and what it says.
  std::vector<std::string> header = {
      "tlc tuning file, written by tlc-calibrate (docs/model.md)", "date: " + utc_date(),
      "MPI library: " + first_line(tlc::Environment::mpi_library_version()),
      "tlc " + std::string(tlc::version_string),
      "shape: " + std::to_string(processes) + " process(es); intra-process fit on " +
          std::to_string(intra_threads) + " thread(s) of process 0"};
  header.insert(header.end(), o.header.begin(), o.header.end());
  header.insert(header.end(), notes.begin(), notes.end());
  // Every process needs the fitted values for the predictions.
  MPI_Bcast(&fitted, sizeof fitted, MPI_BYTE, 0, MPI_COMM_WORLD);
  auto write_tuning_file = [&] {
    if (!talk || o.output.empty()) return;
    std::ofstream out(o.output);
    out << td::tuning_text(fitted, header, &measured);
    if (!out) throw std::runtime_error("cannot write the tuning file '" + o.output + "'");
    std::printf("wrote %s (load it with TLC_TUNING=%s)\n", o.output.c_str(), o.output.c_str());
    std::fflush(stdout);
  };
  if (talk) {
    for (const std::string& n : notes) std::printf("%s\n", n.c_str());
    std::printf("\nfitted parameters:\n");
    for (const td::CostKey& k : td::cost_keys())
      if (!k.when_zero || td::cost_value(fitted, k) > 0)
        std::printf("  %-17s %10.4g   %s\n", k.key, td::cost_value(fitted, k), k.meaning);
    std::fflush(stdout);
  }
  if (!o.table) {
    write_tuning_file();
    return 0;
  }

  // The table: the team's shape, with the fitted parameters.
  std::vector<std::size_t> sizes;
  for (std::size_t b = std::max<std::size_t>(8, o.min_bytes); b <= o.max_bytes; b *= 4)
    sizes.push_back(b);
  if (sizes.empty() || sizes.back() != o.max_bytes) sizes.push_back(o.max_bytes);
  std::unique_ptr<td::Planner> model;
  std::string shape;
  td::MeasuredShape measured_shape;
  int ranks = 1;
  {
    tlc::TeamOptions options;
    options.threads = o.threads;
    options.lanes = o.lanes;
    tlc::Team team(MPI_COMM_WORLD, options);
    const td::Planner& own = td::TeamAccess::impl(team).planner();
    td::PlanSettings settings = own.settings();
    settings.forced = {};
    settings.leaders = td::LeaderPolicy::fixed;
    const int detected = settings.costs.lane_parallelism;
    settings.costs = fitted;
    if (settings.costs.lane_parallelism == 0) settings.costs.lane_parallelism = detected;
    // The table's predictions are the fitted model's alone.
    settings.measured = {};
    measured_shape = {team.processes(), team.threads(), team.lanes()};
    ranks = team.size();
    model = std::make_unique<td::Planner>(own.shape(), settings);
    shape = std::to_string(team.processes()) + " process(es) x " + std::to_string(team.threads()) +
            " thread(s), " + std::to_string(team.lanes()) + " lane(s)";
  }
  // Sizes are bytes of one rank block, as the planner and the tuning file count them. A buffer
  // of alltoall holds a block per rank: its sizes are those of the buffers (as tlc-bench's sweeps
  // measure them) cut into the team's ranks, so that the tuning file has times at the sizes the
  // sweeps ask about rather than between them.
  auto sizes_of = [&](tlc::Collective c) {
    if (c != tlc::Collective::alltoall) return sizes;
    std::vector<std::size_t> blocks;
    for (const std::size_t b : sizes) {
      const std::size_t block = std::max<std::size_t>(
          sizeof(double), b / static_cast<std::size_t>(ranks) / sizeof(double) * sizeof(double));
      if (blocks.empty() || blocks.back() != block) blocks.push_back(block);
    }
    return blocks;
  };
  struct Entry {
    tlc::Collective collective;
    const td::AlgorithmInfo* info;
    std::vector<std::size_t> sizes;           // bytes of a rank block
    std::vector<std::vector<double>> rounds;  // [round][size]
  };
  std::vector<Entry> entries;
  for (const tlc::Collective c : collectives)
    for (const td::AlgorithmInfo& info : td::algorithm_registry())
      if (info.collective == c && model->forced_plan(query(c, 8), info.id))
        entries.push_back({c, &info, sizes_of(c), {}});
  // Every algorithm in turn, round after round, so that a disturbance of the machine spoils one
  // round of an entry rather than all of it; the median over the rounds counts.
  const int rounds = std::max(1, o.rounds);
  for (int round = 0; round < rounds; ++round)
    for (Entry& e : entries) {
      if (talk) {
        std::printf("round %d of %d: %s, %s\n", round + 1, rounds, tlc::to_string(e.collective),
                    e.info->name);
        std::fflush(stdout);
      }
      e.rounds.emplace_back();
      measure_forced(e.collective, e.info->name, o, e.sizes, e.rounds.back());
    }
  std::vector<Row> rows;
  td::MeasuredTimes fresh;
  for (const Entry& e : entries) {
    if (!talk) break;
    for (std::size_t k = 0; k < e.sizes.size(); ++k) {
      const td::PlanQuery q = query(e.collective, e.sizes[k]);
      const td::Plan plan = model->as_run(q, *model->forced_plan(q, e.info->id));
      Row r{e.collective, e.sizes[k], std::string(e.info->name) + ":" + td::to_string(plan.form)};
      r.predicted = model->predict_call(q, plan).value_or(NAN);
      std::vector<double> per_round;
      for (const std::vector<double>& times : e.rounds) per_round.push_back(times[k]);
      r.measured = median(per_round);
      fresh.add(e.collective, e.info->id, measured_shape, {e.sizes[k], r.measured});
      r.chosen = model->plan(q).algorithm == e.info->id;
      rows.push_back(r);
    }
  }
  if (talk) {
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      const auto ia = std::find(collectives.begin(), collectives.end(), a.collective);
      const auto ib = std::find(collectives.begin(), collectives.end(), b.collective);
      return ia != ib ? ia < ib : a.bytes < b.bytes;
    });
    print_table(rows, shape);
    // The table's times go into the tuning file, replacing older ones of this shape.
    measured.erase(measured_shape);
    measured.merge(fresh);
    write_tuning_file();
  }
  const double probe_after = machine_probe(processes, intra_threads, o.effort);
  if (talk) {
    const char* what = processes >= 2 ? "8-byte MPI_Allreduce" : "barrier of the team";
    std::printf("machine check: %s %.3f us before the fits, %.3f us after the table%s\n", what,
                probe_before * 1e6, probe_after * 1e6,
                std::max(probe_before, probe_after) > 1.5 * std::min(probe_before, probe_after)
                    ? " -- the machine changed speed during the run: read the table with care"
                    : "");
  }
  return 0;
}

}  // namespace

int run_calibrate(const CalibrateOptions& options) {
  try {
    return calibrate(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc-calibrate: %s\n", e.what());
    return 1;
  }
}

}  // namespace tlc_calibrate
