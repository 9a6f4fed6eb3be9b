// How the library's own code and tools (tlc-calibrate) reach a Team's implementation, which the
// public class keeps private: tlc::Team declares this struct its friend.
#pragma once

#include <tlc/team.hpp>

#include "team/team_impl.hpp"

namespace tlc::detail {

struct TeamAccess {
  static TeamImpl& impl(Team& team) noexcept { return *team.impl_; }
  static const TeamImpl& impl(const Team& team) noexcept { return *team.impl_; }
};

}  // namespace tlc::detail
