// The cost model's parameters by name: the tuning file (TLC_TUNING, TeamOptions::tuning_file,
// written by `tlc-calibrate`) and the TLC_COST_<KEY> variables use the same keys and
// units, and this is the one place that parses them (docs/model.md).
//
// File format: one `key = value` per line; `#` starts a comment (whole line or after a value);
// blank lines are ignored. Keys are those of cost_keys(); a key left out keeps its value. Every
// value is a positive number in the key's unit (lane_parallelism: a positive integer). Lines
// `measured <collective> <algorithm> <P>x<T>x<L> <bytes> = <microseconds>` carry measured times
// of whole calls (select/measured.hpp).
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "select/cost_model.hpp"
#include "select/measured.hpp"

namespace tlc::detail {

struct CostKey {
  const char* key;      // in the file; TLC_COST_<KEY> in the environment
  const char* meaning;  // one line, with the unit
  bool integer;         // only whole numbers (lane_parallelism, which has no field)
  double scale;         // the key's unit in CostParameters' units (1e-6 for microseconds)
  double& (*field)(CostParameters&);
  // Keys whose 0 means something (left to detection, no such effect): what tuning_text writes
  // as a comment then. A file still gives them positive values only.
  const char* when_zero = nullptr;
};

// Every parameter, in the order the file lists them.
std::span<const CostKey> cost_keys() noexcept;
// The key's value in the file's unit.
double cost_value(const CostParameters& p, const CostKey& key) noexcept;
// The environment variable of the key: TLC_COST_ALPHA_US for alpha_us.
std::string cost_variable(const CostKey& key);

// Sets key from text (a positive number in the key's unit). Throws Error(invalid_argument)
// "tlc: <where>: ..." saying what is wrong with the value.
void set_cost_value(CostParameters& p, const CostKey& key, std::string_view text,
                    const std::string& where);

// Reads a tuning file into p: the keys it names change, the others keep their values; its
// `measured` lines (select/measured.hpp) replace *measured when given. `origin`
// says who asked for the file (TLC_TUNING, TeamOptions::tuning_file) in the error. Throws
// Error(invalid_argument) naming the file, the line and the key for an unknown key, a key given
// twice, a line without '=', a value that is not a positive number, or a file that cannot be
// read; p is left as it was then.
void read_tuning_file(const std::string& path, const std::string& origin, CostParameters& p,
                      MeasuredTimes* measured = nullptr);
// The same on text already open; `name` stands for the file in errors.
void read_tuning(std::istream& in, const std::string& name, CostParameters& p,
                 MeasuredTimes* measured = nullptr);

// The parameters as a tuning file: the header lines as comments, then every key with its value
// and meaning, then the measured times. read_tuning of the result gives back p and *measured
// (values to 6 significant digits).
std::string tuning_text(const CostParameters& p, const std::vector<std::string>& header = {},
                        const MeasuredTimes* measured = nullptr);

// A digest of every parameter (0 .. 2^30 - 1): processes whose plans must match compare it.
int cost_fingerprint(const CostParameters& p, const MeasuredTimes& measured = {}) noexcept;

}  // namespace tlc::detail
