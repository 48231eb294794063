// The JSON report, schema "torchcost.report" version 1 (docs/json-schema.md).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/sharding_report.h"
#include "report/text_sections.h"
#include "torchcost/report.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

// NB: ordered_json keeps keys in the order written, so the document reads
// top-down.
using Json = nlohmann::ordered_json;

constexpr int kSchemaVersion = 1;
constexpr int kFlopsPerFma = 2;  // One fused multiply-add = 2 FLOPs.

// Returns an exact integer: a JSON number within int64/uint64, else its decimal
// string.
Json Integer(__int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() &&
      v <= std::numeric_limits<int64_t>::max()) {
    return static_cast<int64_t>(v);
  }
  if (v > 0 &&
      v <= static_cast<__int128>(std::numeric_limits<uint64_t>::max())) {
    return static_cast<uint64_t>(v);
  }
  return report::IntText(v);
}

// Returns {"expr": canonical text, "value": value under the bindings or null}.
Json Symbolic(const sym::Expr& e, const sym::Bindings& b) {
  Json j;
  j["expr"] = e.ToString();
  auto v = report::TryEvaluate(e, b);
  j["value"] = v ? Integer(*v) : Json(nullptr);
  return j;
}

// Returns a shape as an array: ints where a dim evaluates, else its (bound)
// text.
Json Shape(const std::vector<sym::Expr>& shape, const sym::Bindings& b) {
  Json dims = Json::array();
  for (const sym::Expr& d : shape) {
    auto v = report::TryEvaluate(d, b);
    dims.push_back(v ? Integer(*v) : Json(report::Bind(d, b).ToString()));
  }
  return dims;
}

Json Inputs(const ir::Graph& graph, const Report& report,
            const sym::Bindings& b) {
  Json inputs = Json::array();
  for (int v : graph.inputs) {
    Json in;
    if (v >= 0 && static_cast<size_t>(v) < report.values.size() &&
        report.values[v].known) {
      in["shape"] = Shape(report.values[v].shape, b);
      in["dtype"] = std::string(DTypeName(report.values[v].dtype));
    } else if (v >= 0 && static_cast<size_t>(v) < graph.values.size() &&
               graph.values[v].has_traced_shape) {
      in["shape"] = graph.values[v].traced_shape;
      in["dtype"] = std::string(DTypeName(graph.values[v].dtype));
    } else {
      in["shape"] = nullptr;
      in["dtype"] = nullptr;
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

Json Modules(const ir::Graph& graph, const Report& report,
             const sym::Bindings& b) {
  Json modules = Json::array();
  for (size_t s = 0; s < graph.scopes.size(); ++s) {
    const ir::Scope& scope = graph.scopes[s];
    const ModuleStats* stats =
        report::FindModuleStats(report, static_cast<int>(s));
    Json m;
    m["path"] = scope.path;
    m["name"] = scope.name;
    m["type"] = scope.type;
    m["depth"] = scope.depth;
    const bool has_parent =
        scope.parent >= 0 &&
        static_cast<size_t>(scope.parent) < graph.scopes.size();
    m["parent"] =
        has_parent ? Json(graph.scopes[scope.parent].path) : Json(nullptr);
    m["params"] = stats ? stats->params : 0;
    m["trainable_params"] = stats ? stats->trainable_params : 0;
    m["macs"] = Symbolic(stats ? stats->macs : sym::Expr(), b);
    m["flops"] = Symbolic(stats ? stats->flops : sym::Expr(), b);
    m["transcendentals"] =
        Symbolic(stats ? stats->transcendentals : sym::Expr(), b);
    m["lower_bound"] = stats ? stats->lower_bound : false;
    Json shapes = Json::array();
    if (stats) {
      for (const auto& shape : stats->output_shapes)
        shapes.push_back(Shape(shape, b));
    }
    m["output_shapes"] = std::move(shapes);
    const TrainingReport& tr = report.training;
    if (s < tr.module_bwd_flops.size()) m["bwd_flops"] = Symbolic(tr.module_bwd_flops[s], b);
    if (s < tr.module_act_bytes.size()) m["act_bytes"] = Symbolic(tr.module_act_bytes[s], b);
    modules.push_back(std::move(m));
  }
  return modules;
}

// Returns {category: SYM} for one breakdown.
Json Categories(const CategoryBytes& c, const sym::Bindings& b) {
  Json j;
  for (int i = 0; i < kNumMemCategories; ++i) {
    j[std::string(MemCategoryName(static_cast<MemCategory>(i)))] = Symbolic(c[i], b);
  }
  return j;
}

// Returns an int where `e` evaluates, else its text.
Json Value(const sym::Expr& e, const sym::Bindings& b) {
  auto v = report::TryEvaluate(e, b);
  return v ? Integer(*v) : Json(report::Bind(e, b).ToString());
}

// The checkpoint configuration and its segments, or null if none.
Json Checkpoint(const ir::Graph& graph, const TrainingReport& tr) {
  if (tr.checkpoint.empty()) return nullptr;
  Json segments = Json::array();
  for (const CheckpointSegment& s : tr.checkpoint_segments) {
    segments.push_back({{"module", s.module},
                        {"calls", s.calls},
                        {"first_node", graph.nodes[s.first].debug_name},
                        {"last_node", graph.nodes[s.last].debug_name},
                        {"recomputed", s.recomputed}});
  }
  return {{"pattern", tr.checkpoint}, {"group", tr.checkpoint_group}, {"segments", std::move(segments)}};
}

// The training step: FLOPs, memory at the peak, and the timeline.
Json Training(const ir::Graph& graph, const Report& report, const sym::Bindings& b) {
  const TrainingReport& tr = report.training;
  Json j;
  j["mode"] = tr.mode == StepMode::kTrain ? "train" : "infer";
  j["optimizer"] = std::string(OptimizerName(tr.optimizer));
  j["optimizer_impl"] = tr.foreach ? "foreach" : "single";
  j["precision"] = tr.precision;
  j["loss"] = tr.loss;
  j["state_dtype"] = tr.state_dtype == DType::kUnknown ? Json(nullptr) : Json(std::string(DTypeName(tr.state_dtype)));
  j["grad_scaler"] = tr.grad_scaler;
  j["grad_params"] = tr.grad_params;
  j["accumulate"] = tr.accumulate;
  j["set_to_none"] = tr.set_to_none;
  j["checkpoint"] = Checkpoint(graph, tr);
  if (tr.galore) {
    int tensors = 0;
    for (bool t : tr.galore_targets) tensors += t;
    j["galore"] = {{"rank", tr.galore->rank},       {"update_proj_gap", tr.galore->update_proj_gap},
                   {"scale", tr.galore->scale},     {"targets", tr.galore->targets},
                   {"per_layer", tr.galore->per_layer}, {"svd_step", tr.galore->svd_step},
                   {"tensors", tensors},            {"params", tr.galore_params}};
  } else {
    j["galore"] = nullptr;
  }
  j["flops"] = {{"forward", Symbolic(tr.flops_forward, b)},
                {"backward", Symbolic(tr.flops_backward, b)},
                {"recompute", Symbolic(tr.flops_recompute, b)},
                {"optimizer", Symbolic(tr.flops_optimizer, b)},
                {"step", Symbolic(tr.flops_step, b)},
                {"lower_bound", tr.flops_lower_bound}};
  const PeakInfo peak = EvaluatePeak(tr, b);
  if (!peak.error.empty()) {
    j["memory"] = {{"error", peak.error}};
    return j;
  }
  Json mem;
  mem["peak"] = Symbolic(peak.peak, b);
  mem["peak_decided"] = peak.decided;
  if (peak.decided) {
    mem["at_peak"] = Categories(peak.at_peak, b);
    const TimelinePoint& p = tr.timeline[peak.point];
    mem["peak_phase"] = std::string(StepPhaseName(p.phase));
    if (p.node >= 0) {
      const ir::Node& n = graph.nodes[p.node];
      mem["peak_node"] = {{"node", n.debug_name}, {"op", n.op}, {"module", graph.scopes[n.scope].path}};
    } else {
      mem["peak_node"] = nullptr;
    }
  } else {
    mem["at_peak"] = nullptr;
  }
  mem["category_max"] = Categories(peak.category_max, b);
  mem["saved_bytes"] = Symbolic(tr.saved_bytes, b);
  // bitsandbytes' paged states, on the host: not in the peak (null unless --paged).
  mem["paged_opt_bytes"] = tr.paged ? Json(tr.paged_opt_bytes) : Json(nullptr);
  mem["lower_bound"] = tr.act_lower_bound;
  j["memory"] = std::move(mem);
  Json saved = Json::array();
  for (const SavedTensorInfo& s : tr.saved) {
    const ir::Node& n = graph.nodes[s.node];
    saved.push_back({{"node", n.debug_name},
                     {"op", n.op},
                     {"module", graph.scopes[n.scope].path},
                     {"tensor", s.what},
                     {"bytes", Value(s.bytes, b)},
                     {"storage", s.storage},
                     {"counted", s.counted}});
  }
  j["saved"] = std::move(saved);
  Json cats = Json::array();
  for (int i = 0; i < kNumMemCategories; ++i) cats.push_back(std::string(MemCategoryName(static_cast<MemCategory>(i))));
  Json points = Json::array();
  for (const TimelinePoint& p : tr.timeline) {
    Json row = Json::array({std::string(StepPhaseName(p.phase)), p.node});
    for (int i = 0; i < kNumMemCategories; ++i) row.push_back(Value(p.live[i], b));
    points.push_back(std::move(row));
  }
  j["timeline"] = {{"columns", Json::array({"phase", "node"})}, {"categories", cats}, {"points", points}};
  return j;
}

}  // namespace

std::string RenderJson(const ir::Graph& graph, const Report& report,
                       const sym::Bindings& b) {
  Json j;
  j["schema"] = "torchcost.report";
  j["version"] = kSchemaVersion;
  j["model"] = report.model.empty() ? graph.source : report.model;
  j["inputs"] = Inputs(graph, report, b);
  j["symbols"] = report.symbols;
  Json bindings = Json::object();
  for (const auto& [name, value] :
       std::map<std::string, int64_t>(b.begin(), b.end())) {
    bindings[name] = value;
  }
  j["bindings"] = std::move(bindings);
  j["conventions"] = {{"flops_per_fma", kFlopsPerFma}};

  Json totals;
  totals["params"] = report.params;
  totals["trainable_params"] = report.trainable_params;
  totals["buffers"] = report.buffers;
  totals["param_bytes"] = report.param_bytes;
  totals["buffer_bytes"] = report.buffer_bytes;
  totals["macs"] = Symbolic(report.macs, b);
  totals["flops"] = Symbolic(report.flops, b);
  totals["transcendentals"] = Symbolic(report.transcendentals, b);
  totals["lower_bound"] = report.lower_bound;
  j["totals"] = std::move(totals);

  j["modules"] = Modules(graph, report, b);
  j["training"] = Training(graph, report, b);
  j["sharding"] = report::ShardingJson(report.training);

  Json ops = Json::array();
  for (const OpStats& op : report.ops) {
    ops.push_back({{"op", op.op},
                   {"count", op.count},
                   {"macs", Symbolic(op.macs, b)},
                   {"flops", Symbolic(op.flops, b)},
                   {"transcendentals", Symbolic(op.transcendentals, b)}});
  }
  j["ops"] = std::move(ops);

  Json unknown = Json::array();
  for (const UnknownOp& op : report.unknown_ops) {
    unknown.push_back({{"op", op.op}, {"count", op.count}});
  }
  j["unknown_ops"] = std::move(unknown);
  j["assumptions"] = report.assumptions;
  Json diagnostics = Json::array();
  for (const Diagnostic& d : report.diagnostics) {
    diagnostics.push_back({{"severity", report::SeverityName(d.severity)},
                           {"message", d.message}});
  }
  j["diagnostics"] = std::move(diagnostics);
  // NB: names read from a model file may be invalid UTF-8; replace, never
  // throw.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace torchcost
