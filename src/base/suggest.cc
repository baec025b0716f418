#include "seedance/base/suggest.h"

#include <algorithm>
#include <numeric>

namespace seedance::base {

size_t EditDistance(std::string_view a, std::string_view b) {
  // row[j]: the distance between the first i characters of a and the first j of b.
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];  // row[i-1][j-1]
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];  // row[i-1][j]
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> ClosestName(std::string_view word,
                                       const std::vector<std::string>& names) {
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& n : names) {
    const size_t d = EditDistance(word, n);
    if (d < best_distance) {
      best = n;
      best_distance = d;
    }
  }
  if (best) return best;
  std::optional<std::string> prefixed;
  for (const std::string& n : names) {
    if (!word.empty() && n.starts_with(word)) {
      if (prefixed) return std::nullopt;  // ambiguous
      prefixed = n;
    }
  }
  return prefixed;
}

}  // namespace seedance::base
