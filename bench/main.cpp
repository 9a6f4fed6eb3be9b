// tlc-bench: tlc's collectives against the baselines a hybrid program would otherwise use (MPI
// everywhere, raw MPI, the OpenMP master-only pattern, the memory-bandwidth bound), all measured
// in the same run on the same data (docs/design.md section 12). The modes are selections for one
// driver (bench.hpp, driver.cpp).
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {
// The command line, for the header of every report.
int g_argc = 0;
char** g_argv = nullptr;
}  // namespace tlc_bench

int main(int argc, char** argv) {
  using namespace tlc_bench;
  tlc::Environment env(argc, argv);
  g_argc = argc;
  g_argv = argv;
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);

  // Problems with the command line are the same on every process: report once, exit cleanly.
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    if (process == 0) std::cerr << "tlc-bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (options.help) {
    if (process == 0) std::cout << usage(argv[0]);
    return 0;
  }
  if (options.intra) return run_intra(options, env);
  if (options.algorithms) return run_algorithms(options, env);
  if (options.lanes_sweep) return run_lanes_sweep(options, env);
  // The calibration reads the library's internals, which the benchmark does not link: it is a
  // program of its own, with the same options.
  if (options.calibrate) {
    if (process == 0) {
      std::cerr << "tlc-bench: the calibration is a program of its own now; run tlc-calibrate";
      for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) != "--calibrate") std::cerr << ' ' << argv[i];
      std::cerr << " (the same options, under mpiexec as before; installed next to tlc-bench, "
                   "tools/tlc-calibrate in a build tree; docs/model.md)\n";
    }
    return 2;
  }
  if (options.skew) return run_skew(options, env);
  if (options.overlap) return run_overlap(options, env);
  if (!options.lane_mode.empty())
    return run_lane_benchmark(options, env, options.lane_mode == "lane-pattern");
  return run_across(options, env);
}
