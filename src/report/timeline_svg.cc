// The memory timeline as an SVG picture: the live bytes after each event of
// the step, stacked by category over shaded phases, with the peak labelled.
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/svg.h"
#include "report/text_sections.h"
#include "torchcost/report.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using report::svg::Line;
using report::svg::NiceStep;
using report::svg::Num;
using report::svg::Rect;
using report::svg::Text;

// The canvas and the plot area inside it, in pixels.
constexpr double kWidth = 900, kHeight = 420;
constexpr double kLeft = 76, kRight = 736, kTop = 64, kBottom = 360;
constexpr double kLegendX = 752;
// The y range is the peak times this, leaving room above the peak for its
// label.
constexpr double kHeadroom = 1.2;
constexpr char kFont[] = "DejaVu Sans, Helvetica, Arial, sans-serif";

// Bottom to top: the state that lives through the step first, so activations,
// gradients and temporaries ride on top of it.
constexpr std::array<MemCategory, kNumMemCategories> kStack = {
    MemCategory::kParam, MemCategory::kBuffer, MemCategory::kOpt,
    MemCategory::kOther, MemCategory::kGrad,   MemCategory::kAct,
    MemCategory::kTemp};

// Band fill and label colour of each phase, in enum order.
struct PhaseStyle {
  const char* band;
  const char* label;
};
constexpr std::array<PhaseStyle, 4> kPhases = {{{"#f4f4f4", "#777777"},
                                                {"#e6effa", "#2f5d8f"},
                                                {"#fcebdc", "#a0521c"},
                                                {"#e5f3e2", "#3d7a35"}}};

std::string Open() {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) +
         "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) +
         " " + Num(kHeight) + "\" font-family=\"" + kFont + "\">\n" +
         Rect(0, 0, kWidth, kHeight, "fill=\"white\"");
}

// Returns a picture that only says `message`.
std::string MessageSvg(const std::string& message) {
  return Open() +
         Text(kWidth / 2, kHeight / 2, message, 14,
              "text-anchor=\"middle\" fill=\"#444444\"") +
         "</svg>\n";
}

// Returns the model's file name without its directories.
std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The y axis: bytes per pixel and the ticks, in one binary unit.
struct YAxis {
  double top_bytes = 1;  // The bytes at the top of the plot.
  double unit = 1;       // Bytes per unit.
  const char* unit_name = "B";
  double step = 1;  // Tick spacing, in units.

  double Y(double bytes) const {
    return kBottom - bytes / top_bytes * (kBottom - kTop);
  }
};

YAxis MakeYAxis(double peak) {
  YAxis a;
  a.top_bytes = std::max(peak * kHeadroom, 1.0);
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  for (int k = 0; k < 5; ++k) {
    const double u = std::pow(1024.0, k);
    if (k == 0 || peak >= u) {
      a.unit = u;
      a.unit_name = kNames[k];
    }
  }
  a.step = NiceStep(a.top_bytes / a.unit / 6);
  return a;
}

// Evaluated timeline: bytes per category at each point.
using Row = std::array<double, kNumMemCategories>;

// Returns the stacked layers as step paths, the total first so that each
// lower layer paints over the one above it.
std::string Layers(const std::vector<Row>& rows, const YAxis& ya) {
  const double n = static_cast<double>(rows.size());
  auto x = [&](size_t i) { return kLeft + (kRight - kLeft) * i / n; };
  std::string out, outline;
  for (int k = kNumMemCategories - 1; k >= 0; --k) {
    const int c = static_cast<int>(kStack[k]);
    // Steps: up (V) to the point's height, then across (H) its event.
    std::string steps, last;
    for (size_t i = 0; i < rows.size(); ++i) {
      double cum = 0;
      for (int j = 0; j <= k; ++j) cum += rows[i][static_cast<int>(kStack[j])];
      const std::string y = Num(ya.Y(cum));
      if (y != last) steps += "V" + y;
      steps += "H" + Num(x(i + 1));
      last = y;
    }
    const std::string start = "M" + Num(x(0)) + "," + Num(kBottom);
    out += "<path class=\"layer\" data-category=\"" +
           std::string(MemCategoryName(static_cast<MemCategory>(c))) +
           "\" d=\"" + start + steps + "V" + Num(kBottom) + "Z\" fill=\"" +
           report::svg::CategoryColour(c) + "\"/>\n";
    if (k == kNumMemCategories - 1) {
      outline = "<path class=\"total\" d=\"" + start + steps +
                "\" fill=\"none\" stroke=\"#222222\" stroke-opacity=\"0.6\" "
                "stroke-width=\"0.7\"/>\n";
    }
  }
  return out + outline;
}

// Appends the phase bands to `under` (drawn below the layers) and their
// separators and labels to `over` (drawn above them).
void Phases(const TrainingReport& tr, std::string* under, std::string* over) {
  const double n = static_cast<double>(tr.timeline.size());
  auto x = [&](size_t i) { return kLeft + (kRight - kLeft) * i / n; };
  size_t start = 0;
  for (size_t i = 1; i <= tr.timeline.size(); ++i) {
    if (i < tr.timeline.size() &&
        tr.timeline[i].phase == tr.timeline[start].phase)
      continue;
    const int p = static_cast<int>(tr.timeline[start].phase);
    const double x0 = x(start), x1 = x(i);
    *under += Rect(x0, kTop, x1 - x0, kBottom - kTop,
                   "fill=\"" + std::string(kPhases[p].band) + "\"");
    // NB: the one-point setup gets no separator; it would hug the y axis.
    if (start > 0 && tr.timeline[start - 1].phase != StepPhase::kSetup) {
      *over += Line(x0, kTop, x0, kBottom,
                    "stroke=\"#555555\" stroke-width=\"1\" "
                    "stroke-dasharray=\"4,3\"");
    }
    const std::string name(StepPhaseName(tr.timeline[start].phase));
    // NB: about 7 px per character at 12 px; a band too narrow for its name
    // (the one-point setup) goes unlabelled.
    if (x1 - x0 >= 7.0 * name.size()) {
      *over += Text((x0 + x1) / 2, kTop - 8, name, 12,
                    "text-anchor=\"middle\" font-weight=\"bold\" fill=\"" +
                        std::string(kPhases[p].label) + "\"");
    }
    start = i;
  }
}

std::string Axes(size_t points, const YAxis& ya, std::string* grid) {
  std::string out;
  for (int k = 0;; ++k) {
    const double units = k * ya.step;
    if (units * ya.unit > ya.top_bytes * (1 + 1e-9)) break;
    const double y = ya.Y(units * ya.unit);
    *grid += Line(kLeft, y, kRight, y, "stroke=\"#d8d8d8\" stroke-width=\"1\"");
    out += Line(kLeft - 4, y, kLeft, y, "stroke=\"#333333\"");
    out += Text(kLeft - 7, y + 4, Num(units, 3) + " " + ya.unit_name, 11,
                "text-anchor=\"end\" fill=\"#333333\"");
  }
  const double step = std::max(1.0, NiceStep(points / 8.0));
  for (int k = 0;; ++k) {
    const double i = k * step;
    if (i > points) break;
    const double x = kLeft + (kRight - kLeft) * i / points;
    out += Line(x, kBottom, x, kBottom + 4, "stroke=\"#333333\"");
    out += Text(x, kBottom + 17, Num(i, 0), 11,
                "text-anchor=\"middle\" fill=\"#333333\"");
  }
  out += Line(kLeft, kTop, kLeft, kBottom, "stroke=\"#333333\"");
  out += Line(kLeft, kBottom, kRight, kBottom, "stroke=\"#333333\"");
  out += Text((kLeft + kRight) / 2, kBottom + 36,
              "event (a node's allocations, then its frees, in step order)", 12,
              "text-anchor=\"middle\" fill=\"#333333\"");
  out += Text(
      16, (kTop + kBottom) / 2, "live memory", 12,
      "text-anchor=\"middle\" fill=\"#333333\" transform=\"rotate(-90 16 " +
          Num((kTop + kBottom) / 2) + ")\"");
  return out;
}

// Returns the peak's marker and its two-line label, kept inside the plot.
std::string PeakMark(const ir::Graph& graph, const TrainingReport& tr,
                     int point, __int128 peak, const YAxis& ya) {
  const double n = static_cast<double>(tr.timeline.size());
  const double x = kLeft + (kRight - kLeft) * (point + 0.5) / n;
  const double y = ya.Y(static_cast<double>(peak));
  const std::string first = "peak " +
                            report::Human(peak, report::Unit::kBytes) + " (" +
                            report::IntText(peak) + " bytes)";
  const std::string second = "during " + report::MomentText(graph, tr, point);
  // NB: about 7.2 px per character in 12 px bold, 6.1 px in 11 px.
  const double half = std::max(3.6 * static_cast<double>(first.size()),
                               3.05 * static_cast<double>(second.size()));
  const double cx = std::clamp(x, kLeft + 4 + half, kRight - 4 - half);
  std::string out = "<g class=\"peak\" data-bytes=\"" + report::IntText(peak) +
                    "\" data-point=\"" + std::to_string(point) + "\">\n";
  out += Line(x, y, x, kBottom,
              "stroke=\"#111111\" stroke-width=\"1\" stroke-dasharray=\"2,2\"");
  out +=
      "<circle cx=\"" + Num(x) + "\" cy=\"" + Num(y) +
      "\" r=\"4\" fill=\"white\" stroke=\"#111111\" stroke-width=\"1.5\"/>\n";
  // NB: a translucent backing keeps the label legible over separators.
  out += Rect(cx - half - 4, y - 39, 2 * half + 8, 33,
              "fill=\"white\" fill-opacity=\"0.8\" rx=\"3\"");
  out += Text(cx, y - 25, first, 12,
              "text-anchor=\"middle\" font-weight=\"bold\" fill=\"#111111\"");
  out +=
      Text(cx, y - 10, second, 11, "text-anchor=\"middle\" fill=\"#111111\"");
  return out + "</g>\n";
}

std::string Legend(const std::vector<Row>& rows, int point) {
  std::string out = "<g class=\"legend\">\n";
  out += Text(kLegendX, kTop - 8, "at the peak", 12,
              "font-weight=\"bold\" fill=\"#333333\"");
  double y = kTop + 4;
  double total = 0;
  for (int k = kNumMemCategories - 1; k >= 0; --k) {
    const int c = static_cast<int>(kStack[k]);
    const std::string name(MemCategoryName(static_cast<MemCategory>(c)));
    const double bytes = rows[point][c];
    total += bytes;
    out += "<g class=\"legend-entry\" data-category=\"" + name + "\">\n";
    out += Rect(kLegendX, y, 12, 12,
                "fill=\"" + std::string(report::svg::CategoryColour(c)) + "\"");
    out += Text(kLegendX + 18, y + 10, name, 12, "fill=\"#222222\"");
    out +=
        Text(kWidth - 8, y + 10,
             report::Human(static_cast<__int128>(bytes), report::Unit::kBytes),
             11, "text-anchor=\"end\" fill=\"#222222\"");
    out += "</g>\n";
    y += 21;
  }
  out += Line(kLegendX, y - 4, kWidth - 8, y - 4, "stroke=\"#999999\"");
  out += Text(kLegendX + 18, y + 10, "total", 12,
              "font-weight=\"bold\" fill=\"#222222\"");
  out += Text(kWidth - 8, y + 10,
              report::Human(static_cast<__int128>(total), report::Unit::kBytes),
              11, "text-anchor=\"end\" font-weight=\"bold\" fill=\"#222222\"");
  return out + "</g>\n";
}

}  // namespace

std::vector<std::string> UnboundTimelineSymbols(const Report& report,
                                                const sym::Bindings& bindings) {
  std::set<std::string> names;
  for (const TimelinePoint& p : report.training.timeline) {
    for (const sym::Expr& e : p.live) {
      if (e.IsConstant()) continue;
      for (const std::string& s : sym::FreeSymbols(e)) {
        if (!bindings.count(s)) names.insert(s);
      }
    }
  }
  return {names.begin(), names.end()};
}

std::string RenderTimelineSvg(const ir::Graph& graph, const Report& report,
                              const sym::Bindings& bindings) {
  const TrainingReport& tr = report.training;
  if (tr.timeline.empty()) return MessageSvg("no memory timeline to draw");
  std::vector<Row> rows(tr.timeline.size());
  int point = 0;
  __int128 peak = -1;
  for (size_t i = 0; i < tr.timeline.size(); ++i) {
    __int128 total = 0;
    for (int c = 0; c < kNumMemCategories; ++c) {
      auto v = report::TryEvaluate(tr.timeline[i].live[c], bindings);
      if (!v) {
        return MessageSvg(
            "the timeline needs every symbol bound: StepConfig.bindings B=...");
      }
      rows[i][c] = static_cast<double>(*v);
      total += *v;
    }
    // NB: the first point of the largest total, as EvaluatePeak picks it.
    if (total > peak) {
      peak = total;
      point = static_cast<int>(i);
    }
  }
  const YAxis ya = MakeYAxis(static_cast<double>(peak));

  std::string under, over, grid;
  Phases(tr, &under, &over);
  const std::string axes = Axes(rows.size(), ya, &grid);

  const bool train = tr.mode == StepMode::kTrain;
  std::string title =
      "Memory over one " +
      std::string(train ? "training step" : "inference forward") + ": " +
      BaseName(report.model.empty() ? graph.source : report.model);
  if (train) title += " (" + std::string(OptimizerName(tr.optimizer)) + ")";

  std::string svg = Open();
  svg += Text(kLeft, 24, title, 15, "font-weight=\"bold\" fill=\"#111111\"");
  svg += Text(kLeft, 42,
              "live bytes after each event, stacked by category (as PyTorch's "
              "MemTracker counts them)",
              11, "fill=\"#555555\"");
  svg += "<g class=\"plot\" data-left=\"" + Num(kLeft) + "\" data-right=\"" +
         Num(kRight) + "\" data-top=\"" + Num(kTop) + "\" data-bottom=\"" +
         Num(kBottom) + "\" data-top-bytes=\"" + Num(ya.top_bytes, 3) + "\">\n";
  svg += under + grid + Layers(rows, ya) + over + axes;
  svg += PeakMark(graph, tr, point, peak, ya);
  svg += "</g>\n";
  svg += Legend(rows, point);
  return svg + "</svg>\n";
}

}  // namespace torchcost
