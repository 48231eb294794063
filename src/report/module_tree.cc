// The module tree: DeepSpeed's `(name): Type(params, % params, MACs, ...)`
// lines, with every field in an aligned column; a training step adds backward
// FLOPs and saved activation bytes.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "report/format.h"
#include "report/table.h"
#include "report/text_sections.h"

namespace torchcost::report {
namespace {

// NB: a prefix ("      (downsample): Sequential(") wider than this stands on a
// line of its own, its values on the next (as DeepSpeed prints containers), so
// one deep module cannot push every line past 100 columns.
constexpr size_t kMaxPrefixWidth = 28;

// The columns; each "%" follows the quantity it is a share of.
std::vector<std::string> Headers(bool train, bool time) {
  // NB: a training step trades the MACs share for backward FLOPs and
  // activation bytes, so that ResNet-50 at depth 2 stays near 110 columns.
  static const std::vector<std::string> kInfer = {
      "Params", "%", "MACs", "%", "FLOPs", "%", "Output shape"};
  static const std::vector<std::string> kTrain = {
      "Params", "%",         "MACs", "Fwd FLOPs",
      "%",      "Bwd FLOPs", "Act",  "Output shape"};
  std::vector<std::string> h = train ? kTrain : kInfer;
  // With a GPU: DeepSpeed's latency and TFLOPS per module (forward + backward
  // in training), before the shapes.
  if (time) h.insert(h.end() - 1, {"Latency", "TFLOPS"});
  return h;
}

struct Line {
  std::string prefix;  // Indent, "(name): ", type, "(".
  std::vector<std::string> fields;
};

// Returns the output shapes of a module: "[1, 10]" or "[1, 4], [1, 4]".
std::string OutputShapes(const ModuleStats& stats,
                         const sym::Bindings& bindings) {
  std::string out;
  for (size_t i = 0; i < stats.output_shapes.size(); ++i) {
    if (i > 0) out += ", ";
    out += ShapeText(stats.output_shapes[i], bindings);
  }
  return out;
}

// Returns element `s` of a per-scope vector, or "-" if it has none.
std::string PerScope(const std::vector<sym::Expr>& values, int s, Unit unit,
                     const sym::Bindings& b) {
  if (s < 0 || static_cast<size_t>(s) >= values.size()) return "-";
  return HumanExpr(values[s], b, unit);
}

Line MakeLine(const ir::Scope& scope, int s, int depth,
              const ModuleStats* stats, const Report& report, bool train,
              const sym::Bindings& b) {
  Line line;
  line.prefix = std::string(2 * depth, ' ');
  if (depth > 0) line.prefix += "(" + scope.name + "): ";
  line.prefix += (scope.type.empty() ? scope.name : scope.type) + "(";
  if (stats == nullptr) {
    line.fields.assign(Headers(train, report.time.present).size(), "-");
    line.fields.back() = "";
    return line;
  }
  // NB: the MACs and FLOPs columns drop the unit word; their header says it.
  // NB: ">=" marks a subtree with an op whose cost is unknown (no rule).
  const std::string at_least = stats->lower_bound ? ">= " : "";
  line.fields = {Human(stats->params, Unit::kCount),
                 PercentOf(stats->params, report.params, b),
                 at_least + HumanExpr(stats->macs, b, Unit::kCount)};
  if (!train) line.fields.push_back(PercentOf(stats->macs, report.macs, b));
  line.fields.push_back(at_least + HumanExpr(stats->flops, b, Unit::kCount));
  line.fields.push_back(PercentOf(stats->flops, report.flops, b));
  if (train) {
    const TrainingReport& tr = report.training;
    line.fields.push_back(PerScope(tr.module_bwd_flops, s, Unit::kCount, b));
    line.fields.push_back(PerScope(tr.module_act_bytes, s, Unit::kBytes, b));
  }
  const TimeReport& t = report.time;
  if (t.present) {
    const bool has =
        s >= 0 && static_cast<size_t>(s) < t.module_forward_seconds.size();
    const double seconds =
        has ? t.module_forward_seconds[s] + t.module_backward_seconds[s] : 0;
    double flops = static_cast<double>(RankValue(stats->flops, b));
    if (train && s >= 0 &&
        static_cast<size_t>(s) < report.training.module_bwd_flops.size()) {
      flops += static_cast<double>(
          RankValue(report.training.module_bwd_flops[s], b));
    }
    line.fields.push_back(SecondsText(seconds));
    line.fields.push_back(TflopsText(flops, seconds));
  }
  line.fields.push_back(OutputShapes(*stats, b));
  return line;
}

}  // namespace

const ModuleStats* FindModuleStats(const Report& report, int scope) {
  if (scope >= 0 && static_cast<size_t>(scope) < report.modules.size() &&
      report.modules[scope].scope == scope) {
    return &report.modules[scope];
  }
  for (const ModuleStats& m : report.modules) {
    if (m.scope == scope) return &m;
  }
  return nullptr;
}

std::string RenderModuleTree(const ir::Graph& graph, const Report& report,
                             const TextOptions& options) {
  std::string out = "Module tree (";
  out += options.depth < 0 ? "all depths"
                           : "depth <= " + std::to_string(options.depth);
  out += "; % are of the model's totals";
  if (report.training.mode == StepMode::kTrain)
    out += "; Act: bytes its nodes save for backward";
  if (report.time.present) {
    out += std::string("; Latency: ") +
           (report.training.mode == StepMode::kTrain ? "forward + backward, "
                                                     : "") +
           TimeLabel(report.time);
  }
  out += ")\n";
  if (graph.scopes.empty()) return out + "  (no modules)\n";

  // Depth-first from the root, children in registration order; an explicit
  // stack and a visited mark keep a malformed hierarchy from recursing or
  // looping.
  const bool train = report.training.mode == StepMode::kTrain;
  const std::vector<std::string> headers = Headers(train, report.time.present);
  const int num_fields = static_cast<int>(headers.size());
  std::vector<Line> lines;
  std::vector<bool> seen(graph.scopes.size(), false);
  std::vector<std::pair<int, int>> stack = {{0, 0}};  // (scope, depth)
  while (!stack.empty()) {
    auto [s, depth] = stack.back();
    stack.pop_back();
    if (s < 0 || static_cast<size_t>(s) >= graph.scopes.size() || seen[s])
      continue;
    seen[s] = true;
    const ir::Scope& scope = graph.scopes[s];
    lines.push_back(MakeLine(scope, s, depth, FindModuleStats(report, s),
                             report, train, options.bindings));
    if (options.depth >= 0 && depth >= options.depth) continue;
    for (auto it = scope.children.rbegin(); it != scope.children.rend(); ++it) {
      stack.push_back({*it, depth + 1});
    }
  }

  size_t prefix_width = DisplayWidth("Module");
  std::vector<size_t> widths(num_fields);
  for (int f = 0; f < num_fields; ++f) widths[f] = DisplayWidth(headers[f]);
  for (const Line& l : lines) {
    // Prefixes wider than the cap go on their own line and do not widen the
    // column.
    const size_t w = DisplayWidth(l.prefix);
    if (w <= kMaxPrefixWidth) prefix_width = std::max(prefix_width, w);
    for (int f = 0; f < num_fields; ++f)
      widths[f] = std::max(widths[f], DisplayWidth(l.fields[f]));
  }
  // The header row names each column above its values (", " and "  " are as
  // wide).
  std::string header = Pad("Module", prefix_width, Table::Align::kLeft);
  for (int f = 0; f + 1 < num_fields; ++f) {
    header += Pad(headers[f], widths[f], Table::Align::kRight) + "  ";
  }
  out += header + headers.back() + "\n";
  for (const Line& l : lines) {
    std::string text;
    if (DisplayWidth(l.prefix) > prefix_width) {
      out += l.prefix + "\n";
      text = std::string(prefix_width, ' ');
    } else {
      text = Pad(l.prefix, prefix_width, Table::Align::kLeft);
    }
    for (int f = 0; f + 1 < num_fields; ++f) {
      text += Pad(l.fields[f], widths[f], Table::Align::kRight);
      if (f + 2 < num_fields || !l.fields.back().empty()) text += ", ";
    }
    out += text + l.fields.back() + ")\n";
  }
  return out;
}

}  // namespace torchcost::report
