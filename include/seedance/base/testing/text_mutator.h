// Test support: random byte-level edits of a text document, for the property
// ("fuzz") tests that every Seedance parser has. Header-only; tests only.
#pragma once

#include <random>
#include <string>
#include <string_view>

namespace seedance::base::testing {

// Characters that tend to matter to YAML and CSV parsers.
inline constexpr std::string_view kSyntaxAlphabet = ":-[]{}\"'#&*!|>%@`, \n\t0123456789abcxyz.e+";

// Applies 1 to `max_edits` random edits (replace, insert or delete one byte)
// to `text`, drawing from `alphabet`.
inline std::string MutateText(std::string text, std::mt19937& rng, int max_edits = 3,
                              std::string_view alphabet = kSyntaxAlphabet) {
  const int edits = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_edits));
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const size_t pos = rng() % text.size();
    const char c = alphabet[rng() % alphabet.size()];
    switch (rng() % 3) {
      case 0:
        text[pos] = c;
        break;
      case 1:
        text.insert(pos, 1, c);
        break;
      default:
        text.erase(pos, 1);
        break;
    }
  }
  return text;
}

}  // namespace seedance::base::testing
