// Sequential reference implementations of every collective of tlc::Thread, with MPI semantics
// (a thread is a rank; global ranks; roots are global ranks), plus the deterministic inputs,
// element types and irregular v-layouts the collective tests feed them.
//
// Every reference has the same shape: given the send buffer of every global rank and the
// buffer of rank r that the test inspects after the call (`out`, holding its contents from
// before the call), it updates `out` to what the collective must leave there. Elements the
// collective must not write keep their previous contents, so a test that compares a whole
// buffer also checks gaps between v-blocks, the receive buffer of a non-root, rank 0's output
// of exscan, and so on.
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// AddressSanitizer's interface where the program runs with it. Weak: the test code itself is not
// instrumented (cmake/TlcCompilerFlags.cmake), and other builds have no such functions.
extern "C" void __asan_poison_memory_region(void const volatile* p, std::size_t bytes)
    __attribute__((weak));
extern "C" void __asan_unpoison_memory_region(void const volatile* p, std::size_t bytes)
    __attribute__((weak));

namespace tlc_test {

// --- Buffers -------------------------------------------------------------------------------------

// Large test buffers are recycled instead of freed: under the sanitizers every allocation
// beyond the allocator's size classes is a fresh mapping (mmap, page faults on it and on its
// shadow, munmap and a TLB shoot-down when freed), and the sweeps make and free three such
// buffers per thread and call. A cached block is poisoned under AddressSanitizer, so that a
// collective writing into a buffer the test has let go of is still reported.
class BlockCache {
 public:
  static constexpr std::size_t min_bytes = 32 * 1024;
  static constexpr std::size_t max_cached_bytes = std::size_t{512} << 20;

  static void* take(std::size_t bytes) {
    if (bytes >= min_bytes) {
      std::lock_guard<std::mutex> lock(instance().mutex_);
      auto& blocks = instance().blocks_;
      for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
        if (it->bytes == bytes) {
          void* p = it->p;
          instance().cached_ -= bytes;
          blocks.erase(std::next(it).base());
          unpoison(p, bytes);
          return p;
        }
    }
    return ::operator new (bytes, std::align_val_t{64});
  }
  static void give(void* p, std::size_t bytes) noexcept {
    if (bytes >= min_bytes && bytes <= max_cached_bytes / 4) {
      std::lock_guard<std::mutex> lock(instance().mutex_);
      auto& self = instance();
      while (self.cached_ + bytes > max_cached_bytes && !self.blocks_.empty()) {
        Block oldest = self.blocks_.front();
        self.blocks_.erase(self.blocks_.begin());
        self.cached_ -= oldest.bytes;
        unpoison(oldest.p, oldest.bytes);
        ::operator delete (oldest.p, std::align_val_t{64});
      }
      poison(p, bytes);
      self.blocks_.push_back({p, bytes});
      self.cached_ += bytes;
      return;
    }
    ::operator delete (p, std::align_val_t{64});
  }

 private:
  struct Block {
    void* p;
    std::size_t bytes;
  };
  static BlockCache& instance() {
    static BlockCache* cache = new BlockCache;  // never destroyed: buffers outlive main's statics
    return *cache;
  }
  static void poison(void* p, std::size_t bytes) noexcept {
    if (__asan_poison_memory_region) __asan_poison_memory_region(p, bytes);
  }
  static void unpoison(void* p, std::size_t bytes) noexcept {
    if (__asan_unpoison_memory_region) __asan_unpoison_memory_region(p, bytes);
  }
  std::mutex mutex_;
  std::vector<Block> blocks_;
  std::size_t cached_ = 0;
};

// A contiguous owning buffer that also works for bool (std::vector<bool> is not contiguous).
// Elements are trivially copyable (the buffers are copied with memcpy).
template <class T>
class Buf {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  Buf() = default;
  explicit Buf(std::size_t n) : size_(n) {
    if (!n) return;
    T* p = static_cast<T*>(BlockCache::take(n * sizeof(T)));
    std::uninitialized_default_construct_n(p, n);
    data_.reset(p);
    data_.get_deleter().n = n;
  }
  Buf(std::size_t n, const T& fill) : Buf(n) { std::fill_n(data_.get(), n, fill); }
  Buf(const Buf& other) : Buf(other.size_) {
    if (size_) std::memcpy(static_cast<void*>(data_.get()), other.data_.get(), size_ * sizeof(T));
  }
  Buf(Buf&& other) noexcept : data_(std::move(other.data_)), size_(std::exchange(other.size_, 0)) {}
  Buf& operator=(const Buf& other) {
    if (this == &other) return *this;
    if (size_ != other.size_) *this = Buf(other.size_);
    if (size_) std::memcpy(static_cast<void*>(data_.get()), other.data_.get(), size_ * sizeof(T));
    return *this;
  }
  Buf& operator=(Buf&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  T* data() noexcept { return data_.get(); }
  const T* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  T& operator[](std::size_t i) noexcept { return data_.get()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_.get()[i]; }
  std::span<T> span() noexcept { return {data_.get(), size_}; }
  std::span<const T> cspan() const noexcept { return {data_.get(), size_}; }
  // Keeps the first n elements.
  void truncate(std::size_t n) {
    Buf shorter(std::min(n, size_));
    if (shorter.size_)
      std::memcpy(static_cast<void*>(shorter.data_.get()), data_.get(), shorter.size_ * sizeof(T));
    *this = std::move(shorter);
  }

 private:
  struct Release {
    std::size_t n = 0;
    void operator()(T* p) const noexcept { BlockCache::give(p, n * sizeof(T)); }
  };
  std::unique_ptr<T, Release> data_{nullptr, Release{}};
  std::size_t size_ = 0;
};

template <class T>
using PerRank = std::vector<Buf<T>>;

// --- Element types -------------------------------------------------------------------------------

// Affine maps x -> a*x + b on wrapping 64-bit integers; compose(f, g) = "f, then g". Associative,
// not commutative, exact in any grouping: the non-commutative user op of the tests.
struct Affine {
  std::uint64_t a, b;
  friend bool operator==(const Affine&, const Affine&) = default;
};
struct Compose {
  Affine operator()(const Affine& f, const Affine& g) const { return {f.a * g.a, f.b * g.a + g.b}; }
};

// The same on 8-bit integers (2 bytes): for the large reduce_scatter_block, whose inputs are
// size() blocks per rank.
struct Affine8 {
  std::uint8_t a, b;
  friend bool operator==(const Affine8&, const Affine8&) = default;
};
struct Compose8 {
  Affine8 operator()(const Affine8& f, const Affine8& g) const {
    return {static_cast<std::uint8_t>(f.a * g.a), static_cast<std::uint8_t>(f.b * g.a + g.b)};
  }
};

// 2x2 integer matrices multiplied in rank order (wrapping 32-bit): another non-commutative op.
struct Mat2 {
  std::uint32_t m[4];
  friend bool operator==(const Mat2&, const Mat2&) = default;
};
struct MatMul {
  Mat2 operator()(const Mat2& x, const Mat2& y) const {
    return {{x.m[0] * y.m[0] + x.m[1] * y.m[2], x.m[0] * y.m[1] + x.m[1] * y.m[3],
             x.m[2] * y.m[0] + x.m[3] * y.m[2], x.m[2] * y.m[1] + x.m[3] * y.m[3]}};
  }
};

// A 3-byte element (alignment 1): movement of elements that do not tile a cache line.
struct Rgb {
  std::uint8_t r, g, b;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

// A 12-byte element reduced with a user op declared commutative.
struct Triple {
  std::int32_t x, y, z;
  friend bool operator==(const Triple&, const Triple&) = default;
};
struct AddTriple {
  Triple operator()(const Triple& p, const Triple& q) const {
    return {p.x + q.x, p.y + q.y, std::max(p.z, q.z)};
  }
};

template <class T>
std::string show(const T& v) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, Affine>) {
    s << "{" << v.a << "," << v.b << "}";
  } else if constexpr (std::is_same_v<T, Affine8>) {
    s << "{" << int{v.a} << "," << int{v.b} << "}";
  } else if constexpr (std::is_same_v<T, Mat2>) {
    s << "[" << v.m[0] << " " << v.m[1] << "; " << v.m[2] << " " << v.m[3] << "]";
  } else if constexpr (std::is_same_v<T, Rgb>) {
    s << "rgb(" << int{v.r} << "," << int{v.g} << "," << int{v.b} << ")";
  } else if constexpr (std::is_same_v<T, Triple>) {
    s << "(" << v.x << "," << v.y << "," << v.z << ")";
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    s << static_cast<int>(v);
  } else {
    s << v;
  }
  return s.str();
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, int>) return "int";
  if constexpr (std::is_same_v<T, long>) return "long";
  if constexpr (std::is_same_v<T, bool>) return "bool";
  if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  if constexpr (std::is_same_v<T, std::uint16_t>) return "uint16";
  if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  if constexpr (std::is_same_v<T, std::complex<double>>) return "complex<double>";
  if constexpr (std::is_same_v<T, Affine>) return "Affine";
  if constexpr (std::is_same_v<T, Affine8>) return "Affine8";
  if constexpr (std::is_same_v<T, Mat2>) return "Mat2";
  if constexpr (std::is_same_v<T, Rgb>) return "Rgb";
  if constexpr (std::is_same_v<T, Triple>) return "Triple";
  return "?";
}

// --- Deterministic inputs ------------------------------------------------------------------------

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The seed of element i of rank r's buffer; salt tells the buffers of different cases apart.
inline std::uint64_t seed(int rank, std::size_t i, std::uint64_t salt) {
  return mix((salt << 48) ^ (static_cast<std::uint64_t>(rank) << 36) ^ i);
}

// Inputs for data movement and for sums: small integers (exact in floating point whatever the
// order of the sum), random bits for structs.
template <class T>
T plain(std::uint64_t h) {
  if constexpr (std::is_same_v<T, bool>) {
    return (h & 1) != 0;
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return static_cast<T>(h % 200);
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return static_cast<T>(h % 1000003);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(static_cast<int>(h % 201) - 100);
  } else if constexpr (std::is_same_v<T, std::complex<double>>) {
    return {static_cast<double>(static_cast<int>(h % 201) - 100),
            static_cast<double>(static_cast<int>((h >> 20) % 201) - 100)};
  } else if constexpr (std::is_same_v<T, Affine>) {
    return {2 * (h % 1000) + 1, (h >> 20) % 1000};
  } else if constexpr (std::is_same_v<T, Affine8>) {
    return {static_cast<std::uint8_t>(2 * (h % 100) + 1),
            static_cast<std::uint8_t>((h >> 20) % 200)};
  } else if constexpr (std::is_same_v<T, Mat2>) {
    return {{static_cast<std::uint32_t>(h % 7), static_cast<std::uint32_t>((h >> 8) % 7),
             static_cast<std::uint32_t>((h >> 16) % 7), static_cast<std::uint32_t>((h >> 24) % 7)}};
  } else if constexpr (std::is_same_v<T, Rgb>) {
    return {static_cast<std::uint8_t>(h % 200), static_cast<std::uint8_t>((h >> 8) % 200),
            static_cast<std::uint8_t>((h >> 16) % 200)};
  } else if constexpr (std::is_same_v<T, Triple>) {
    return {static_cast<std::int32_t>(h % 201) - 100, static_cast<std::int32_t>((h >> 20) % 201),
            static_cast<std::int32_t>((h >> 40) % 1000)};
  }
}

// What a buffer holds where the collective must not write (and before it writes): values
// plain() never produces, so a missing or misplaced write shows.
template <class T>
T garbage(std::uint64_t h) {
  if constexpr (std::is_same_v<T, bool>) {
    return (h & 1) != 0;
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return static_cast<T>(200 + h % 56);
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return static_cast<T>(std::numeric_limits<T>::max() - h % 1000);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    return static_cast<T>(-101 - static_cast<int>(h % 27));
  } else if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(-1000 - static_cast<int>(h % 1000));
  } else if constexpr (std::is_same_v<T, std::complex<double>>) {
    return {-1e6, -1e6 - static_cast<double>(h % 1000)};
  } else if constexpr (std::is_same_v<T, Affine>) {
    return {0, h};
  } else if constexpr (std::is_same_v<T, Affine8>) {
    return {0, static_cast<std::uint8_t>(h)};
  } else if constexpr (std::is_same_v<T, Mat2>) {
    return {{0xdeadbeefu, static_cast<std::uint32_t>(h), 0xdeadbeefu, 0xdeadbeefu}};
  } else if constexpr (std::is_same_v<T, Rgb>) {
    return {255, static_cast<std::uint8_t>(h), 255};
  } else if constexpr (std::is_same_v<T, Triple>) {
    return {-1000000, static_cast<std::int32_t>(h % 1000), -1000000};
  }
}

// A buffer of n generated elements.
template <class T, class Gen>
Buf<T> generate(std::size_t n, int rank, std::uint64_t salt, Gen gen) {
  Buf<T> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = gen(seed(rank, i, salt));
  return b;
}
template <class T>
Buf<T> garbage_buf(std::size_t n, int rank) {
  Buf<T> b(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = garbage<T>(i * 7919 + static_cast<std::uint64_t>(rank));
  return b;
}

// --- Irregular layouts of the v-variants ---------------------------------------------------------

// Block order in a v-buffer: a permutation of the ranks (reversed, or rotated by `salt`).
inline std::vector<int> block_order(int ranks, int salt) {
  std::vector<int> order(static_cast<std::size_t>(ranks));
  for (int k = 0; k < ranks; ++k)
    order[static_cast<std::size_t>(k)] = salt % 2 == 0 ? ranks - 1 - k : (k + salt) % ranks;
  return order;
}

// Displacements for `counts` placed in block_order(salt), with gaps of 0..2 elements between
// blocks; returns the extent of the buffer.
inline std::size_t place_blocks(const std::vector<std::size_t>& counts,
                                std::vector<std::size_t>& displs, int salt) {
  const int ranks = static_cast<int>(counts.size());
  displs.assign(counts.size(), 0);
  std::size_t at = static_cast<std::size_t>(salt % 2);
  for (int k : block_order(ranks, salt)) {
    displs[static_cast<std::size_t>(k)] = at;
    at += counts[static_cast<std::size_t>(k)] + static_cast<std::size_t>((k + salt) % 3);
  }
  return at;
}

// counts[r] around n, some of them zero, blocks permuted and spaced out.
struct VLayout {
  std::vector<std::size_t> counts, displs;
  std::size_t extent = 0;
};
inline VLayout v_layout(int ranks, std::size_t n, int salt) {
  VLayout v;
  v.counts.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    v.counts[static_cast<std::size_t>(r)] =
        (r + salt) % 4 == 1 ? 0 : n + static_cast<std::size_t>((r * 3 + salt) % 4);
  v.extent = place_blocks(v.counts, v.displs, salt);
  return v;
}

// alltoallv: send[k][j] elements go from rank k to rank j; every rank lays out its send and
// receive blocks in its own permuted order.
struct AlltoallvLayout {
  std::vector<std::vector<std::size_t>> send_counts, send_displs, recv_counts, recv_displs;
  std::vector<std::size_t> send_extent, recv_extent;
};
inline AlltoallvLayout alltoallv_layout(int ranks, std::size_t n) {
  const auto N = static_cast<std::size_t>(ranks);
  AlltoallvLayout l;
  l.send_counts.assign(N, std::vector<std::size_t>(N));
  l.recv_counts.assign(N, std::vector<std::size_t>(N));
  l.send_displs.resize(N);
  l.recv_displs.resize(N);
  l.send_extent.resize(N);
  l.recv_extent.resize(N);
  for (std::size_t k = 0; k < N; ++k)
    for (std::size_t j = 0; j < N; ++j) {
      const std::size_t amount = (k * 7 + j * 3) % 5 == 2 ? 0 : n + (k + 2 * j) % 3;
      l.send_counts[k][j] = amount;
      l.recv_counts[j][k] = amount;
    }
  for (std::size_t k = 0; k < N; ++k) {
    l.send_extent[k] = place_blocks(l.send_counts[k], l.send_displs[k], static_cast<int>(k));
    l.recv_extent[k] = place_blocks(l.recv_counts[k], l.recv_displs[k], static_cast<int>(k) + 1);
  }
  return l;
}

// --- The references ------------------------------------------------------------------------------

namespace ref {

// op over ranks [first, last) of element i, in rank order: op(op(x_first, x_first+1), ...).
template <class T, class Op>
T fold(const PerRank<T>& send, int first, int last, std::size_t i, const Op& op) {
  T acc = send[static_cast<std::size_t>(first)][i];
  for (int k = first + 1; k < last; ++k)
    acc = static_cast<T>(op(acc, send[static_cast<std::size_t>(k)][i]));
  return acc;
}

inline int ranks_of(const auto& send) { return static_cast<int>(send.size()); }

// bcast: send[root] holds the root's buffer.
template <class T>
void bcast(const PerRank<T>& send, int root, int, Buf<T>& out) {
  out = send[static_cast<std::size_t>(root)];
}

template <class T, class Op>
void reduce(const PerRank<T>& send, int root, const Op& op, int r, Buf<T>& out) {
  if (r != root) return;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = fold(send, 0, ranks_of(send), i, op);
}

template <class T, class Op>
void allreduce(const PerRank<T>& send, const Op& op, int, Buf<T>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = fold(send, 0, ranks_of(send), i, op);
}

template <class T>
void allgatherv(const PerRank<T>& send, const VLayout& v, int, Buf<T>& out) {
  for (std::size_t k = 0; k < send.size(); ++k)
    for (std::size_t i = 0; i < v.counts[k]; ++i) out[v.displs[k] + i] = send[k][i];
}

template <class T>
void allgather(const PerRank<T>& send, int, Buf<T>& out) {
  for (std::size_t k = 0; k < send.size(); ++k)
    for (std::size_t i = 0; i < send[k].size(); ++i) out[k * send[k].size() + i] = send[k][i];
}

template <class T>
void gather(const PerRank<T>& send, int root, int r, Buf<T>& out) {
  if (r == root) allgather(send, r, out);
}

template <class T>
void gatherv(const PerRank<T>& send, const VLayout& v, int root, int r, Buf<T>& out) {
  if (r == root) allgatherv(send, v, r, out);
}

// scatter: send[root] holds size() blocks of out.size() elements.
template <class T>
void scatter(const PerRank<T>& send, int root, int r, Buf<T>& out) {
  const Buf<T>& from = send[static_cast<std::size_t>(root)];
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = from[static_cast<std::size_t>(r) * out.size() + i];
}

template <class T>
void scatterv(const PerRank<T>& send, const VLayout& v, int root, int r, Buf<T>& out) {
  const Buf<T>& from = send[static_cast<std::size_t>(root)];
  const auto me = static_cast<std::size_t>(r);
  for (std::size_t i = 0; i < v.counts[me]; ++i) out[i] = from[v.displs[me] + i];
}

// alltoall: every send holds size() blocks of n = out.size() / size() elements.
template <class T>
void alltoall(const PerRank<T>& send, int r, Buf<T>& out) {
  const std::size_t N = send.size(), n = N ? out.size() / N : 0;
  for (std::size_t k = 0; k < N; ++k)
    for (std::size_t i = 0; i < n; ++i)
      out[k * n + i] = send[k][static_cast<std::size_t>(r) * n + i];
}

template <class T>
void alltoallv(const PerRank<T>& send, const AlltoallvLayout& l, int r, Buf<T>& out) {
  const auto me = static_cast<std::size_t>(r);
  for (std::size_t k = 0; k < send.size(); ++k)
    for (std::size_t i = 0; i < l.recv_counts[me][k]; ++i)
      out[l.recv_displs[me][k] + i] = send[k][l.send_displs[k][me] + i];
}

// reduce_scatter_block: every send holds size() blocks of n = out.size() elements.
template <class T, class Op>
void reduce_scatter_block(const PerRank<T>& send, const Op& op, int r, Buf<T>& out) {
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = fold(send, 0, ranks_of(send), static_cast<std::size_t>(r) * out.size() + i, op);
}

// Every rank's inclusive prefix at once (prefix[r] = op over ranks 0..r), for the references
// of scan and exscan at large sizes.
template <class T, class Op>
PerRank<T> prefixes(const PerRank<T>& send, const Op& op) {
  PerRank<T> prefix;
  for (std::size_t k = 0; k < send.size(); ++k) {
    prefix.push_back(send[k]);
    if (k > 0)
      for (std::size_t i = 0; i < send[k].size(); ++i)
        prefix[k][i] = static_cast<T>(op(prefix[k - 1][i], send[k][i]));
  }
  return prefix;
}

template <class T, class Op>
void scan(const PerRank<T>& send, const Op& op, int r, Buf<T>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = fold(send, 0, r + 1, i, op);
}

// exscan: rank 0's output is left as it was.
template <class T, class Op>
void exscan(const PerRank<T>& send, const Op& op, int r, Buf<T>& out) {
  if (r == 0) return;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = fold(send, 0, r, i, op);
}

}  // namespace ref
}  // namespace tlc_test
