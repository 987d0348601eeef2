#include "tools/ampc/CurvePlot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ampc::cli {
namespace {

constexpr double kWidth = 760, kPanelHeight = 190, kLeft = 78, kRight = 150, kTop = 44,
                 kGap = 30;

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  void add(double v) {
    if (std::isfinite(v))
      lo = std::min(lo, v), hi = std::max(hi, v);
  }
  /// A range that has width: one value becomes a band around it.
  void widen() {
    if (!(lo <= hi))
      lo = 0, hi = 1;
    if (hi == lo)
      lo -= std::max(std::fabs(lo) * 0.1, 1e-12), hi += std::max(std::fabs(hi) * 0.1, 1e-12);
  }
};

std::string panelSvg(const Panel &p, double top, const Range &steps) {
  auto yOf = [&](double v) { return p.logScale ? std::log2(std::max(v, 1e-300)) : v; };
  Range ys;
  for (const Series &s : p.series)
    for (double v : s.y)
      ys.add(yOf(v));
  ys.widen();
  double plotW = kWidth - kLeft - kRight, plotH = kPanelHeight - 40;
  auto px = [&](double x) { return kLeft + (x - steps.lo) / (steps.hi - steps.lo) * plotW; };
  auto py = [&](double y) { return top + 20 + (ys.hi - yOf(y)) / (ys.hi - ys.lo) * plotH; };
  std::string svg = "<text x=\"" + num(kLeft) + "\" y=\"" + num(top + 12) +
                    "\" font-weight=\"bold\">" + escape(p.title) + "</text>\n";
  svg += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(top + 20) + "\" width=\"" + num(plotW) +
         "\" height=\"" + num(plotH) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int t = 0; t <= 4; ++t) { // y ticks
    double y = ys.lo + (ys.hi - ys.lo) * t / 4, at = top + 20 + plotH * (1 - t / 4.0);
    double shown = p.logScale ? std::exp2(y) : y;
    svg += "<line x1=\"" + num(kLeft - 4) + "\" y1=\"" + num(at) + "\" x2=\"" + num(kLeft) +
           "\" y2=\"" + num(at) + "\" stroke=\"#999\"/><text x=\"" + num(kLeft - 6) + "\" y=\"" +
           num(at + 4) + "\" text-anchor=\"end\">" + label(shown) + "</text>\n";
  }
  for (int t = 0; t <= 4; ++t) { // x ticks
    double x = steps.lo + (steps.hi - steps.lo) * t / 4, at = px(x);
    svg += "<text x=\"" + num(at) + "\" y=\"" + num(top + 20 + plotH + 16) +
           "\" text-anchor=\"middle\">" + label(std::round(x)) + "</text>\n";
  }
  double legend = top + 30;
  for (const Series &s : p.series) {
    if (s.points) {
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(yOf(s.y[i])))
          svg += "<circle cx=\"" + num(px(s.x[i])) + "\" cy=\"" + num(py(s.y[i])) +
                 "\" r=\"3\" fill=\"" + s.color + "\"/>\n";
    } else {
      std::string d;
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(yOf(s.y[i])))
          d += (d.empty() ? "M" : " L") + num(px(s.x[i])) + " " + num(py(s.y[i]));
      if (!d.empty())
        svg += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + s.color +
               "\" stroke-width=\"1.5\"/>\n";
    }
    svg += "<rect x=\"" + num(kWidth - kRight + 12) + "\" y=\"" + num(legend - 8) +
           "\" width=\"10\" height=\"10\" fill=\"" + s.color + "\"/><text x=\"" +
           num(kWidth - kRight + 26) + "\" y=\"" + num(legend + 1) + "\">" + escape(s.label) +
           "</text>\n";
    legend += 16;
  }
  return svg;
}

} // namespace

std::string plotSvg(const std::string &title, const std::vector<Panel> &panels) {
  Range steps;
  for (const Panel &p : panels)
    for (const Series &s : p.series)
      for (double x : s.x)
        steps.add(x);
  steps.widen();
  double height = kTop + panels.size() * (kPanelHeight + kGap);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) +
                    "\" height=\"" + num(height) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" "
                    "height=\"100%\" fill=\"white\"/>\n<text x=\"" +
                    num(kLeft) + "\" y=\"22\" font-size=\"14\">" + escape(title) + "</text>\n";
  double top = kTop;
  for (const Panel &p : panels) {
    svg += panelSvg(p, top, steps);
    top += kPanelHeight + kGap;
  }
  svg += "<text x=\"" + num(kLeft + (kWidth - kLeft - kRight) / 2) + "\" y=\"" +
         num(height - 8) + "\" text-anchor=\"middle\">optimizer step</text>\n</svg>\n";
  return svg;
}

} // namespace ampc::cli
