// The comparison as a horizontal bar chart: a bar per configuration, stacked
// by memory category at its peak, the budget as a dashed line.
#include <algorithm>
#include <cmath>

#include "report/format.h"
#include "report/svg.h"
#include "torchcost/compare.h"

namespace torchcost {
namespace {

using report::svg::Escape;
using report::svg::Line;
using report::svg::Num;
using report::svg::Rect;
using report::svg::Text;

constexpr double kWidth = 980, kLeft = 230, kRight = 760, kTop = 84, kBar = 26,
                 kGap = 14;
constexpr const char* kFont = "Helvetica, Arial, sans-serif";
// Bottom-up order of the stack, as in the timeline: what exists all step first.
constexpr std::array<MemCategory, kNumMemCategories> kStack = {
    MemCategory::kParam, MemCategory::kBuffer, MemCategory::kOpt,
    MemCategory::kOther, MemCategory::kGrad,   MemCategory::kAct,
    MemCategory::kTemp};

}  // namespace

std::string RenderCompareSvg(const std::string& model,
                             const std::vector<CompareRow>& rows,
                             const CompareOptions& options,
                             const std::string& setting) {
  double top = static_cast<double>(options.budget_bytes);
  for (const auto& r : rows) top = std::max(top, static_cast<double>(r.peak));
  top = std::max(top * 1.02, 1.0);
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit_k = 0;
  for (int k = 1; k < 5; ++k) {
    if (top / 1.02 >= std::pow(1024.0, k)) unit_k = k;
  }
  const double unit = std::pow(1024.0, unit_k);
  const double step = report::svg::NiceStep(top / unit / 8);
  auto x = [&](double bytes) { return kLeft + bytes / top * (kRight - kLeft); };
  const double plot_bottom = kTop + rows.size() * (kBar + kGap);
  const double height = plot_bottom + 90;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    Num(kWidth) + "\" height=\"" + Num(height) +
                    "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(height) +
                    "\" font-family=\"" + kFont + "\">\n" +
                    Rect(0, 0, kWidth, height, "fill=\"white\"");
  out +=
      Text(kWidth / 2, 24, "Peak memory by configuration: " + Escape(model), 16,
           "text-anchor=\"middle\" font-weight=\"bold\" fill=\"#222222\"");
  std::string at;
  std::vector<std::pair<std::string, int64_t>> bound(options.bindings.begin(),
                                                     options.bindings.end());
  std::sort(bound.begin(), bound.end());
  for (const auto& [k, v] : bound)
    at += (at.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  const bool batch_free =
      !options.bindings.count(options.batch_symbol) &&
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.max_batch >= 0; });
  if (batch_free)
    at = options.batch_symbol + "=1" + (at.empty() ? "" : ", " + at);
  out += Text(kWidth / 2, 44,
              Escape((at.empty() ? "" : "at " + at + "; ") + setting), 12,
              "text-anchor=\"middle\" fill=\"#555555\"");
  // Grid and ticks.
  for (double v = 0; v * unit <= top; v += step) {
    const double xx = x(v * unit);
    out += Line(xx, kTop - 6, xx, plot_bottom,
                "stroke=\"#e0e0e0\" stroke-width=\"1\"");
    out += Text(xx, plot_bottom + 16, Num(v, 2) + " " + kNames[unit_k], 11,
                "text-anchor=\"middle\" fill=\"#333333\"");
  }
  if (options.budget_bytes > 0) {
    const double bx = x(static_cast<double>(options.budget_bytes));
    out += "<g class=\"budget\">\n" +
           Line(bx, kTop - 10, bx, plot_bottom,
                "stroke=\"#b00020\" stroke-width=\"1.5\" "
                "stroke-dasharray=\"6,4\"") +
           Text(bx, kTop - 14,
                "budget " +
                    report::Human(options.budget_bytes, report::Unit::kBytes),
                11, "text-anchor=\"middle\" fill=\"#b00020\"") +
           "</g>\n";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const CompareRow& r = rows[i];
    const double y = kTop + i * (kBar + kGap);
    out += "<g class=\"config\" data-config=\"" + Escape(r.label) + "\">\n";
    std::string name = r.label;
    for (const auto& [symbol, value] : r.point)
      name += " " + symbol + "=" + std::to_string(value);
    out += Text(kLeft - 8, y + kBar * 0.65, Escape(name), 12,
                "text-anchor=\"end\" fill=\"#222222\"");
    if (!r.error.empty()) {
      out += Text(kLeft + 6, y + kBar * 0.65, "error: " + Escape(r.error), 11,
                  "fill=\"#b00020\"");
      out += "</g>\n";
      continue;
    }
    double cum = 0;
    auto segment = [&](const std::string& name, int64_t bytes,
                       const char* colour) {
      if (bytes <= 0) return;
      const double b = static_cast<double>(bytes);
      out += "<rect class=\"segment\" data-category=\"" + name +
             "\" data-bytes=\"" + std::to_string(bytes) + "\" x=\"" +
             Num(x(cum), 2) + "\" y=\"" + Num(y) + "\" width=\"" +
             Num(x(cum + b) - x(cum), 2) + "\" height=\"" + Num(kBar) +
             "\" fill=\"" + colour + "\"/>\n";
      cum += b;
    };
    for (MemCategory c : kStack) {
      segment(std::string(MemCategoryName(c)), r.at_peak[static_cast<int>(c)],
              report::svg::CategoryColour(static_cast<int>(c)));
      // A generation's KV cache, apart from the buffers, above them.
      if (c == MemCategory::kBuffer && r.generation)
        segment("kv_cache", r.kv_cache_at_peak, report::svg::kKvCacheColour);
    }
    std::string label = report::Human(r.peak, report::Unit::kBytes);
    if (options.budget_bytes > 0) {
      label += r.fits ? "" : " (over)";
      if (r.max_batch >= 0)
        label +=
            ", max " + options.batch_symbol + " " + std::to_string(r.max_batch);
    }
    // A white box under the label keeps the budget line from crossing it.
    out += Rect(x(cum) + 3, y + 4, 6.2 * label.size() + 6, kBar - 8,
                "fill=\"white\" fill-opacity=\"0.85\"");
    out +=
        Text(x(cum) + 6, y + kBar * 0.65, label, 11,
             std::string("fill=\"") + (r.fits ? "#222222" : "#b00020") + "\"");
    out += "</g>\n";
  }
  // Legend.
  double lx = kLeft;
  const double ly = plot_bottom + 40;
  auto legend = [&](const std::string& name, const char* colour) {
    out += Rect(lx, ly, 12, 12, std::string("fill=\"") + colour + "\"");
    out += Text(lx + 17, ly + 10, name, 12, "fill=\"#222222\"");
    lx += 90;
  };
  for (MemCategory c : kStack) {
    legend(std::string(MemCategoryName(c)),
           report::svg::CategoryColour(static_cast<int>(c)));
    if (c == MemCategory::kBuffer && options.generation)
      legend("kv_cache", report::svg::kKvCacheColour);
  }
  out += "</svg>\n";
  return out;
}

}  // namespace torchcost
