// Helpers for the self-contained HTML pages Seedance writes (the scheduler's and the cost
// model's reports).
#pragma once

#include <string>
#include <string_view>

namespace seedance::base {

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(std::string_view text);

}  // namespace seedance::base
