// `ampc plot METRICS.json -o FILE.svg`: the curves of a training run (the
// metrics' "history" and "evals", docs/training.md, "Curves") as SVG.
#include "compiler/GraphIO.h"
#include "runtime/core/Files.h"
#include "runtime/core/JsonText.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/CurvePlot.h"

namespace ampc::cli {
namespace {

/// Field `key` of record `i` of `list` as a number; a CliError names it.
double numberAt(const rt::Json &row, const char *list, size_t i, const char *key,
                const std::string &file) {
  if (!row.is_object() || !row.contains(key) || !row[key].is_number())
    throw CliError(file, std::string("\"") + list + "\" record " + std::to_string(i) +
                             " has no number \"" + key + "\"");
  return row[key].get<double>();
}

std::vector<Panel> panelsOf(const rt::Json &m, const std::string &file) {
  if (!m.is_object() || !m.contains("history") || !m["history"].is_array())
    throw CliError(file, "no \"history\" to plot (ampc train --metrics-json writes it)");
  Series loss{"train", "#1f77b4"}, skipped{"skipped step", "#d62728"}, lr{"lr", "#2ca02c"},
      scale{"loss scale", "#9467bd"}, norm{"grad norm", "#8c564b"}, val{"validation", "#ff7f0e"},
      emaVal{"validation (EMA)", "#17becf"};
  skipped.points = val.points = emaVal.points = true;
  bool scaled = false;
  size_t i = 0;
  for (const rt::Json &row : m["history"]) {
    double step = numberAt(row, "history", i, "step", file);
    loss.x.push_back(step), loss.y.push_back(numberAt(row, "history", i, "loss", file));
    lr.x.push_back(step), lr.y.push_back(numberAt(row, "history", i, "lr", file));
    if (row.contains("loss_scale") && row["loss_scale"].is_number()) {
      scale.x.push_back(step), scale.y.push_back(row["loss_scale"].get<double>());
      scaled |= scale.y.back() != 1.0;
    }
    if (row.contains("grad_norm") && row["grad_norm"].is_number())
      norm.x.push_back(step), norm.y.push_back(row["grad_norm"].get<double>());
    if (row.contains("skipped") && row["skipped"].is_boolean() && row["skipped"].get<bool>())
      skipped.x.push_back(step), skipped.y.push_back(loss.y.back());
    ++i;
  }
  i = 0;
  if (m.contains("evals") && m["evals"].is_array())
    for (const rt::Json &row : m["evals"]) {
      if (row.is_object() && row.contains("val_loss"))
        val.x.push_back(numberAt(row, "evals", i, "step", file)),
            val.y.push_back(numberAt(row, "evals", i, "val_loss", file));
      if (row.is_object() && row.contains("ema_val_loss"))
        emaVal.x.push_back(numberAt(row, "evals", i, "step", file)),
            emaVal.y.push_back(numberAt(row, "evals", i, "ema_val_loss", file));
      ++i;
    }
  std::vector<Panel> panels;
  Panel losses{"loss", {loss}};
  if (!val.x.empty())
    losses.series.push_back(val);
  if (!emaVal.x.empty())
    losses.series.push_back(emaVal);
  if (!skipped.x.empty())
    losses.series.push_back(skipped);
  panels.push_back(losses);
  panels.push_back({"learning rate", {lr}});
  if (scaled)
    panels.push_back({"loss scale", {scale}, /*logScale=*/true});
  if (!norm.x.empty())
    panels.push_back({"gradient norm", {norm}});
  return panels;
}

} // namespace

std::string plotMetrics(const std::string &text, const std::string &path) {
  std::string error;
  std::optional<rt::Json> metrics = rt::parseJson(text, error);
  if (!metrics)
    throw CliError(path, error);
  std::string title = "training run";
  if (metrics->is_object() && metrics->contains("graph") && (*metrics)["graph"].is_string())
    title = (*metrics)["graph"].get<std::string>();
  if (metrics->is_object() && metrics->contains("device") && (*metrics)["device"].is_string())
    title += " on " + (*metrics)["device"].get<std::string>();
  return plotSvg(title, panelsOf(*metrics, path));
}

int runPlot(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  if (out.size() < 4 || out.compare(out.size() - 4, 4, ".svg") != 0)
    throw CliError(out, "ampc plot writes SVG: name the output FILE.svg");
  std::string svg = onFile(in, [&] {
    std::string error;
    std::optional<std::string> text = rt::readFile(in, error);
    if (!text)
      throw CliError(in, "cannot read the metrics file: " + error);
    return plotMetrics(*text, in);
  });
  onFile(out, [&] { writeFileAtomically(out, svg); });
  return 0;
}

} // namespace ampc::cli
