// Tests that wait for another thread: poll a condition with a deadline, so a broken component
// fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <thread>

namespace seedance::base::testing {

// Polls `done` every millisecond for up to `limit`; false if it never held.
template <typename F>
bool WaitUntil(F done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace seedance::base::testing
