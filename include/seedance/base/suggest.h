// "Did you mean": the known name closest to a misspelt one, for error messages that list choices
// (unknown commands and verbs, enum names).
//
// Distance is the Levenshtein edit distance (insertions, deletions, substitutions, each 1). A
// name is suggested when it is within max(1, |word| / 3) edits of the word, or when the word is a
// prefix of exactly one name; among several at the smallest distance the first in `names` wins.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::base {

// Levenshtein distance between a and b; O(|a| x |b|) time, O(|b|) memory.
size_t EditDistance(std::string_view a, std::string_view b);

// The suggestion for `word` among `names`, or nullopt when none is close enough.
std::optional<std::string> ClosestName(std::string_view word,
                                       const std::vector<std::string>& names);

}  // namespace seedance::base
