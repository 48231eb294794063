// The JSON report, schema "torchcost.report" version 1 (docs/json-schema.md).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "report/budget_section.h"
#include "report/expert_parallel.h"
#include "report/format.h"
#include "report/json_values.h"
#include "report/json_writer.h"
#include "report/sharding_report.h"
#include "report/text_sections.h"
#include "torchcost/report.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using report::JsonInteger;
using report::JsonSymbolic;
using report::WriteMembers;
using report::Writer;

// NB: ordered_json keeps keys in the order written, so the document reads
// top-down.
using Json = nlohmann::ordered_json;

constexpr int kSchemaVersion = 1;
constexpr int kFlopsPerFma = 2;  // One fused multiply-add = 2 FLOPs.

// Returns a shape as an array: ints where a dim evaluates, else its (bound)
// text.
Json Shape(const sym::Shape& shape, const sym::Bindings& b) {
  Json dims = Json::array();
  for (const sym::Expr& d : shape) {
    auto v = report::TryEvaluate(d, b);
    dims.push_back(v ? JsonInteger(*v) : Json(report::Bind(d, b).ToString()));
  }
  return dims;
}

// Writes what JsonInteger returns.
void WriteInteger(Writer& w, __int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() &&
      v <= std::numeric_limits<int64_t>::max()) {
    w.Int(static_cast<int64_t>(v));
  } else if (v > 0 &&
             v <= static_cast<__int128>(std::numeric_limits<uint64_t>::max())) {
    w.UInt(static_cast<uint64_t>(v));
  } else {
    w.Str(report::IntText(v));
  }
}

// Writes what JsonSymbolic returns.
void WriteSymbolic(Writer& w, const sym::Expr& e, const sym::Bindings& b) {
  w.BeginObject();
  w.Key("expr");
  w.Str(e.ToString());
  w.Key("value");
  if (auto v = report::TryEvaluate(e, b)) {
    WriteInteger(w, *v);
  } else {
    w.Null();
  }
  w.EndObject();
}

// Writes an int where `e` evaluates, else its text.
void WriteValue(Writer& w, const sym::Expr& e, const sym::Bindings& b) {
  if (auto v = report::TryEvaluate(e, b)) {
    WriteInteger(w, *v);
  } else {
    w.Str(report::Bind(e, b).ToString());
  }
}

// Writes what Shape returns.
void WriteShape(Writer& w, const sym::Shape& shape, const sym::Bindings& b) {
  w.BeginArray();
  for (const sym::Expr& d : shape) WriteValue(w, d, b);
  w.EndArray();
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

// Returns a module's predicted time: {forward_seconds, backward_seconds,
// tflops} (tflops: its forward and backward FLOPs over those seconds; null if 0
// s).
Json ModuleTime(const TimeReport& t, size_t s, const ModuleStats* stats,
                const TrainingReport& tr, const sym::Bindings& b) {
  const double seconds =
      t.module_forward_seconds[s] + t.module_backward_seconds[s];
  double flops = 0;
  if (stats) flops += report::RankValue(stats->flops, b);
  if (s < tr.module_bwd_flops.size())
    flops += report::RankValue(tr.module_bwd_flops[s], b);
  return {
      {"forward_seconds", t.module_forward_seconds[s]},
      {"backward_seconds", t.module_backward_seconds[s]},
      {"tflops", seconds > 0 ? Json(flops / seconds / 1e12) : Json(nullptr)}};
}

void WriteModules(Writer& w, const ir::Graph& graph, const Report& report,
                  const sym::Bindings& b) {
  w.BeginArray();
  for (size_t s = 0; s < graph.scopes.size(); ++s) {
    const ir::Scope& scope = graph.scopes[s];
    const ModuleStats* stats =
        report::FindModuleStats(report, static_cast<int>(s));
    w.BeginObject();
    w.Key("path");
    w.Str(scope.path);
    w.Key("name");
    w.Str(scope.name);
    w.Key("type");
    w.Str(scope.type);
    w.Key("depth");
    w.Int(scope.depth);
    const bool has_parent =
        scope.parent >= 0 &&
        static_cast<size_t>(scope.parent) < graph.scopes.size();
    w.Key("parent");
    if (has_parent) {
      w.Str(graph.scopes[scope.parent].path);
    } else {
      w.Null();
    }
    w.Key("params");
    w.Int(stats ? stats->params : 0);
    w.Key("trainable_params");
    w.Int(stats ? stats->trainable_params : 0);
    w.Key("macs");
    WriteSymbolic(w, stats ? stats->macs : sym::Expr(), b);
    w.Key("flops");
    WriteSymbolic(w, stats ? stats->flops : sym::Expr(), b);
    w.Key("transcendentals");
    WriteSymbolic(w, stats ? stats->transcendentals : sym::Expr(), b);
    w.Key("lower_bound");
    w.Bool(stats ? stats->lower_bound : false);
    w.Key("output_shapes");
    w.BeginArray();
    if (stats) {
      for (const auto& shape : stats->output_shapes) WriteShape(w, shape, b);
    }
    w.EndArray();
    const TrainingReport& tr = report.training;
    if (s < tr.module_bwd_flops.size()) {
      w.Key("bwd_flops");
      WriteSymbolic(w, tr.module_bwd_flops[s], b);
    }
    if (s < tr.module_act_bytes.size()) {
      w.Key("act_bytes");
      WriteSymbolic(w, tr.module_act_bytes[s], b);
    }
    const TimeReport& t = report.time;
    if (t.present && s < t.module_forward_seconds.size()) {
      w.Key("time");
      w.Embed(ModuleTime(t, s, stats, tr, b));
    }
    w.EndObject();
  }
  w.EndArray();
}

// Returns the predicted time of the step (docs/json-schema.md, "time").
Json TimeJson(const TimeReport& t) {
  Json classes = Json::object();
  for (int i = 0; i < kNumOpClasses; ++i) {
    const std::string name(OpClassName(static_cast<OpClass>(i)));
    classes[name] = {
        {"roofline_seconds", t.class_roofline_seconds[i]},
        {"forward_roofline_seconds", t.class_forward_roofline_seconds[i]},
        {"backward_roofline_seconds", t.class_backward_roofline_seconds[i]},
        {"efficiency", t.efficiency[i]},
        {"kernels", t.class_kernels[i]},
        {"forward_kernels", t.class_forward_kernels[i]},
        {"backward_kernels", t.class_backward_kernels[i]}};
  }
  Json j = {
      {"source", t.source},
      {"gpu", t.gpu},
      {"step_seconds", t.step_seconds},
      {"forward_seconds", t.forward_seconds},
      {"backward_seconds", t.backward_seconds},
      {"optimizer_seconds", t.optimizer_seconds},
      {"forward_device_seconds", t.forward_device_seconds},
      {"backward_device_seconds", t.backward_device_seconds},
      {"optimizer_device_seconds", t.optimizer_device_seconds},
      {"forward_host_seconds", t.forward_host_seconds},
      {"backward_host_seconds", t.backward_host_seconds},
      {"optimizer_host_seconds", t.optimizer_host_seconds},
      {"host",
       {{"forward_kernel_seconds", t.host.forward_kernel},
        {"backward_kernel_seconds", t.host.backward_kernel},
        {"optimizer_kernel_seconds", t.host.optimizer_kernel},
        {"optimizer_tensor_seconds", t.host.optimizer_tensor}}},
      {"optimizer_tensors", t.optimizer_tensors},
      {"communication_seconds", t.communication_seconds},
      {"exposed_communication_seconds", t.exposed_communication_seconds},
      {"model_parallel_communication_seconds",
       t.model_parallel_communication_seconds},
      {"model_parallel_overlapped_seconds",
       t.model_parallel_overlapped_seconds},
      {"communication_untimed", report::JsonUntimed(t.communication_untimed)},
      {"interconnect",
       {{"link_bandwidth", t.interconnect.link},
        {"link_type", LinkTypeName(t.interconnect.link_type)},
        {"compute_capability", t.interconnect.compute_capability},
        {"network_bandwidth", t.interconnect.network},
        {"node_gpus", t.interconnect.node_gpus}}},
      {"model_flops", t.model_flops},
      {"peak_flops", t.peak_flops},
      {"peak_dtype", t.peak_dtype},
      {"mfu", t.mfu},
      {"kernel_overhead_seconds", t.kernel_overhead},
      {"overhead_seconds", t.overhead_seconds},
      {"classes", std::move(classes)}};
  if (t.throughput_unit.empty()) {
    j["throughput"] = nullptr;
  } else {
    j["throughput"] = {{"unit", t.throughput_unit},
                       {"per_step", t.items_per_step},
                       {"per_second", t.items_per_second}};
  }
  return j;
}

// Returns {category: SYM} for one breakdown.
Json Categories(const CategoryBytes& c, const sym::Bindings& b) {
  Json j;
  for (int i = 0; i < kNumMemCategories; ++i) {
    j[std::string(MemCategoryName(static_cast<MemCategory>(i)))] =
        JsonSymbolic(c[i], b);
  }
  return j;
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
  return {{"pattern", tr.checkpoint},
          {"group", tr.checkpoint_group},
          {"segments", std::move(segments)}};
}

// Per-category bytes as constants.
CategoryBytes ToCategoryBytes(const std::array<int64_t, kNumMemCategories>& v) {
  CategoryBytes out;
  for (int i = 0; i < kNumMemCategories; ++i) out[i] = sym::Expr(v[i]);
  return out;
}

// The allocations the CUDA allocator model replayed, in order: [id, bytes] for
// an allocation, [id] for a free (docs/json-schema.md).
void WriteAllocations(Writer& w, const TrainingReport& tr,
                      const sym::Bindings& b) {
  w.Key("allocations");
  w.BeginArray();
  for (const AllocationEvent& e : tr.allocations) {
    w.BeginArray();
    w.Int(e.id);
    if (e.alloc) WriteValue(w, e.bytes, b);
    w.EndArray();
  }
  w.EndArray();
}

// The training step: FLOPs, memory at the peak, and the timeline.
void WriteTraining(Writer& w, const ir::Graph& graph, const Report& report,
                   const sym::Bindings& b, const PeakInfo* given_peak) {
  const TrainingReport& tr = report.training;
  w.BeginObject();
  Json j;  // The small members, written first.
  j["mode"] = tr.mode == StepMode::kTrain ? "train" : "infer";
  j["optimizer"] = std::string(OptimizerName(tr.optimizer));
  j["optimizer_impl"] = tr.foreach ? "foreach" : tr.fused ? "fused" : "single";
  j["torch_version"] = tr.torch_version;
  j["precision"] = tr.precision;
  j["loss"] = tr.loss;
  j["state_dtype"] = tr.state_dtype == DType::kUnknown
                         ? Json(nullptr)
                         : Json(std::string(DTypeName(tr.state_dtype)));
  j["grad_scaler"] = tr.grad_scaler;
  j["grad_params"] = tr.grad_params;
  j["accumulate"] = tr.accumulate;
  j["set_to_none"] = tr.set_to_none;
  j["checkpoint"] = Checkpoint(graph, tr);
  if (tr.galore) {
    int tensors = 0;
    for (bool t : tr.galore_targets) tensors += t;
    j["galore"] = {{"rank", tr.galore->rank},
                   {"update_proj_gap", tr.galore->update_proj_gap},
                   {"scale", tr.galore->scale},
                   {"targets", tr.galore->targets},
                   {"per_layer", tr.galore->per_layer},
                   {"svd_step", tr.galore->svd_step},
                   {"tensors", tensors},
                   {"params", tr.galore_params}};
  } else {
    j["galore"] = nullptr;
  }
  j["flops"] = {{"forward", JsonSymbolic(tr.flops_forward, b)},
                {"backward", JsonSymbolic(tr.flops_backward, b)},
                {"recompute", JsonSymbolic(tr.flops_recompute, b)},
                {"optimizer", JsonSymbolic(tr.flops_optimizer, b)},
                {"step", JsonSymbolic(tr.flops_step, b)},
                {"lower_bound", tr.flops_lower_bound}};
  const PeakInfo peak =
      given_peak != nullptr ? *given_peak : EvaluatePeak(tr, b);
  // NB: the budget is answered even where the allocator's peaks need a symbol
  // the budget searches (B unbound: decided at 1).
  Json budget = nullptr;
  if (report.budget_bytes > 0) {
    budget = report::BudgetJson(
        report.budget_bytes,
        BudgetEvaluator(report).Answer(b, report::QuestionOf(report)));
  }
  if (!peak.error.empty()) {
    j["memory"] = {{"error", peak.error}, {"budget", budget}};
    WriteMembers(w, j);
    w.EndObject();
    return;
  }
  // NB: with the CUDA allocator model the peak, its moment and the categories
  // are the allocated blocks' (rounded), and the allocator's own numbers
  // follow.
  std::optional<AllocatorPeak> blocks;
  if (tr.cuda_allocator) {
    blocks = EvaluateAllocator(tr, b);
    if (!blocks->error.empty()) {
      j["memory"] = {{"error", blocks->error}, {"budget", budget}};
      WriteMembers(w, j);
      w.EndObject();
      return;
    }
  }
  Json mem;
  mem["peak"] = blocks ? JsonSymbolic(sym::Expr(blocks->allocated_peak), b)
                       : JsonSymbolic(peak.peak, b);
  mem["peak_decided"] = blocks ? true : peak.decided;
  if (blocks || peak.decided) {
    mem["at_peak"] = blocks ? Categories(ToCategoryBytes(blocks->at_peak), b)
                            : Categories(peak.at_peak, b);
    const TimelinePoint& p = tr.timeline[blocks ? blocks->point : peak.point];
    mem["peak_phase"] = std::string(StepPhaseName(p.phase));
    if (p.node >= 0) {
      const ir::Node& n = graph.nodes[p.node];
      mem["peak_node"] = {{"node", n.debug_name},
                          {"op", n.op},
                          {"module", graph.scopes[n.scope].path}};
    } else {
      mem["peak_node"] = nullptr;
    }
  } else {
    mem["at_peak"] = nullptr;
  }
  mem["category_max"] =
      blocks ? Categories(ToCategoryBytes(blocks->category_max), b)
             : Categories(peak.category_max, b);
  if (blocks) {
    mem["reserved_peak"] = JsonSymbolic(sym::Expr(blocks->reserved_peak), b);
    const CudaAllocatorOptions& o = *tr.cuda_allocator;
    mem["allocator"] = {
        {"kind", "cuda"},
        {"tensor_peak", JsonSymbolic(peak.peak, b)},
        {"allocated_peak", blocks->allocated_peak},
        {"reserved_peak", blocks->reserved_peak},
        {"allocated_at_reserved_peak", blocks->allocated_at_reserved_peak},
        {"reserved_at_allocated_peak", blocks->reserved_at_allocated_peak},
        {"fragmentation", blocks->fragmentation},
        {"context_bytes", blocks->context_bytes},
        {"context_source", o.context_source},
        {"device_peak", blocks->device_peak},
        {"segments", blocks->segments},
        {"expandable_segments", o.expandable_segments},
        {"max_split_size",
         o.max_split_size == std::numeric_limits<int64_t>::max()
             ? Json(nullptr)
             : Json(o.max_split_size)}};
  }
  mem["saved_bytes"] = JsonSymbolic(tr.saved_bytes, b);
  // bitsandbytes' paged states, on the host: not in the peak (null unless
  // --paged).
  mem["paged_opt_bytes"] = tr.paged ? Json(tr.paged_opt_bytes) : Json(nullptr);
  mem["lower_bound"] = tr.act_lower_bound;
  mem["budget"] = budget;
  j["memory"] = std::move(mem);
  WriteMembers(w, j);
  w.Key("saved");
  w.BeginArray();
  for (const SavedTensorInfo& s : tr.saved) {
    const ir::Node& n = graph.nodes[s.node];
    w.BeginObject();
    w.Key("node");
    w.Str(n.debug_name);
    w.Key("op");
    w.Str(n.op);
    w.Key("module");
    w.Str(graph.scopes[n.scope].path);
    w.Key("tensor");
    w.Str(s.what);
    w.Key("bytes");
    WriteValue(w, s.bytes, b);
    w.Key("storage");
    w.Int(s.storage);
    w.Key("counted");
    w.Bool(s.counted);
    w.EndObject();
  }
  w.EndArray();
  Json cats = Json::array();
  for (int i = 0; i < kNumMemCategories; ++i)
    cats.push_back(std::string(MemCategoryName(static_cast<MemCategory>(i))));
  w.Key("timeline");
  w.BeginObject();
  w.Key("columns");
  w.Embed(Json::array({"phase", "node"}));
  w.Key("categories");
  w.Embed(cats);
  w.Key("points");
  w.BeginArray();
  for (const TimelinePoint& p : tr.timeline) {
    w.BeginArray();
    w.Str(StepPhaseName(p.phase));
    w.Int(p.node);
    for (int i = 0; i < kNumMemCategories; ++i) WriteValue(w, p.live[i], b);
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  if (blocks) WriteAllocations(w, tr, b);
  w.EndObject();
}

}  // namespace

std::string RenderJson(const ir::Graph& graph, const Report& report,
                       const sym::Bindings& b, const PeakInfo* peak) {
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
  // Parameters one token uses: all but a mixture of experts' unrouted experts.
  totals["active_params"] = report.params - report.inactive_params;
  // Of params: weights stored quantized, each counted as out x in.
  totals["quantized_params"] = report.quantized_params;
  totals["trainable_params"] = report.trainable_params;
  totals["buffers"] = report.buffers;
  totals["param_bytes"] = report.param_bytes;
  totals["buffer_bytes"] = report.buffer_bytes;
  totals["macs"] = JsonSymbolic(report.macs, b);
  totals["flops"] = JsonSymbolic(report.flops, b);
  totals["transcendentals"] = JsonSymbolic(report.transcendentals, b);
  totals["lower_bound"] = report.lower_bound;
  j["totals"] = std::move(totals);

  // ~1 KB per node and module (resnet50's training step: 317 KB).
  Writer w(1024 * (graph.nodes.size() + graph.scopes.size()) + 4096);
  w.BeginObject();
  WriteMembers(w, j);
  w.Key("modules");
  WriteModules(w, graph, report, b);
  w.Key("training");
  WriteTraining(w, graph, report, b, peak);
  w.Key("sharding");
  w.Embed(report::ShardingJson(report.training));
  // NB: only with expert parallelism (torchcost::all_to_all nodes), so other
  // reports are unchanged.
  if (const report::AllToAll a2a = report::CollectAllToAll(graph, report);
      a2a.world > 0) {
    w.Key("expert_parallel");
    w.Embed(report::ExpertParallelJson(a2a, b));
  }
  // NB: only with a GPU (StepConfig::gpu), so the report without one is
  // unchanged.
  if (report.time.present) {
    w.Key("time");
    w.Embed(TimeJson(report.time));
  }

  w.Key("ops");
  w.BeginArray();
  for (const OpStats& op : report.ops) {
    w.BeginObject();
    w.Key("op");
    w.Str(op.op);
    w.Key("count");
    w.Embed(Json(op.count));
    w.Key("macs");
    WriteSymbolic(w, op.macs, b);
    w.Key("flops");
    WriteSymbolic(w, op.flops, b);
    w.Key("transcendentals");
    WriteSymbolic(w, op.transcendentals, b);
    const size_t i = &op - report.ops.data();
    if (report.time.present && i < report.time.op_seconds.size()) {
      w.Key("seconds");
      w.Embed(Json(report.time.op_seconds[i]));
    }
    if (report.time.present && i < report.time.op_classes.size()) {
      w.Key("class");
      w.Str(std::string(OpClassName(report.time.op_classes[i])));
    }
    w.EndObject();
  }
  w.EndArray();

  Json tail;
  Json unknown = Json::array();
  for (const UnknownOp& op : report.unknown_ops) {
    unknown.push_back({{"op", op.op}, {"count", op.count}});
  }
  tail["unknown_ops"] = std::move(unknown);
  tail["assumptions"] = report.assumptions;
  Json diagnostics = Json::array();
  for (const Diagnostic& d : report.diagnostics) {
    diagnostics.push_back({{"severity", report::SeverityName(d.severity)},
                           {"message", d.message}});
  }
  tail["diagnostics"] = std::move(diagnostics);
  WriteMembers(w, tail);
  w.EndObject();
  // NB: names read from a model file may be invalid UTF-8; replaced, never
  // thrown on (Writer, as dump's error_handler_t::replace).
  return w.Take();
}

}  // namespace torchcost
