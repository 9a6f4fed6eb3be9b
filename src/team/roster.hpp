// Who is in the team: threads per process, global ranks (process-major), NUMA groups. Built once
// at team construction from what every process contributed; the same on every process except
// for `process` and the NUMA groups of this process's threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace tlc::detail {

class Roster {
 public:
  Roster() = default;
  // threads_per_process: every process's thread count, in process order; numa_of_thread: the
  // NUMA domain of each of this process's threads.
  Roster(std::vector<int> threads_per_process, int process, const std::vector<int>& numa_of_thread)
      : process_threads_(std::move(threads_per_process)), process_(process) {
    for (int c : process_threads_) {
      process_first_rank_.push_back(size_);
      size_ += c;
    }
    threads_ = process_threads_[static_cast<std::size_t>(process_)];
    first_rank_ = process_first_rank_[static_cast<std::size_t>(process_)];
    equal_processes_ = std::all_of(process_threads_.begin(), process_threads_.end(),
                                   [&](int t) { return t == process_threads_.front(); });
    for (std::size_t t = 0; t < numa_of_thread.size(); ++t)
      if (t == 0 || numa_of_thread[t] != numa_of_thread[t - 1])
        numa_group_starts_.push_back(static_cast<int>(t));
  }

  int threads() const noexcept { return threads_; }  // of this process
  int size() const noexcept { return size_; }        // of all processes
  int process() const noexcept { return process_; }
  int processes() const noexcept { return static_cast<int>(process_threads_.size()); }
  int first_rank() const noexcept { return first_rank_; }
  int global_rank(int local_index) const noexcept { return first_rank_ + local_index; }
  int threads_of(int process) const noexcept {
    return process_threads_[static_cast<std::size_t>(process)];
  }
  int first_rank_of(int process) const noexcept {
    return process_first_rank_[static_cast<std::size_t>(process)];
  }
  // The process owning a global rank.
  int process_of(int rank) const noexcept {
    const auto it = std::upper_bound(process_first_rank_.begin(), process_first_rank_.end(), rank);
    return static_cast<int>(it - process_first_rank_.begin()) - 1;
  }
  bool equal_processes() const noexcept { return equal_processes_; }
  int most_threads() const noexcept {
    return *std::max_element(process_threads_.begin(), process_threads_.end());
  }
  // Local indices grouped by NUMA domain: maximal runs of consecutive threads placed in the same
  // domain, so each group is a contiguous range of ranks (rank order survives grouping).
  const std::vector<int>& numa_group_starts() const noexcept { return numa_group_starts_; }
  // "rank 5 (thread 1 of process 2)"
  std::string who(int local_index) const {
    return "rank " + std::to_string(global_rank(local_index)) + " (thread " +
           std::to_string(local_index) + " of process " + std::to_string(process_) + ")";
  }

 private:
  std::vector<int> process_threads_, process_first_rank_;
  int process_ = 0;
  int threads_ = 1;
  int size_ = 0;
  int first_rank_ = 0;
  bool equal_processes_ = true;
  std::vector<int> numa_group_starts_;
};

}  // namespace tlc::detail
