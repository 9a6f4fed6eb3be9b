// Measurement helpers shared by all cases.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

void inject_skew(int thread, int threads, double skew_us) {
  if (skew_us <= 0 || thread == 0) return;
  const auto until =
      Clock::now() + std::chrono::duration<double, std::micro>(skew_us * thread / threads);
  // Sleeping is far too coarse at microsecond scale, so wait by polling the clock; yielding
  // while doing so gives the core to threads with real work when the machine is oversubscribed.
  while (Clock::now() < until) std::this_thread::yield();
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

int calls_in(int iters, int reps, int r) {
  return std::max(1, iters / reps + (r < iters % reps ? 1 : 0));
}

double global_max(double local) {
  double global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

Expected::Expected(int ranks) : sums_(11, 0.0) {
  for (std::size_t i = 0; i < sums_.size(); ++i)
    for (int r = 0; r < ranks; ++r) sums_[i] += input_value(r, i);
}

std::string mismatch_text(std::size_t i, std::size_t count, double got, double want,
                          const std::string& who) {
  char text[160];
  std::snprintf(text, sizeof text, "element %zu of %zu is %.17g, expected %.17g", i, count, got,
                want);
  return who + ": " + text;
}

void poison(double* data, std::size_t count) {
  std::fill(data, data + count, std::numeric_limits<double>::quiet_NaN());
}

std::string check_sum(const double* recv, std::size_t count, const Expected& expected,
                      const std::string& who) {
  return first_mismatch(
      recv, count, [&](std::size_t i) { return expected.at(i); }, who);
}

}  // namespace tlc_bench
