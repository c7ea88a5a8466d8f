// Small SVG charts written directly (no plotting dependency): log or linear axes, lines, points,
// reference lines, bars. Deterministic output: the same data gives the same bytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace framesim::analysis {

struct Axis {
  double min = 0;
  double max = 1;
  bool log = false;
  std::string label;
  std::string unit;  // with one SI prefix for the whole axis, in the axis label ("latency (ms)"); seconds beyond
                     // ten minutes read in minutes. Tick labels are plain numbers in that unit. Empty: plain numbers
};

/// Which way a reference line runs.
enum class Line { horizontal, vertical };

class Plot {
 public:
  /// A colour outside the palette, for what no line stands for.
  static constexpr int kGrey = -1;

  Plot(std::string title, Axis x, Axis y, int width = 900, int height = 540);
  /// Distinguishes this plot's SVG ids when several plots share one document.
  void set_id(std::string id) { id_ = std::move(id); }

  /// A polyline through data points; `colour` indexes a fixed palette (or is kGrey).
  void line(std::vector<std::pair<double, double>> points, int colour, std::string label, bool dashed = false);
  /// A marker at a data point, with a small label beside it (empty: none; a label that would collide with one
  /// already placed is left out) and a tooltip shown on hover (empty: the label).
  void point(double x, double y, int colour, std::string label, std::string tooltip = "");
  /// A filled band (a closed polygon through data points, e.g. a confidence interval), translucent.
  void band(std::vector<std::pair<double, double>> polygon, int colour, std::string label);
  /// A legend entry for markers of `colour`.
  void marker_legend(int colour, std::string label);
  /// A reference line across the plot (e.g. a deadline): vertical at x = value, or horizontal at y = value.
  void reference(double value, Line line, int colour, std::string label);
  /// A bar from y = 0 (or the axis minimum) between x0 and x1.
  void bar(double x0, double x1, double y, int colour);
  std::string render() const;

 private:
  struct Series {
    std::vector<std::pair<double, double>> points;
    int colour;
    std::string label;
    bool dashed;
  };
  struct Marker {
    double x, y;
    int colour;
    std::string label, tooltip;
  };
  struct Reference {
    double value;
    bool vertical;
    int colour;
    std::string label;
  };
  struct Bar {
    double x0, x1, y;
    int colour;
  };
  /// The plotting area, in pixels.
  struct Frame {
    double x0, x1, y0, y1;
  };
  std::string grid_svg(const Frame& f) const;
  std::string data_svg(const Frame& f) const;
  /// Point labels outside the clip, beside their marker where no label placed before overlaps.
  std::string point_labels_svg(const Frame& f) const;
  /// The legend and the labels of horizontal reference lines, in the right margin.
  std::string margin_svg(const Frame& f) const;
  /// The labels of vertical reference lines, above the frame.
  std::string vertical_labels_svg(const Frame& f) const;
  double sx(double x) const;
  /// The right margin: the legend's and the horizontal reference labels' room.
  double right_margin() const;
  /// `label` escaped, shortened with an ellipsis to about `room_px` (its whole text in a <title>).
  static std::string fit_label(const std::string& label, double room_px, double px_per_char);
  double sy(double y) const;

  std::string title_;
  std::string id_ = "plot";
  Axis x_, y_;
  int width_, height_;
  std::vector<Series> series_, bands_;
  std::vector<Marker> markers_;
  std::vector<Reference> references_;
  std::vector<Bar> bars_;
  std::vector<std::pair<int, std::string>> marker_legend_;
};

/// A log-log plot; tick labels are plain numbers, or SI-prefixed when the axis has a unit.
class LogLogPlot : public Plot {
 public:
  LogLogPlot(std::string title, std::string x_label, std::string y_label, std::pair<double, double> x_range,
             std::pair<double, double> y_range, std::string x_unit = "", std::string y_unit = "")
      : Plot(std::move(title), Axis{x_range.first, x_range.second, true, std::move(x_label), std::move(x_unit)},
             Axis{y_range.first, y_range.second, true, std::move(y_label), std::move(y_unit)}) {}
};

/// Stacks rendered plots vertically into one SVG (panels sharing a time axis, say).
std::string stack_svgs(const std::vector<std::string>& panels, int width, int panel_height);

/// Escapes text for SVG/XML.
std::string xml_escape(const std::string& s);

}  // namespace framesim::analysis
