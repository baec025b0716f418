// Helpers for the self-contained HTML pages Seedance writes (the scheduler's and the cost
// model's reports).
#pragma once

#include <string>
#include <string_view>

namespace seedance::base {

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(std::string_view text);

// `v` with `digits` decimals ("%.*f"), for coordinates and labels in a page.
std::string FixedNumber(double v, int digits = 2);

// The opening tag of an inline SVG chart of w x h pixels, with its accessible label (escaped)
// and a newline.
std::string SvgOpen(int w, int h, std::string_view label);

}  // namespace seedance::base
