/// @file
/// Umbrella header: everything a tlc program needs.
#pragma once

#include <tlc/algorithms.hpp>
#include <tlc/environment.hpp>
#include <tlc/error.hpp>
#include <tlc/ops.hpp>
#include <tlc/options.hpp>
#include <tlc/region.hpp>
#include <tlc/request.hpp>
#include <tlc/stats.hpp>
#include <tlc/team.hpp>
#include <tlc/thread.hpp>
#include <tlc/topology.hpp>
#include <tlc/types.hpp>
#include <tlc/version.hpp>
