// How long a plain memcpy takes depending on what was copied before it: the same buffers many
// times in a row, or two pairs of buffers taken in turn. No tlc code; it shows a property of the
// machine that any cost model without the call history inherits (docs/benchmarking.md).
//
//   g++ -O2 -o /tmp/copy_history bench/probes/copy_history.cpp && /tmp/copy_history
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Buffers {
  explicit Buffers(std::size_t bytes) : source(bytes, 1), target(bytes, 2) {}
  std::vector<char> source, target;
};

double copy_us(Buffers& b) {
  const auto start = std::chrono::steady_clock::now();
  std::memcpy(b.target.data(), b.source.data(), b.source.size());
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(stop - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 30;
  std::printf("%8s | %9s %9s %9s %9s | %12s\n", "MiB", "row 1st", "row 2nd", "row 10th", "row last",
              "in turn med");
  for (std::size_t mib : {8, 16, 32, 64, 128, 256}) {
    Buffers a(mib << 20), b(mib << 20);
    copy_us(a);
    copy_us(b);  // page faults out of the way; b's copy also pushes a out of the caches
    std::vector<double> row;
    for (int i = 0; i < calls; ++i) row.push_back(copy_us(a));
    std::vector<double> in_turn;
    for (int i = 0; i < calls; ++i) {
      in_turn.push_back(copy_us(b));
      in_turn.push_back(copy_us(a));
    }
    std::printf("%8zu | %9.0f %9.0f %9.0f %9.0f | %12.0f\n", mib, row[0], row[1],
                row[std::min(9, calls - 1)], row.back(), median(in_turn));
  }
}
