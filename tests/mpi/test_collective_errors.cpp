// docs/design.md section 9 for every collective: a root out of range, a receive (or send) buffer of
// the wrong size, v-variant counts and displacements that do not have one entry per rank, different
// roots on different threads, an in-place buffer that does not divide into size() blocks, and an
// in-place form used where it is not allowed throw tlc::Error on every thread of the process,
// before any buffer is written; the team keeps working afterwards.
//
// Every process holds a bad call (most often on local thread 1), so that every process detects
// the error itself: a mistake that only one process can see (the root's receive size, say) is
// only tested on one process.
#include <string>
#include <vector>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;
using Span = std::span<double>;
using CSpan = std::span<const double>;
using Counts = std::vector<std::size_t>;

constexpr int team_threads = 3;
constexpr std::size_t n = 4;  // elements per rank block

struct Seen {
  int code = -1;  // the tlc::Errc thrown, -1 for none
  std::string text;
  std::string problem;  // a buffer written, the team broken afterwards, another exception
};

// Runs body(me, a, b) on every thread of a fresh team. a and b hold 64 * size() elements each
// (a: the rank's data, b: a sentinel); they must be unchanged afterwards.
template <class Body>
std::vector<Seen> probe(Body body) {
  tlc::Team team(MPI_COMM_WORLD, static_options(team_threads));
  std::vector<Seen> seen(static_cast<std::size_t>(team.threads()));
  team.run([&](tlc::Thread& me) {
    Seen& s = seen[static_cast<std::size_t>(me.local_index())];
    const auto size = static_cast<std::size_t>(64 * me.size());
    std::vector<double> a(size), b(size, -7.25);
    for (std::size_t i = 0; i < size; ++i) a[i] = me.rank() * 1000.0 + static_cast<double>(i);
    const std::vector<double> a0 = a, b0 = b;
    try {
      body(me, Span(a), Span(b));
    } catch (const tlc::Error& e) {
      s.code = static_cast<int>(e.code());
      s.text = e.what();
    } catch (const std::exception& e) {
      s.problem = std::string("threw something else than tlc::Error: ") + e.what();
    }
    if (a != a0 || b != b0) s.problem += " a buffer was written;";
    try {
      double one = 1;
      me.allreduce(Span(&one, 1));
      if (one != me.size()) s.problem += " the team computes wrong results afterwards;";
    } catch (const std::exception& e) {
      s.problem += std::string(" the team is broken afterwards: ") + e.what();
    }
  });
  return seen;
}

void expect_everyone(const std::vector<Seen>& seen, tlc::Errc code, const std::string& fragment,
                     const std::string& what) {
  for (std::size_t t = 0; t < seen.size(); ++t) {
    EXPECT_EQ(seen[t].code, static_cast<int>(code))
        << what << ", thread " << t << ": "
        << (seen[t].code < 0 ? std::string("no tlc::Error") : seen[t].text);
    EXPECT_NE(seen[t].text.find(fragment), std::string::npos)
        << what << ", thread " << t << ": message lacks \"" << fragment << "\": " << seen[t].text;
    EXPECT_TRUE(seen[t].problem.empty()) << what << ", thread " << t << ":" << seen[t].problem;
  }
}

Counts iota_counts(std::size_t ranks, std::size_t each) { return Counts(ranks, each); }
Counts block_displs(std::size_t ranks, std::size_t each) {
  Counts d(ranks);
  for (std::size_t r = 0; r < ranks; ++r) d[r] = r * each;
  return d;
}

TEST(CollectiveErrors, RootOutOfRange) {
  using Call = void (*)(tlc::Thread&, Span, Span, int);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"bcast", [](tlc::Thread& me, Span a, Span, int root) { me.bcast(a.first(n), root); }},
      {"reduce", [](tlc::Thread& me, Span a, Span b,
                    int root) { me.reduce(CSpan(a.first(n)), b.first(n), root); }},
      {"reduce in place",
       [](tlc::Thread& me, Span a, Span, int root) { me.reduce(a.first(n), root); }},
      {"gather", [](tlc::Thread& me, Span a, Span b,
                    int root) { me.gather(CSpan(a.first(n)), b.first(n * me.size()), root); }},
      {"gatherv",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.gatherv(CSpan(a.first(n)), b.first(n * N), iota_counts(N, n), block_displs(N, n), root);
       }},
      {"scatter", [](tlc::Thread& me, Span a, Span b,
                     int root) { me.scatter(CSpan(a.first(n * me.size())), b.first(n), root); }},
      {"scatterv",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.scatterv(CSpan(a.first(n * N)), iota_counts(N, n), block_displs(N, n), b.first(n),
                     root);
       }},
  };
  for (const auto& [name, call] : calls)
    for (int which : {0, 1}) {
      auto seen = probe([&, call = call](tlc::Thread& me, Span a, Span b) {
        call(me, a, b, which == 0 ? me.size() : -1);
      });
      expect_everyone(seen, tlc::Errc::invalid_argument, "root",
                      std::string(name) + (which == 0 ? " root=size()" : " root=-1"));
    }
}

// Local thread 1 of every process passes a buffer of the wrong size.
TEST(CollectiveErrors, WrongBufferSize) {
  using Call = void (*)(tlc::Thread&, Span, Span, std::size_t extra);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"allgather recv",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         me.allgather(CSpan(a.first(n)), b.first(n * me.size() + x));
       }},
      {"alltoall recv",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         me.alltoall(CSpan(a.first(n * me.size())), b.first(n * me.size() + x));
       }},
      {"reduce_scatter_block recv",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         me.reduce_scatter_block(CSpan(a.first(n * me.size())), b.first(n + x));
       }},
      {"scan recv", [](tlc::Thread& me, Span a, Span b,
                       std::size_t x) { me.scan(CSpan(a.first(n)), b.first(n + x)); }},
      {"exscan recv", [](tlc::Thread& me, Span a, Span b,
                         std::size_t x) { me.exscan(CSpan(a.first(n)), b.first(n - x)); }},
      {"allreduce recv",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         me.allreduce(CSpan(a.first(n)), b.first(n + x), tlc::max{});
       }},
      {"allgatherv send != counts[rank]",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         const auto N = static_cast<std::size_t>(me.size());
         me.allgatherv(CSpan(a.first(n + x)), b.first(n * N), iota_counts(N, n),
                       block_displs(N, n));
       }},
      {"allgatherv block outside recv",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         const auto N = static_cast<std::size_t>(me.size());
         me.allgatherv(CSpan(a.first(n)), b.first(n * N - x), iota_counts(N, n),
                       block_displs(N, n));
       }},
      {"alltoallv block outside send",
       [](tlc::Thread& me, Span a, Span b, std::size_t x) {
         const auto N = static_cast<std::size_t>(me.size());
         me.alltoallv(CSpan(a.first(n * N - x)), iota_counts(N, n), block_displs(N, n),
                      b.first(n * N), iota_counts(N, n), block_displs(N, n));
       }},
  };
  for (const auto& [name, call] : calls) {
    auto seen = probe([call = call](tlc::Thread& me, Span a, Span b) {
      call(me, a, b, me.local_index() == 1 ? 1 : 0);
    });
    expect_everyone(seen, tlc::Errc::invalid_argument, "", name);
  }
}

// Receive blocks that overlap (two writers of one element): rejected like a block outside the
// buffer. Every process has one bad thread; gatherv's layout is the root's alone, so it is
// checked where the root's process is the only one.
TEST(CollectiveErrors, OverlappingReceiveBlocks) {
  using Call = void (*)(tlc::Thread&, Span, Span, const Counts& displs);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"allgatherv",
       [](tlc::Thread& me, Span a, Span b, const Counts& d) {
         const auto N = static_cast<std::size_t>(me.size());
         me.allgatherv(CSpan(a.first(n)), b.first(n * N), iota_counts(N, n), d);
       }},
      {"alltoallv",
       [](tlc::Thread& me, Span a, Span b, const Counts& d) {
         const auto N = static_cast<std::size_t>(me.size());
         me.alltoallv(CSpan(a.first(n * N)), iota_counts(N, n), block_displs(N, n), b.first(n * N),
                      iota_counts(N, n), d);
       }},
      {"gatherv",
       [](tlc::Thread& me, Span a, Span b, const Counts& d) {
         const auto N = static_cast<std::size_t>(me.size());
         me.gatherv(CSpan(a.first(n)), b.first(me.rank() == 1 ? n * N : 0), iota_counts(N, n), d,
                    1);
       }},
  };
  for (const auto& [name, call] : calls) {
    if (std::string(name) == "gatherv" && world_size() > 1) continue;
    auto seen = probe([call = call](tlc::Thread& me, Span a, Span b) {
      const auto N = static_cast<std::size_t>(me.size());
      Counts d = block_displs(N, n);
      // The last block starts one element inside the one before it.
      if (me.local_index() == 1) d[N - 1] -= 1;
      call(me, a, b, d);
    });
    expect_everyone(seen, tlc::Errc::invalid_argument, "recv blocks overlap", name);
  }
}

// Sizes only the root can check: only meaningful on one process (elsewhere the other processes
// could not know and would go on).
TEST(CollectiveErrors, WrongRootBufferSize) {
  if (world_size() > 1) GTEST_SKIP() << "only the root's process can see these";
  using Call = void (*)(tlc::Thread&, Span, Span, int root);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"reduce root recv",
       [](tlc::Thread& me, Span a, Span b, int root) {
         me.reduce(CSpan(a.first(n)), b.first(me.rank() == root ? n + 1 : 0), root);
       }},
      {"gather root recv",
       [](tlc::Thread& me, Span a, Span b, int root) {
         me.gather(CSpan(a.first(n)), b.first(me.rank() == root ? n * me.size() - 1 : 0), root);
       }},
      {"scatter root send",
       [](tlc::Thread& me, Span a, Span b, int root) {
         me.scatter(CSpan(a.first(me.rank() == root ? n * me.size() + 2 : 0)), b.first(n), root);
       }},
      {"gatherv root recv too small for the displacements",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.gatherv(CSpan(a.first(n)), b.first(me.rank() == root ? n * N - 1 : 0),
                    iota_counts(N, n), block_displs(N, n), root);
       }},
      {"gatherv send != the root's counts[rank]",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.gatherv(CSpan(a.first(me.local_index() == 2 ? n - 1 : n)),
                    b.first(me.rank() == root ? n * N : 0), iota_counts(N, n), block_displs(N, n),
                    root);
       }},
      {"scatterv recv != the root's counts[rank]",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.scatterv(CSpan(a.first(me.rank() == root ? n * N : 0)), iota_counts(N, n),
                     block_displs(N, n), b.first(me.local_index() == 2 ? n + 1 : n), root);
       }},
  };
  for (const auto& [name, call] : calls)
    for (int root = 0; root < team_threads; ++root) {
      auto seen =
          probe([call = call, root](tlc::Thread& me, Span a, Span b) { call(me, a, b, root); });
      // A thread whose size disagrees with the root's counts is a mismatch between participants.
      const bool disagree = std::string(name).find("!=") != std::string::npos;
      expect_everyone(seen, disagree ? tlc::Errc::mismatch : tlc::Errc::invalid_argument, "",
                      std::string(name) + " root=" + std::to_string(root));
    }
}

// counts or displacements without one entry per rank, on local thread 1 of every process.
TEST(CollectiveErrors, CountsNotOnePerRank) {
  using Call = void (*)(tlc::Thread&, Span, Span, std::size_t entries, std::size_t displ_entries);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"allgatherv",
       [](tlc::Thread& me, Span a, Span b, std::size_t c, std::size_t d) {
         const auto N = static_cast<std::size_t>(me.size());
         me.allgatherv(CSpan(a.first(n)), b.first(n * N), iota_counts(c, n), block_displs(d, n));
       }},
      {"alltoallv",
       [](tlc::Thread& me, Span a, Span b, std::size_t c, std::size_t d) {
         const auto N = static_cast<std::size_t>(me.size());
         me.alltoallv(CSpan(a.first(n * N)), iota_counts(c, n), block_displs(d, n), b.first(n * N),
                      iota_counts(N, n), block_displs(N, n));
       }},
      {"alltoallv (receive side)",
       [](tlc::Thread& me, Span a, Span b, std::size_t c, std::size_t d) {
         const auto N = static_cast<std::size_t>(me.size());
         me.alltoallv(CSpan(a.first(n * N)), iota_counts(N, n), block_displs(N, n), b.first(n * N),
                      iota_counts(c, n), block_displs(d, n));
       }},
  };
  for (const auto& [name, call] : calls) {
    for (int variant : {0, 1, 2}) {
      auto seen = probe([call = call, variant](tlc::Thread& me, Span a, Span b) {
        const auto N = static_cast<std::size_t>(me.size());
        const bool bad = me.local_index() == 1;
        const std::size_t c = bad && variant != 2 ? (variant == 0 ? N - 1 : N + 1) : N;
        const std::size_t d = bad && variant == 2 ? N - 1 : N;
        call(me, a, b, c, d);
      });
      expect_everyone(seen, tlc::Errc::invalid_argument, "one entry per rank",
                      std::string(name) + (variant == 0   ? " counts.size() == size()-1"
                                           : variant == 1 ? " counts.size() == size()+1"
                                                          : " displs.size() == size()-1"));
    }
  }
  // gatherv and scatterv read them at the root only: one process.
  if (world_size() > 1) return;
  for (int root = 0; root < team_threads; ++root) {
    auto seen = probe([root](tlc::Thread& me, Span a, Span b) {
      const auto N = static_cast<std::size_t>(me.size());
      me.gatherv(CSpan(a.first(n)), b.first(n * N), iota_counts(N - 1, n), block_displs(N - 1, n),
                 root);
    });
    expect_everyone(seen, tlc::Errc::invalid_argument, "one entry per rank",
                    "gatherv root=" + std::to_string(root));
    seen = probe([root](tlc::Thread& me, Span a, Span b) {
      const auto N = static_cast<std::size_t>(me.size());
      me.scatterv(CSpan(a.first(n * N)), iota_counts(N + 1, n), block_displs(N + 1, n), b.first(n),
                  root);
    });
    expect_everyone(seen, tlc::Errc::invalid_argument, "one entry per rank",
                    "scatterv root=" + std::to_string(root));
  }
}

// Local thread 0 of every process passes root 0, the others root 1.
TEST(CollectiveErrors, DifferentRoots) {
  using Call = void (*)(tlc::Thread&, Span, Span, int root);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"bcast", [](tlc::Thread& me, Span a, Span, int root) { me.bcast(a.first(n), root); }},
      {"reduce", [](tlc::Thread& me, Span a, Span b,
                    int root) { me.reduce(CSpan(a.first(n)), b.first(n), root); }},
      {"gather", [](tlc::Thread& me, Span a, Span b,
                    int root) { me.gather(CSpan(a.first(n)), b.first(n * me.size()), root); }},
      {"scatter", [](tlc::Thread& me, Span a, Span b,
                     int root) { me.scatter(CSpan(a.first(n * me.size())), b.first(n), root); }},
      {"gatherv",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.gatherv(CSpan(a.first(n)), b.first(n * N), iota_counts(N, n), block_displs(N, n), root);
       }},
      {"scatterv",
       [](tlc::Thread& me, Span a, Span b, int root) {
         const auto N = static_cast<std::size_t>(me.size());
         me.scatterv(CSpan(a.first(n * N)), iota_counts(N, n), block_displs(N, n), b.first(n),
                     root);
       }},
  };
  for (const auto& [name, call] : calls) {
    auto seen = probe([call = call](tlc::Thread& me, Span a, Span b) {
      call(me, a, b, me.local_index() == 0 ? 0 : 1);
    });
    expect_everyone(seen, tlc::Errc::mismatch, "root", name);
  }
}

// In-place buffers that do not divide into size() blocks (on every thread: the block size is
// what every thread derives from its own buffer).
TEST(CollectiveErrors, InPlaceSizeNotDivisible) {
  using Call = void (*)(tlc::Thread&, Span);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"alltoall", [](tlc::Thread& me, Span a) { me.alltoall(a.first(n * me.size() + 1)); }},
      {"allgather", [](tlc::Thread& me, Span a) { me.allgather(a.first(n * me.size() + 1)); }},
      {"reduce_scatter_block",
       [](tlc::Thread& me, Span a) { me.reduce_scatter_block(a.first(n * me.size() + 1)); }},
  };
  for (const auto& [name, call] : calls) {
    auto seen = probe([call = call](tlc::Thread& me, Span a, Span) { call(me, a); });
    expect_everyone(seen, tlc::Errc::invalid_argument, "multiple", name);
  }
}

// The in_place forms of gather(v) and scatter(v) are for the root only: local thread 1 of every
// process (never the root, rank 0) uses one.
TEST(CollectiveErrors, InPlaceFormAtANonRoot) {
  using Call = void (*)(tlc::Thread&, Span, Span, bool misuse);
  const std::vector<std::pair<const char*, Call>> calls = {
      {"gather",
       [](tlc::Thread& me, Span a, Span b, bool misuse) {
         if (misuse || me.rank() == 0) {
           me.gather(tlc::in_place, b.first(n * me.size()), 0);
         } else {
           me.gather(CSpan(a.first(n)), b.first(0), 0);
         }
       }},
      {"scatter",
       [](tlc::Thread& me, Span a, Span b, bool misuse) {
         if (misuse || me.rank() == 0) {
           me.scatter(CSpan(a.first(n * me.size())), tlc::in_place, 0);
         } else {
           me.scatter(CSpan(a.first(0)), b.first(n), 0);
         }
       }},
      {"gatherv",
       [](tlc::Thread& me, Span a, Span b, bool misuse) {
         const auto N = static_cast<std::size_t>(me.size());
         if (misuse || me.rank() == 0) {
           me.gatherv(tlc::in_place, b.first(n * N), iota_counts(N, n), block_displs(N, n), 0);
         } else {
           me.gatherv(CSpan(a.first(n)), b.first(0), {}, {}, 0);
         }
       }},
      {"scatterv",
       [](tlc::Thread& me, Span a, Span b, bool misuse) {
         const auto N = static_cast<std::size_t>(me.size());
         if (misuse || me.rank() == 0) {
           me.scatterv(CSpan(a.first(n * N)), iota_counts(N, n), block_displs(N, n), tlc::in_place,
                       0);
         } else {
           me.scatterv(CSpan(a.first(0)), {}, {}, b.first(n), 0);
         }
       }},
  };
  for (const auto& [name, call] : calls) {
    auto seen = probe(
        [call = call](tlc::Thread& me, Span a, Span b) { call(me, a, b, me.local_index() == 1); });
    expect_everyone(seen, tlc::Errc::invalid_argument, "root only", name);
  }
}

}  // namespace
