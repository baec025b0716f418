#include "seedance/base/html.h"

#include <cstdio>

namespace seedance::base {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FixedNumber(double v, int digits) {
  const int n = std::snprintf(nullptr, 0, "%.*f", digits, v);
  std::string out(static_cast<size_t>(n > 0 ? n : 0) + 1, '\0');
  std::snprintf(out.data(), out.size(), "%.*f", digits, v);
  out.pop_back();
  return out;
}

std::string SvgOpen(int w, int h, std::string_view label) {
  const std::string ws = std::to_string(w), hs = std::to_string(h);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + ws + " " + hs +
         "\" width=\"" + ws + "\" height=\"" + hs + "\" role=\"img\" aria-label=\"" +
         HtmlEscape(label) + "\">\n";
}

}  // namespace seedance::base
