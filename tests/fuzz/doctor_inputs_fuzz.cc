// Fuzz target (libFuzzer): the environment doctor's readers (probe/doctor.h) — a table of known
// problems (YAML, first byte even) and a version string (first byte odd). Contract: every input
// is accepted or refused with an error, never a crash; an accepted table's every row can be
// checked against a stack; an accepted version's text is a prefix of the input that parses back
// to the same components.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/probe/doctor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace p = seedance::probe;
  if (data[0] % 2 == 0) {
    auto table = p::ParseKnownProblems(in, "fuzz.yaml");
    if (table.ok()) {
      p::Stack stack;
      stack["driver"] = p::Found{*p::ParseVersion("470.1"), {"x"}};
      stack["cudnn"] = p::Found{*p::ParseVersion("8.7.0"), {"x"}};
      (void)p::Diagnose(stack, *table);
    }
    return 0;
  }
  auto v = p::ParseVersion(in);
  if (v) {
    if (in.substr(0, v->text.size()) != v->text) __builtin_trap();
    auto again = p::ParseVersion(v->text);
    if (!again || again->parts != v->parts) __builtin_trap();
  }
  return 0;
}
