// The watch thread of a process: one thread, shared by every team of the process that spans
// processes, that reads the team's notes a few times a second and answers another process's
// long wait (docs/reliability.md, "Calls that disagree across processes"). It lets a process
// that is alive but busy outside tlc (late) be told apart from one that is stopped or hung
// (silent), which no thread inside tlc could answer for. It runs while such a team exists.
#pragma once

namespace tlc::detail {

class ProcessFailures;

class Watchman {
 public:
  // The thread starts with the first team enrolled and ends with the last one withdrawn;
  // withdraw returns once the thread no longer reads that team's notes.
  static void enroll(ProcessFailures& team);
  static void withdraw(ProcessFailures& team);
};

}  // namespace tlc::detail
