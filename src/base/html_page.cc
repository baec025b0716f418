#include "seedance/base/html_page.h"

#include "seedance/base/html.h"

namespace seedance::base {
namespace {

// One stylesheet for every page. The charts are fixed drawings (their viewBox) scaled to the
// page's width.
constexpr char kStyle[] =
    "body{font-family:sans-serif;margin:24px auto;max-width:1000px;padding:0 16px;color:#222}\n"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
    "table{border-collapse:collapse;margin:12px 0}\n"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\n"
    "th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}\n"
    "span.aside{color:#666;font-size:90%;margin-left:4px}\n"
    "svg{display:block;width:100%;height:auto;margin:8px 0}\n"
    "svg text{font-size:12px;fill:#222}svg text.small{font-size:10px}"
    "svg text.title{font-size:14px;font-weight:bold}\n"
    ".axis{stroke:#444}.grid{stroke:#e5e5e5}.limit{stroke:#d62728;stroke-dasharray:4 3}\n"
    ".interval{stroke:#7f7f7f;stroke-width:2}.bad{color:#d62728}\n";

std::string RunHtml(const TextRun& run) {
  const std::string text = HtmlEscape(run.text);
  const std::string cls =
      run.css_class.empty() ? "" : " class=\"" + HtmlEscape(run.css_class) + "\"";
  switch (run.style) {
    case TextRun::Style::kStrong:
      return "<b" + cls + ">" + text + "</b>";
    case TextRun::Style::kCode:
      return "<code" + cls + ">" + text + "</code>";
    case TextRun::Style::kPlain:
      break;
  }
  return cls.empty() ? text : "<span" + cls + ">" + text + "</span>";
}

std::string Attribute(const char* name, const std::string& value) {
  return value.empty() ? "" : std::string(" ") + name + "=\"" + HtmlEscape(value) + "\"";
}

}  // namespace

TextRun Plain(std::string text, std::string css_class) {
  return {std::move(text), TextRun::Style::kPlain, std::move(css_class)};
}
TextRun Strong(std::string text) { return {std::move(text), TextRun::Style::kStrong, {}}; }
TextRun Code(std::string text) { return {std::move(text), TextRun::Style::kCode, {}}; }

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::Heading(std::string_view text) { body_ += "<h2>" + HtmlEscape(text) + "</h2>\n"; }

void HtmlPage::Paragraph(std::string_view text) { body_ += "<p>" + HtmlEscape(text) + "</p>\n"; }

void HtmlPage::Paragraph(const std::vector<TextRun>& runs) {
  body_ += "<p>";
  for (const TextRun& run : runs) body_ += RunHtml(run);
  body_ += "</p>\n";
}

void HtmlPage::Table(const HtmlTable& table) {
  body_ += "<table" + Attribute("id", table.id) + Attribute("class", table.css_class) + ">\n<tr>";
  for (const std::string& h : table.header) body_ += "<th>" + HtmlEscape(h) + "</th>";
  body_ += "</tr>\n";
  for (const auto& row : table.rows) {
    body_ += "<tr>";
    for (const TableCell& cell : row) {
      body_ += "<td>" + HtmlEscape(cell.text);
      if (!cell.aside.empty())
        body_ += "<span class=\"aside\">" + HtmlEscape(cell.aside) + "</span>";
      body_ += "</td>";
    }
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlPage::List(const std::vector<std::string>& items) {
  body_ += "<ul>\n";
  for (const std::string& item : items) body_ += "<li>" + HtmlEscape(item) + "</li>\n";
  body_ += "</ul>\n";
}

void HtmlPage::Chart(std::string svg) { body_ += svg; }

std::string HtmlPage::Render() const {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         HtmlEscape(title_) + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
         HtmlEscape(title_) + "</h1>\n" + body_ + "</body>\n</html>\n";
}

}  // namespace seedance::base
