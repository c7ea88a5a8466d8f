#include "svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"
#include "table.hpp"

namespace framesim::analysis {

namespace {
constexpr std::array<const char*, 8> kPalette{"#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                              "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
const char* colour_of(int i) {
  return i == Plot::kGrey ? "#7f7f7f" : kPalette[static_cast<std::size_t>(std::abs(i)) % kPalette.size()];
}

constexpr double kLeft = 90, kRight = 220, kTop = 62, kBottom = 60;

/// The one unit of an axis: values are divided by `factor` and read in `text` ("ms", "min", "GOP/s").
struct AxisUnit {
  double factor = 1;
  std::string text;
};

AxisUnit axis_unit(const Axis& a) {
  if (a.unit.empty()) return {};
  const double largest = std::max(std::fabs(a.min), std::fabs(a.max));
  if (a.unit == "s" && largest >= 36000) return {3600, "h"};
  if (a.unit == "s" && largest >= 600) return {60, "min"};
  static const char* kPrefixes[] = {"f", "p", "n", "u", "m", "", "k", "M", "G", "T", "P"};
  int e = largest > 0 ? static_cast<int>(std::floor(std::log10(largest) / 3)) : 0;
  e = std::clamp(e, -5, 5);
  return {std::pow(10.0, 3 * e), std::string(kPrefixes[e + 5]) + a.unit};
}

std::string axis_label(const Axis& a) {
  const AxisUnit u = axis_unit(a);
  return u.text.empty() ? a.label : fmt::format("{} ({})", a.label, u.text);
}

/// Tick positions: decades on a log axis (with 2 and 5 when there are few), 1-2-5 steps on a linear one.
std::vector<double> ticks_in_unit(const Axis& a);

/// Tick positions in data units, placed at round numbers of the axis' unit.
std::vector<double> ticks(const Axis& a) {
  const AxisUnit u = axis_unit(a);
  Axis scaled = a;
  scaled.min /= u.factor;
  scaled.max /= u.factor;
  std::vector<double> out = ticks_in_unit(scaled);
  for (double& v : out) v *= u.factor;
  return out;
}

std::string tick_label(double v, const Axis& a) {
  const double scaled = v / axis_unit(a).factor;
  return core::format_number(std::fabs(scaled) < 1e-12 ? 0.0 : scaled, 4);
}

std::vector<double> ticks_in_unit(const Axis& a) {
  std::vector<double> out;
  if (a.log) {
    const int lo = static_cast<int>(std::floor(std::log10(a.min)));
    const int hi = static_cast<int>(std::ceil(std::log10(a.max)));
    const bool fine = hi - lo <= 3;
    for (int e = lo; e <= hi; ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (!fine && m != 1.0) continue;
        const double v = m * std::pow(10.0, e);
        if (v >= a.min * (1 - 1e-9) && v <= a.max * (1 + 1e-9)) out.push_back(v);
      }
    }
    return out;
  }
  const double span = a.max - a.min;
  if (span <= 0) return {a.min};
  const double raw = span / 6;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(a.min / step) * step; v <= a.max + step * 1e-9; v += step) out.push_back(v);
  return out;
}
/// A label's extent, to keep labels from overlapping.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

}  // namespace

std::string stack_svgs(const std::vector<std::string>& panels, int width, int panel_height) {
  const int height = panel_height * static_cast<int>(panels.size());
  std::string s =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
                  width, height);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    std::string panel = panels[i];
    // Place each panel's root <svg> at its offset.
    const auto pos = panel.find("<svg ");
    if (pos != std::string::npos)
      panel.insert(pos + 5, fmt::format("x=\"0\" y=\"{}\" ", static_cast<int>(i) * panel_height));
    s += panel;
  }
  s += "</svg>\n";
  return s;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

Plot::Plot(std::string title, Axis x, Axis y, int width, int height)
    : title_(std::move(title)), x_(std::move(x)), y_(std::move(y)), width_(width), height_(height) {
  if (x_.max <= x_.min) x_.max = x_.min + 1;
  if (y_.max <= y_.min) y_.max = y_.min + 1;
}

void Plot::line(std::vector<std::pair<double, double>> points, int colour, std::string label, bool dashed) {
  series_.push_back({std::move(points), colour, std::move(label), dashed});
}
void Plot::point(double x, double y, int colour, std::string label, std::string tooltip) {
  markers_.push_back({x, y, colour, std::move(label), std::move(tooltip)});
}
void Plot::band(std::vector<std::pair<double, double>> polygon, int colour, std::string label) {
  bands_.push_back({std::move(polygon), colour, std::move(label), false});
}
void Plot::reference(double value, Line line, int colour, std::string label) {
  references_.push_back({value, line == Line::vertical, colour, std::move(label)});
}
void Plot::bar(double x0, double x1, double y, int colour) { bars_.push_back({x0, x1, y, colour}); }
void Plot::marker_legend(int colour, std::string label) { marker_legend_.emplace_back(colour, std::move(label)); }

double Plot::right_margin() const {
  // Wide enough for the longest legend entry (swatch + text, about 6.6 px a character at 12 px) and the labels of
  // horizontal reference lines, at most 45 % of the width (longer labels are shortened, their whole text on hover).
  std::size_t longest = 0;
  for (const auto* list : {&series_, &bands_})
    for (const auto& l : *list) longest = std::max(longest, display_width(l.label));
  for (const auto& [colour, label] : marker_legend_) longest = std::max(longest, display_width(label));
  double margin = std::max(kRight, 42 + 6.6 * static_cast<double>(longest) + 10);
  for (const auto& r : references_)
    if (!r.vertical) margin = std::max(margin, 6 + 6.1 * static_cast<double>(display_width(r.label)) + 10);
  return std::min(margin, 0.45 * width_);
}

std::string Plot::fit_label(const std::string& label, double room_px, double px_per_char) {
  const auto room = static_cast<std::size_t>(std::max(4.0, room_px / px_per_char));
  if (display_width(label) <= room) return xml_escape(label);
  // Cut on a character boundary (UTF-8 continuation bytes are 10xxxxxx).
  std::size_t cut = 0, shown = 0;
  while (cut < label.size() && shown + 1 < room) {
    ++cut;
    while (cut < label.size() && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) ++cut;
    ++shown;
  }
  return xml_escape(label.substr(0, cut)) + "\u2026<title>" + xml_escape(label) + "</title>";
}

double Plot::sx(double x) const {
  const double w = width_ - kLeft - right_margin();
  double f = x_.log ? (std::log10(std::max(x, 1e-300)) - std::log10(x_.min)) / (std::log10(x_.max) - std::log10(x_.min))
                    : (x - x_.min) / (x_.max - x_.min);
  return kLeft + std::clamp(f, -0.05, 1.05) * w;
}

double Plot::sy(double y) const {
  const double h = height_ - kTop - kBottom;
  double f = y_.log ? (std::log10(std::max(y, 1e-300)) - std::log10(y_.min)) / (std::log10(y_.max) - std::log10(y_.min))
                    : (y - y_.min) / (y_.max - y_.min);
  return kTop + (1 - std::clamp(f, -0.05, 1.05)) * h;
}

std::string Plot::render() const {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width_, height_, width_, height_);
  s += fmt::format("<text x=\"{}\" y=\"28\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", kLeft,
                   xml_escape(title_));
  const Frame f{kLeft, width_ - right_margin(), kTop, static_cast<double>(height_ - kBottom)};
  s += fmt::format("<defs><clipPath id=\"{}-area\">", id_);
  s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>", f.x0, f.y0, f.x1 - f.x0,
                   f.y1 - f.y0);
  s += "</clipPath></defs>\n";
  s += grid_svg(f);
  s += data_svg(f);
  s += point_labels_svg(f);
  s += margin_svg(f);
  s += vertical_labels_svg(f);
  s += "</svg>\n";
  return s;
}

/// The grid, the ticks and their labels, the frame and the axis labels.
std::string Plot::grid_svg(const Frame& f) const {
  std::string s;
  const double x0 = f.x0, x1 = f.x1, y0 = f.y0, y1 = f.y1;
  // grid and ticks
  for (double v : ticks(x_)) {
    const double px = sx(v);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e5e5e5\"/>\n", px, y0,
                     y1);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px, y1 + 16,
                     xml_escape(tick_label(v, x_)));
  }
  for (double v : ticks(y_)) {
    const double py = sy(v);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e5e5e5\"/>\n", x0, py,
                     x1);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", x0 - 6, py + 4,
                     xml_escape(tick_label(v, y_)));
  }
  s += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333\"/>\n", x0, y0,
      x1 - x0, y1 - y0);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", (x0 + x1) / 2, y1 + 40,
                   xml_escape(axis_label(x_)));
  s += fmt::format("<text transform=\"translate(20,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   (y0 + y1) / 2, xml_escape(axis_label(y_)));
  return s;
}

/// Bars, bands, lines, reference lines and markers, clipped to the frame.
std::string Plot::data_svg(const Frame& f) const {
  std::string s;
  const double x0 = f.x0, x1 = f.x1, y0 = f.y0, y1 = f.y1;
  s += fmt::format("<g clip-path=\"url(#{}-area)\">\n", id_);
  const double base = y_.log ? y_.min : std::max(0.0, y_.min);
  for (const auto& b : bars_) {
    const double left = sx(b.x0), right = sx(b.x1), top = sy(b.y), bottom = sy(base);
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" opacity=\"0.6\"/>\n", left, top,
        std::max(0.5, right - left), std::max(0.0, bottom - top), colour_of(b.colour));
  }
  for (const auto& band : bands_) {
    std::string path;
    for (const auto& [x, y] : band.points)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", sx(x), sy(y));
    s += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>\n", path,
                     colour_of(band.colour));
  }
  for (const auto& line : series_) {
    std::string path;
    for (const auto& [x, y] : line.points)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", sx(x), sy(y));
    s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path,
                     colour_of(line.colour), line.dashed ? " stroke-dasharray=\"6,4\"" : "");
  }
  for (const auto& r : references_) {
    if (r.vertical)
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"4,3\"/>\n",
          sx(r.value), y0, y1, colour_of(r.colour));
    else
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"4,3\"/>\n",
          x0, sy(r.value), x1, colour_of(r.colour));
  }
  for (const auto& m : markers_) {
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" stroke=\"#222\" "
        "stroke-width=\"0.5\"><title>{}</title></circle>\n",
        sx(m.x), sy(m.y), colour_of(m.colour), xml_escape(m.tooltip.empty() ? m.label : m.tooltip));
  }
  s += "</g>\n";
  return s;
}

std::string Plot::point_labels_svg(const Frame& f) const {
  std::string s;
  const double x0 = f.x0, x1 = f.x1, y0 = f.y0, y1 = f.y1;
  // Point labels outside the clip so they stay readable: beside the marker where no label placed before
  // overlaps (right above, right below, left above, left below), else left to the tooltip.
  std::vector<Box> placed;
  for (const auto& m : markers_) {
    if (m.label.empty()) continue;
    const double w = 5.4 * static_cast<double>(display_width(m.label)) + 4, px = sx(m.x), py = sy(m.y);
    for (const auto& [dx, dy] : {std::pair{6.0, -4.0}, {6.0, 12.0}, {-6.0 - w, -4.0}, {-6.0 - w, 12.0}}) {
      const Box box{px + dx, py + dy - 9, px + dx + w, py + dy + 1};
      if (box.x0 < x0 || box.x1 > x1 || box.y0 < y0 || box.y1 > y1) continue;  // inside the frame, off the legend
      if (std::any_of(placed.begin(), placed.end(), [&](const Box& o) { return o.overlaps(box); })) continue;
      placed.push_back(box);
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"#444\">{}</text>\n", box.x0, py + dy,
                       xml_escape(m.label));
      break;
    }
  }
  return s;
}

std::string Plot::margin_svg(const Frame& f) const {
  std::string s;
  const double x1 = f.x1, y0 = f.y0;
  // The right margin holds the legend (from the top) and the labels of horizontal reference lines (at their
  // line's height, moved down past whatever they would overlap), so no label crosses a trace or the frame.
  std::vector<std::pair<double, double>> taken;  // vertical extents in the right margin
  auto free_y = [&](double want) {
    double y = want;
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& [a, b] : taken)
        if (y - 10 < b && a < y + 3) y = b + 10, moved = true;
    }
    taken.emplace_back(y - 10, y + 3);
    return y;
  };
  const double margin = right_margin();
  const double legend_room = margin - 42 - 6;
  double ly = y0 + 10;
  std::string legend;
  for (const auto& band : bands_) {
    if (band.label.empty()) continue;
    legend +=
        fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"24\" height=\"10\" fill=\"{}\" fill-opacity=\"0.25\"/>\n",
                    x1 + 12, ly - 5, colour_of(band.colour));
    legend += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x1 + 42, ly + 4,
                          fit_label(band.label, legend_room, 6.6));
    taken.emplace_back(ly - 9, ly + 6);
    ly += 18;
  }
  for (const auto& line : series_) {
    if (line.label.empty()) continue;
    legend += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>\n",
        x1 + 12, ly, x1 + 36, colour_of(line.colour), line.dashed ? " stroke-dasharray=\"6,4\"" : "");
    legend += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x1 + 42, ly + 4,
                          fit_label(line.label, legend_room, 6.6));
    taken.emplace_back(ly - 9, ly + 6);
    ly += 18;
  }
  for (const auto& [colour, label] : marker_legend_) {
    legend +=
        fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" stroke=\"#222\" stroke-width=\"0.5\"/>\n",
                    x1 + 24, ly, colour_of(colour));
    legend +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x1 + 42, ly + 4, fit_label(label, legend_room, 6.6));
    taken.emplace_back(ly - 9, ly + 6);
    ly += 18;
  }
  s += legend;
  std::vector<const Reference*> horizontal;
  for (const auto& r : references_)
    if (!r.vertical) horizontal.push_back(&r);
  std::stable_sort(horizontal.begin(), horizontal.end(),
                   [&](const Reference* a, const Reference* b) { return sy(a->value) < sy(b->value); });
  for (const Reference* r : horizontal) {
    const double y = free_y(sy(r->value) + 4);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"{}\">{}</text>\n", x1 + 6, y,
                     colour_of(r->colour), fit_label(r->label, margin - 12, 6.1));
  }
  return s;
}

std::string Plot::vertical_labels_svg(const Frame& f) const {
  std::string s;
  const double y0 = f.y0;
  // Vertical reference lines are labelled above the frame, staggered when two would overlap.
  std::vector<Box> above;
  for (const auto& r : references_) {
    if (!r.vertical) continue;
    const double w = 6.2 * static_cast<double>(display_width(r.label));
    // Centred on its line, but never past either edge of the picture.
    const double px = std::clamp(sx(r.value), w / 2 + 2, width_ - w / 2 - 2);
    double y = y0 - 5;
    Box box{px - w / 2, y - 10, px + w / 2, y + 2};
    while (std::any_of(above.begin(), above.end(), [&](const Box& o) { return o.overlaps(box); }) && y > y0 - 20) {
      y -= 12;
      box = {px - w / 2, y - 10, px + w / 2, y + 2};
    }
    above.push_back(box);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                     px, y, colour_of(r.colour), xml_escape(r.label));
  }
  return s;
}

}  // namespace framesim::analysis
