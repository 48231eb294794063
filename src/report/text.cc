// The text report: header, module tree, top-k module types, operator table,
// totals, then what the analysis could not do.
#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "report/expert_parallel.h"
#include "report/format.h"
#include "report/sharding_report.h"
#include "report/table.h"
#include "report/text_sections.h"
#include "torchcost/report.h"

namespace torchcost {
namespace {

using report::HumanAndExact;
using report::Unit;

std::string Field(const std::string& label, const std::string& value) {
  return report::Pad(label, 20, report::Table::Align::kLeft) + value + "\n";
}

// Returns the step modelled: "train with adam (foreach step); 11.54 M
// trainable params (11541544), 147.97 K frozen (147968)", or the inference
// line.
std::string StepText(const Report& report) {
  const TrainingReport& tr = report.training;
  // "", or ", bf16-mixed precision (autocast, fp32 master weights)" and the
  // like.
  std::string precision;
  if (tr.precision.find("-mixed") != std::string::npos) {
    precision = ", " + tr.precision +
                " precision (autocast, fp32 master weights" +
                (tr.grad_scaler ? ", GradScaler)" : ")");
  } else if (tr.precision != "fp32") {
    precision = ", " + tr.precision + " precision";
  }
  if (tr.mode == StepMode::kInfer) {
    return "infer (forward under no_grad: no gradients, no optimizer)" +
           precision;
  }
  // NB: grad_params counts what gets a gradient, so --freeze and parameters
  // traced without requires_grad both count as frozen.
  const int64_t frozen = report.params - tr.grad_params;
  // ", GaLore r=8 on 4 tensors of 131.07 K (131072) params, per-layer updates,
  // an SVD step"
  std::string galore;
  if (tr.galore) {
    int tensors = 0;
    for (bool t : tr.galore_targets) tensors += t;
    galore = ", GaLore r=" + std::to_string(tr.galore->rank) + " on " +
             std::to_string(tensors) + " tensors of " +
             HumanAndExact(tr.galore_params, Unit::kCount) + " params" +
             (tr.galore->per_layer ? ", per-layer updates" : "") +
             (tr.galore->svd_step ? ", an SVD step" : ", a step between SVDs");
  }
  if (tr.state_dtype != DType::kUnknown)
    galore += ", " + std::string(DTypeName(tr.state_dtype)) + " states";
  // With frozen parameters, the trainable share of all, as peft's
  // print_trainable_parameters gives it (trainable%).
  const std::string share =
      frozen > 0 && report.params > 0
          ? fmt::format(
                " ({:.3g}%)",
                100.0 * static_cast<double>(tr.grad_params) / report.params)
          : "";
  // torch.optim's step: the per-parameter loop, foreach or fused.
  const char* impl = tr.foreach ? " (foreach step)"
                     : tr.fused ? " (fused step)"
                                : " (single-tensor step)";
  return "train with " + std::string(OptimizerName(tr.optimizer)) + impl +
         galore + precision + "; " +
         HumanAndExact(tr.grad_params, Unit::kCount) + " trainable params" +
         share + ", " + HumanAndExact(frozen, Unit::kCount) + " frozen";
}

std::string RenderHeader(const ir::Graph& graph, const Report& report,
                         const sym::Bindings& b) {
  std::string out = "torchcost report\n";
  out += Field("Model:", report.model.empty() ? graph.source : report.model);
  if (graph.inputs.empty()) out += Field("Inputs:", "none");
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const int v = graph.inputs[i];
    std::string text = "?";
    if (v >= 0 && static_cast<size_t>(v) < report.values.size() &&
        report.values[v].known) {
      const ValueInfo& info = report.values[v];
      // NB: input shapes are shown as given (symbols kept); the symbol line
      // gives their values.
      text = report::ShapeText(info.shape, {}) + " " +
             std::string(DTypeName(info.dtype));
    } else if (v >= 0 && static_cast<size_t>(v) < graph.values.size() &&
               graph.values[v].has_traced_shape) {
      std::vector<sym::Expr> shape(graph.values[v].traced_shape.begin(),
                                   graph.values[v].traced_shape.end());
      text = report::ShapeText(shape, {}) + " " +
             std::string(DTypeName(graph.values[v].dtype));
    }
    out += Field("Input " + std::to_string(i) + ":", text);
  }
  std::string symbols;
  std::set<std::string> listed;
  for (const std::string& s : report.symbols) {
    if (!symbols.empty()) symbols += ", ";
    auto it = b.find(s);
    symbols += it == b.end() ? s + " (unbound)"
                             : s + " = " + std::to_string(it->second);
    listed.insert(s);
  }
  std::set<std::string> extra;
  for (const auto& [name, value] : b) {
    if (!listed.count(name)) extra.insert(name + " = " + std::to_string(value));
  }
  for (const std::string& e : extra)
    symbols += (symbols.empty() ? "" : ", ") + e;
  out += Field("Symbols:", symbols.empty() ? "none" : symbols);
  out += Field("Step:", StepText(report));
  if (report.training.mode == StepMode::kTrain)
    out += Field("Loss:", report.training.loss);
  return out;
}

std::string RenderTotals(const Report& report, const sym::Bindings& b) {
  std::string out = "Totals (forward)\n";
  out += Field("  Params:", HumanAndExact(report.params, Unit::kCount));
  if (report.quantized_params != 0) {
    out += Field("  Quantized:",
                 HumanAndExact(report.quantized_params, Unit::kCount) +
                     " of them stored quantized (each counted as out x in, "
                     "as peft counts them; Param bytes: the stored codes "
                     "and scales)");
  }
  // NB: negative with expert parallelism (params is one rank's).
  if (report.inactive_params != 0)
    out += Field(
        "  Active params:",
        HumanAndExact(report.params - report.inactive_params, Unit::kCount) +
            " per token");
  out += Field("  Trainable params:",
               HumanAndExact(report.trainable_params, Unit::kCount));
  out += Field("  Buffers:", HumanAndExact(report.buffers, Unit::kCount));
  out +=
      Field("  Param bytes:", HumanAndExact(report.param_bytes, Unit::kBytes));
  out += Field("  Buffer bytes:",
               HumanAndExact(report.buffer_bytes, Unit::kBytes));
  // NB: ">=" marks a total that misses the cost of an op without a rule.
  const std::string at_least = report.lower_bound ? ">= " : "";
  out +=
      Field("  MACs:", at_least + HumanAndExact(report.macs, b, Unit::kMacs));
  out += Field("  FLOPs:",
               at_least + HumanAndExact(report.flops, b, Unit::kFlops));
  out +=
      Field("  Transcendentals:",
            at_least + HumanAndExact(report.transcendentals, b, Unit::kCount));
  if (report.lower_bound) {
    out +=
        "NB: >= marks lower bounds: ops without rules (listed below) count "
        "0.\n";
  }
  out +=
      "NB: 1 multiply-add = 2 FLOPs; transcendentals (exp, tanh, ...) are "
      "counted apart from FLOPs.\n";
  return out;
}

std::string RenderIssues(const Report& report) {
  std::string out;
  std::string unknown;
  for (const UnknownOp& op : report.unknown_ops) {
    if (!unknown.empty()) unknown += ", ";
    unknown += op.op + " x" + std::to_string(op.count);
  }
  out += "Ops without rules: " + (unknown.empty() ? "none" : unknown) + "\n";
  out +=
      "Assumptions:" + std::string(report.assumptions.empty() ? " none" : "") +
      "\n";
  for (const std::string& a : report.assumptions) out += "  - " + a + "\n";
  out +=
      "Diagnostics:" + std::string(report.diagnostics.empty() ? " none" : "") +
      "\n";
  for (const Diagnostic& d : report.diagnostics) {
    out += "  " + std::string(report::SeverityName(d.severity)) + ": " +
           d.message + "\n";
  }
  return out;
}

}  // namespace

std::string RenderText(const ir::Graph& graph, const Report& report,
                       const TextOptions& options) {
  const sym::Bindings& b = options.bindings;
  std::string out = RenderHeader(graph, report, b);
  out += "\n" + report::RenderModuleTree(graph, report, options);
  const std::string top = report::RenderTopModules(graph, report, options);
  if (!top.empty()) out += "\n" + top;
  out += "\n" + report::RenderOpTable(report, b);
  out += "\n" + RenderTotals(report, b);
  out += "\n" + report::RenderStepFlops(report, b);
  if (report.time.present) out += "\n" + report::RenderTime(report);
  if (std::string s = report::RenderSharding(report.training); !s.empty())
    out += "\n" + s;
  if (std::string s = report::RenderExpertParallel(
          report::CollectAllToAll(graph, report), b);
      !s.empty())
    out += "\n" + s;
  out += "\n" + report::RenderMemory(graph, report, b, options.peak);
  out += "\n" + RenderIssues(report);
  return out;
}

}  // namespace torchcost
