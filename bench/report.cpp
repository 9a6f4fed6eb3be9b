// Output formats. All three carry the same columns; the table is for people (header lines
// explain the run), CSV and JSON for scripts (plot_bench.py reads the CSV). Rows are written as
// soon as they are measured, so a long sweep shows progress and a crash keeps what was done.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "bench.hpp"

namespace tlc_bench {

std::string number(const char* fmt, double value) {
  if (std::isnan(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

// MPICH's version text runs over many lines (configure options included); the table shows the
// first line and the device, JSON keeps everything.
std::string mpi_summary(const std::string& version) {
  std::istringstream in(version);
  std::string line, summary, device;
  while (std::getline(in, line)) {
    std::string squeezed;
    for (char c : line) {
      const bool space = c == ' ' || c == '\t';
      if (space && (squeezed.empty() || squeezed.back() == ' ')) continue;
      squeezed += space ? ' ' : c;
    }
    if (summary.empty()) summary = squeezed;
    if (device.empty() && squeezed.find("Device:") != std::string::npos) device = squeezed;
  }
  return device.empty() || device == summary ? summary : summary + ", " + device;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", c);
          out += esc;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(const char* fmt, double value) {
  return std::isnan(value) || std::isinf(value) ? "null" : number(fmt, value);
}

namespace {

// The derived columns, computed once for every format.
struct Derived {
  double tlc_us, mpi_us, master_us;
  double tlc_over_mpi, tlc_over_master;
  double algbw_gbps;  // NaN for payload-free collectives
};

Derived derive(const Row& r) {
  Derived d{};
  d.tlc_us = r.tlc_s * 1e6;
  d.mpi_us = r.mpi_s * 1e6;
  d.master_us = r.master_s * 1e6;
  d.tlc_over_mpi = r.tlc_over_mpi;
  d.tlc_over_master = r.tlc_over_master;
  d.algbw_gbps = r.bytes ? static_cast<double>(r.bytes) / r.tlc_s / 1e9 : std::nan("");
  return d;
}

std::string shape(const RunInfo& info) {
  std::string s = "mpiexec -n " + std::to_string(info.processes) + " x " +
                  std::to_string(info.threads) +
                  " threads = " + std::to_string(info.processes * info.threads) + " participants";
  s += info.node_env.empty() ? " (TLC_NODE unset: one process per node)"
                             : " (TLC_NODE=" + info.node_env + ")";
  return s;
}

class TableReporter : public Reporter {
 public:
  explicit TableReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    const CollectiveSpec& spec = *info.spec;
    out_ << "# tlc-bench " << spec.name << ": " << spec.what << "\n"
         << "# processes: " << info.processes << ", threads per process: " << info.threads
         << ", lanes: " << info.lanes << ", tlc threads pinned: " << (info.pinned ? "yes" : "no")
         << "\n"
         << "# shape: " << shape(info) << "\n"
         << "# MPI: " << mpi_summary(info.mpi_version) << " (" << info.thread_level << ")\n"
         << "# tlc algorithm: " << (info.algorithm.empty() ? "selector's choice" : info.algorithm)
         << "; iterations: " << info.iters_policy << "\n";
    out_ << "# OpenMP: " << info.omp_env << "\n";
    if (info.node_pus > 0 && info.node_threads > info.node_pus)
      out_ << "# warning: oversubscribed: " << info.node_threads << " threads on " << info.node_pus
           << " hardware threads of this node; small-message times measure waiting policies"
           << (info.omp_env.find("OMP_WAIT_POLICY=(unset)") != std::string::npos
                   ? " (libgomp spins by default; OMP_WAIT_POLICY=passive makes master-only "
                     "block instead)"
                   : "")
           << "\n";
    if (info.skew_us > 0)
      out_ << "# arrival skew: thread t of T arrives t*" << info.skew_us
           << "/T us late; times are exit - arrival\n";
    out_ << "# times: max over all threads of all processes of the mean time per call (median "
            "repetition)\n"
         << "#   tlc_us:    " << spec.what << "\n"
         << "#   mpi_us:    " << spec.mpi_what << "\n"
         << "#   master_us: " << spec.master_what << "\n"
         << "#   tlc/mpi, tlc/master: median over the repetitions of the time ratio within one "
            "(< 1: tlc faster)";
    if (spec.sized) out_ << "; algbw: bytes per thread buffer / tlc time";
    out_ << "\n";
    std::snprintf(line_, sizeof line_, "%12s %7s %12s %12s %12s %8s %10s %11s", "bytes", "iters",
                  "tlc_us", "mpi_us", "master_us", "tlc/mpi", "tlc/master", "algbw_GB/s");
    out_ << line_ << std::endl;
  }

  void row(const Row& r) override {
    const Derived d = derive(r);
    std::snprintf(line_, sizeof line_, "%12zu %7d %12s %12s %12s %8s %10s %11s", r.bytes, r.iters,
                  number("%.2f", d.tlc_us).c_str(), number("%.2f", d.mpi_us).c_str(),
                  number("%.2f", d.master_us).c_str(), number("%.2f", d.tlc_over_mpi).c_str(),
                  number("%.2f", d.tlc_over_master).c_str(), number("%.3f", d.algbw_gbps).c_str());
    out_ << line_ << std::endl;
  }

  void end() override {}

 private:
  std::ostream& out_;
  char line_[256];
};

// The run's identity (collective, shape, skew) repeats on every row so that CSVs of several
// runs (a threads sweep, say) can simply be concatenated.
class CsvReporter : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    out_ << "collective,processes,threads,lanes,skew_us,bytes,iters,tlc_us,mpi_us,master_us,"
            "tlc/mpi,tlc/master,algbw_GBps"
         << std::endl;
  }

  void row(const Row& r) override {
    const Derived d = derive(r);
    out_ << info_.spec->name << ',' << info_.processes << ',' << info_.threads << ',' << info_.lanes
         << ',' << info_.skew_us << ',' << r.bytes << ',' << r.iters << ','
         << number("%.4f", d.tlc_us) << ',' << number("%.4f", d.mpi_us) << ','
         << number("%.4f", d.master_us) << ',' << number("%.4f", d.tlc_over_mpi) << ','
         << number("%.4f", d.tlc_over_master) << ','
         << (std::isnan(d.algbw_gbps) ? "" : number("%.4f", d.algbw_gbps)) << std::endl;
  }

  void end() override {}

 private:
  std::ostream& out_;
  RunInfo info_;
};

class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    out_ << "{\n"
         << "  \"benchmark\": \"tlc-bench\",\n"
         << "  \"collective\": " << json_string(info.spec->name) << ",\n"
         << "  \"processes\": " << info.processes << ",\n"
         << "  \"threads\": " << info.threads << ",\n"
         << "  \"lanes\": " << info.lanes << ",\n"
         << "  \"pinned\": " << (info.pinned ? "true" : "false") << ",\n"
         << "  \"tlc_node\": " << json_string(info.node_env) << ",\n"
         << "  \"algorithm\": " << json_string(info.algorithm) << ",\n"
         << "  \"iterations\": " << json_string(info.iters_policy) << ",\n"
         << "  \"skew_us\": " << json_number("%g", info.skew_us) << ",\n"
         << "  \"mpi_library\": " << json_string(info.mpi_version) << ",\n"
         << "  \"mpi_thread_level\": " << json_string(info.thread_level) << ",\n"
         << "  \"openmp\": " << json_string(info.omp_env) << ",\n"
         << "  \"node_threads\": " << info.node_threads << ",\n"
         << "  \"node_hardware_threads\": " << info.node_pus << ",\n"
         << "  \"rows\": [";
  }

  void row(const Row& r) override {
    const Derived d = derive(r);
    out_ << (first_ ? "\n" : ",\n") << "    {\"bytes\": " << r.bytes << ", \"iters\": " << r.iters
         << ", \"tlc_us\": " << json_number("%.4f", d.tlc_us)
         << ", \"mpi_us\": " << json_number("%.4f", d.mpi_us)
         << ", \"master_us\": " << json_number("%.4f", d.master_us)
         << ", \"tlc/mpi\": " << json_number("%.4f", d.tlc_over_mpi)
         << ", \"tlc/master\": " << json_number("%.4f", d.tlc_over_master)
         << ", \"algbw_GBps\": " << json_number("%.4f", d.algbw_gbps) << "}";
    out_.flush();
    first_ = false;
  }

  void end() override { out_ << "\n  ]\n}" << std::endl; }

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<Reporter> make_reporter(Format format, std::ostream& out) {
  switch (format) {
    case Format::csv:
      return std::make_unique<CsvReporter>(out);
    case Format::json:
      return std::make_unique<JsonReporter>(out);
    case Format::table:
      break;
  }
  return std::make_unique<TableReporter>(out);
}

}  // namespace tlc_bench
