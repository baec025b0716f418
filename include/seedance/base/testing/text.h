// Text helpers for tests.
#pragma once

#include <cstddef>
#include <string_view>

namespace seedance::base::testing {

// How many times `needle` (not empty) starts in `hay`, overlaps included.
inline size_t CountOccurrences(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace seedance::base::testing
