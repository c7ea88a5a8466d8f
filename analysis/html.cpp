#include "html.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"
#include "svg.hpp"

namespace framesim::analysis::html {

std::string escape(const std::string& s) { return xml_escape(s); }

std::string page(const std::string& title, const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{0}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 32px; }}
table {{ border-collapse: collapse; margin: 8px 0; font-size: 13px; }}
th, td {{ border: 1px solid #ddd; padding: 3px 8px; text-align: right; }}
th {{ background: #f3f3f3; }} td:first-child, th:first-child {{ text-align: left; }}
.verdict {{ padding: 12px 16px; border-radius: 6px; font-size: 15px; }}
.ok {{ background: #e6f4ea; border: 1px solid #34a853; }} .bad {{ background: #fce8e6; border: 1px solid #d93025; }}
.maybe {{ background: #fef7e0; border: 1px solid #f9ab00; }}
.bar {{ display: inline-block; width: 160px; height: 10px; background: #eee; vertical-align: middle; margin-right: 6px; }}
.bar span {{ display: block; height: 100%; background: #1f77b4; }}
.pct {{ display: inline-block; width: 5.5em; text-align: right; }}
figure {{ margin: 12px 0; }} figcaption {{ font-size: 12px; color: #555; }}
svg {{ max-width: 100%; height: auto; }}
.note {{ font-size: 12px; color: #555; }} code {{ font-size: 12px; }}
</style>
</head>
<body>
{1}
</body>
</html>
)",
                     escape(title), body);
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  Cells cells) {
  std::string s = "<table>\n<tr>";
  for (const auto& h : header) s += "<th>" + escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const auto& cell : row) s += "<td>" + (cells == Cells::markup ? cell : escape(cell)) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string figure(const std::string& svg, const std::string& id, const std::string& caption) {
  std::string s = svg;
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
      s.replace(pos, from.size(), to);
  };
  replace_all(" id=\"", " id=\"" + id + "-");
  replace_all("url(#", "url(#" + id + "-");
  return fmt::format("<figure id=\"{}\">\n{}{}</figure>\n", id, s,
                     caption.empty() ? "" : "<figcaption>" + escape(caption) + "</figcaption>\n");
}

std::string bar(double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  // The percentage in a box of fixed width: every bar of a column starts at the same x, whatever its number.
  return fmt::format("<span class=\"bar\"><span style=\"width:{:.1f}%\"></span></span><span class=\"pct\">{}%</span>",
                     f * 100, core::format_number(fraction * 100, 3));
}

std::string number(const std::string& id, const std::string& text) {
  return fmt::format("<span id=\"{}\">{}</span>", id, escape(text));
}

std::string heading(const std::string& text) { return "<h2>" + escape(text) + "</h2>\n"; }

}  // namespace framesim::analysis::html
