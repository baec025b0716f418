// The escaping and number formatting of the page kit (html_page.h, html_chart.h).
#pragma once

#include <string>
#include <string_view>

namespace seedance::base {

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(std::string_view text);

// `v` with `digits` decimals ("%.*f"), for coordinates and labels in a page.
std::string FixedNumber(double v, int digits = 2);

// The opening tag of an inline SVG chart drawn on w x h units (its viewBox; the page's CSS scales
// it to the page's width), with its accessible label (escaped) and a newline.
std::string SvgOpen(int w, int h, std::string_view label);

}  // namespace seedance::base
