// What tlc asks of MPI and how it uses it, in one place: the thread level it needs (and the lock
// that serialises its calls when MPI gives only MPI_THREAD_SERIALIZED), how it makes its own
// communicators (duplicates with MPI_ERRORS_RETURN, so that every failure reaches check_mpi),
// what the MPI library in use can tell about lanes, and how tlc ends the job when it must.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include <mpi.h>

namespace tlc::detail {

// Whether MPI is initialised with at least MPI_THREAD_SERIALIZED; throws otherwise.
// Returns true when tlc must serialise its own MPI calls (MPI_THREAD_SERIALIZED).
bool check_thread_level();

namespace mpi_serialization {
// Set by check_thread_level when MPI provides only MPI_THREAD_SERIALIZED: every MPI call tlc
// makes then holds the mutex. Atomic: every team's construction sets it again (to the same
// value) while the threads of other teams, and the watch thread, read it.
inline std::atomic<bool> required{false};
inline std::mutex mutex;
}  // namespace mpi_serialization

// The lock to hold around every MPI call tlc makes: the mutex when MPI provides only
// MPI_THREAD_SERIALIZED, an empty lock otherwise. Inline: the wait loops take it for every test.
inline std::unique_lock<std::mutex> serialize_mpi() {
  if (mpi_serialization::required.load(std::memory_order_relaxed))
    return std::unique_lock<std::mutex>(mpi_serialization::mutex);
  return {};
}

// Duplicates parent (collective over it) and sets MPI_ERRORS_RETURN on the duplicate. With
// assert_no_wildcards (lane communicators) the duplicate also carries the info hints
// mpi_assert_no_any_source and mpi_assert_no_any_tag: tlc never receives from a wildcard there,
// which lets MPI match faster. Communicator creation agrees on a context id in rounds of
// collectives inside MPI; its non-blocking form is completed politely (see complete_politely).
MPI_Comm duplicate_comm(MPI_Comm parent, bool assert_no_wildcards);

// Where MPI_COMM_WORLD still has MPI's default handler, MPI_ERRORS_ARE_FATAL, puts tlc's there
// (see WorldErrorsReturned, mpi_check.hpp): errors of tlc's request completions come back to
// tlc, every other error ends the job as before. A handler the application chose is left alone.
// Once per process; a team's construction calls it.
void return_world_errors_to_tlc();

// How many lanes the MPI library can progress at once, as far as it says: MPICH's number of
// VCIs (MPIR_CVAR_CH4_NUM_VCIS through the MPI tool interface; 1 in a global-lock build), or 0
// when the library does not tell or MPI is not initialised.
int mpi_lane_parallelism();

// The MPI library's eager limit, the cost model's default for eager_kib (a tuning file or
// TLC_COST_EAGER_KIB replace it): MPICH's ch4:ucx sends up to 8 KiB eagerly, Open MPI's
// shared-memory transport up to 4 KiB (docs/mpi.md).
double mpi_default_eager_bytes() noexcept;

// Whether a message that has already arrived is received faster by MPI_Improbe and the blocking
// MPI_Mrecv than by a posted receive completed by MPI_Test (p2p::receive): so in MPICH's ch4;
// in Open MPI the probe costs more than it saves (docs/reliability.md, "Small calls with the
// watch on").
bool mpi_takes_arrived_messages_faster() noexcept;

// Whether a message past the eager limit and up to twice it travels faster between two
// processes as two eager messages than as one by the rendezvous protocol (p2p::binomial_bcast):
// so in MPICH's ch4; in Open MPI two eager ones are the slower (docs/reliability.md, "At
// 09b2186", bench/probes/bcast_segments.cpp).
bool mpi_splits_short_rendezvous_messages() noexcept;

// Prints why on stderr and ends the whole job with MPI_Abort.
[[noreturn]] void abort_job(const std::string& why);

}  // namespace tlc::detail
