#include "inter/p2p.hpp"

namespace tlc::detail::p2p {}  // namespace tlc::detail::p2p
