// The names of an enum's values, in one table per enum, and the one way to read a name back:
//
//   inline constexpr base::EnumTable<Tier, 3> kTierNames = {{{Tier::kGold, "gold"}, ...}};
//   std::string_view TierName(Tier t) { return base::EnumName(kTierNames, t); }
//   base::StatusOr<Tier> ParseTier(std::string_view text, std::string_view where) {
//     return base::ParseEnum(kTierNames, text, where);
//   }
//
// ParseEnum matches exactly (case-sensitive, no spaces) and its error lists the accepted names:
// "expected gold, silver or bronze, got 'platinum'" at `where` (a flag, a key, file:line).
// A table names every value once; EnumName of a value missing from it is "?".
//
// Thread safety: constexpr tables and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::base {

template <typename E>
struct EnumEntry {
  E value;
  std::string_view name;
};

template <typename E, size_t N>
using EnumTable = std::array<EnumEntry<E>, N>;

template <typename E, size_t N>
constexpr std::string_view EnumName(const EnumTable<E, N>& table, E value) {
  for (const auto& e : table) {
    if (e.value == value) return e.name;
  }
  return "?";
}

// "a, b or c".
template <typename E, size_t N>
std::string EnumNames(const EnumTable<E, N>& table) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += table[i].name;
  }
  return out;
}

template <typename E, size_t N>
StatusOr<E> ParseEnum(const EnumTable<E, N>& table, std::string_view text, std::string_view where) {
  for (const auto& e : table) {
    if (e.name == text) return e.value;
  }
  return InvalidArgumentError("expected " + EnumNames(table) + ", got '" + std::string(text) + "'",
                              std::string(where));
}

}  // namespace seedance::base
