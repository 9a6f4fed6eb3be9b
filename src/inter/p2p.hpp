// Inter-process algorithms implemented in tlc on point-to-point messages (DESIGN section 5,
// "multi-sender"; Parsons, shared/seeds/000_71278c9285ec9e6c.txt ch. 2.3.2; algorithms after
// Thakur, Rabenseifner & Gropp, shared/seeds/001_e878f958388ea521.txt).
//
// Each function runs one algorithm among the processes of `lane` (one rank per process) on a
// buffer in the team's staging memory. A multi-sender collective calls it from several threads
// at once, each on its own lane and on a disjoint part of the data, so several threads move
// bytes between processes concurrently. Every process calls with the same sizes.
#pragma once

#include <cstddef>
#include <span>

#include <tlc/thread.hpp>

#include "inter/process_comm.hpp"

namespace tlc::detail::p2p {

// The declarations are filled in with the algorithms (see the .cpp files next to this one).

}  // namespace tlc::detail::p2p
