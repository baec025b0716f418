// Commented templates of the cost verbs' YAML inputs (`seedancectl cost tco --example`, and roi,
// power, breakdown): every key the parser reads, with its unit, default and source, at values
// the command accepts as printed. docs/inputs.md documents the same keys; a test runs each
// template through its command and checks that its keys are the documented ones.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace seedance::cost {

// "tco", "roi", "power" or "breakdown"; nullopt for another verb.
std::optional<std::string> InputExample(std::string_view verb);

}  // namespace seedance::cost
