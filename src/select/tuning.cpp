// The cost model's parameters by name (select/tuning.hpp): the keys and units of the tuning file,
// reading and writing it, TLC_COST_<KEY> values, and the digest that processes compare.
#include "select/tuning.hpp"

#include <array>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <istream>
#include <optional>
#include <sstream>

#include <tlc/error.hpp>

namespace tlc::detail {

namespace {

constexpr double us = 1e-6, gbs = 1e9, mib = 1024.0 * 1024.0;

constexpr std::size_t at(Collective c) { return static_cast<std::size_t>(c); }

#define TLC_FIELD(expr) [](CostParameters& p) -> double& { return p.expr; }

// MPI's own collectives against the textbook algorithm the model prices them as.
template <Collective c>
double& mpi_alpha(CostParameters& p) {
  return p.mpi_alpha[at(c)];
}
template <Collective c>
double& mpi_beta(CostParameters& p) {
  return p.mpi_beta[at(c)];
}
#define TLC_START_TERMS ": factor of the start-up terms of MPICH's algorithm priced on alpha_us"
#define TLC_BYTE_TERMS ": factor of its per-byte terms (priced on lane_gbs, reduce_gbs)"

// The file's units are the ones people quote (microseconds, GB/s, MiB); CostParameters holds
// seconds and bytes. Adding a parameter is one line here.
constexpr CostKey keys[] = {
    {"alpha_us", "start-up of one inter-process message, microseconds (Hockney alpha)", false, us,
     TLC_FIELD(alpha)},
    {"lane_gbs", "bandwidth one lane moves between processes, GB/s (1/beta)", false, gbs,
     TLC_FIELD(lane_bandwidth)},
    {"lane_memory_gbs",
     "the same for the bytes of a transfer beyond what the caches hold (cache_mib; shared-memory "
     "transports copy through memory), GB/s",
     false, gbs, TLC_FIELD(lane_memory_bandwidth)},
    {"eager_kib",
     "largest message sent eagerly, KiB; larger ones pay handshake_us more (the rendezvous "
     "protocol)",
     false, 1024, TLC_FIELD(eager_bytes)},
    {"handshake_us", "start-up a message past eager_kib adds, microseconds", false, us,
     TLC_FIELD(handshake), "none: no protocol step in the times"},
    {"reduce_gbs", "bytes one thread combines into an accumulator per second, GB/s (1/gamma)",
     false, gbs, TLC_FIELD(reduce_bandwidth)},
    {"sync_us",
     "one round of a rendezvous of a process's threads (T threads: ceil(log2 T) rounds), "
     "microseconds",
     false, us, TLC_FIELD(rendezvous)},
    {"memory_gbs",
     "bytes one thread copies per second while every thread copies, working set beyond the "
     "caches, GB/s",
     false, gbs, TLC_FIELD(memory_bandwidth)},
    {"cache_gbs", "the same, working set inside the caches, GB/s", false, gbs,
     TLC_FIELD(cache_bandwidth)},
    {"cache_mib",
     "bytes of a process's working set the caches hold, MiB (a larger working set W moves the "
     "share cache_mib / W at cache_gbs, the rest at memory_gbs)",
     false, mib, TLC_FIELD(cache_bytes)},
    {"call_us", "software cost of one collective call of tlc on top of its phases, microseconds",
     false, us, TLC_FIELD(call_overhead)},
    {"mpi_start_us",
     "start-up of one of MPI's collectives as tlc runs it (its non-blocking form, polled) on top "
     "of its algorithm's messages, microseconds",
     false, us, TLC_FIELD(mpi_start)},
    {"fragment_kib",
     "smallest message the alltoall led by arrival sends while threads of its process are still "
     "to arrive (smaller blocks wait to travel together), KiB",
     false, 1024, TLC_FIELD(alltoall_fragment), "off: every block travels alone"},
    {"mpi_bcast_alpha", "MPI_Bcast" TLC_START_TERMS, false, 1, mpi_alpha<Collective::bcast>},
    {"mpi_bcast_beta", "MPI_Bcast" TLC_BYTE_TERMS, false, 1, mpi_beta<Collective::bcast>},
    {"mpi_reduce_alpha", "MPI_Reduce" TLC_START_TERMS, false, 1, mpi_alpha<Collective::reduce>},
    {"mpi_reduce_beta", "MPI_Reduce" TLC_BYTE_TERMS, false, 1, mpi_beta<Collective::reduce>},
    {"mpi_allreduce_alpha", "MPI_Allreduce" TLC_START_TERMS, false, 1,
     mpi_alpha<Collective::allreduce>},
    {"mpi_allreduce_beta", "MPI_Allreduce" TLC_BYTE_TERMS, false, 1,
     mpi_beta<Collective::allreduce>},
    {"mpi_allgather_alpha", "MPI_Allgather(v)" TLC_START_TERMS, false, 1,
     mpi_alpha<Collective::allgather>},
    {"mpi_allgather_beta", "MPI_Allgather(v)" TLC_BYTE_TERMS, false, 1,
     mpi_beta<Collective::allgather>},
    {"mpi_alltoall_alpha", "MPI_Alltoall(v)" TLC_START_TERMS, false, 1,
     mpi_alpha<Collective::alltoall>},
    {"mpi_alltoall_beta", "MPI_Alltoall(v)" TLC_BYTE_TERMS, false, 1,
     mpi_beta<Collective::alltoall>},
    {"lane_parallelism",
     "lanes whose MPI calls progress at once (left out: MPICH's number of VCIs, else every lane)",
     true, 1, nullptr, "detected at run time"},
};
#undef TLC_BYTE_TERMS
#undef TLC_START_TERMS
#undef TLC_FIELD

std::size_t index_of(const CostKey& key) noexcept {
  return static_cast<std::size_t>(&key - std::begin(keys));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

const CostKey* find_key(std::string_view name) noexcept {
  for (const CostKey& k : keys)
    if (name == k.key) return &k;
  return nullptr;
}

std::string known_keys() {
  std::string all;
  for (const CostKey& k : keys) all += (all.empty() ? "" : ", ") + std::string(k.key);
  return all;
}

}  // namespace

std::span<const CostKey> cost_keys() noexcept { return keys; }

double cost_value(const CostParameters& p, const CostKey& key) noexcept {
  if (key.integer) return p.lane_parallelism;
  CostParameters copy = p;
  return key.field(copy) / key.scale;
}

std::string cost_variable(const CostKey& key) {
  std::string name = "TLC_COST_";
  for (const char* c = key.key; *c; ++c)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  return name;
}

void set_cost_value(CostParameters& p, const CostKey& key, std::string_view text,
                    const std::string& where) {
  const std::string value(trim(text));
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && *end == '\0' && errno == 0 && std::isfinite(v);
  if (!number || !(v > 0))
    throw Error(Errc::invalid_argument, "tlc: " + where + ": '" + value + "' is not a positive " +
                                            (key.integer ? "integer" : "number"));
  if (key.integer) {
    if (v != std::floor(v) || v > 1 << 20)
      throw Error(Errc::invalid_argument,
                  "tlc: " + where + ": '" + value + "' is not a positive integer");
    p.lane_parallelism = static_cast<int>(v);
    return;
  }
  key.field(p) = v * key.scale;
}

namespace {

// `measured <collective> <algorithm> <processes>x<threads>x<lanes> <bytes> = <microseconds>`
// (MeasuredTimes::text writes them): one measured time into *measured.
void read_measured(std::string_view key, std::string_view value, const std::string& at,
                   MeasuredTimes& measured) {
  std::istringstream fields{std::string(key)};
  std::string word, collective_name, algorithm_name, shape_text, bytes_text, extra;
  fields >> word >> collective_name >> algorithm_name >> shape_text >> bytes_text;
  const std::string form =
      "'measured <collective> <algorithm> <processes>x<threads>x<lanes> <bytes> = "
      "<microseconds>'";
  if (bytes_text.empty() || (fields >> extra))
    throw Error(Errc::invalid_argument,
                "tlc: " + at + ": '" + std::string(key) + "' is not of the form " + form);
  std::optional<Collective> collective;
  for (std::size_t c = 0; c < collective_count; ++c)
    if (collective_name == to_string(static_cast<Collective>(c)))
      collective = static_cast<Collective>(c);
  if (!collective)
    throw Error(Errc::invalid_argument,
                "tlc: " + at + ": unknown collective '" + collective_name + "'");
  const Override algorithm = parse_override(*collective, algorithm_name, at);
  MeasuredShape shape;
  char x1 = 0, x2 = 0;
  std::istringstream shape_in(shape_text);
  if (!(shape_in >> shape.processes >> x1 >> shape.threads >> x2 >> shape.lanes) || x1 != 'x' ||
      x2 != 'x' || (shape_in >> extra) || shape.processes < 1 || shape.threads < 1 ||
      shape.lanes < 1)
    throw Error(Errc::invalid_argument, "tlc: " + at + ": '" + shape_text +
                                            "' is not a team shape <processes>x<threads>x<lanes>");
  char* end = nullptr;
  errno = 0;
  const unsigned long long bytes = std::strtoull(bytes_text.c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || bytes_text.front() == '-')
    throw Error(Errc::invalid_argument,
                "tlc: " + at + ": '" + bytes_text + "' is not a size in bytes");
  const std::string text(trim(value));
  errno = 0;
  const double microseconds = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(microseconds) ||
      !(microseconds > 0))
    throw Error(Errc::invalid_argument,
                "tlc: " + at + ": '" + text + "' is not a positive number of microseconds");
  if (!measured.add(*collective, algorithm.algorithm, shape,
                    {static_cast<std::size_t>(bytes), microseconds * us}))
    throw Error(Errc::invalid_argument,
                "tlc: " + at + ": '" + std::string(key) + "' was already given");
}

}  // namespace

void read_tuning(std::istream& in, const std::string& name, CostParameters& p,
                 MeasuredTimes* measured_out) {
  CostParameters read = p;  // p and *measured_out change only when the whole file is good
  MeasuredTimes measured;
  std::array<int, std::size(keys)> line_of{};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text = line;
    text = trim(text.substr(0, text.find('#')));
    if (text.empty()) continue;
    const std::string at = "tuning file '" + name + "', line " + std::to_string(number);
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos)
      throw Error(Errc::invalid_argument,
                  "tlc: " + at + ": '" + std::string(text) + "' is not 'key = value'");
    const std::string_view key_name = trim(text.substr(0, eq));
    if (key_name.starts_with("measured ")) {
      read_measured(key_name, text.substr(eq + 1), at, measured);
      continue;
    }
    const CostKey* key = find_key(key_name);
    if (!key)
      throw Error(Errc::invalid_argument, "tlc: " + at + ": unknown key '" + std::string(key_name) +
                                              "' (known: " + known_keys() + ")");
    int& seen = line_of[index_of(*key)];
    if (seen)
      throw Error(Errc::invalid_argument, "tlc: " + at + ": key '" + key->key +
                                              "' was already given on line " +
                                              std::to_string(seen));
    seen = number;
    set_cost_value(read, *key, text.substr(eq + 1), at + ", key '" + key->key + "'");
  }
  if (in.bad())
    throw Error(Errc::invalid_argument, "tlc: tuning file '" + name + "' could not be read");
  p = read;
  if (measured_out) *measured_out = std::move(measured);
}

void read_tuning_file(const std::string& path, const std::string& origin, CostParameters& p,
                      MeasuredTimes* measured) {
  std::ifstream in(path);
  if (!in)
    throw Error(Errc::invalid_argument, "tlc: tuning file '" + path + "' (" + origin +
                                            ") cannot be opened: " + std::strerror(errno));
  read_tuning(in, path, p, measured);
}

int cost_fingerprint(const CostParameters& p, const MeasuredTimes& measured) noexcept {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the values' bits
  auto mix = [&h](std::uint64_t bits) {
    for (int b = 0; b < 8; ++b) {
      h ^= (bits >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (const CostKey& k : keys) {
    CostParameters copy = p;
    mix(k.field ? std::bit_cast<std::uint64_t>(k.field(copy))
                : static_cast<std::uint64_t>(p.lane_parallelism));
  }
  if (!measured.empty()) mix(measured.digest());
  return static_cast<int>((h ^ (h >> 32)) & 0x3fffffffu);
}

std::string tuning_text(const CostParameters& p, const std::vector<std::string>& header,
                        const MeasuredTimes* measured) {
  std::ostringstream out;
  for (const std::string& h : header) out << "# " << h << '\n';
  if (!header.empty()) out << '\n';
  for (const CostKey& k : keys) {
    out << "# " << k.meaning << '\n';
    if (k.when_zero && cost_value(p, k) <= 0) {
      out << "# " << k.key << " = (" << k.when_zero << ")\n";
      continue;
    }
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", cost_value(p, k));
    out << k.key << " = " << value << '\n';
  }
  if (measured && !measured->empty())
    out << "\n# Times of whole calls measured on this machine (tlc-calibrate's table):\n"
           "# measured <collective> <algorithm> <processes>x<threads>x<lanes> <bytes of a rank "
           "block> = <microseconds>.\n# Where a team has one of these shapes, the plan scales "
           "the model's price of each\n# algorithm to them (select/measured.hpp).\n"
        << measured->text();
  return out.str();
}

}  // namespace tlc::detail
