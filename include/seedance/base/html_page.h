// The page of Seedance's HTML reports (the page kit; its charts are html_chart.h): one
// self-contained document — inline CSS and SVG, no scripts, no external resources — so it opens
// offline and can be attached to a ticket. Every page shares this skeleton and stylesheet.
//
// Text given to the page is escaped here; the only markup that enters unescaped is the kit's own
// (charts, the pieces of a paragraph).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seedance::base {

// A piece of a paragraph: plain text, optionally strong, code or with a CSS class.
struct TextRun {
  enum class Style { kPlain, kStrong, kCode };
  std::string text;
  Style style = Style::kPlain;
  std::string css_class;
};
TextRun Plain(std::string text, std::string css_class = {});
TextRun Strong(std::string text);
TextRun Code(std::string text);

struct TableCell {
  TableCell(std::string t = {}) : text(std::move(t)) {}  // NOLINT: cells are written as text
  TableCell(std::string t, std::string a) : text(std::move(t)), aside(std::move(a)) {}
  std::string text;
  std::string aside;  // smaller, after the text (an interval, a unit)
};

struct HtmlTable {
  std::string id, css_class;
  std::vector<std::string> header;
  std::vector<std::vector<TableCell>> rows;
};

class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  void Heading(std::string_view text);               // <h2>
  void Paragraph(std::string_view text);             // <p>, escaped
  void Paragraph(const std::vector<TextRun>& runs);  // <p> of pieces
  void Table(const HtmlTable& table);
  void List(const std::vector<std::string>& items);  // <ul>
  void Chart(std::string svg);                       // a chart of html_chart.h

  // The whole document.
  std::string Render() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace seedance::base
