// tlc-calibrate: fits the cost model's parameters to this machine (docs/model.md) and
// shows how well the fitted model predicts measured collective times.
//
// Run under `mpiexec -n 2` (or more; the inter-process fit uses processes 0 and 1) to fit the
// start-up alpha and the per-lane bandwidth of point-to-point messages, Hockney-style (Parker &
// Harms [ParkerHarms] sec. IV: t = alpha + n beta, least squares over sizes). With one process
// those keep the values the configuration has (TLC_TUNING, TLC_COST_*, else the defaults) and it
// says so. The intra-process parameters (rendezvous, tlc's work per call, copy and combine
// rates) are measured on a team of process 0 alone while the other processes sleep. Process 0
// writes the tuning file and prints, per collective, algorithm and size, the predicted against
// the measured time of the shape it runs at.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tlc_calibrate {

struct CalibrateOptions {
  std::string output = "tlc-tuning.txt";  // tuning file process 0 writes; "": none
  std::size_t min_bytes = 8;              // smallest message of the table
  std::size_t max_bytes = 64 << 20;       // largest message of the fit and of the table
  int threads = 0;  // threads per process of the table's teams; 0: tlc's default
  int lanes = 0;    // lanes of the table's teams; 0: tlc's default
  // Collectives of the table, by name; each algorithm that serves the shape is forced in turn.
  std::vector<std::string> collectives = {"allreduce", "allgather", "bcast", "alltoall"};
  double seconds_per_point = 0.02;  // measuring time of one table entry per round
  int reps = 3;                     // timed repetitions per entry and round (their median)
  int rounds = 3;                   // rounds over all entries in turn (the median of rounds)
  bool table = true;                // measure and print the table (false: fit only)
  // The share of the default measuring work (loop counts and time budgets) every measurement
  // takes. --quick sets a small one, with one round and one repetition: a tuning file in seconds
  // that shows the tool works end to end (the test suite), too rough to keep.
  double effort = 1.0;
  bool verbose = false;             // print every measured point of the fits
  std::vector<std::string> header;  // extra header lines of the tuning file (e.g. the commit)
};

// Collective over MPI_COMM_WORLD (initialises MPI with MPI_THREAD_MULTIPLE unless the caller
// did). Returns 0, or 1 after printing the error on stderr.
int run_calibrate(const CalibrateOptions& options);

}  // namespace tlc_calibrate
