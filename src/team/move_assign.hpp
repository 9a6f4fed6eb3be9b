// Move assignment of the handles a thread holds (tlc::Thread, tlc::Request, tlc::Persistent):
// what the destructor does for the handle it held (give the slot back, wait for the call), then
// what the move constructor does, so that the two can never disagree.
#pragma once

#include <new>
#include <utility>

namespace tlc::detail {

template <class Handle>
Handle& move_assign_by_rebuilding(Handle& self, Handle&& other) noexcept {
  if (&self != &other) {
    self.~Handle();
    new (&self) Handle(std::move(other));
  }
  return self;
}

}  // namespace tlc::detail
