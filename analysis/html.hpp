// A single, self-contained, offline HTML page: inline CSS and inline SVG, no script, no network access
// (hover text comes from SVG <title> elements). Shared by the run, sweep, budget and compare reports.
#pragma once

#include <string>
#include <vector>

namespace framesim::analysis::html {

/// Escapes text for HTML.
std::string escape(const std::string& s);
/// The whole page.
std::string page(const std::string& title, const std::string& body);
/// What a table's cells hold: text (escaped) or markup such as bar() (written as it is).
enum class Cells { text, markup };
/// A table; the header is text, the cells as `cells` says.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  Cells cells = Cells::text);
/// A rendered SVG placed in the page, its ids prefixed with `id` so that several plots share one document.
std::string figure(const std::string& svg, const std::string& id, const std::string& caption = "");
/// A horizontal bar of `fraction` (0..1) with its percentage, as markup.
std::string bar(double fraction);
/// A <span> with an id, for the key numbers (tests and readers find them in the DOM).
std::string number(const std::string& id, const std::string& text);
/// A section heading.
std::string heading(const std::string& text);

}  // namespace framesim::analysis::html
