// GoogleTest main for MPI tests: initialises MPI with MPI_THREAD_MULTIPLE (through
// tlc::Environment), prints progress from rank 0 only, prints every rank's failures tagged with
// its rank, and makes every rank exit non-zero if any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <tlc/environment.hpp>

namespace {

class FailureCollector : public testing::EmptyTestEventListener {
 public:
  explicit FailureCollector(int rank) : rank_(rank) {}
  // gtest holds its own lock while it reports a result, so the test's name is remembered here
  // instead of asked for (UnitTest::current_test_info() would deadlock on that lock).
  void OnTestStart(const testing::TestInfo& info) override {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    text_ += "[rank " + std::to_string(rank_) + "] " + current_ + " at " +
             (result.file_name() ? result.file_name() : "?") + ":" +
             std::to_string(result.line_number()) + ": " + result.message() + "\n";
  }
  const std::string& text() const { return text_; }

 private:
  int rank_;
  std::mutex mutex_;
  std::string current_ = "?";
  std::string text_;
};

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (env.thread_level() < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::fprintf(stderr, "MPI does not provide MPI_THREAD_MULTIPLE\n");
    return 1;
  }

  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) delete listeners.Release(listeners.default_result_printer());
  auto* collector = new FailureCollector(rank);
  listeners.Append(collector);  // owned by GoogleTest

  const int local_result = RUN_ALL_TESTS();
  const int local_failed = local_result != 0 || !collector->text().empty();

  // Rank 0 prints every rank's failure report, in rank order, so they do not interleave.
  int length = static_cast<int>(collector->text().size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displacements(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displacements[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(rank == 0 ? total : 0), '\0');
  MPI_Gatherv(collector->text().data(), length, MPI_CHAR, all.data(), lengths.data(),
              displacements.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    if (!all.empty()) std::fprintf(stderr, "Failures by rank:\n%s", all.c_str());
    std::printf("%s on %d process(es)\n", any_failed ? "FAILED" : "PASSED", size);
  }
  return any_failed ? 1 : 0;
}
