// The reporters of the one driver. All carry the same numbers: the table for people (OSU and
// nccl-tests columns: size, count, type, redop, root, time, algbw, busbw, #wrong, out of place
// and in place, then every baseline and its ratio), CSV (one line per row and implementation,
// the run's header as leading '#' lines) and JSON for scripts, and the summary: per collective,
// tlc against each baseline at a small, a medium and the largest size.
#include <cmath>
#include <cstdio>
#include <map>
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

const char* role_name(Role r) {
  switch (r) {
    case Role::subject:
      return "subject";
    case Role::in_place:
      return "in_place";
    case Role::baseline:
      return "baseline";
    case Role::bound:
      return "bound";
  }
  return "?";
}

double algbw_gbps(const Row& row, const Cell& c) {
  return row.bytes && c.measured && c.t.max > 0 ? static_cast<double>(row.bytes) / c.t.max / 1e9
                                                : std::nan("");
}

}  // namespace

// The header lines every text format starts with.
std::vector<std::pair<std::string, std::string>> header_fields(const RunHeader& h) {
  std::vector<std::pair<std::string, std::string>> f = {
      {"benchmark", "tlc-bench " + h.mode},
      {"what", h.description},
      {"shape", std::to_string(h.processes) + " process(es) x " + std::to_string(h.threads) +
                    " threads, lanes " + std::to_string(h.lanes) +
                    ", tlc threads pinned: " + (h.pinned ? "yes" : "no") +
                    (h.node_env.empty() ? "" : ", TLC_NODE=" + h.node_env)},
      {"mpi", mpi_summary(h.mpi_version) + " (" + h.thread_level + ")"},
      {"tlc", h.tlc_version},
      {"topology", h.topology},
      {"placement", h.placement.empty() ? "-" : h.placement},
      {"command", h.options},
      {"iterations", h.iters_policy},
      {"openmp", h.omp_env},
  };
  if (!h.arrivals.empty()) f.push_back({"arrivals", h.arrivals});
  if (h.skew_us > 0)
    f.push_back({"skew", "thread t of T arrives t*" + number("%g", h.skew_us) +
                             "/T us late; times are exit - arrival"});
  if (h.node_pus > 0 && h.node_threads > h.node_pus)
    f.push_back({"warning", "oversubscribed: " + std::to_string(h.node_threads) + " threads on " +
                                std::to_string(h.node_pus) +
                                " hardware threads of this node; small-message times measure "
                                "waiting policies"});
  return f;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Table

class TableReporter : public Reporter {
 public:
  explicit TableReporter(std::ostream& out) : out_(out) {}

  void begin(const RunHeader& h) override {
    for (const auto& [key, value] : header_fields(h)) out_ << "# " << key << ": " << value << "\n";
    arrivals_ = !h.arrivals.empty();
    if (arrivals_) {
      out_ << "# columns: in_us = mean time in the collective (exit - own arrival) over all "
              "threads and calls, after_us = mean time after the latest arrival of any thread "
              "(0 for a thread that left before it), max_in_us = the slowest thread's mean in, "
              "medians over the repetitions; X/S = X's over the first column's (S) in the same "
              "repetition (median; < 1: less time than S); #wrong = wrong elements in the "
              "checked call and every timed call\n";
      out_.flush();
      return;
    }
    out_ << "# columns: time_us = the slowest participant's mean time per call (median "
            "repetition), avg_us and min_us the mean and fastest participants'; algbw = size / "
            "time; busbw = algbw * nccl-tests' factor for the ranks; #wrong = wrong elements in "
            "the checked call; X/S = X's time over the first column's (S, the subject) in the "
            "same repetition (median; > 1: S faster); bound/S = fraction of the memory-bandwidth "
            "bound reached; others%, "
            "steal% = CPU taken by other processes and the hypervisor meanwhile\n";
    out_.flush();
  }

  void begin_collective(const CollectiveDef& def, const std::vector<Column>& columns,
                        const std::string& arrivals) override {
    def_ = &def;
    columns_.clear();
    const std::string name =
        std::string(def.name) + (arrivals.empty() ? "" : ", arrivals " + arrivals);
    if (std::string(def.mpi_what) == "-") {
      out_ << "\n# " << name << ": " << def.tlc_what << "\n";
    } else {
      out_ << "\n# " << name << ": tlc: every thread " << def.tlc_what << "; MPI: " << def.mpi_what
           << "\n";
      if (def.kind != Kind::barrier)
        out_ << "#   bytes that must move: " << def.moved_formula << "\n";
    }
    for (const Column& c : columns) {
      columns_.push_back({c.key, c.role});
      out_ << "#   " << c.key << ": " << c.label
           << (c.impl ? "" : " [not measured: " + c.note + "]") << "\n";
    }
    std::string line;
    auto add = [&](const char* fmt, const std::string& s) {
      char text[96];
      std::snprintf(text, sizeof text, fmt, s.c_str());
      line += text;
    };
    add("%10s", "size");
    add(" %10s", "count");
    add(" %6s", "type");
    add(" %5s", "redop");
    add(" %4s", "root");
    if (arrivals_) add(" %-11s", "arrivals");
    add(" %-12s", "algorithm");
    for (const auto& [key, role] : columns_) {
      if (arrivals_) {
        const std::string ratio = key + "/" + columns_.front().first;
        if (role == Role::subject) {
          add(" %10s", "in_us");
          add(" %10s", "after_us");
          add(" %10s", "max_in_us");
        } else {
          add(" %10s", key + "_in");
          add(" %10s", key + "_aft");
          add(" %12s", ratio + "_in");
          add(" %12s", ratio + "_aft");
        }
        add(" %6s", "#wrong");
        continue;
      }
      switch (role) {
        case Role::subject:
          add(" %11s", "time_us");
          add(" %10s", "avg_us");
          add(" %10s", "min_us");
          add(" %8s", "algbw");
          add(" %8s", "busbw");
          add(" %6s", "#wrong");
          break;
        case Role::in_place:
          add(" %11s", "ip_time_us");
          add(" %8s", "ip_algbw");
          add(" %8s", "ip_busbw");
          add(" %6s", "#wrong");
          break;
        case Role::baseline:
          add(" %11s", key + "_us");
          add(" %9s", key + "/" + columns_.front().first);
          add(" %6s", "#wrong");
          break;
        case Role::bound:
          add(" %11s", key + "_us");
          add(" %9s", key + "/" + columns_.front().first);
          break;
      }
    }
    add(" %7s", "others%");
    add(" %6s", "steal%");
    out_ << line << std::endl;
  }

  void row(const Row& r) override {
    std::string line;
    char text[96];
    auto put = [&](const char* fmt, auto value) {
      std::snprintf(text, sizeof text, fmt, value);
      line += text;
    };
    const bool sized = def_->kind != Kind::barrier;
    put("%10zu", r.bytes);
    put(" %10zu", r.count);
    put(" %6s", sized ? def_->type : "-");
    put(" %5s", def_->op);
    put(" %4d", def_->root);
    if (arrivals_) put(" %-11s", r.arrivals.c_str());
    put(" %-12s", r.algorithm.empty() ? "-" : r.algorithm.c_str());
    const double factor = bus_factor(def_->kind, r.ranks);
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const Cell& c = r.cells[k];
      if (arrivals_) {
        auto us = [&](double s) { return number("%.1f", c.measured ? s * 1e6 : std::nan("")); };
        put(" %10s", us(c.t.avg).c_str());
        put(" %10s", us(c.t.after).c_str());
        if (columns_[k].second == Role::subject) {
          put(" %10s", us(c.t.max).c_str());
        } else {
          put(" %12s", number("%.2f", c.ratio).c_str());
          put(" %12s", number("%.2f", c.after_ratio).c_str());
        }
        put(" %6s", c.measured ? std::to_string(c.wrong).c_str() : "-");
        continue;
      }
      const double us = c.measured ? c.t.max * 1e6 : std::nan("");
      const double algbw = algbw_gbps(r, c);
      switch (columns_[k].second) {
        case Role::subject:
          put(" %11s", number("%.2f", us).c_str());
          put(" %10s", number("%.2f", c.measured ? c.t.avg * 1e6 : std::nan("")).c_str());
          put(" %10s", number("%.2f", c.measured ? c.t.min * 1e6 : std::nan("")).c_str());
          put(" %8s", number("%.2f", algbw).c_str());
          put(" %8s", number("%.2f", algbw * factor).c_str());
          put(" %6s", c.measured ? std::to_string(c.wrong).c_str() : "-");
          break;
        case Role::in_place:
          put(" %11s", number("%.2f", us).c_str());
          put(" %8s", number("%.2f", algbw).c_str());
          put(" %8s", number("%.2f", algbw * factor).c_str());
          put(" %6s", c.measured ? std::to_string(c.wrong).c_str() : "-");
          break;
        case Role::baseline:
          put(" %11s", number("%.2f", us).c_str());
          put(" %9s", number("%.2f", c.ratio).c_str());
          put(" %6s", c.measured ? std::to_string(c.wrong).c_str() : "-");
          break;
        case Role::bound:
          put(" %11s", number("%.2f", us).c_str());
          put(" %9s", number("%.3f", c.ratio).c_str());
          break;
      }
    }
    put(" %7s", number("%.0f", r.others_percent).c_str());
    put(" %6s", number("%.0f", r.steal_percent).c_str());
    out_ << line << std::endl;
  }

  void end_collective() override {}

  void end(double seconds, const std::vector<std::string>& findings) override {
    out_ << "\n# findings (self-consistency: a collective against a decomposition into two "
            "others at the same size, the subject's times, 10% margin; needs reduce, bcast, "
            "gather and scatter measured too):"
         << (findings.empty() ? " none" : "") << "\n";
    for (const std::string& f : findings) out_ << "#   " << f << "\n";
    out_ << "# run took " << number("%.1f", seconds) << " s" << std::endl;
  }

 private:
  std::ostream& out_;
  const CollectiveDef* def_ = nullptr;
  std::vector<std::pair<std::string, Role>> columns_;
  bool arrivals_ = false;
};

// ---------------------------------------------------------------------------------------------
// CSV: one line per row and implementation.

class CsvReporter : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out) : out_(out) {}

  void begin(const RunHeader& h) override {
    for (const auto& [key, value] : header_fields(h)) out_ << "# " << key << ": " << value << "\n";
    out_ << "collective,bytes,count,type,redop,root,ranks,algorithm,impl,role,time_us,avg_us,"
            "min_us,algbw_GBps,busbw_GBps,wrong,iters,ratio,others_pct,steal_pct,arrivals,after_us,"
            "after_ratio"
         << std::endl;
  }

  void begin_collective(const CollectiveDef& def, const std::vector<Column>& columns,
                        const std::string&) override {
    def_ = &def;
    columns_.clear();
    for (const Column& c : columns) columns_.push_back({c.key, c.role});
  }

  void row(const Row& r) override {
    const double factor = bus_factor(def_->kind, r.ranks);
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const Cell& c = r.cells[k];
      if (!c.measured) continue;
      const double algbw = algbw_gbps(r, c);
      out_ << def_->name << ',' << r.bytes << ',' << r.count << ','
           << (def_->kind == Kind::barrier ? "-" : def_->type) << ',' << def_->op << ','
           << def_->root << ',' << r.ranks << ',' << r.algorithm << ',' << columns_[k].first << ','
           << role_name(columns_[k].second) << ',' << number("%.4f", c.t.max * 1e6) << ','
           << number("%.4f", c.t.avg * 1e6) << ',' << number("%.4f", c.t.min * 1e6) << ','
           << number("%.4f", algbw) << ',' << number("%.4f", algbw * factor) << ',' << c.wrong
           << ',' << c.iters << ',' << number("%.4f", c.ratio) << ','
           << number("%.1f", r.others_percent) << ',' << number("%.1f", r.steal_percent) << ','
           << r.arrivals << ',' << number("%.4f", c.t.after * 1e6) << ','
           << number("%.4f", c.after_ratio) << std::endl;
    }
  }

  void end_collective() override {}
  void end(double seconds, const std::vector<std::string>& findings) override {
    for (const std::string& f : findings) out_ << "# finding: " << f << "\n";
    out_ << "# run took " << number("%.1f", seconds) << " s" << std::endl;
  }

 private:
  std::ostream& out_;
  const CollectiveDef* def_ = nullptr;
  std::vector<std::pair<std::string, Role>> columns_;
};

// ---------------------------------------------------------------------------------------------
// JSON

class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(std::ostream& out) : out_(out) {}

  void begin(const RunHeader& h) override {
    out_ << "{\n  \"header\": {";
    bool first = true;
    for (const auto& [key, value] : header_fields(h)) {
      out_ << (first ? "\n" : ",\n") << "    " << json_string(key) << ": " << json_string(value);
      first = false;
    }
    out_ << ",\n    \"mpi_library\": " << json_string(h.mpi_version)
         << ",\n    \"processes\": " << h.processes << ",\n    \"threads\": " << h.threads
         << ",\n    \"lanes\": " << h.lanes << "\n  },\n  \"collectives\": [";
    out_.flush();
  }

  void begin_collective(const CollectiveDef& def, const std::vector<Column>& columns,
                        const std::string& arrivals) override {
    def_ = &def;
    columns_.clear();
    out_ << (collectives_++ ? ",\n" : "\n") << "    {\"name\": " << json_string(def.name)
         << ", \"arrivals\": " << json_string(arrivals)
         << ", \"tlc\": " << json_string(def.tlc_what) << ", \"mpi\": " << json_string(def.mpi_what)
         << ", \"moved_bytes\": " << json_string(def.moved_formula) << ", \"columns\": [";
    for (std::size_t k = 0; k < columns.size(); ++k) {
      columns_.push_back({columns[k].key, columns[k].role});
      out_ << (k ? ", " : "") << "{\"key\": " << json_string(columns[k].key)
           << ", \"role\": " << json_string(role_name(columns[k].role))
           << ", \"what\": " << json_string(columns[k].label)
           << ", \"note\": " << json_string(columns[k].note) << "}";
    }
    out_ << "], \"rows\": [";
    rows_ = 0;
  }

  void row(const Row& r) override {
    const double factor = bus_factor(def_->kind, r.ranks);
    out_ << (rows_++ ? ",\n" : "\n") << "      {\"bytes\": " << r.bytes
         << ", \"count\": " << r.count << ", \"ranks\": " << r.ranks
         << ", \"algorithm\": " << json_string(r.algorithm)
         << ", \"moved_bytes\": " << json_number("%.0f", r.moved)
         << ", \"others_percent\": " << json_number("%.1f", r.others_percent)
         << ", \"steal_percent\": " << json_number("%.1f", r.steal_percent) << ", \"results\": {";
    bool first = true;
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const Cell& c = r.cells[k];
      if (!c.measured) continue;
      const double algbw = algbw_gbps(r, c);
      out_ << (first ? "" : ", ") << json_string(columns_[k].first)
           << ": {\"time_us\": " << json_number("%.4f", c.t.max * 1e6)
           << ", \"avg_us\": " << json_number("%.4f", c.t.avg * 1e6)
           << ", \"min_us\": " << json_number("%.4f", c.t.min * 1e6)
           << ", \"algbw_GBps\": " << json_number("%.4f", algbw)
           << ", \"busbw_GBps\": " << json_number("%.4f", algbw * factor)
           << ", \"wrong\": " << c.wrong << ", \"iters\": " << c.iters
           << ", \"ratio\": " << json_number("%.4f", c.ratio)
           << ", \"after_us\": " << json_number("%.4f", c.t.after * 1e6)
           << ", \"after_ratio\": " << json_number("%.4f", c.after_ratio) << "}";
      first = false;
    }
    out_ << "}}";
    out_.flush();
  }

  void end_collective() override { out_ << "\n    ]}"; }

  void end(double seconds, const std::vector<std::string>& findings) override {
    out_ << "\n  ],\n  \"findings\": [";
    for (std::size_t i = 0; i < findings.size(); ++i)
      out_ << (i ? ", " : "") << json_string(findings[i]);
    out_ << "],\n  \"seconds\": " << json_number("%.1f", seconds) << "\n}" << std::endl;
  }

 private:
  std::ostream& out_;
  const CollectiveDef* def_ = nullptr;
  std::vector<std::pair<std::string, Role>> columns_;
  int collectives_ = 0;
  int rows_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Summary

class SummaryReporter : public Reporter {
 public:
  explicit SummaryReporter(std::ostream& out) : out_(out) {}

  void begin(const RunHeader& h) override {
    header_ = h;
    out_ << "# tlc-bench " << h.mode << ": " << h.description << "\n# "
         << mpi_summary(h.mpi_version) << "; " << h.tlc_version << std::endl;
  }

  void begin_collective(const CollectiveDef& def, const std::vector<Column>& columns,
                        const std::string& arrivals) override {
    Entry e;
    e.name = std::string(def.name) + (arrivals.empty() ? "" : " " + arrivals);
    if (!columns.empty()) subject_ = columns.front().key;
    for (const Column& c : columns) {
      e.keys.push_back(c.key);
      e.roles.push_back(c.role);
      if (c.role != Role::baseline && c.role != Role::bound) continue;
      if (std::find(baselines_.begin(), baselines_.end(), c.key) == baselines_.end())
        baselines_.push_back(c.key);
      // What the column is, without what it calls for this collective.
      labels_[c.key] = c.label.substr(0, c.label.find(':'));
    }
    entries_.push_back(std::move(e));
    started_ = Clock::now();
  }

  void row(const Row& r) override {
    Entry& e = entries_.back();
    e.rows.push_back(r);
    for (const Cell& c : r.cells) e.wrong += c.wrong;
  }

  void end_collective() override {
    const Entry& e = entries_.back();
    out_ << "#   " << e.name << ": " << e.rows.size() << (e.rows.size() == 1 ? " size" : " sizes")
         << " in " << number("%.1f", seconds_since(started_)) << " s"
         << (e.wrong ? ", " + std::to_string(e.wrong) + " WRONG elements" : "") << std::endl;
  }

  void end(double seconds, const std::vector<std::string>& findings) override {
    const bool arrivals = !header_.arrivals.empty();
    if (arrivals)
      out_ << "\n# Summary: each column's mean time in the collective / " << subject_
           << "'s, then the same of the mean time after the last arrival (< 1: less time than "
           << subject_ << "), in the same repetition, median\n";
    else
      out_ << "\n# Summary: each column's time / " << subject_ << "'s time (> 1: " << subject_
           << " is faster); for a bound: the fraction of the memory-bandwidth bound it reaches "
              "(1 = at the bound)\n";
    for (const std::string& key : baselines_) out_ << "#   " << key << ": " << labels_[key] << "\n";
    // Three sizes per collective: the smallest, the one nearest 64 KiB and the largest.
    std::string line;
    char text[96];
    const int width = arrivals ? 35 : 23;  // three sizes, a ratio or an in/after pair each
    std::snprintf(text, sizeof text, "%-21s %-22s", "collective", "sizes");
    line += text;
    for (const std::string& key : baselines_) {
      std::snprintf(text, sizeof text, " | %-*s", width, key.c_str());
      line += text;
    }
    out_ << line << "\n";
    std::size_t wrong = 0;
    for (const Entry& e : entries_) {
      wrong += e.wrong;
      const std::vector<const Row*> picks = picked(e);
      std::string sizes;
      for (const Row* r : picks) {
        if (!sizes.empty()) sizes += " / ";
        sizes += r->bytes ? size_text(r->bytes) : "-";
      }
      std::snprintf(text, sizeof text, "%-21s %-22s", e.name.c_str(), sizes.c_str());
      line = text;
      for (const std::string& key : baselines_) {
        const auto it = std::find(e.keys.begin(), e.keys.end(), key);
        std::string cell;
        for (const Row* r : picks) {
          double ratio = std::nan(""), after = std::nan("");
          if (it != e.keys.end()) {
            const Cell& c = r->cells[static_cast<std::size_t>(it - e.keys.begin())];
            if (c.measured) {
              ratio = c.ratio;
              after = c.after_ratio;
            }
          }
          char value[32];
          if (arrivals)
            std::snprintf(value, sizeof value, " %5s/%-5s", number("%.2f", ratio).c_str(),
                          number("%.2f", after).c_str());
          else
            std::snprintf(value, sizeof value, "%7s", number("%.2f", ratio).c_str());
          cell += value;
        }
        std::snprintf(text, sizeof text, " | %-*s", width, cell.c_str());
        line += text;
      }
      out_ << line << "\n";
    }
    for (const std::string& f : findings) out_ << "# " << f << "\n";
    out_ << "# every result checked against a sequential reference: "
         << (wrong ? std::to_string(wrong) + " WRONG elements (see stderr)" : "all correct")
         << "; run took " << number("%.0f", seconds) << " s" << std::endl;
  }

 private:
  struct Entry {
    std::string name;
    std::vector<std::string> keys;
    std::vector<Role> roles;
    std::vector<Row> rows;
    std::size_t wrong = 0;
  };

  static std::vector<const Row*> picked(const Entry& e) {
    std::vector<const Row*> picks;
    if (e.rows.empty()) return picks;
    if (e.rows.size() == 1) return {&e.rows.front()};
    const Row* mid = &e.rows.front();
    for (const Row& r : e.rows)
      if (std::fabs(std::log2(static_cast<double>(r.bytes) / 65536.0)) <
          std::fabs(std::log2(static_cast<double>(mid->bytes) / 65536.0)))
        mid = &r;
    picks.push_back(&e.rows.front());
    if (mid != &e.rows.front() && mid != &e.rows.back()) picks.push_back(mid);
    picks.push_back(&e.rows.back());
    return picks;
  }

  std::ostream& out_;
  RunHeader header_;
  std::vector<Entry> entries_;
  std::vector<std::string> baselines_;
  std::map<std::string, std::string> labels_;
  std::string subject_ = "tlc";
  Clock::time_point started_{};
};

}  // namespace

std::unique_ptr<Reporter> make_table_reporter(std::ostream& out) {
  return std::make_unique<TableReporter>(out);
}
std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out) {
  return std::make_unique<CsvReporter>(out);
}
std::unique_ptr<Reporter> make_json_reporter(std::ostream& out) {
  return std::make_unique<JsonReporter>(out);
}
std::unique_ptr<Reporter> make_summary_reporter(std::ostream& out) {
  return std::make_unique<SummaryReporter>(out);
}

}  // namespace tlc_bench
