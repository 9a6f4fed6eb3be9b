// The driver of the collective tests: which algorithms, team shapes, sizes and roots a test
// sweeps, and how one case runs. A case prepares every rank's inputs and the buffer each local
// thread hands to the collective on the main thread, computes the expected contents of those
// buffers with the sequential references of reference.hpp, runs the collective once per team
// (one team per forced algorithm) and compares on the main thread, element by element. Nothing
// is asserted inside team threads: they only record what they threw.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mpi/reference.hpp"
#include "mpi/test_common.hpp"

namespace tlc_test {

using tlc::Collective;

// glibc: serve the tests' large buffers from the heap and keep freed memory, instead of mapping
// and unmapping (and page-faulting in) fresh zero pages for every case.
inline const bool malloc_tuned = [] {
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}();

// --- What a sweep covers -------------------------------------------------------------------------

// One team configuration: a forced algorithm ("" lets the selector choose), lanes, and whether
// the team is spread over several NUMA domains of a synthetic topology.
struct Setup {
  std::string algorithm;
  int lanes = 1;
  bool numa = false;
  std::size_t pipeline_chunk = 0;      // TeamOptions::pipeline_chunk_bytes; 0: the default
  const char* fragment_kib = nullptr;  // TLC_COST_FRAGMENT_KIB while the team is made

  std::string label() const {
    std::string s = algorithm.empty() ? "selector" : algorithm;
    if (fragment_kib) s += std::string(" fragments>=") + fragment_kib + "KiB";
    if (lanes != 1) s += " lanes=" + std::to_string(lanes);
    if (numa) s += " synthetic-numa";
    if (pipeline_chunk) s += " chunk=" + std::to_string(pipeline_chunk);
    return s;
  }
};

// The collectives that pipeline large buffers across processes (their own list, kept apart from
// the library's traits so that the tests do not take the library's word). With the default 1 MiB
// chunk only the largest size pipelines (8 MiB of doubles in the reductions: 2 to 8 chunks of 1 to
// 4 lanes); a 4 KiB chunk pipelines 4099 elements and more, in up to a few hundred chunks. A
// mover's chunk holds a piece of every rank's block (chunk bytes / ranks per rank), so the movers
// get 256 KiB: 100003 elements then run in 13 to 49 chunks, 4099 elements in two on 16 ranks.
inline bool pipelines(Collective c) {
  switch (c) {
    case Collective::bcast:
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan:
    case Collective::allgather:
    case Collective::gather:
    case Collective::scatter:
    case Collective::alltoall:
    case Collective::reduce_scatter_block:
      return true;
    default:
      return false;
  }
}
inline std::size_t small_chunk(Collective c) {
  switch (c) {
    case Collective::allgather:
    case Collective::gather:
    case Collective::scatter:
    case Collective::alltoall:
    case Collective::reduce_scatter_block:
      return 256 * 1024;
    default:
      return 4096;
  }
}

// The large sizes: 1 MiB + 3 elements (more than the default pipeline chunk in every element
// type, not a multiple of any lane or thread count) and, across processes, 100003 elements for
// the whole matrix, since every shape, lane count and op at 1 MiB + 3 would take CI past its
// time. Across processes 1 MiB + 3 runs on a reduced matrix (see is_reduced).
inline const std::size_t largest = (std::size_t{1} << 20) + 3;
inline const std::size_t large_multi = 100003;

inline bool is_large(std::size_t n) { return n > 4099; }

// Whether size n runs on the reduced matrix across processes: every algorithm on every lane
// count as usual, but one team shape (reduced_shape: 4, 3, 2, 1 threads), one element type and
// one op per collective, and the first and last root.
inline bool is_reduced(std::size_t n) { return world_size() > 1 && n >= largest; }
inline const std::string reduced_shape = "uneven_4321";

// TLC_TEST_SIZES=n,n,... replaces the sizes of the sweeps (to reproduce one failure quickly).
// Across processes also 2 and 3: L - 1 for 3 and 4 lanes (0 and 1 cover 1 and 2), so that
// some lanes carry nothing.
inline std::vector<std::size_t> sweep_sizes() {
  if (const char* only = std::getenv("TLC_TEST_SIZES"); only && *only) {
    std::vector<std::size_t> sizes;
    std::istringstream in(std::string(only) + ",");
    std::string item;
    while (std::getline(in, item, ',')) sizes.push_back(std::stoul(item));
    return sizes;
  }
  if (world_size() == 1) return {0, 1, 7, 4099, largest};
  return {0, 1, 2, 3, 7, 4099, large_multi, largest};
}

// TLC_TEST_OPS=paths keeps, of the reduction sweeps' ops, those whose paths through tlc differ:
// a built-in op, user ops commutative and not, elements of 1, 4, 8, 12 and 16 bytes. The others
// differ by element type and op only; a tree that looks for races rather than for wrong results
// per type (ThreadSanitizer) leaves them out.
inline bool only_path_ops() {
  const char* ops = std::getenv("TLC_TEST_OPS");
  return ops && std::string(ops) == "paths";
}

// Which algorithms a sweep forces in turn.
enum class Algorithms {
  core,  // one process: every single-process algorithm, hierarchical, dynamic and the
         // selector; several processes: hierarchical, dynamic and the selector
  lane,  // several processes only: every other inter-process algorithm (full_lane,
         // multi-sender), on 1 to 4 lanes
};

// Whether algorithm `a` of collective c has form f (tlc::algorithms() lists the forms).
inline bool has_form(Collective c, const std::string& a, const std::string& f) {
  for (const auto& d : tlc::algorithms())
    if (d.collective == c && d.name == a)
      return std::find(d.forms.begin(), d.forms.end(), f) != d.forms.end();
  return false;
}

inline std::vector<Setup> setups_unfiltered(Collective c, Algorithms which) {
  std::vector<Setup> all;
  const bool single = world_size() == 1;
  if (which == Algorithms::lane) {
    if (single) return all;
    // Every algorithm on 1 to 4 lanes, including more lanes than some processes have threads
    // (in its default form: staged, or pipelined at the largest size where that pays). full_lane
    // also forced staged, and pipelined on every lane count: with small chunks on 1, 3 and 4 lanes
    // (chunks that do not divide the buffer, cut over lanes that do not divide the chunk) and with
    // the default chunk on 2 (one chunk, or none, below the largest size).
    for (const auto& a : tlc::algorithms()) {
      if (a.collective != c || a.single_process || a.name == "hierarchical" || a.name == "dynamic")
        continue;
      for (int lanes = 1; lanes <= 4; ++lanes) all.push_back({a.name, lanes, false});
      // Multi-sender algorithms with a direct form take it with one thread everywhere (their
      // default there) and run staged elsewhere: each form forced once too.
      if (has_form(c, a.name, "direct")) {
        all.push_back({a.name + ":staged", 2, false});
        all.push_back({a.name + ":direct", 1, false});
      }
      if (a.name != "full_lane") continue;
      all.push_back({"full_lane:staged", 4, false});  // also at the sizes that would pipeline
      if (!has_form(c, a.name, "pipelined")) continue;
      for (int lanes : {1, 3, 4})
        all.push_back({"full_lane:pipelined", lanes, false, small_chunk(c)});
      all.push_back({"full_lane:pipelined", 2, false});
    }
    return all;
  }
  bool numa_aware = false;
  for (const auto& a : tlc::algorithms()) {
    if (a.collective != c) continue;
    // dynamic (led by arrival) serves one process and several alike, with no lanes.
    if (a.name == "hierarchical" || a.name == "dynamic" || (single && a.single_process))
      all.push_back({a.name, 1, a.name == "two_level"});
    // The alltoall led by arrival also in fragments: a 1 MiB minimum holds back every block
    // below it (every size of the sweep but the largest, which still goes block by block) until
    // its run fills or the last thread arrives.
    if (!single && a.name == "dynamic" && c == Collective::alltoall)
      all.push_back({a.name, 1, false, 0, "1024"});
    numa_aware = numa_aware || a.name == "two_level";
    // Every form of the algorithms forced in turn (the default form is the plan's choice).
    if (single && a.name == "flat" && c != Collective::barrier)
      for (const std::string& f : a.forms) all.push_back({"flat:" + f, 1, false});
    if (!single && a.name == "hierarchical")
      for (const std::string& f : a.forms)
        all.push_back({"hierarchical:" + f, 1, false, f == "pipelined" ? small_chunk(c) : 0});
  }
  all.push_back({"", single ? 1 : 2, false});
  // The selector on a machine with several NUMA domains too, where it has two_level to choose.
  if (single && numa_aware) all.push_back({"", 1, true});
  return all;
}

// TLC_TEST_VERBOSE=1 prints every batch of calls before it runs (to find a hang).
// TLC_TEST_ALGORITHMS=name,name,... (algorithm names, "selector" for the selector's choice)
// restricts the sweeps to those algorithms, to reproduce one failure quickly.
inline bool algorithm_wanted(const std::string& name) {
  const char* only = std::getenv("TLC_TEST_ALGORITHMS");
  if (!only || !*only) return true;
  const std::string list = std::string(",") + only + ",";
  return list.find("," + (name.empty() ? std::string("selector") : name) + ",") !=
         std::string::npos;
}

inline std::vector<Setup> setups(Collective c, Algorithms which) {
  std::vector<Setup> all = setups_unfiltered(c, which);
  std::erase_if(all, [](const Setup& s) { return !algorithm_wanted(s.algorithm); });
  return all;
}

// Team shapes: threads of this process. One process: 1..6 threads; several: uniform one
// thread (the direct-MPI path), and the uneven shapes of test_common.hpp.
struct TeamShape {
  std::string label;
  int threads;
};
inline std::vector<TeamShape> team_shapes(Algorithms which) {
  std::vector<TeamShape> all;
  if (world_size() == 1) {
    for (int t = 1; t <= 6; ++t) all.push_back({std::to_string(t) + " threads", t});
    return all;
  }
  for (const Shape& s : shapes()) {
    const std::string name = s.name;
    const bool wanted = which == Algorithms::core
                            ? name == "uniform1" || name == "uneven_123" || name == "uneven_4321"
                            : name == "uniform2" || name == "uneven_4321";
    if (wanted) all.push_back({name, s.threads_of(world_rank())});
  }
  return all;
}

// A synthetic machine whose NUMA domains the team's threads are spread over (two domains of
// four cores for even thread counts, four domains of two cores for odd ones).
inline tlc::Topology numa_topology(int threads) {
  return tlc::Topology::synthetic(threads % 2 == 0 ? "package:2 numa:1 core:4 pu:1"
                                                   : "package:2 numa:2 core:2 pu:1");
}

struct Configured {
  Setup setup;
  std::unique_ptr<tlc::Team> team;
};

inline std::vector<Configured> make_teams(Collective c, const std::vector<Setup>& all,
                                          int threads) {
  std::vector<Configured> teams;
  for (const Setup& s : all) {
    tlc::TeamOptions o = test_options(threads);
    o.lanes = s.lanes;
    o.pipeline_chunk_bytes = s.pipeline_chunk;
    if (!s.algorithm.empty()) o.algorithms[c] = s.algorithm;
    if (s.numa) o.topology = numa_topology(threads);
    if (s.fragment_kib) ::setenv("TLC_COST_FRAGMENT_KIB", s.fragment_kib, 1);
    teams.push_back({s, std::make_unique<tlc::Team>(MPI_COMM_WORLD, o)});
    if (s.fragment_kib) ::unsetenv("TLC_COST_FRAGMENT_KIB");
    if (s.numa && threads > 1) {
      std::set<int> domains;
      for (const auto& p : teams.back().team->placement().threads) domains.insert(p.numa);
      EXPECT_GT(domains.size(), 1u)
          << s.label() << ": " << threads << " threads not spread over NUMA domains";
    }
  }
  return teams;
}

// --- One case ------------------------------------------------------------------------------------

// The teams of one shape, all forced to different algorithms for one collective.
struct Ctx {
  Collective collective;
  std::vector<Configured>* teams;
  std::string shape;
  int size = 0;   // ranks of the team
  int first = 0;  // global rank of this process's thread 0
  int threads = 0;

  std::vector<int> roots(std::size_t n) const {
    std::vector<int> r;
    for (int k = 0; k < size; ++k)
      if (!is_large(n) || k == 0 || k == size - 1) r.push_back(k);
    return r;
  }
  std::string describe(std::size_t n, int root, bool in_place, const std::string& what) const {
    std::string s = std::string(tlc::to_string(collective)) + " " + shape + " (" +
                    std::to_string(size) + " ranks) n=" + std::to_string(n);
    if (root >= 0) s += " root=" + std::to_string(root);
    if (in_place) s += " in-place";
    return s + " " + what;
  }
};

// The buffer each local thread hands to the collective (and which is inspected afterwards),
// before and after the call.
template <class T>
struct Expectation {
  std::vector<Buf<T>> initial, expected;
  // Only the first `specified` elements of each buffer are defined after the call (in-place
  // reduce_scatter_block).
  std::size_t specified = static_cast<std::size_t>(-1);
  // Whether the op is commutative (algorithms that combine out of rank order cannot serve a
  // non-commutative op; forced, they fall back to the plan's choice).
  bool commutative_op = true;
};

// Builds the expectation of every local thread: init(rank) is its buffer before the call,
// reference(rank, buffer) turns a copy of it into what the call must leave.
template <class T, class Init, class Reference>
Expectation<T> expectation(const Ctx& ctx, Init init, Reference reference) {
  Expectation<T> e;
  for (int t = 0; t < ctx.threads; ++t) {
    const int r = ctx.first + t;
    e.initial.push_back(init(r));
    e.expected.push_back(e.initial.back());
    reference(r, e.expected.back());
  }
  return e;
}

// Failure reports are capped per test so that a broken algorithm does not flood the log.
inline int& reported_failures() {
  static int count = 0;
  return count;
}
inline int& suppressed_failures() {
  static int count = 0;
  return count;
}
class CollectiveTest : public testing::Test {
 protected:
  void SetUp() override { reported_failures() = suppressed_failures() = 0; }
  void TearDown() override {
    if (suppressed_failures() > 0)
      ADD_FAILURE() << "... and " << suppressed_failures() << " more failing cases";
  }
};
inline void report(const std::string& text) {
  if (reported_failures()++ < 25) {
    ADD_FAILURE() << text;
  } else {
    ++suppressed_failures();
  }
}

template <class T>
std::string first_difference(const Buf<T>& got, const Buf<T>& expected, std::size_t upto) {
  if (got.size() != expected.size())
    return "buffer size changed to " + std::to_string(got.size()) + " from " +
           std::to_string(expected.size());
  const std::size_t n = std::min(upto, got.size());
  // The common case first: std::equal compares integers with memcmp, much faster than counting.
  if (std::equal(got.data(), got.data() + n, expected.data())) return {};
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (!(got[i] == expected[i]) && bad++ == 0) first = i;
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(n) + " elements wrong, first [" +
         std::to_string(first) + "]: got " + show(got[first]) + ", expected " +
         show(expected[first]);
}

// Values no test input takes, written over buffers and counts a thread owned once its call
// returned: a library that still reads them afterwards sees nonsense.
// TLC_TEST_NO_SCRIBBLE=1 turns this off (to tell such late reads from other failures).
inline bool scribbling() {
  static const bool on = std::getenv("TLC_TEST_NO_SCRIBBLE") == nullptr;
  return on;
}
template <class T>
void scribble(Buf<T>& b) {
  if (scribbling()) std::fill_n(b.data(), b.size(), garbage<T>(0x5c));
}
inline void scribble(std::vector<std::size_t>& v) {
  if (scribbling()) std::fill(v.begin(), v.end(), static_cast<std::size_t>(-1) / 2);
}

// A batch of calls that every thread of a team makes back to back, as an application would.
// Each call has an expectation per local thread and a body that makes it: body(me, mine, send),
// where `mine` is the buffer the call writes (a copy of Expectation::initial, inspected after
// the call) and `send` the thread's private copy of its send buffer (inputs[rank], empty when
// the call has none). Threads snapshot `mine` right after their call returns and then scribble
// over `mine` and `send` (bodies do the same with their copies of v-variant counts), so writes
// after a thread has returned and reads of a buffer after its owner has returned both show. The
// send buffer must come back unchanged. At the large size every call runs on its own, sending
// straight from the shared inputs, without snapshot or scribbling. Results are compared on the
// main thread after run() returns; a batch runs once per team of the context.
template <class T>
class Batch {
 public:
  using Body = std::function<void(tlc::Thread&, Buf<T>& mine, const Buf<T>& send)>;

  // Calls of the large size run one per team.run, to bound memory.
  Batch(const Ctx& ctx, std::size_t n) : ctx_(ctx), one_per_run_(is_large(n)) {}
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  void add(std::string what, Expectation<T> e, Body body,
           std::shared_ptr<const PerRank<T>> inputs = nullptr) {
    items_.push_back({std::move(what), std::move(e), std::move(body), std::move(inputs)});
    // The same on every process (each process runs the same sequence of team.run calls).
    if (one_per_run_) run();
  }

  // Runs the pending calls on every team and checks them.
  void run() {
    if (items_.empty()) return;
    static const bool verbose = std::getenv("TLC_TEST_VERBOSE") != nullptr;
    for (Configured& c : *ctx_.teams) {
      if (verbose)
        std::fprintf(stderr, "[process %d] [%s] %s (+%zu more calls)\n", world_rank(),
                     c.setup.label().c_str(), items_.front().what.c_str(), items_.size() - 1);
      run_on(c);
    }
    items_.clear();
  }

  ~Batch() { run(); }

 private:
  struct Item {
    std::string what;
    Expectation<T> e;
    Body body;
    std::shared_ptr<const PerRank<T>> inputs;
  };

  void run_on(Configured& c) {
    const auto K = items_.size();
    const auto L = static_cast<std::size_t>(ctx_.threads);
    std::vector<std::vector<Buf<T>>> got(K, std::vector<Buf<T>>(L));
    std::vector<std::vector<std::string>> errors(K, std::vector<std::string>(L));
    c.team->run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      for (std::size_t k = 0; k < K; ++k) {
        const Item& item = items_[k];
        Buf<T> mine = item.e.initial[t];
        static const Buf<T> none;
        const Buf<T>& input =
            item.inputs ? (*item.inputs)[static_cast<std::size_t>(me.rank())] : none;
        // Large sizes send straight from the shared inputs and skip the snapshot, to save time.
        Buf<T> send;
        if (!one_per_run_) send = input;
        try {
          item.body(me, mine, one_per_run_ ? input : send);
        } catch (const std::exception& ex) {
          errors[k][t] = std::string("threw: ") + ex.what();
        }
        if (one_per_run_) {
          got[k][t] = std::move(mine);
          continue;
        }
        got[k][t] = mine;
        if (errors[k][t].empty()) {
          const std::string changed = first_difference(send, input, send.size());
          if (!changed.empty()) errors[k][t] = "the send buffer was written: " + changed;
        }
        scribble(mine);
        scribble(send);
      }
    });
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t t = 0; t < L; ++t) {
        const Expectation<T>& e = items_[k].e;
        std::string problem = errors[k][t];
        // Forced algorithms that combine out of rank order fall back to the plan's choice for
        // a non-commutative op, so every result is checked the same way.
        if (problem.empty()) problem = first_difference(got[k][t], e.expected[t], e.specified);
        if (problem.empty()) continue;
        std::ostringstream s;
        s << "[" << c.setup.label() << "] " << items_[k].what << ", rank "
          << ctx_.first + static_cast<int>(t) << ": " << problem;
        report(s.str());
      }
  }

  const Ctx& ctx_;
  bool one_per_run_;
  std::vector<Item> items_;
};

// Runs body(ctx, n) for every shape and size, on teams forced to every algorithm of `which`.
template <class Body>
void sweep(Collective c, Algorithms which, Body&& body) {
  const std::vector<Setup> all = setups(c, which);
  if (all.empty()) GTEST_SKIP() << "no such algorithms with " << world_size() << " process(es)";
  const std::vector<TeamShape> shape_list = team_shapes(which);
  const bool reduced_shape_swept =
      std::any_of(shape_list.begin(), shape_list.end(),
                  [](const TeamShape& s) { return s.label == reduced_shape; });
  for (std::size_t n : sweep_sizes())
    if (is_reduced(n) && !reduced_shape_swept)
      ADD_FAILURE() << "size " << n << " would never run: no team shape " << reduced_shape;
  for (const TeamShape& shape : shape_list) {
    std::vector<Configured> teams = make_teams(c, all, shape.threads);
    Ctx ctx{c,
            &teams,
            shape.label,
            teams.front().team->size(),
            teams.front().team->first_rank(),
            shape.threads};
    for (std::size_t n : sweep_sizes())
      if (!is_reduced(n) || shape.label == reduced_shape) body(ctx, n);
  }
  // The direct forms of the multi-sender algorithms serve one thread in every process only, a
  // shape the lane sweep has not run: there, each forced in turn, at every size.
  if (which != Algorithms::lane) return;
  std::vector<Setup> direct;
  for (const Setup& s : all)
    if (s.algorithm.ends_with(":direct")) direct.push_back(s);
  if (direct.empty()) return;
  std::vector<Configured> teams = make_teams(c, direct, 1);
  Ctx ctx{c, &teams, "uniform1", teams.front().team->size(), teams.front().team->first_rank(), 1};
  for (std::size_t n : sweep_sizes()) body(ctx, n);
}

template <class T>
struct Tag {
  using type = T;
};

}  // namespace tlc_test
