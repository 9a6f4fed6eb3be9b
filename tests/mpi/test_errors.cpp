// docs/design.md section 9: bad input is an error on every thread of the process before any data
// moves; nothing hangs; an exception in one thread aborts the team and run() rethrows it.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;

constexpr double sentinel = -12345.0;

// Runs body on a fresh team of `threads` threads per process; returns what each thread threw
// (code) and checks that recv buffers kept their sentinel.
struct ErrorProbe {
  std::vector<int> codes;  // -1: no exception
  std::vector<std::string> texts;
  bool untouched = true;
};

template <class Body>
ErrorProbe probe(int threads, Body body) {
  tlc::Team team(MPI_COMM_WORLD, static_options(threads));
  ErrorProbe result;
  result.codes.assign(static_cast<std::size_t>(threads), -1);
  result.texts.resize(static_cast<std::size_t>(threads));
  std::atomic<bool> untouched{true};
  team.run([&](tlc::Thread& me) {
    std::vector<double> send(8, me.rank() + 1.0), recv(8, sentinel);
    try {
      body(me, send, recv);
    } catch (const tlc::Error& e) {
      result.codes[static_cast<std::size_t>(me.local_index())] = static_cast<int>(e.code());
      result.texts[static_cast<std::size_t>(me.local_index())] = e.what();
    }
    for (double x : recv)
      if (x != sentinel) untouched = false;
    // The team still works after a validated error.
    double one = 1;
    me.allreduce(std::span<double>(&one, 1));
    if (one != me.size()) untouched = false;
  });
  result.untouched = untouched.load();
  return result;
}

void expect_everyone(const ErrorProbe& p, tlc::Errc code, const char* fragment) {
  for (std::size_t t = 0; t < p.codes.size(); ++t) {
    EXPECT_EQ(p.codes[t], static_cast<int>(code)) << "thread " << t << ": " << p.texts[t];
    EXPECT_NE(p.texts[t].find(fragment), std::string::npos) << p.texts[t];
  }
  EXPECT_TRUE(p.untouched) << "a receive buffer was written, or the team broke afterwards";
}

TEST(Errors, NullDataWithNonZeroCount) {
  auto p = probe(3, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    const double* data = me.local_index() == 1 ? nullptr : send.data();
    me.allreduce(std::span<const double>(data, send.size()), std::span<double>(recv));
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "null");
}

TEST(Errors, WrongReceiveSize) {
  auto p = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    const std::size_t n = me.local_index() == 0 ? recv.size() - 1 : recv.size();
    me.allreduce(std::span<const double>(send), std::span<double>(recv.data(), n));
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "receive buffer holds 7");
}

TEST(Errors, PartialOverlap) {
  auto p = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    std::vector<double> both(16, 1.0);
    if (me.local_index() == 1) {
      me.allreduce(std::span<const double>(both.data(), 8), std::span<double>(both.data() + 4, 8));
    } else {
      me.allreduce(std::span<const double>(send), std::span<double>(recv));
    }
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "overlap");
}

TEST(Errors, DifferentCounts) {
  auto p = probe(3, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    const std::size_t n = me.local_index() == 2 ? 5 : 8;
    me.allreduce(std::span<const double>(send.data(), n), std::span<double>(recv.data(), n));
  });
  expect_everyone(p, tlc::Errc::mismatch, "elements");
}

TEST(Errors, DifferentOps) {
  auto p = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    if (me.local_index() == 0) {
      me.allreduce(std::span<const double>(send), std::span<double>(recv), tlc::max{});
    } else {
      me.allreduce(std::span<const double>(send), std::span<double>(recv));
    }
  });
  expect_everyone(p, tlc::Errc::mismatch, "op");
}

TEST(Errors, DifferentCollectives) {
  auto p = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    if (me.local_index() == 0) {
      me.barrier();
    } else {
      me.allreduce(std::span<const double>(send), std::span<double>(recv));
    }
  });
  expect_everyone(p, tlc::Errc::mismatch, "called");
}

TEST(Errors, ExceptionInOneThreadAbortsTeamAndIsRethrown) {
  tlc::Team team(MPI_COMM_WORLD, test_options(3));
  std::atomic<int> aborted_waiters{0};
  try {
    team.run([&](tlc::Thread& me) {
      if (me.local_index() == 1) throw std::runtime_error("boom from thread 1");
      try {
        me.barrier();
      } catch (const tlc::TeamAborted&) {
        aborted_waiters.fetch_add(1);
        throw;
      }
    });
    ADD_FAILURE() << "run did not rethrow";
  } catch (const tlc::TeamAborted& e) {
    ADD_FAILURE() << "run rethrew TeamAborted instead of the original: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom from thread 1");
  }
  EXPECT_EQ(aborted_waiters.load(), 2);
  EXPECT_TRUE(team.aborted());
  EXPECT_THROW(team.run([](tlc::Thread&) {}), tlc::TeamAborted);
}

// A user op that throws in the middle of a large reduction inside one process: the throwing
// thread must not unwind (and free its buffers) while the other threads still read its input and
// write its output. Thread 1's buffers are pages that become inaccessible the moment its stack
// unwinds past them, so a read or write after that is a crash, not a silent read of freed memory.
// run() rethrows the op's exception, the others end with TeamAborted, and a new team works.
struct OpFailure : std::runtime_error {
  OpFailure() : std::runtime_error("the user op failed") {}
};
thread_local bool throw_in_op = false;
struct SumThatMayThrow {
  double operator()(const double& a, const double& b) const {
    if (throw_in_op) throw OpFailure();
    return a + b;
  }
};

// count doubles in their own pages; inaccessible (not unmapped, so that nothing else can be
// mapped there) once the owner is destroyed.
class FencedBuffer {
 public:
  explicit FencedBuffer(std::size_t count) : bytes_(count * sizeof(double)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    data_ = static_cast<double*>(p);
  }
  ~FencedBuffer() { mprotect(data_, bytes_, PROT_NONE); }
  FencedBuffer(const FencedBuffer&) = delete;
  FencedBuffer& operator=(const FencedBuffer&) = delete;
  std::span<double> span() const { return {data_, bytes_ / sizeof(double)}; }

 private:
  std::size_t bytes_;
  double* data_;
};

TEST(Errors, UserOpThrowingMidReductionIsContained) {
  if (world_size() > 1)
    GTEST_SKIP()
        << "single-process algorithms; across processes: UserOpThrowingInsideMpiIsContained";
  constexpr std::size_t n = std::size_t{1} << 20;  // 8 MiB per thread
  for (const std::string algorithm : {"sliced", "two_level", "flat"}) {
    tlc::TeamOptions o = test_options(4);
    o.algorithms[tlc::Collective::allreduce] = algorithm;
    if (algorithm == "two_level")
      o.topology = tlc::Topology::synthetic("package:2 numa:1 core:2 pu:1");
    tlc::Team team(MPI_COMM_WORLD, o);
    std::atomic<int> aborted{0};
    try {
      team.run([&](tlc::Thread& me) {
        if (me.local_index() == 1) {
          FencedBuffer send(n), recv(n);
          for (double& x : send.span()) x = 1;
          throw_in_op = true;  // at its first combine
          struct Reset {
            ~Reset() { throw_in_op = false; }
          } reset;
          me.allreduce(std::span<const double>(send.span()), recv.span(), SumThatMayThrow{});
          ADD_FAILURE() << algorithm << ": the throwing thread's allreduce returned";
          return;
        }
        std::vector<double> send(n, 1.0), recv(n);
        try {
          me.allreduce(std::span<const double>(send), std::span<double>(recv), SumThatMayThrow{});
          ADD_FAILURE() << algorithm << ": thread " << me.local_index()
                        << "'s allreduce returned although thread 1's op threw";
        } catch (const tlc::TeamAborted&) {
          aborted.fetch_add(1);
          throw;
        }
      });
      ADD_FAILURE() << algorithm << ": run did not rethrow";
    } catch (const OpFailure&) {
      // the original exception
    } catch (const std::exception& e) {
      ADD_FAILURE() << algorithm << ": run rethrew something else: " << e.what();
    }
    EXPECT_EQ(aborted.load(), 3) << algorithm;
    EXPECT_TRUE(team.aborted()) << algorithm;
  }
  tlc::Team fresh(MPI_COMM_WORLD, test_options(4));
  fresh.run([](tlc::Thread& me) {
    double x = 1;
    me.allreduce(std::span<double>(&x, 1));
    EXPECT_EQ(x, me.size());
  });
}

// A user op that throws inside MPI's reduction callback: a reduction across processes of a
// user op runs the op inside MPI_Allreduce & co. (src/inter/process_comm.cpp), where an exception
// must not unwind through MPI's C frames (it would end the process). Every rank contributes 1
// and the op throws once a combination exceeds what one process's threads contribute, so only
// combinations of several processes' partial results throw: inside MPI (and, for scan, where a
// thread adds the exscan of the lower processes to its local prefix after MPI). On each process
// where the op threw, run() rethrows the op's exception and the other threads end with TeamAborted;
// the other processes are told (their run() rethrows TeamAborted naming that process), or, where
// their part was over before the note came, return (with an incomplete result, documented).
// MPI stays usable: the next team, built on every process, works.
struct ThrowsAcrossProcesses {
  double limit;
  double operator()(const double& a, const double& b) const {
    if (a + b > limit) throw OpFailure();
    return a + b;
  }
};

TEST(Errors, UserOpThrowingInsideMpiIsContained) {
  if (world_size() == 1) GTEST_SKIP() << "needs a reduction across processes";
  constexpr int threads = 2;
  constexpr std::size_t n = 1000;
  int threw_here = 0;
  for (tlc::Collective c : {tlc::Collective::allreduce, tlc::Collective::reduce,
                            tlc::Collective::scan, tlc::Collective::reduce_scatter_block}) {
    const std::string name = tlc::to_string(c);
    tlc::TeamOptions o = test_options(threads);
    o.algorithms[c] = "hierarchical";  // the MPI collective itself, not tlc's point-to-point
    tlc::Team team(MPI_COMM_WORLD, o);
    const ThrowsAcrossProcesses op{threads};
    std::atomic<int> aborted{0}, returned{0}, op_threw{0};
    bool op_failed = false, told = false;
    try {
      team.run([&](tlc::Thread& me) {
        const std::size_t len = c == tlc::Collective::reduce_scatter_block
                                    ? n * static_cast<std::size_t>(me.size())
                                    : n;
        std::vector<double> send(len, 1.0), recv(n);
        try {
          switch (c) {
            case tlc::Collective::allreduce:
              me.allreduce(std::span<const double>(send), std::span<double>(recv), op);
              break;
            case tlc::Collective::reduce:
              me.reduce(std::span<const double>(send), std::span<double>(recv), 0, op);
              break;
            case tlc::Collective::scan:
              me.scan(std::span<const double>(send), std::span<double>(recv), op);
              break;
            default:
              me.reduce_scatter_block(std::span<const double>(send), std::span<double>(recv), op);
              break;
          }
          returned.fetch_add(1);
        } catch (const tlc::TeamAborted&) {
          aborted.fetch_add(1);
          throw;
        } catch (const OpFailure&) {
          op_threw.fetch_add(1);
          throw;
        }
      });
    } catch (const OpFailure&) {
      op_failed = true;
    } catch (const tlc::TeamAborted& e) {
      // Told by the process where the op threw (its team aborted): no thread here threw.
      told = true;
      EXPECT_NE(std::string(e.what()).find("process"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": run rethrew something else: " << e.what();
    }
    if (op_failed) {
      // The op threw on at least one thread (the leader inside MPI, or, for scan, any thread
      // combining the processes' exscan with its local prefix after MPI); every other thread
      // woke with TeamAborted, threw the op's exception itself before it saw the abort, or had
      // left the call before (a non-root of reduce needs nothing from the others).
      ++threw_here;
      EXPECT_TRUE(team.aborted()) << name;
      EXPECT_GE(op_threw.load(), 1) << name;
      EXPECT_EQ(aborted.load() + returned.load() + op_threw.load(), threads) << name;
    } else if (told) {
      EXPECT_TRUE(team.aborted()) << name;
      EXPECT_EQ(op_threw.load(), 0) << name;
      EXPECT_EQ(aborted.load() + returned.load(), threads) << name;
    } else {
      EXPECT_EQ(returned.load(), threads) << name;
    }
  }
  // Every process, including those whose op never threw, builds a new team that works; it
  // also counts the processes where the op threw (at least one per collective).
  tlc::Team fresh(MPI_COMM_WORLD, test_options(threads));
  int threw_total = 0;
  fresh.run([&](tlc::Thread& me) {
    const int mine = me.local_index() == 0 ? threw_here : 0;
    const int total = me.allreduce(mine);
    if (me.local_index() == 0) threw_total = total;
  });
  EXPECT_GE(threw_total, 4);
}

// User op objects of the same type but different state on different threads: each thread would
// combine with its own op and the results would differ between threads. Where the op type has
// operator== (here a defaulted one, also through tlc::commutative), every thread gets the same
// tlc::Error (mismatch) before any data moves, and the team stays usable. Equal objects pass.
struct Weighted {
  double weight;
  double operator()(const double& a, const double& b) const { return a + weight * b; }
  friend bool operator==(const Weighted&, const Weighted&) = default;
};

TEST(Errors, UserOpObjectsThatCompareUnequalAreRejected) {
  const auto weight_of = [](const tlc::Thread& me) { return me.local_index() == 1 ? 2.0 : 1.0; };
  expect_everyone(probe(3,
                        [&](tlc::Thread& me, auto& send, auto& recv) {
                          me.allreduce(std::span<const double>(send), std::span<double>(recv),
                                       Weighted{weight_of(me)});
                        }),
                  tlc::Errc::mismatch, "compare unequal");
  expect_everyone(probe(3,
                        [&](tlc::Thread& me, auto& send, auto& recv) {
                          me.scan(std::span<const double>(send), std::span<double>(recv),
                                  tlc::commutative(Weighted{weight_of(me)}));
                        }),
                  tlc::Errc::mismatch, "compare unequal");
  // Equal state: no error.
  tlc::Team team(MPI_COMM_WORLD, test_options(3));
  std::atomic<int> wrong{0};
  team.run([&](tlc::Thread& me) {
    double x = 1;
    me.allreduce(std::span<double>(&x, 1), Weighted{1.0});
    if (x != me.size()) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Errors, AttachedThreadLeavingWithExceptionAbortsTeam) {
  tlc::Team team(MPI_COMM_WORLD, test_options(2));
  std::atomic<bool> woke{false};
  // Attached here, before either thread starts, so the abort cannot precede the attach.
  tlc::Thread first = team.attach(0), second = team.attach(1);
  std::thread waiter([&, me = std::move(first)]() mutable {
    try {
      me.barrier();
    } catch (const tlc::TeamAborted&) {
      woke = true;
    }
  });
  std::thread failing([&, me = std::move(second)]() mutable {
    try {
      tlc::Thread mine = std::move(me);
      throw std::runtime_error("application error");
    } catch (const std::runtime_error&) {
    }
  });
  failing.join();
  waiter.join();
  EXPECT_TRUE(woke.load());
}

// A thread whose body in Team::run returned never makes another call in that run: a thread
// still calling gets an error naming it instead of waiting forever, and the team is aborted (its
// threads' calls no longer line up; across processes the others end with TeamAborted).
TEST(Errors, CallAfterOtherThreadsLeftIsAnError) {
  if (world_size() > 1) GTEST_SKIP() << "one process: the others would see the abort";
  tlc::Team team(MPI_COMM_WORLD, test_options(3));
  std::string error;
  try {
    team.run([&](tlc::Thread& me) {
      std::vector<double> x(4, 1.0);
      me.allreduce(x);  // all three
      if (me.local_index() != 0) return;
      me.allreduce(x);  // the others have left
    });
  } catch (const tlc::Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("has left the team"), std::string::npos) << error;
  EXPECT_EQ(error.find("TLC_TIMEOUT"), std::string::npos) << error;
  // The threads' calls no longer line up: the team is aborted, and says so.
  EXPECT_THROW(team.run([](tlc::Thread& me) { me.barrier(); }), tlc::TeamAborted);
}

// The same in a call led by arrival, whose early threads do not wait in a begin step: the
// waiting thread finds the one that left before it sleeps (hung before, until TLC_TIMEOUT).
TEST(Errors, CallLedByArrivalAfterOtherThreadsLeftIsAnError) {
  if (world_size() > 1) GTEST_SKIP() << "one process: the others would see the abort";
  tlc::TeamOptions o = test_options(3);
  o.leaders = "dynamic";
  o.algorithms[tlc::Collective::reduce] = "dynamic";
  tlc::Team team(MPI_COMM_WORLD, o);
  std::string error;
  try {
    team.run([&](tlc::Thread& me) {
      std::vector<double> x(4, 1.0), y(4);
      me.reduce(std::span<const double>(x), std::span<double>(y), 0);  // all three
      if (me.local_index() != 0) return;
      me.reduce(std::span<const double>(x), std::span<double>(y), 0);  // the others have left
    });
  } catch (const tlc::Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("has left the team"), std::string::npos) << error;
  EXPECT_EQ(error.find("TLC_TIMEOUT"), std::string::npos) << error;
  EXPECT_THROW(team.run([](tlc::Thread& me) { me.barrier(); }), tlc::TeamAborted);
}

TEST(Errors, TimeoutNamesTheMissingThread) {
  tlc::TeamOptions o = test_options(3);
  o.timeout_seconds = 0.5;
  tlc::Team team(MPI_COMM_WORLD, o);
  std::atomic<int> timed_out{0};
  try {
    team.run([&](tlc::Thread& me) {
      if (me.local_index() == 2) {  // thread 2 never comes (but stays in the run until then)
        while (timed_out.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return;
      }
      try {
        me.barrier();
      } catch (...) {
        ++timed_out;
        throw;
      }
    });
    ADD_FAILURE() << "no timeout";
  } catch (const tlc::Error& e) {
    // Every process times out alike, unless the note of another process's time-out reaches it
    // first (the watch thread reads notes while the threads wait inside the process): then its
    // team aborts with that process's error.
    if (e.code() != tlc::Errc::timeout) {
      EXPECT_EQ(e.code(), tlc::Errc::aborted) << e.what();
      EXPECT_NE(std::string(e.what()).find("TLC_TIMEOUT"), std::string::npos) << e.what();
    }
    EXPECT_NE(std::string(e.what()).find("thread 2 of process"), std::string::npos) << e.what();
  }
}

TEST(Errors, BadTeamOptionsFailOnEveryProcess) {
  tlc::TeamOptions o = test_options(2);
  o.threads = -1;
  EXPECT_THROW(tlc::Team(MPI_COMM_WORLD, o), tlc::Error);
  o = test_options(1000);
  o.pin = true;  // 1000 pinned threads cannot fit this machine
  try {
    tlc::Team team(MPI_COMM_WORLD, o);
    ADD_FAILURE() << "1000 pinned threads accepted";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::topology) << e.what();
  }
  // Only process 0 asks for something impossible; the others must fail too, not hang.
  o = test_options(world_rank() == 0 ? 1000 : 1);
  o.pin = true;
  EXPECT_THROW(tlc::Team(MPI_COMM_WORLD, o), tlc::Error);
}

TEST(Errors, UnknownAlgorithmName) {
  tlc::TeamOptions o = test_options(1);
  o.algorithms[tlc::Collective::allreduce] = "no_such_algorithm";
  try {
    tlc::Team team(MPI_COMM_WORLD, o);
    ADD_FAILURE() << "unknown algorithm accepted";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("hierarchical"), std::string::npos) << e.what();
  }
}

// The pipeline chunk: out of range (option or variable) fails on every process, even when only
// one process asks; different sizes on different processes would pair MPI calls of different
// chunks and fail too.
TEST(Errors, PipelineChunkOutOfRangeOrDifferent) {
  auto expect_invalid = [](const tlc::TeamOptions& o, const char* what, const char* text,
                           tlc::Errc code = tlc::Errc::invalid_argument) {
    try {
      tlc::Team team(MPI_COMM_WORLD, o);
      ADD_FAILURE() << what << " accepted";
    } catch (const tlc::Error& e) {
      EXPECT_EQ(e.code(), code) << what;
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << what << ": " << e.what();
    }
  };
  tlc::TeamOptions o = test_options(1);
  o.pipeline_chunk_bytes = world_rank() == 0 ? 100 : 0;
  if (world_rank() == 0)
    expect_invalid(o, "a 100-byte chunk on process 0", "4096");
  else
    expect_invalid(o, "a 100-byte chunk on process 0", "process 0", tlc::Errc::aborted);
  o.pipeline_chunk_bytes = 0;
  ::setenv("TLC_PIPELINE_CHUNK", "1M", 1);
  expect_invalid(o, "TLC_PIPELINE_CHUNK=1M", "TLC_PIPELINE_CHUNK");
  ::unsetenv("TLC_PIPELINE_CHUNK");
  o.pipeline_chunk_bytes = (std::size_t{1} << 30) + 1;
  expect_invalid(o, "a chunk over 1 GiB", "1073741824");
  if (world_size() > 1) {
    o.pipeline_chunk_bytes = 4096 * static_cast<std::size_t>(1 + world_rank());
    expect_invalid(o, "different chunks per process", "different pipeline chunk");
  }
  o.pipeline_chunk_bytes = 4096;
  EXPECT_NO_THROW(tlc::Team(MPI_COMM_WORLD, o));
}

// Lanes pair up across processes: different lane counts fail on every process, with both
// numbers, and the team construction after them still works (nothing left half-agreed).
TEST(Errors, DifferentLaneCountsFailEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs several processes";
  tlc::TeamOptions o = test_options(1);
  o.lanes = 1 + world_rank() % 2;
  try {
    tlc::Team team(MPI_COMM_WORLD, o);
    ADD_FAILURE() << "different lane counts accepted";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("different lane counts (from 1 to 2)"), std::string::npos)
        << e.what();
  }
  o.lanes = 2;
  EXPECT_NO_THROW(tlc::Team(MPI_COMM_WORLD, o));
}

// Forced algorithms and leaders decide which MPI calls a collective makes: processes that force
// different ones (an alltoall led by arrival sends point-to-point, the static one calls
// MPI_Alltoall) fail team construction on every process instead of hanging in the first call.
TEST(Errors, DifferentForcedAlgorithmsFailEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs several processes";
  for (int variant = 0; variant < 2; ++variant) {
    tlc::TeamOptions o = test_options(2);
    if (world_rank() == 0) {
      if (variant == 0) o.algorithms[tlc::Collective::alltoall] = "dynamic";
      if (variant == 1) o.leaders = "dynamic";
    }
    try {
      tlc::Team team(MPI_COMM_WORLD, o);
      ADD_FAILURE() << "variant " << variant << ": different forced choices accepted";
    } catch (const tlc::Error& e) {
      EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("force different algorithms or leaders"),
                std::string::npos)
          << e.what();
    }
  }
  tlc::TeamOptions same = test_options(2);
  same.algorithms[tlc::Collective::alltoall] = "dynamic";
  EXPECT_NO_THROW(tlc::Team(MPI_COMM_WORLD, same));
}

// The long-wait comparison's settings (docs/reliability.md): garbage and out-of-range values are
// errors naming the variable or the option, on every process alike.
TEST(Errors, BadSuspectAndSilentSettingsAreErrors) {
  struct Case {
    const char* variable;
    const char* value;
    const char* named;
  };
  for (const Case& c :
       {Case{"TLC_SUSPECT_MS", "half a second", "TLC_SUSPECT_MS"},
        Case{"TLC_SUSPECT_MS", "-5", "TLC_SUSPECT_MS"},
        Case{"TLC_SUSPECT_MS", "4000000", "TLC_SUSPECT_MS"},
        Case{"TLC_SILENT", "never", "TLC_SILENT"}, Case{"TLC_SILENT", "-1", "TLC_SILENT"}}) {
    const char* old = std::getenv(c.variable);
    const std::string saved = old ? old : "";
    ::setenv(c.variable, c.value, 1);
    try {
      tlc::Team team(MPI_COMM_WORLD, test_options(1));
      ADD_FAILURE() << c.variable << "=" << c.value << " accepted";
    } catch (const tlc::Error& e) {
      EXPECT_EQ(e.code(), tlc::Errc::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.named), std::string::npos) << e.what();
    }
    if (saved.empty())
      ::unsetenv(c.variable);
    else
      ::setenv(c.variable, saved.c_str(), 1);
  }
  tlc::TeamOptions o = test_options(1);
  o.suspect_ms = -1;
  EXPECT_THROW(tlc::Team(MPI_COMM_WORLD, o), tlc::Error);
  o.suspect_ms = 200;
  o.silent_seconds = -2;
  EXPECT_THROW(tlc::Team(MPI_COMM_WORLD, o), tlc::Error);
  o.silent_seconds = 0;  // off: accepted
  EXPECT_NO_THROW(tlc::Team(MPI_COMM_WORLD, o));
}

// A garbage variable on one process only: that process names it, the others fail too (a hang
// before TLC_TIMEOUT was read inside the agreed part of team construction).
TEST(Errors, BadTimeoutVariableOnOneProcessFailsEverywhere) {
  const char* old = std::getenv("TLC_TIMEOUT");
  const std::string saved = old ? old : "";
  if (world_rank() == 0) ::setenv("TLC_TIMEOUT", "soon", 1);
  tlc::TeamOptions o = test_options(1);
  o.timeout_seconds = 0;  // read the variable
  try {
    tlc::Team team(MPI_COMM_WORLD, o);
    ADD_FAILURE() << "TLC_TIMEOUT=soon accepted";
  } catch (const tlc::Error& e) {
    if (world_rank() == 0) {
      EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("TLC_TIMEOUT"), std::string::npos) << e.what();
    } else {
      EXPECT_EQ(e.code(), tlc::Errc::aborted) << e.what();
    }
  }
  if (saved.empty())
    ::unsetenv("TLC_TIMEOUT");
  else
    ::setenv("TLC_TIMEOUT", saved.c_str(), 1);
}

// TLC_NODE=node insists on one process per node: several on one machine are refused.
TEST(Errors, SeveralProcessesPerNodeRefusedWhenTlcNodeIsNode) {
  ::setenv("TLC_NODE", "node", 1);
  if (world_size() == 1) {
    EXPECT_NO_THROW(tlc::Team(MPI_COMM_WORLD, test_options(1)));
  } else {
    try {
      tlc::Team team(MPI_COMM_WORLD, test_options(1));
      ADD_FAILURE() << "several processes on one node accepted in node mode";
    } catch (const tlc::Error& e) {
      EXPECT_EQ(e.code(), tlc::Errc::topology);
      EXPECT_NE(std::string(e.what()).find("TLC_NODE=process"), std::string::npos) << e.what();
    }
  }
  ::setenv("TLC_NODE", "process", 1);
}

// TLC_NODE unset: several processes on one machine each become a node of their own, with one
// line on stderr (process 0's), and the team works.
TEST(Errors, SeveralProcessesPerNodeFoundOutWhenTlcNodeUnset) {
  ::unsetenv("TLC_NODE");
  testing::internal::CaptureStderr();
  std::string error;
  double sum = 0;
  try {
    tlc::Team team(MPI_COMM_WORLD, test_options(2));
    team.run([&](tlc::Thread& me) {
      const double s = me.allreduce(1.0);
      if (me.local_index() == 0) sum = s;
    });
  } catch (const std::exception& e) {
    error = e.what();
  }
  const std::string said = testing::internal::GetCapturedStderr();
  ::setenv("TLC_NODE", "process", 1);
  EXPECT_EQ(error, "");
  EXPECT_EQ(sum, 2.0 * world_size());
  const auto lines = std::count(said.begin(), said.end(), '\n');
  if (world_size() > 1 && world_rank() == 0) {
    EXPECT_NE(said.find("MPI processes share a node; each runs as a node of its own"),
              std::string::npos)
        << said;
    EXPECT_EQ(lines, 1) << said;
  } else {
    EXPECT_EQ(said.find("share a node"), std::string::npos) << said;
  }
}

// Contributions of at most 32 bytes travel inline in the begin line (algo/flat_inline.cpp, on
// single-process teams), past the general path's checks: the same errors must come out of it,
// also when the threads that disagree take different paths (one inline, one general).
TEST(Errors, InlineNullData) {
  auto p = probe(3, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    const double* data = me.local_index() == 1 ? nullptr : send.data();
    me.allreduce(std::span<const double>(data, 2), std::span<double>(recv.data(), 2));
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "null");
}

TEST(Errors, InlineWrongReceiveSizeAndOverlap) {
  auto p = probe(3, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    if (me.local_index() == 1)
      me.scan(std::span<const double>(send.data(), 2), std::span<double>(recv.data(), 1));
    else if (me.local_index() == 2)  // overlapping: only reported if thread 1 were right
      me.scan(std::span<const double>(recv.data(), 2), std::span<double>(recv.data() + 1, 2));
    else
      me.scan(std::span<const double>(send.data(), 2), std::span<double>(recv.data(), 2));
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "receive buffer holds 1 elements");
}

TEST(Errors, InlineReduceRootOutOfRange) {
  auto p = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    const int root = me.local_index() == 0 ? me.size() : 0;
    me.reduce(std::span<const double>(send.data(), 1), std::span<double>(recv.data(), 1), root);
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "root");
}

TEST(Errors, InlineAgainstGeneralPathCounts) {
  for (int odd : {0, 2}) {  // the thread that passes 8 elements (general path) instead of 2
    auto p = probe(3, [&](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
      const std::size_t n = me.local_index() == odd ? 8 : 2;
      me.allreduce(std::span<const double>(send.data(), n), std::span<double>(recv.data(), n));
    });
    expect_everyone(p, tlc::Errc::mismatch, "elements per rank");
  }
}

TEST(Errors, InlineAgainstGeneralPathWithBadArguments) {
  // Thread 0 is inline and right, thread 1 takes the general path with a short receive buffer:
  // everyone reports thread 1's own error.
  auto p = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    if (me.local_index() == 0)
      me.allreduce(std::span<const double>(send.data(), 2), std::span<double>(recv.data(), 2));
    else
      me.allreduce(std::span<const double>(send), std::span<double>(recv.data(), 7));
  });
  expect_everyone(p, tlc::Errc::invalid_argument, "receive buffer holds 7");
  for (const std::string& text : p.texts)
    EXPECT_NE(text.find("thread 1"), std::string::npos) << text;
}

TEST(Errors, InlineDifferentRootsAndOps) {
  auto roots = probe(3, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>&) {
    me.bcast(std::span<double>(send.data(), 1), me.local_index() == 2 ? 1 : 0);
  });
  expect_everyone(roots, tlc::Errc::mismatch, "root");
  auto ops = probe(2, [](tlc::Thread& me, std::vector<double>& send, std::vector<double>& recv) {
    if (me.local_index() == 0)
      me.allreduce(std::span<const double>(send.data(), 1), std::span<double>(recv.data(), 1),
                   tlc::min{});
    else
      me.allreduce(std::span<const double>(send.data(), 1), std::span<double>(recv.data(), 1));
  });
  expect_everyone(ops, tlc::Errc::mismatch, "op");
}

}  // namespace
