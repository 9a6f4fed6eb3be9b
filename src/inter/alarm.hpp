// How a failure on one process reaches the other processes of its team without a step of its
// own in every call (docs/reliability.md, "Across processes").
//
// Every team spanning processes keeps one receive posted on a duplicate of its process
// communicator. A process that fails a call before its step between processes (bad arguments,
// threads that disagree), or whose team aborts, sends a note to every other process. The others
// read notes while they wait inside MPI (every wait between processes is polled, see
// inter/mpi_wait.hpp), and the process's watch thread reads them a few times a second
// (team/watchman.hpp), so a process waiting for one that will never come ends its wait instead
// of hanging. Reading a note costs one MPI_Test of the posted receive. The same notes carry the
// comparison of long waits (team/process_failures.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

namespace tlc::detail {

class ProcessAlarm {
 public:
  enum class Kind : std::int32_t {
    // The sender's call number `call` failed before the sender's first step between processes:
    // it posted nothing for that call.
    failed_call = 1,
    // The sender's team is gone (aborted, or it gave up an MPI operation): nothing it started
    // will complete.
    broken = 2,
    // The sender has waited in call `call` for longer than TLC_SUSPECT_MS; the text says what
    // call it makes there (team/process_failures.hpp compares it with the receiver's), and for a
    // v-variant the counts say what its ranks send and expect.
    waiting = 3,
    // The sender's long wait in call `call` has ended.
    resumed = 4,
    // The sender destroyed its team after `call` calls: it makes no later one. Its last note.
    gone = 5,
    // The answer to a `waiting` note: the sender is alive and has begun `call` calls (sent by
    // the process's watch thread, team/watchman.hpp, also while no thread is inside tlc).
    alive = 6,
  };
  // A process's two words of a v-variant call (algo/validation.cpp, variant_count_words): what
  // its ranks send and what they expect, summed over pairs of ranks. Over all processes the two
  // totals are equal when every pair agrees.
  using CountWords = std::array<std::uint64_t, 2>;
  struct Note {
    Kind kind;
    int process;
    std::uint64_t call;
    std::string text;
    std::optional<CountWords> counts;  // waiting notes of v-variant calls
  };

  // Collective over parent: duplicates it and posts the receive. team: the same number on
  // every process, which notes carry; notes of another number are dropped (see team.cpp).
  ProcessAlarm(MPI_Comm parent, int team);
  ~ProcessAlarm();
  ProcessAlarm(const ProcessAlarm&) = delete;
  ProcessAlarm& operator=(const ProcessAlarm&) = delete;

  // Sends a note to every other process (non-blocking; the note's text is cut to fit).
  void send(Kind kind, std::uint64_t call, const std::string& text,
            const std::optional<CountWords>& counts = std::nullopt);
  // The same to one process only.
  void send_to(int process, Kind kind, std::uint64_t call, const std::string& text,
               const std::optional<CountWords>& counts = std::nullopt);
  // The next note that has arrived, if any. One thread reads at a time; a thread that finds
  // another reading gets nothing (that one passes the note on).
  std::optional<Note> receive();
  // Whether every note this process sent has left (MPI_Testall of the sends).
  bool sent();
  // Notes may still arrive: the destructor cancels the posted receive but keeps the
  // communicator (never freed, so that no later communicator reuses its context and matches
  // them).
  void keep_communicator() noexcept { keep_ = true; }

 private:
  static constexpr std::size_t text_capacity = 1024;
  struct Wire {
    std::int32_t team;
    std::int32_t kind;
    std::int32_t process;
    std::uint64_t call;
    std::uint64_t counts[2];
    std::int32_t counted;  // counts are set
    char text[text_capacity];
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int team_ = 0;
  std::mutex receive_mutex_;
  Wire inbox_{};
  MPI_Request inbox_request_ = MPI_REQUEST_NULL;
  struct Outgoing {
    Wire wire;
    std::vector<MPI_Request> requests;  // one per process it goes to
  };
  std::mutex send_mutex_;
  std::deque<Outgoing> outbox_;  // stable addresses while the sends are in flight
  // With send_mutex_ and the MPI lock held: forgets the notes that have left, oldest first;
  // whether all have.
  bool drop_sent();
  bool keep_ = false;
  void post_receive();
};

}  // namespace tlc::detail
