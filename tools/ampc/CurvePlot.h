// Line charts of a training run as SVG (`ampc plot`): stacked panels
// sharing the step axis, each with its own y axis, series and legend.
// Written by hand: a few dozen SVG elements need no library.
#ifndef AMPC_TOOLS_AMPC_CURVEPLOT_H
#define AMPC_TOOLS_AMPC_CURVEPLOT_H

#include <string>
#include <vector>

namespace ampc::cli {

struct Series {
  std::string label, color;
  std::vector<double> x, y;
  bool points = false; // markers instead of a line (validation, skipped steps)
};

struct Panel {
  std::string title;
  std::vector<Series> series;
  bool logScale = false; // the loss scale spans powers of two
};

/// The panels as one SVG document, `title` above them.
std::string plotSvg(const std::string &title, const std::vector<Panel> &panels);

} // namespace ampc::cli

#endif
