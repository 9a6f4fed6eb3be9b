// The point-to-point inter-process algorithms of src/inter/p2p.hpp, run directly on lanes
// (no team): every function with sizes 0, 1, 7, 4099 and about 1 MiB, irregular v-sizes with
// zeros, every root and several segment sizes for bcast, built-in ops, user ops and a
// non-commutative op, checked element by element against sequential references computed
// locally from every process's deterministic input. A multi-sender test drives three lanes from
// three threads at once on disjoint thirds of one buffer, as a multi-sender collective does.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tlc/error.hpp>
#include <tlc/ops.hpp>
#include <tlc/thread.hpp>

#include "inter/mpi_policy.hpp"
#include "inter/p2p.hpp"
#include "inter/process_comm.hpp"
#include "intra/sliced_reduce.hpp"

namespace {

namespace p2p = tlc::detail::p2p;
using tlc::detail::Call;
using tlc::detail::ProcessComm;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// One lane for the whole binary, made on first use; every process runs the tests in the same
// order, so the collective construction matches up. Polite waiting, as tlc uses on
// oversubscribed nodes (the tests run 2x oversubscribed at 4 processes). After MPI_Finalize
// its destructor does nothing.
ProcessComm& lane() {
  static const std::unique_ptr<ProcessComm> comm = [] {
    auto c = std::make_unique<ProcessComm>(MPI_COMM_WORLD, /*lane=*/true);
    c->set_polite(true);
    return c;
  }();
  return *comm;
}

// ---- data movement ----

constexpr std::byte sentinel{0xA5};

// The byte at index i of a block that `process` contributes; salt tells blocks apart.
std::byte pattern(int process, std::size_t i, std::size_t salt = 0) {
  return static_cast<std::byte>(
      (static_cast<std::size_t>(process) * 151 + i * 31 + (i >> 8) + salt * 77 + 1) & 0xff);
}

const std::vector<std::size_t>& sizes() {
  static const std::vector<std::size_t> all = {0, 1, 7, 4099, (std::size_t{1} << 20) + 5};
  return all;
}

// Checks `bytes` bytes at data against pattern(process, ., salt); reports the first difference.
::testing::AssertionResult matches_pattern(const std::byte* data, std::size_t bytes, int process,
                                           std::size_t salt) {
  for (std::size_t i = 0; i < bytes; ++i)
    if (data[i] != pattern(process, i, salt))
      return ::testing::AssertionFailure()
             << "byte " << i << " of the block of process " << process << " (salt " << salt << ", "
             << bytes << " bytes) is " << static_cast<int>(data[i]) << ", expected "
             << static_cast<int>(pattern(process, i, salt));
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult untouched(const std::byte* data, std::size_t bytes, const char* what) {
  for (std::size_t i = 0; i < bytes; ++i)
    if (data[i] != sentinel) return ::testing::AssertionFailure() << what << " written at " << i;
  return ::testing::AssertionSuccess();
}

// Blocks of an allgatherv: variant 0 equal and packed in rank order; variant 1 irregular (with
// zeros), in reverse rank order, with gaps between the blocks that must stay untouched.
struct VLayout {
  std::vector<std::size_t> bytes, displs;
  std::size_t total = 0;
};

VLayout v_layout(int processes, std::size_t base, int variant, std::size_t salt = 0) {
  VLayout l;
  const auto p = static_cast<std::size_t>(processes);
  l.bytes.resize(p);
  l.displs.resize(p);
  for (std::size_t q = 0; q < p; ++q)
    l.bytes[q] = variant == 0 ? base : ((q + salt) % 3 == 1 ? 0 : base + 13 * q);
  for (std::size_t k = 0; k < p; ++k) {
    const std::size_t q = variant == 0 ? k : p - 1 - k;
    l.displs[q] = l.total;
    l.total += l.bytes[q] + (variant == 0 ? 0 : 3);
  }
  return l;
}

// Fills buf with the sentinel and this process's own block of layout l.
void fill_allgatherv(std::vector<std::byte>& buf, std::size_t offset, const VLayout& l,
                     std::size_t salt) {
  const int me = world_rank();
  const auto m = static_cast<std::size_t>(me);
  for (std::size_t i = 0; i < l.bytes[m]; ++i) buf[offset + l.displs[m] + i] = pattern(me, i, salt);
}

void check_allgatherv(const std::vector<std::byte>& buf, std::size_t offset, const VLayout& l,
                      std::size_t salt, const std::string& what) {
  std::vector<bool> covered(l.total, false);
  for (std::size_t q = 0; q < l.bytes.size(); ++q) {
    EXPECT_TRUE(
        matches_pattern(buf.data() + offset + l.displs[q], l.bytes[q], static_cast<int>(q), salt))
        << what;
    for (std::size_t i = 0; i < l.bytes[q]; ++i) covered[l.displs[q] + i] = true;
  }
  for (std::size_t i = 0; i < l.total; ++i)
    if (!covered[i]) {
      EXPECT_EQ(buf[offset + i], sentinel) << what << ": gap byte " << i << " written";
      break;
    }
}

TEST(P2pAllgather, RingAllgathervAnySizes) {
  const int P = world_size();
  for (int variant = 0; variant < 2; ++variant) {
    for (std::size_t base : sizes()) {
      const VLayout l = v_layout(P, base, variant);
      std::vector<std::byte> buf(l.total + 8, sentinel);
      fill_allgatherv(buf, 0, l, variant);
      p2p::ring_allgatherv(lane(), buf.data(), l.bytes, l.displs);
      check_allgatherv(buf, 0, l, static_cast<std::size_t>(variant),
                       "ring variant " + std::to_string(variant) + " base " + std::to_string(base));
      EXPECT_TRUE(untouched(buf.data() + l.total, 8, "past the end"));
    }
  }
}

// The same with this process's block apart (own_block): the function sends it from there and
// copies it into place itself; the buffer's own slot starts as sentinel bytes.
TEST(P2pAllgather, RingAllgathervOwnBlockApart) {
  const int P = world_size(), me = world_rank();
  const auto m = static_cast<std::size_t>(me);
  for (int variant = 0; variant < 2; ++variant) {
    for (std::size_t base : sizes()) {
      const VLayout l = v_layout(P, base, variant);
      std::vector<std::byte> buf(l.total + 8, sentinel), own(l.bytes[m] + 1);
      for (std::size_t i = 0; i < l.bytes[m]; ++i) own[i] = pattern(me, i, 0);
      p2p::ring_allgatherv(lane(), buf.data(), l.bytes, l.displs, own.data());
      check_allgatherv(buf, 0, l, 0,
                       "ring, own block apart, variant " + std::to_string(variant) + " base " +
                           std::to_string(base));
      EXPECT_TRUE(untouched(buf.data() + l.total, 8, "past the end"));
    }
  }
}

// Equal blocks (p2p::ring_allgather), in place and with this process's block apart.
TEST(P2pAllgather, RingAllgatherEqualBlocks) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  for (int apart = 0; apart < 2; ++apart)
    for (std::size_t block : sizes()) {
      std::vector<std::byte> buf(p * block + 8, sentinel), own(block + 1, sentinel);
      std::byte* mine = apart ? own.data() : buf.data() + m * block;
      for (std::size_t i = 0; i < block; ++i) mine[i] = pattern(me, i, 7);
      p2p::ring_allgather(lane(), buf.data(), block, apart ? own.data() : nullptr);
      for (std::size_t q = 0; q < p; ++q)
        EXPECT_TRUE(matches_pattern(buf.data() + q * block, block, static_cast<int>(q), 7))
            << "block " << block << (apart ? ", own block apart" : ", in place") << ", from " << q;
      EXPECT_TRUE(untouched(buf.data() + p * block, 8, "past the end"));
    }
}

TEST(P2pAllgather, BruckAllgather) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  for (std::size_t block : sizes()) {
    std::vector<std::byte> buf(p * block + 8, sentinel);
    for (std::size_t i = 0; i < block; ++i) buf[m * block + i] = pattern(me, i, 5);
    p2p::bruck_allgather(lane(), buf.data(), block);
    for (std::size_t q = 0; q < p; ++q)
      EXPECT_TRUE(matches_pattern(buf.data() + q * block, block, static_cast<int>(q), 5))
          << "block " << block;
    EXPECT_TRUE(untouched(buf.data() + p * block, 8, "past the end"));
  }
}

// Several back-to-back calls of different algorithms on one lane: messages of one call must
// never be taken for those of the next.
TEST(P2pAllgather, BackToBackCalls) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  for (int round = 0; round < 20; ++round) {
    const std::size_t block = static_cast<std::size_t>(round % 4) * 5 + 1;
    const auto salt = static_cast<std::size_t>(round);
    std::vector<std::byte> a(p * block, sentinel);
    for (std::size_t i = 0; i < block; ++i) a[m * block + i] = pattern(me, i, salt);
    if (round % 2 == 0) {
      p2p::bruck_allgather(lane(), a.data(), block);
    } else {
      const std::vector<std::size_t> bytes(p, block);
      std::vector<std::size_t> displs(p);
      for (std::size_t q = 0; q < p; ++q) displs[q] = q * block;
      p2p::ring_allgatherv(lane(), a.data(), bytes, displs);
    }
    for (std::size_t q = 0; q < p; ++q)
      ASSERT_TRUE(matches_pattern(a.data() + q * block, block, static_cast<int>(q), salt))
          << "round " << round;
  }
}

TEST(P2pBcast, BinomialEveryRootAndSegment) {
  const int P = world_size(), me = world_rank();
  for (std::size_t bytes : sizes()) {
    std::vector<std::size_t> segments = {0, 4099, 65536, bytes, bytes + 100};
    if (bytes <= 4099) segments.insert(segments.end(), {1, 7, 1000});
    if (bytes > 4099) segments.push_back(std::size_t{1} << 19);  // two segments, the last short
    for (int root = 0; root < P; ++root) {
      for (std::size_t segment : segments) {
        const auto salt = static_cast<std::size_t>(root) * 3 + segment % 7;
        std::vector<std::byte> buf(bytes + 8, sentinel);
        if (me == root)
          for (std::size_t i = 0; i < bytes; ++i) buf[i] = pattern(root, i, salt);
        p2p::binomial_bcast(lane(), buf.data(), bytes, root, segment);
        ASSERT_TRUE(matches_pattern(buf.data(), bytes, root, salt))
            << bytes << " bytes from root " << root << " in segments of " << segment;
        ASSERT_TRUE(untouched(buf.data() + bytes, 8, "past the end"));
      }
    }
  }
}

// Between two processes a message past MPI's eager limit and up to twice it goes as two eager
// ones (p2p_bcast.cpp); sizes around both bounds, every root, with the segment the algorithms
// pass and with none.
TEST(P2pBcast, BinomialAroundTheEagerLimit) {
  const int P = world_size(), me = world_rank();
  const auto eager = static_cast<std::size_t>(tlc::detail::mpi_default_eager_bytes());
  for (const std::size_t bytes :
       {eager - 1, eager, eager + 1, 2 * eager - 1, 2 * eager, 2 * eager + 1})
    for (const std::size_t segment : {std::size_t{0}, std::size_t{256} * 1024})
      for (int root = 0; root < P; ++root) {
        const auto salt = bytes % 11 + static_cast<std::size_t>(root);
        std::vector<std::byte> buf(bytes + 8, sentinel);
        if (me == root)
          for (std::size_t i = 0; i < bytes; ++i) buf[i] = pattern(root, i, salt);
        p2p::binomial_bcast(lane(), buf.data(), bytes, root, segment);
        EXPECT_TRUE(matches_pattern(buf.data(), bytes, root, salt))
            << bytes << " bytes from root " << root << ", segment " << segment;
        EXPECT_TRUE(untouched(buf.data() + bytes, 8, "past the end"));
      }
}

// A message of tlc's algorithms carries what its call is and its own size in its tag
// (p2p::util::wire_tag): a receive of another size, call or root never takes it. Process 0 sends
// 16 bytes of an allreduce of doubles with op sum; the others look for it with every field
// changed in turn, then as it is, and only that finds it.
TEST(P2pTags, MessagesOfCallsThatDisagreeNeverMatch) {
  const int P = world_size(), me = world_rank();
  if (P < 2) GTEST_SKIP() << "needs two processes";
  const auto call_of = [](auto element, auto op, tlc::Collective collective, int root) {
    using T = decltype(element);
    auto call = tlc::detail::make_call<T>(collective, nullptr, 0, nullptr, 0);
    tlc::detail::set_op<T>(call, op);
    call.root = root;
    return call;
  };
  const auto sum_of_doubles = call_of(0.0, std::plus<>{}, tlc::Collective::allreduce, -1);
  const auto max_of_doubles = call_of(0.0, tlc::max{}, tlc::Collective::allreduce, -1);
  const auto sum_of_int64 = call_of(std::int64_t{0}, std::plus<>{}, tlc::Collective::allreduce, -1);
  const auto reduce_to_1 = call_of(0.0, std::plus<>{}, tlc::Collective::reduce, 1);
  const auto tag_of = [](const tlc::detail::Call& c) {
    return p2p::util::MessageTag{p2p::util::Tag::recursive_doubling, p2p::util::call_word(c)};
  };
  const std::size_t bytes = 16;
  std::vector<std::byte> buf(bytes, std::byte{7});
  if (me == 0) {
    std::vector<MPI_Request> sends(static_cast<std::size_t>(P - 1), MPI_REQUEST_NULL);
    for (int q = 1; q < P; ++q)
      p2p::util::isend(lane(), buf.data(), bytes, q, tag_of(sum_of_doubles),
                       sends[static_cast<std::size_t>(q - 1)]);
    lane().wait_all(sends, "test sends");
  } else {
    const auto arrived = [&](const p2p::util::MessageTag& tag, std::size_t size) {
      int flag = 0;
      // Long enough for the message to arrive: then it must match or not for good.
      for (int i = 0; i < 200 && !flag; ++i) {
        MPI_Iprobe(0, p2p::util::wire_tag(lane(), tag, size), lane().get(), &flag,
                   MPI_STATUS_IGNORE);
        if (!flag) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return flag != 0;
    };
    EXPECT_FALSE(arrived(tag_of(sum_of_doubles), 8)) << "another size";
    EXPECT_FALSE(arrived(tag_of(max_of_doubles), bytes)) << "another op";
    EXPECT_FALSE(arrived(tag_of(sum_of_int64), bytes)) << "another element type";
    EXPECT_FALSE(arrived(tag_of(reduce_to_1), bytes)) << "another collective and root";
    EXPECT_FALSE(arrived({p2p::util::Tag::bcast, p2p::util::call_word(sum_of_doubles)}, bytes))
        << "another step";
    EXPECT_TRUE(arrived(tag_of(sum_of_doubles), bytes)) << "the same call";
    p2p::receive(lane(), buf.data(), bytes, 0, tag_of(sum_of_doubles), "test receive");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// p2p::receive takes a message that has already arrived by a probe and the blocking MPI_Mrecv
// (at most MPI's eager limit, under MPICH) and any other by a posted receive: both paths, at
// sizes around the limit, with the message there before the receive (the receiver late) and
// after it (the sender late), and a stream of back-to-back messages that must come in order.
TEST(P2pReceive, ArrivedAndAwaitedMessages) {
  const int P = world_size(), me = world_rank();
  if (P < 2) GTEST_SKIP() << "needs two processes";
  const p2p::util::MessageTag tag{p2p::util::Tag::bcast};
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{4031},
                                  std::size_t{8192}, std::size_t{8193}, std::size_t{100000}}) {
    for (const bool receiver_late : {true, false}) {
      const std::size_t salt = bytes % 13 + (receiver_late ? 1 : 0);
      std::vector<std::byte> buf(bytes + 8, sentinel);
      if (me == 0) {
        for (std::size_t i = 0; i < bytes; ++i) buf[i] = pattern(0, i, salt);
        if (!receiver_late) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::vector<MPI_Request> sends(static_cast<std::size_t>(P - 1), MPI_REQUEST_NULL);
        for (int q = 1; q < P; ++q)
          p2p::util::isend(lane(), buf.data(), bytes, q, tag,
                           sends[static_cast<std::size_t>(q - 1)]);
        lane().wait_all(sends, "test sends");
      } else {
        if (receiver_late) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        p2p::receive(lane(), buf.data(), bytes, 0, tag, "test receive");
        EXPECT_TRUE(matches_pattern(buf.data(), bytes, 0, salt))
            << bytes << " bytes, " << (receiver_late ? "receiver late" : "sender late");
        EXPECT_TRUE(untouched(buf.data() + bytes, 8, "past the end"));
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  // A stream: process 0 sends 64 messages at once; the others take them one by one, late.
  constexpr std::size_t messages = 64, bytes = 300;
  std::vector<std::byte> stream(messages * bytes, sentinel);
  if (me == 0) {
    std::vector<MPI_Request> sends(messages * static_cast<std::size_t>(P - 1), MPI_REQUEST_NULL);
    for (std::size_t k = 0; k < messages; ++k) {
      for (std::size_t i = 0; i < bytes; ++i) stream[k * bytes + i] = pattern(0, i, k);
      for (int q = 1; q < P; ++q)
        p2p::util::isend(
            lane(), stream.data() + k * bytes, bytes, q, tag,
            sends[k * static_cast<std::size_t>(P - 1) + static_cast<std::size_t>(q - 1)]);
    }
    lane().wait_all(sends, "test stream");
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (std::size_t k = 0; k < messages; ++k) {
      p2p::receive(lane(), stream.data() + k * bytes, bytes, 0, tag, "test stream");
      EXPECT_TRUE(matches_pattern(stream.data() + k * bytes, bytes, 0, k)) << "message " << k;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(P2pBcast, RejectsBadRoot) {
  std::byte b{};
  EXPECT_THROW(p2p::binomial_bcast(lane(), &b, 1, world_size(), 0), tlc::Error);
  EXPECT_THROW(p2p::binomial_bcast(lane(), &b, 1, -1, 0), tlc::Error);
}

// ---- alltoall ----

using AlltoallFn = void (*)(ProcessComm&, const std::byte*, std::span<const std::size_t>,
                            std::span<const std::size_t>, std::byte*, std::span<const std::size_t>,
                            std::span<const std::size_t>);

// Bytes process i sends to process j.
std::size_t a2a_bytes(std::size_t i, std::size_t j, std::size_t base, int variant) {
  if (variant == 0) return base;
  return (i + 2 * j) % 3 == 0 ? 0 : base + 5 * i + j;
}

void run_alltoallv(AlltoallFn fn, const char* name) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  for (int variant = 0; variant < 2; ++variant) {
    for (std::size_t size : sizes()) {
      const std::size_t base = size > 4099 ? size / p : size;  // about 1 MiB in all
      std::vector<std::size_t> send_bytes(p), send_displs(p), recv_bytes(p), recv_displs(p);
      std::size_t send_total = 0, recv_total = 0;
      // Send blocks in reverse order, receive blocks in order, both with gaps.
      for (std::size_t k = 0; k < p; ++k) {
        const std::size_t j = p - 1 - k;
        send_bytes[j] = a2a_bytes(m, j, base, variant);
        send_displs[j] = send_total;
        send_total += send_bytes[j] + 2;
        recv_bytes[k] = a2a_bytes(k, m, base, variant);
        recv_displs[k] = recv_total;
        recv_total += recv_bytes[k] + 3;
      }
      std::vector<std::byte> send(send_total, sentinel), recv(recv_total, sentinel);
      for (std::size_t j = 0; j < p; ++j)
        for (std::size_t i = 0; i < send_bytes[j]; ++i)
          send[send_displs[j] + i] = pattern(me, i, j);
      const std::vector<std::byte> send_copy = send;
      fn(lane(), send.data(), send_bytes, send_displs, recv.data(), recv_bytes, recv_displs);
      const std::string what = std::string(name) + " variant " + std::to_string(variant) +
                               " base " + std::to_string(base);
      for (std::size_t i = 0; i < p; ++i) {
        EXPECT_TRUE(
            matches_pattern(recv.data() + recv_displs[i], recv_bytes[i], static_cast<int>(i), m))
            << what;
        EXPECT_TRUE(untouched(recv.data() + recv_displs[i] + recv_bytes[i], 3, "receive gap"))
            << what;
      }
      EXPECT_TRUE(send == send_copy) << what << ": send buffer changed";
    }
  }
}

TEST(P2pAlltoall, PairwiseAlltoallv) { run_alltoallv(&p2p::pairwise_alltoallv, "pairwise"); }

TEST(P2pAlltoall, IsendAlltoallv) { run_alltoallv(&p2p::isend_alltoallv, "isend"); }

// The equal-block forms (block p at p * block on both sides).
void run_alltoall(void (*fn)(ProcessComm&, const std::byte*, std::byte*, std::size_t),
                  const char* name) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  for (std::size_t size : sizes()) {
    const std::size_t block = size > 4099 ? size / p : size;
    std::vector<std::byte> send(p * block, sentinel), recv(p * block + 8, sentinel);
    for (std::size_t j = 0; j < p; ++j)
      for (std::size_t i = 0; i < block; ++i) send[j * block + i] = pattern(me, i, j);
    const std::vector<std::byte> send_copy = send;
    fn(lane(), send.data(), recv.data(), block);
    const std::string what = std::string(name) + " block " + std::to_string(block);
    for (std::size_t i = 0; i < p; ++i)
      EXPECT_TRUE(matches_pattern(recv.data() + i * block, block, static_cast<int>(i), m))
          << what << ", from " << i;
    EXPECT_TRUE(untouched(recv.data() + p * block, 8, "past the end")) << what;
    EXPECT_TRUE(send == send_copy) << what << ": send buffer changed";
  }
}

TEST(P2pAlltoall, PairwiseAlltoallEqualBlocks) {
  run_alltoall(&p2p::pairwise_alltoall, "pairwise");
}

TEST(P2pAlltoall, IsendAlltoallEqualBlocks) { run_alltoall(&p2p::isend_alltoall, "isend"); }

// ---- reductions ----

// A non-commutative, associative user type: 2x2 matrices in wrapping 32-bit arithmetic.
struct Mat2 {
  std::uint32_t a, b, c, d;
  friend bool operator==(const Mat2&, const Mat2&) = default;
};
struct MatMul {
  Mat2 operator()(const Mat2& x, const Mat2& y) const {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
  }
};

// The Call a collective would build, with the library's compiled kernel for built-in ops.
template <class T, class Op>
Call reduction_call(const Op& op) {
  auto call = tlc::detail::make_call<T>(tlc::Collective::allreduce, nullptr, 0, nullptr, 0);
  tlc::detail::set_op<T>(call, op);
  if (auto kernel = tlc::detail::builtin_combine(call.op, call.type)) call.combine = kernel;
  return call;
}

// Deterministic inputs: element i of process p.
double gen_double(int p, std::size_t i) {
  return static_cast<double>(
      static_cast<std::int64_t>((static_cast<std::size_t>(p) * 7919 + i * 104729) % 2001) - 1000);
}
std::int32_t gen_int(int p, std::size_t i) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(p + 1) * 0x9E3779B1u ^
                                   static_cast<std::uint32_t>(i) * 0x85EBCA77u);
}
std::uint32_t gen_odd(int p, std::size_t i) {
  return (static_cast<std::uint32_t>(p + 3) * 0x27D4EB2Fu +
          static_cast<std::uint32_t>(i) * 2654435761u) |
         1u;
}
Mat2 gen_mat(int p, std::size_t i) {
  const auto x = static_cast<std::uint32_t>(static_cast<std::size_t>(p) * 1000003 + i * 7);
  return {x % 7 + 1, (x / 7) % 5, (x / 35) % 3 + 1, (x / 105) % 11};
}

template <class T>
std::string show(const T& v) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, Mat2>) {
    s << "[" << v.a << " " << v.b << "; " << v.c << " " << v.d << "]";
  } else {
    s << v;
  }
  return s.str();
}

// op over processes 0..P-1 of gen(., i), left to right.
template <class T, class Op, class Gen>
T reference(const Op& op, Gen gen, std::size_t i) {
  T acc = gen(0, i);
  for (int p = 1; p < world_size(); ++p) acc = op(acc, gen(p, i));
  return acc;
}

// Compares data[begin, end) with expected(i); reports the first difference and how many.
template <class T, class Expected>
::testing::AssertionResult elements_match(const T* data, std::size_t begin, std::size_t end,
                                          Expected expected) {
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const T e = expected(i);
    if (std::memcmp(&data[i], &e, sizeof(T)) != 0 && wrong++ == 0) first = i;
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << wrong << " wrong elements, the first at " << first << ": " << show(data[first])
         << " instead of " << show(expected(first));
}

using AllreduceFn = void (*)(ProcessComm&, std::byte*, std::size_t, const Call&);

const std::vector<std::size_t>& counts_for(std::size_t element_size) {
  // Small counts around P and the power-of-two boundaries, a prime, and about 1 MiB.
  static std::vector<std::size_t> all[2];
  auto& c = all[element_size > 8 ? 1 : 0];
  if (c.empty()) {
    c = {0, 1, 2, 3, 4, 5, 7, 8, 9, 17, 4099};
    c.push_back((std::size_t{1} << 20) / element_size + 3);
  }
  return c;
}

template <class T, class Op, class Gen>
void check_allreduce(AllreduceFn fn, const char* name, const Op& op, Gen gen) {
  const int me = world_rank();
  const Call call = reduction_call<T>(op);
  for (std::size_t count : counts_for(sizeof(T))) {
    std::vector<T> buf(count + 2);
    for (std::size_t i = 0; i < count + 2; ++i) buf[i] = gen(me, i);
    fn(lane(), reinterpret_cast<std::byte*>(buf.data()), count, call);
    EXPECT_TRUE(elements_match(buf.data(), 0, count,
                               [&](std::size_t i) { return reference<T>(op, gen, i); }))
        << name << " of " << count << " elements";
    // Elements past count are not touched.
    EXPECT_TRUE(
        elements_match(buf.data(), count, count + 2, [&](std::size_t i) { return gen(me, i); }))
        << name << " of " << count << " elements wrote past the end";
  }
}

TEST(P2pAllreduce, RecursiveDoublingBuiltinOps) {
  check_allreduce<double>(&p2p::recursive_doubling_allreduce, "recursive doubling sum",
                          std::plus<>{}, gen_double);
  check_allreduce<std::int32_t>(&p2p::recursive_doubling_allreduce, "recursive doubling xor",
                                std::bit_xor<>{}, gen_int);
}

TEST(P2pAllreduce, RecursiveDoublingNonCommutativeKeepsRankOrder) {
  check_allreduce<Mat2>(&p2p::recursive_doubling_allreduce, "recursive doubling matmul", MatMul{},
                        gen_mat);
}

TEST(P2pAllreduce, RecursiveDoublingCommutativeUserOp) {
  const auto mul = tlc::commutative([](std::uint32_t a, std::uint32_t b) { return a * b; });
  check_allreduce<std::uint32_t>(&p2p::recursive_doubling_allreduce, "recursive doubling mul", mul,
                                 gen_odd);
}

TEST(P2pAllreduce, RabenseifnerBuiltinOps) {
  check_allreduce<double>(&p2p::rabenseifner_allreduce, "Rabenseifner sum", std::plus<>{},
                          gen_double);
  check_allreduce<std::int32_t>(&p2p::rabenseifner_allreduce, "Rabenseifner xor", std::bit_xor<>{},
                                gen_int);
}

// binomial_reduce at every root, whole and in segments (of one element, of 7, the last one
// short, the default, and larger than the vector): the root's buffer holds op over processes
// 0..P-1 in rank order (bitwise: the generators' values sum exactly, and the matrices do not
// commute), and nothing past count is written on any process.
template <class T, class Op, class Gen>
void check_binomial_reduce(const char* name, const Op& op, Gen gen) {
  const int me = world_rank();
  const Call call = reduction_call<T>(op);
  for (int root = 0; root < world_size(); ++root)
    for (std::size_t count : counts_for(sizeof(T)))
      for (std::size_t segment : {std::size_t{0}, sizeof(T), 7 * sizeof(T),
                                  p2p::binomial_reduce_segment_bytes, (count + 1) * sizeof(T)}) {
        if (segment > 0 && segment <= 7 * sizeof(T) && count > 4099) continue;  // 10^5 messages
        std::vector<T> buf(count + 2);
        for (std::size_t i = 0; i < count + 2; ++i) buf[i] = gen(me, i);
        p2p::binomial_reduce(lane(), reinterpret_cast<std::byte*>(buf.data()), count, call, root,
                             segment);
        const std::string where = std::string(name) + " of " + std::to_string(count) +
                                  " elements at root " + std::to_string(root) + " in segments of " +
                                  std::to_string(segment) + " bytes";
        if (me == root) {
          EXPECT_TRUE(elements_match(buf.data(), 0, count, [&](std::size_t i) {
            return reference<T>(op, gen, i);
          })) << where;
        }
        EXPECT_TRUE(
            elements_match(buf.data(), count, count + 2, [&](std::size_t i) { return gen(me, i); }))
            << where << " wrote past the end";
      }
}

TEST(P2pReduce, BinomialEveryRoot) {
  check_binomial_reduce<double>("binomial sum", std::plus<>{}, gen_double);
  check_binomial_reduce<std::int32_t>("binomial xor", std::bit_xor<>{}, gen_int);
}

TEST(P2pReduce, BinomialNonCommutativeKeepsRankOrder) {
  check_binomial_reduce<Mat2>("binomial matmul", MatMul{}, gen_mat);
}

// binomial_reduce with the input apart from the accumulator: the root's accumulator holds op
// over processes 0..P-1 in rank order, and no process writes its input.
TEST(P2pReduce, BinomialInputApart) {
  const int me = world_rank();
  const MatMul op;
  const Call call = reduction_call<Mat2>(op);
  for (int root = 0; root < world_size(); ++root)
    for (std::size_t count : counts_for(sizeof(Mat2)))
      for (std::size_t segment : {std::size_t{0}, 7 * sizeof(Mat2)}) {
        if (segment != 0 && count > 4099) continue;
        std::vector<Mat2> send(count), buf(count + 2);
        for (std::size_t i = 0; i < count; ++i) send[i] = gen_mat(me, i);
        for (std::size_t i = 0; i < count + 2; ++i) buf[i] = gen_mat(me + 50, i);
        p2p::binomial_reduce(lane(), reinterpret_cast<const std::byte*>(send.data()),
                             reinterpret_cast<std::byte*>(buf.data()), count, call, root, segment);
        const std::string where = "count " + std::to_string(count) + " root " +
                                  std::to_string(root) + " segment " + std::to_string(segment);
        if (me == root) {
          EXPECT_TRUE(elements_match(buf.data(), 0, count, [&](std::size_t i) {
            return reference<Mat2>(op, gen_mat, i);
          })) << where;
        }
        EXPECT_TRUE(
            elements_match(send.data(), 0, count, [&](std::size_t i) { return gen_mat(me, i); }))
            << where << ": the input was written";
        EXPECT_TRUE(elements_match(buf.data(), count, count + 2,
                                   [&](std::size_t i) { return gen_mat(me + 50, i); }))
            << where << " wrote past the end";
      }
}

TEST(P2pReduce, BinomialRejectsBadRoot) {
  double x = 1;
  const Call call = reduction_call<double>(std::plus<>{});
  EXPECT_THROW(p2p::binomial_reduce(lane(), reinterpret_cast<std::byte*>(&x), 1, call, -1, 0),
               tlc::Error);
  EXPECT_THROW(
      p2p::binomial_reduce(lane(), reinterpret_cast<std::byte*>(&x), 1, call, world_size(), 0),
      tlc::Error);
}

// recursive_doubling_scan, inclusive and exclusive, in place and not: the output holds op over
// processes 0..rank (0..rank-1) in rank order (bitwise: the generators' values sum exactly, and
// the matrices do not commute); an exscan leaves process 0's output as it was, the input is
// never written, and nothing past count is written on any process.
template <class T, class Op, class Gen>
void check_scan(const char* name, const Op& op, Gen gen) {
  const int me = world_rank();
  const Call call = reduction_call<T>(op);
  auto prefix = [&](std::size_t i, int upto) {  // op over processes 0..upto
    T acc = gen(0, i);
    for (int p = 1; p <= upto; ++p) acc = op(acc, gen(p, i));
    return acc;
  };
  auto before = [&](std::size_t i) { return gen(me + 100, i); };  // the output's old contents
  for (const bool exclusive : {false, true})
    for (const bool in_place : {false, true})
      for (std::size_t count : counts_for(sizeof(T))) {
        std::vector<T> send(count + 2), recv(count + 2);
        for (std::size_t i = 0; i < count + 2; ++i) {
          send[i] = gen(me, i);
          recv[i] = in_place && i < count ? gen(me, i) : before(i);
        }
        std::byte* out = reinterpret_cast<std::byte*>(recv.data());
        p2p::recursive_doubling_scan(lane(),
                                     in_place ? out : reinterpret_cast<std::byte*>(send.data()),
                                     out, count, call, exclusive);
        const std::string where = std::string(name) + (exclusive ? " exscan" : " scan") +
                                  (in_place ? " in place" : "") + " of " + std::to_string(count) +
                                  " elements";
        if (exclusive && me == 0) {
          EXPECT_TRUE(
              elements_match(recv.data(), 0, count,
                             [&](std::size_t i) { return in_place ? gen(me, i) : before(i); }))
              << where << ": process 0's output was written";
        } else {
          EXPECT_TRUE(elements_match(recv.data(), 0, count, [&](std::size_t i) {
            return prefix(i, exclusive ? me - 1 : me);
          })) << where;
        }
        EXPECT_TRUE(elements_match(recv.data(), count, count + 2, before))
            << where << " wrote past the end";
        EXPECT_TRUE(
            elements_match(send.data(), 0, count + 2, [&](std::size_t i) { return gen(me, i); }))
            << where << " wrote its input";
      }
}

TEST(P2pScan, RecursiveDoublingBuiltinOps) {
  check_scan<double>("recursive doubling sum", std::plus<>{}, gen_double);
  check_scan<std::int32_t>("recursive doubling xor", std::bit_xor<>{}, gen_int);
}

TEST(P2pScan, RecursiveDoublingNonCommutativeKeepsRankOrder) {
  check_scan<Mat2>("recursive doubling matmul", MatMul{}, gen_mat);
}

// linear_gatherv and linear_scatterv at every root, equal and irregular blocks (with zeros,
// reverse order and gaps that must stay untouched): the root holds every block (gather), every
// process its own (scatter), and nothing else is written.
TEST(P2pGather, LinearEveryRoot) {
  const int P = world_size(), me = world_rank();
  const auto m = static_cast<std::size_t>(me);
  for (int variant = 0; variant < 2; ++variant)
    for (std::size_t base : sizes())
      for (int root = 0; root < P; ++root) {
        const auto salt = static_cast<std::size_t>(root) + 3;
        const VLayout l = v_layout(P, base, variant, salt);
        std::vector<std::byte> send(l.bytes[m]);
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = pattern(me, i, salt);
        std::vector<std::byte> buf(l.total + 8, sentinel);
        if (me == root) fill_allgatherv(buf, 0, l, salt);  // the root's own block, in place
        p2p::linear_gatherv(lane(), send.data(), send.size(), buf.data(), l.bytes, l.displs, root);
        const std::string what = "linear gather variant " + std::to_string(variant) + " base " +
                                 std::to_string(base) + " root " + std::to_string(root);
        if (me == root)
          check_allgatherv(buf, 0, l, salt, what);
        else
          EXPECT_TRUE(untouched(buf.data(), l.total, what.c_str()));
        EXPECT_TRUE(untouched(buf.data() + l.total, 8, "past the end"));
      }
}

TEST(P2pScatter, LinearEveryRoot) {
  const int P = world_size(), me = world_rank();
  const auto m = static_cast<std::size_t>(me);
  for (int variant = 0; variant < 2; ++variant)
    for (std::size_t base : sizes())
      for (int root = 0; root < P; ++root) {
        const auto salt = static_cast<std::size_t>(root) + 5;
        const VLayout l = v_layout(P, base, variant, salt);
        std::vector<std::byte> send(l.total, sentinel);
        if (me == root)
          for (std::size_t q = 0; q < l.bytes.size(); ++q)
            for (std::size_t i = 0; i < l.bytes[q]; ++i)
              send[l.displs[q] + i] = pattern(static_cast<int>(q), i, salt);
        const std::vector<std::byte> sent = send;
        std::vector<std::byte> recv(l.bytes[m] + 8, sentinel);
        p2p::linear_scatterv(lane(), send.data(), l.bytes, l.displs, recv.data(), l.bytes[m], root);
        const std::string what = "linear scatter variant " + std::to_string(variant) + " base " +
                                 std::to_string(base) + " root " + std::to_string(root);
        if (me != root)
          EXPECT_TRUE(matches_pattern(recv.data(), l.bytes[m], me, salt)) << what;
        else  // the root's own block stays in send
          EXPECT_TRUE(untouched(recv.data(), l.bytes[m], what.c_str()));
        EXPECT_TRUE(untouched(recv.data() + l.bytes[m], 8, "past the end"));
        EXPECT_TRUE(send == sent) << what << ": the send buffer was written";
      }
}

// The equal-block forms, linear_gather and linear_scatter, at every root.
TEST(P2pGather, LinearEqualBlocksEveryRoot) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  for (std::size_t block : sizes())
    for (int root = 0; root < P; ++root) {
      const auto salt = static_cast<std::size_t>(root) + 9;
      const std::string what = "block " + std::to_string(block) + " root " + std::to_string(root);
      // gather: the root's own block is in place
      std::vector<std::byte> send(block), buf(p * block + 8, sentinel);
      for (std::size_t i = 0; i < block; ++i) send[i] = pattern(me, i, salt);
      if (me == root) std::copy(send.begin(), send.end(), buf.begin() + m * block);
      p2p::linear_gather(lane(), send.data(), buf.data(), block, root);
      for (std::size_t q = 0; q < p && me == root; ++q)
        EXPECT_TRUE(matches_pattern(buf.data() + q * block, block, static_cast<int>(q), salt))
            << "gather " << what << ", from " << q;
      if (me != root) {
        EXPECT_TRUE(untouched(buf.data(), p * block, what.c_str()));
      }
      EXPECT_TRUE(untouched(buf.data() + p * block, 8, "past the end"));
      // scatter: the root's own block stays in its send buffer
      std::vector<std::byte> all(p * block, sentinel), recv(block + 8, sentinel);
      if (me == root)
        for (std::size_t q = 0; q < p; ++q)
          for (std::size_t i = 0; i < block; ++i)
            all[q * block + i] = pattern(static_cast<int>(q), i, salt);
      const std::vector<std::byte> sent = all;
      p2p::linear_scatter(lane(), all.data(), recv.data(), block, root);
      if (me != root) {
        EXPECT_TRUE(matches_pattern(recv.data(), block, me, salt)) << "scatter " << what;
      } else {
        EXPECT_TRUE(untouched(recv.data(), block, what.c_str()));
      }
      EXPECT_TRUE(untouched(recv.data() + block, 8, "past the end"));
      EXPECT_TRUE(all == sent) << "scatter " << what << ": the send buffer was written";
    }
}

TEST(P2pGather, LinearRejectsBadRoot) {
  std::byte b{};
  const std::vector<std::size_t> none(static_cast<std::size_t>(world_size()), 0);
  EXPECT_THROW(p2p::linear_gatherv(lane(), &b, 1, &b, none, none, world_size()), tlc::Error);
  EXPECT_THROW(p2p::linear_scatterv(lane(), &b, none, none, &b, 1, -1), tlc::Error);
}

TEST(P2pAllreduce, RabenseifnerCommutativeUserOp) {
  const auto mul = tlc::commutative([](std::uint32_t a, std::uint32_t b) { return a * b; });
  check_allreduce<std::uint32_t>(&p2p::rabenseifner_allreduce, "Rabenseifner mul", mul, gen_odd);
}

TEST(P2pAllreduce, RabenseifnerRejectsNonCommutative) {
  const MatMul op;
  const Call call = reduction_call<Mat2>(op);
  std::vector<Mat2> buf(4);
  EXPECT_THROW(p2p::rabenseifner_allreduce(lane(), reinterpret_cast<std::byte*>(buf.data()),
                                           buf.size(), call),
               tlc::Error);
}

// Block sizes of a reduce-scatter: irregular with zeros (variant 1) or equal (variant 0).
std::vector<std::size_t> rs_counts(int processes, std::size_t base, int variant) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(processes));
  for (std::size_t q = 0; q < counts.size(); ++q)
    counts[q] = variant == 0 ? base : (q % 3 == 2 ? 0 : base + 3 * q + 1);
  return counts;
}

template <class T, class Op, class Gen>
void check_reduce_scatter(const char* name, const Op& op, Gen gen) {
  const int P = world_size(), me = world_rank();
  const auto m = static_cast<std::size_t>(me);
  const Call call = reduction_call<T>(op);
  for (int variant = 0; variant < 2; ++variant) {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4099},
                             (std::size_t{1} << 20) / sizeof(T) / static_cast<std::size_t>(P)}) {
      const std::vector<std::size_t> counts = rs_counts(P, size, variant);
      std::size_t begin = 0, total = 0;
      for (std::size_t q = 0; q < counts.size(); ++q) {
        if (q == m) begin = total;
        total += counts[q];
      }
      const std::size_t end = begin + counts[m];
      std::vector<T> buf(total);
      for (std::size_t i = 0; i < total; ++i) buf[i] = gen(me, i);
      p2p::pairwise_reduce_scatter(lane(), reinterpret_cast<std::byte*>(buf.data()), counts, call);
      const std::string what = std::string(name) + " variant " + std::to_string(variant) +
                               " size " + std::to_string(size);
      EXPECT_TRUE(elements_match(buf.data(), begin, end, [&](std::size_t i) {
        return reference<T>(op, gen, i);
      })) << what;
      // The other blocks keep this process's input.
      auto own_input = [&](std::size_t i) { return gen(me, i); };
      EXPECT_TRUE(elements_match(buf.data(), 0, begin, own_input)) << what;
      EXPECT_TRUE(elements_match(buf.data(), end, total, own_input)) << what;
    }
  }
}

TEST(P2pReduceScatter, PairwiseBuiltinOps) {
  check_reduce_scatter<double>("pairwise reduce_scatter sum", std::plus<>{}, gen_double);
  check_reduce_scatter<std::int32_t>("pairwise reduce_scatter xor", std::bit_xor<>{}, gen_int);
}

TEST(P2pReduceScatter, PairwiseCommutativeUserOp) {
  const auto mul = tlc::commutative([](std::uint32_t a, std::uint32_t b) { return a * b; });
  check_reduce_scatter<std::uint32_t>("pairwise reduce_scatter mul", mul, gen_odd);
}

TEST(P2pReduceScatter, PairwiseRejectsNonCommutative) {
  const MatMul op;
  const Call call = reduction_call<Mat2>(op);
  const std::vector<std::size_t> counts(static_cast<std::size_t>(world_size()), 1);
  std::vector<Mat2> buf(counts.size());
  EXPECT_THROW(
      p2p::pairwise_reduce_scatter(lane(), reinterpret_cast<std::byte*>(buf.data()), counts, call),
      tlc::Error);
}

// ---- multi-sender: several lanes, each driven by its own thread, at the same time ----

constexpr int kLanes = 3;

// Lanes are made one after the other on the main thread, in the same order everywhere.
std::vector<std::unique_ptr<ProcessComm>>& lanes() {
  static std::vector<std::unique_ptr<ProcessComm>> all = [] {
    std::vector<std::unique_ptr<ProcessComm>> v;
    for (int l = 0; l < kLanes; ++l) {
      v.push_back(std::make_unique<ProcessComm>(MPI_COMM_WORLD, /*lane=*/true));
      v.back()->set_polite(true);
    }
    return v;
  }();
  return all;
}

// Runs body(l) on thread l for every lane at once; rethrows the first exception on the caller.
void on_all_lanes(const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(kLanes);
  std::vector<std::thread> threads;
  for (int l = 0; l < kLanes; ++l)
    threads.emplace_back([&, l] {
      try {
        body(l);
      } catch (...) {
        errors[static_cast<std::size_t>(l)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

TEST(P2pMultiSender, RingAllgathervOnThreeLanes) {
  const int P = world_size();
  for (std::size_t base : {std::size_t{7}, std::size_t{4099}, std::size_t{1} << 18}) {
    // Part l of the shared buffer is an allgatherv of its own irregular layout.
    std::vector<VLayout> parts;
    std::vector<std::size_t> offset;
    std::size_t total = 0;
    for (int l = 0; l < kLanes; ++l) {
      parts.push_back(
          v_layout(P, base + static_cast<std::size_t>(l), 1, static_cast<std::size_t>(l)));
      offset.push_back(total);
      total += parts.back().total;
    }
    std::vector<std::byte> buf(total, sentinel);
    for (int l = 0; l < kLanes; ++l)
      fill_allgatherv(buf, offset[static_cast<std::size_t>(l)], parts[static_cast<std::size_t>(l)],
                      static_cast<std::size_t>(l) + 10);
    on_all_lanes([&](int l) {
      const auto k = static_cast<std::size_t>(l);
      p2p::ring_allgatherv(*lanes()[k], buf.data() + offset[k], parts[k].bytes, parts[k].displs);
    });
    for (int l = 0; l < kLanes; ++l)
      check_allgatherv(buf, offset[static_cast<std::size_t>(l)], parts[static_cast<std::size_t>(l)],
                       static_cast<std::size_t>(l) + 10,
                       "lane " + std::to_string(l) + " base " + std::to_string(base));
  }
}

TEST(P2pMultiSender, RabenseifnerAllreduceOnThreeLanes) {
  const int me = world_rank();
  const std::plus<> op;
  const Call call = reduction_call<double>(op);
  for (std::size_t count : {std::size_t{2}, std::size_t{10}, std::size_t{4099},
                            std::size_t{(1 << 20) / sizeof(double)}}) {
    std::vector<double> buf(count);
    for (std::size_t i = 0; i < count; ++i) buf[i] = gen_double(me, i);
    // Thirds; the last takes the remainder, the first may be empty.
    on_all_lanes([&](int l) {
      const auto k = static_cast<std::size_t>(l);
      const std::size_t begin = count / kLanes * k;
      const std::size_t end = k + 1 == kLanes ? count : begin + count / kLanes;
      p2p::rabenseifner_allreduce(*lanes()[k], reinterpret_cast<std::byte*>(buf.data() + begin),
                                  end - begin, call);
    });
    EXPECT_TRUE(elements_match(buf.data(), 0, count,
                               [&](std::size_t i) { return reference<double>(op, gen_double, i); }))
        << count << " elements";
  }
}

// Different algorithms on different lanes at once: a ring allgatherv, a Rabenseifner allreduce
// and a segmented bcast, each on its own part.
TEST(P2pMultiSender, MixedAlgorithmsOnThreeLanes) {
  const int P = world_size(), me = world_rank();
  const std::plus<> op;
  const Call call = reduction_call<double>(op);
  const VLayout gather = v_layout(P, 1000, 1, 2);
  std::vector<std::byte> gathered(gather.total, sentinel);
  fill_allgatherv(gathered, 0, gather, 21);
  const std::size_t count = 30011;
  std::vector<double> reduced(count);
  for (std::size_t i = 0; i < count; ++i) reduced[i] = gen_double(me, i);
  const std::size_t bytes = 200003;
  const int root = P - 1;
  std::vector<std::byte> broadcast(bytes, sentinel);
  if (me == root)
    for (std::size_t i = 0; i < bytes; ++i) broadcast[i] = pattern(root, i, 22);
  on_all_lanes([&](int l) {
    if (l == 0) p2p::ring_allgatherv(*lanes()[0], gathered.data(), gather.bytes, gather.displs);
    if (l == 1)
      p2p::rabenseifner_allreduce(*lanes()[1], reinterpret_cast<std::byte*>(reduced.data()), count,
                                  call);
    if (l == 2) p2p::binomial_bcast(*lanes()[2], broadcast.data(), bytes, root, 8192);
  });
  check_allgatherv(gathered, 0, gather, 21, "mixed ring");
  EXPECT_TRUE(elements_match(reduced.data(), 0, count, [&](std::size_t i) {
    return reference<double>(op, gen_double, i);
  })) << "mixed Rabenseifner";
  EXPECT_TRUE(matches_pattern(broadcast.data(), bytes, root, 22)) << "mixed bcast";
}

// wait_all on a communicator that is not polite (polled without sleeping), on a lane of its own.
TEST(P2pBlockingWait, AlgorithmsWithMpiWaitall) {
  const int P = world_size(), me = world_rank();
  const auto p = static_cast<std::size_t>(P), m = static_cast<std::size_t>(me);
  ProcessComm blocking(MPI_COMM_WORLD, /*lane=*/true);
  ASSERT_FALSE(blocking.polite());
  const std::size_t block = 4099;
  std::vector<std::byte> a(p * block, sentinel), b(p * block, sentinel);
  for (std::size_t i = 0; i < block; ++i) a[m * block + i] = b[m * block + i] = pattern(me, i, 3);
  p2p::bruck_allgather(blocking, a.data(), block);
  const std::vector<std::size_t> bytes(p, block);
  std::vector<std::size_t> displs(p);
  for (std::size_t q = 0; q < p; ++q) displs[q] = q * block;
  p2p::ring_allgatherv(blocking, b.data(), bytes, displs);
  for (std::size_t q = 0; q < p; ++q) {
    EXPECT_TRUE(matches_pattern(a.data() + q * block, block, static_cast<int>(q), 3));
    EXPECT_TRUE(matches_pattern(b.data() + q * block, block, static_cast<int>(q), 3));
  }
  std::vector<std::byte> c(block, sentinel);
  if (me == 0)
    for (std::size_t i = 0; i < block; ++i) c[i] = pattern(0, i, 4);
  p2p::binomial_bcast(blocking, c.data(), block, 0, 1000);
  EXPECT_TRUE(matches_pattern(c.data(), block, 0, 4));
  const std::plus<> op;
  const Call call = reduction_call<double>(op);
  std::vector<double> x(block), y(block);
  for (std::size_t i = 0; i < block; ++i) x[i] = y[i] = gen_double(me, i);
  p2p::rabenseifner_allreduce(blocking, reinterpret_cast<std::byte*>(x.data()), block, call);
  p2p::recursive_doubling_allreduce(blocking, reinterpret_cast<std::byte*>(y.data()), block, call);
  auto expected = [&](std::size_t i) { return reference<double>(op, gen_double, i); };
  EXPECT_TRUE(elements_match(x.data(), 0, block, expected));
  EXPECT_TRUE(elements_match(y.data(), 0, block, expected));
}

}  // namespace
