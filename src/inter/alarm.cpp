// How a failure on one process reaches the others (inter/alarm.hpp): the posted receive, the
// notes sent, and reading them.
#include "inter/alarm.hpp"

#include <algorithm>
#include <cstring>

#include "inter/mpi_check.hpp"
#include "inter/mpi_policy.hpp"

namespace tlc::detail {

ProcessAlarm::ProcessAlarm(MPI_Comm parent, int team) : team_(team) {
  // No wildcard hints: the posted receive takes a note from any process.
  comm_ = duplicate_comm(parent, /*assert_no_wildcards=*/false);
  auto lock = serialize_mpi();
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  post_receive();
}

void ProcessAlarm::post_receive() {
  check_mpi(MPI_Irecv(&inbox_, sizeof(Wire), MPI_BYTE, MPI_ANY_SOURCE, 0, comm_, &inbox_request_),
            "MPI_Irecv (alarm)");
}

ProcessAlarm::~ProcessAlarm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || comm_ == MPI_COMM_NULL) return;
  auto lock = serialize_mpi();
  if (inbox_request_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&inbox_request_);
    MPI_Wait(&inbox_request_, MPI_STATUS_IGNORE);  // local once cancelled (or already matched)
  }
  // A note still in flight has its buffer here: leave both to the job's end (notes are small
  // enough to leave at once in practice, and a team that ends normally waits for its last
  // ones, team/process_failures.cpp).
  if (!drop_sent()) {
    new std::deque<Outgoing>(std::move(outbox_));  // deliberately leaked: MPI may still read it
    return;
  }
  if (!keep_) MPI_Comm_free(&comm_);
}

bool ProcessAlarm::drop_sent() {
  while (!outbox_.empty()) {
    std::vector<MPI_Request>& requests = outbox_.front().requests;
    int done = 1;
    if (!requests.empty())
      check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                            MPI_STATUSES_IGNORE),
                "MPI_Testall (alarm)");
    if (!done) return false;
    outbox_.pop_front();
  }
  return true;
}

void ProcessAlarm::send(Kind kind, std::uint64_t call, const std::string& text,
                        const std::optional<CountWords>& counts) {
  send_to(-1, kind, call, text, counts);
}

void ProcessAlarm::send_to(int process, Kind kind, std::uint64_t call, const std::string& text,
                           const std::optional<CountWords>& counts) {
  std::lock_guard<std::mutex> guard(send_mutex_);
  auto lock = serialize_mpi();
  // Heartbeats of long waits keep sending: keep only the notes still in flight.
  drop_sent();
  Outgoing& out = outbox_.emplace_back();
  Wire& note = out.wire;
  note.team = team_;
  note.kind = static_cast<std::int32_t>(kind);
  note.process = rank_;
  note.call = call;
  note.counted = counts ? 1 : 0;
  note.counts[0] = counts ? (*counts)[0] : 0;
  note.counts[1] = counts ? (*counts)[1] : 0;
  const std::size_t length = std::min(text.size(), text_capacity - 1);
  std::memcpy(note.text, text.data(), length);
  note.text[length] = '\0';
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || (process >= 0 && p != process)) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(&note, sizeof(Wire), MPI_BYTE, p, 0, comm_, &request), "MPI_Isend (alarm)");
    out.requests.push_back(request);
  }
}

bool ProcessAlarm::sent() {
  std::lock_guard<std::mutex> guard(send_mutex_);
  auto lock = serialize_mpi();
  return drop_sent();
}

std::optional<ProcessAlarm::Note> ProcessAlarm::receive() {
  std::unique_lock<std::mutex> reading(receive_mutex_, std::try_to_lock);
  if (!reading.owns_lock()) return std::nullopt;
  auto lock = serialize_mpi();
  for (;;) {
    int arrived = 0;
    check_mpi(MPI_Test(&inbox_request_, &arrived, MPI_STATUS_IGNORE), "MPI_Test (alarm)");
    if (!arrived) return std::nullopt;
    const Wire wire = inbox_;
    post_receive();
    if (wire.team != team_) continue;  // to a team destroyed before this one was made
    Note note{static_cast<Kind>(wire.kind), wire.process, wire.call,
              std::string(wire.text, strnlen(wire.text, text_capacity)), std::nullopt};
    if (wire.counted) note.counts = CountWords{wire.counts[0], wire.counts[1]};
    return note;
  }
}

}  // namespace tlc::detail
