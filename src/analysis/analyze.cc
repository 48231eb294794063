#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analyze_propagated.h"
#include "analysis/moved_bytes.h"
#include "ir/op_name_hash.h"
#include "memory/scope_intervals.h"
#include "memory/step.h"
#include "memory/sum_cache.h"
#include "passes/autograd.h"
#include "passes/native_ops.h"
#include "passes/shape_prop.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/loss.h"
#include "training/checkpoint.h"
#include "training/galore_model.h"
#include "training/optimizer_model.h"
#include "training/sharding.h"

namespace torchcost {
namespace {

using ir::Numel;

// Returns the dtype every floating-point parameter of `graph` holds, or
// kUnknown where they differ or there are none.
DType StoredParamDtype(const ir::Graph& graph) {
  DType shared = DType::kUnknown;
  for (const ir::TensorEntry& p : graph.params) {
    if (!IsFloatingPoint(p.dtype)) continue;
    if (shared != DType::kUnknown && p.dtype != shared) return DType::kUnknown;
    shared = p.dtype;
  }
  return shared;
}

// Returns the path of the module owning a qualified tensor name ("a.b.weight"
// -> "a.b").
std::string_view OwnerPath(std::string_view name) {
  size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? std::string_view()
                                       : name.substr(0, dot);
}

// A sum of many expressions with few distinct values: each distinct one is
// added once, times its count (the same canonical sum as adding one by one).
class CountedSum {
 public:
  // NB: most node costs are 0 (views, plumbing): that test stays inline here,
  // and the hash lookup is a call only for the rest.
  void Add(const sym::Expr& e) {
    if (e != sym::Expr(0)) AddNonZero(e);
  }
  // Returns `start` plus every added expression.
  sym::Expr Total(sym::Expr start) const {
    for (const auto& [e, n] : terms_) start += n == 1 ? e : sym::Expr(n) * e;
    return start;
  }

 private:
  void AddNonZero(const sym::Expr& e) {
    // NB: try_emplace makes no node when e is already there.
    auto [it, inserted] = index_.try_emplace(e, terms_.size());
    if (inserted) terms_.emplace_back(e, 0);
    ++terms_[it->second].second;
  }

  std::unordered_map<sym::Expr, size_t> index_;
  std::vector<std::pair<sym::Expr, int64_t>> terms_;
};

class Aggregator {
 public:
  Aggregator(const ir::Graph& g, Report* r) : g_(g), r_(r) {
    for (size_t i = 0; i < g.scopes.size(); ++i)
      by_path_[g.scopes[i].path] = static_cast<int>(i);
  }

  void Run() {
    r_->modules.assign(g_.scopes.size(), ModuleStats());
    for (size_t i = 0; i < g_.scopes.size(); ++i)
      r_->modules[i].scope = static_cast<int>(i);
    Totals();
    Params();
    InactiveParams();
    NodeCosts();
    OutputShapes();
  }

 private:
  void Totals() {
    for (const auto& p : g_.params) {
      const int64_t n = ir::CountedElements(p);
      r_->params += n;
      if (p.counted_elements >= 0) r_->quantized_params += n;
      if (p.requires_grad) r_->trainable_params += n;
      r_->param_bytes += Numel(p.shape) * ElementSize(p.dtype);
    }
    for (const auto& b : g_.buffers) {
      int64_t n = Numel(b.shape);
      r_->buffers += n;
      r_->buffer_bytes += n * ElementSize(b.dtype);
    }
  }

  // Returns the deepest existing scope that owns `path` (walking up the dotted
  // path).
  int ScopeOf(std::string_view path) const {
    for (;;) {
      auto it = by_path_.find(path);
      if (it != by_path_.end()) return it->second;
      if (path.empty()) return 0;
      path = OwnerPath(path);
    }
  }

  void Params() {
    // NB: a tied parameter counts once in every module that holds any of its
    // names: a module is marked with the parameter it last counted. A chain
    // stops at a marked module, whose ancestors were marked with it.
    std::vector<int> counted(g_.scopes.size(), -1);
    for (size_t pi = 0; pi < g_.params.size(); ++pi) {
      const ir::TensorEntry& p = g_.params[pi];
      const int mark = static_cast<int>(pi);
      const int64_t n = ir::CountedElements(p);
      auto add_chain = [&](std::string_view name) {
        for (int s = ScopeOf(OwnerPath(name)); s >= 0 && counted[s] != mark;
             s = g_.scopes[s].parent) {
          counted[s] = mark;
          r_->modules[s].params += n;
          if (p.requires_grad) r_->modules[s].trainable_params += n;
        }
      };
      add_chain(p.name);
      for (const auto& a : p.aliases) add_chain(a);
    }
  }

  // After Params: a token is routed to top_k of a list's n experts, each
  // expert equally often (the balanced routing the builder assumes), so on
  // average it leaves (n - top_k) / n of the list's parameters unused; exactly
  // (n - top_k) experts' where the experts are alike.
  void InactiveParams() {
    for (size_t s = 0; s < g_.scopes.size(); ++s) {
      const ir::Scope& scope = g_.scopes[s];
      const int64_t n = static_cast<int64_t>(scope.children.size());
      if (scope.routed_top_k <= 0 || n == 0) continue;
      r_->inactive_params +=
          r_->modules[s].params * (n - scope.routed_top_k) / n;
    }
  }

  void NodeCosts() {
    // Per op name: its row of r_->ops (-1 until it has one), and whether the
    // op table leaves it out, for an overload other than "int" and for "int"
    // (-1: not asked yet).
    // NB: passes::IsNativeOp reads only the op and whether the overload is
    // "int"; asked once per op, not per node.
    struct OpEntry {
      int row = -1;
      signed char left_out[2] = {-1, -1};
    };
    std::unordered_map<std::string_view, OpEntry, ir::OpNameHash> op_entries;
    // NB: a module's running totals repeat from layer to layer.
    memory::SumCache sums;
    CountedSum macs, flops, transcendentals;
    // Per op (parallel to r_->ops until sorted).
    std::vector<CountedSum> op_macs, op_flops, op_transcendentals;
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      const ir::Node& node = g_.nodes[ni];
      const NodeCost& c = r_->nodes[ni];
      macs.Add(c.macs);
      flops.Add(c.flops);
      transcendentals.Add(c.transcendentals);
      r_->lower_bound = r_->lower_bound || c.cost_unknown;
      // A node's cost goes to its own module here; subtree totals are summed
      // bottom-up below (one symbolic add per node and per module, not per
      // node and ancestor).
      ModuleStats& m = r_->modules[node.scope];
      m.macs = sums.Add(m.macs, c.macs);
      m.flops = sums.Add(m.flops, c.flops);
      m.transcendentals = sums.Add(m.transcendentals, c.transcendentals);
      m.lower_bound = m.lower_bound || c.cost_unknown;
      ++m.num_nodes;
      if (!c.has_rule) continue;
      OpEntry& entry = op_entries[node.op];
      // NB: the op table lists tensor ops; list plumbing and size queries are
      // left out.
      const std::string& overload = node.overload;
      signed char& left_out =
          entry.left_out[overload.size() == 3 &&
                         overload.compare(0, 3, "int") == 0];
      if (left_out < 0) {
        left_out = passes::IsNativeOp(node) || node.op.rfind("prim::", 0) == 0;
      }
      if (left_out) continue;
      if (entry.row < 0) {
        entry.row = static_cast<int>(r_->ops.size());
        r_->ops.emplace_back();
        r_->ops.back().op = node.op;
        op_macs.emplace_back();
        op_flops.emplace_back();
        op_transcendentals.emplace_back();
      }
      ++r_->ops[entry.row].count;
      op_macs[entry.row].Add(c.macs);
      op_flops[entry.row].Add(c.flops);
      op_transcendentals[entry.row].Add(c.transcendentals);
    }
    r_->macs = macs.Total(r_->macs);
    r_->flops = flops.Total(r_->flops);
    r_->transcendentals = transcendentals.Total(r_->transcendentals);
    for (size_t i = 0; i < r_->ops.size(); ++i) {
      OpStats& o = r_->ops[i];
      o.macs = op_macs[i].Total(o.macs);
      o.flops = op_flops[i].Total(o.flops);
      o.transcendentals = op_transcendentals[i].Total(o.transcendentals);
    }
    std::sort(r_->ops.begin(), r_->ops.end(),
              [](const OpStats& a, const OpStats& b) { return a.op < b.op; });
    std::vector<int> deepest_first(g_.scopes.size());
    for (size_t i = 0; i < deepest_first.size(); ++i)
      deepest_first[i] = static_cast<int>(i);
    std::stable_sort(
        deepest_first.begin(), deepest_first.end(),
        [&](int a, int b) { return g_.scopes[a].depth > g_.scopes[b].depth; });
    for (int sc : deepest_first) {
      const int parent = g_.scopes[sc].parent;
      if (parent < 0) continue;
      ModuleStats& child = r_->modules[sc];
      ModuleStats& up = r_->modules[parent];
      up.macs = sums.Add(up.macs, child.macs);
      up.flops = sums.Add(up.flops, child.flops);
      up.transcendentals = sums.Add(up.transcendentals, child.transcendentals);
      up.num_nodes += child.num_nodes;
      up.lower_bound = up.lower_bound || child.lower_bound;
    }
  }

  // A module's outputs: tensors its last call produced that are used outside
  // it. NB: a call is a maximal run of consecutive nodes in the module's
  // subtree.
  void OutputShapes() {
    const size_t ns = g_.scopes.size();
    const memory::ScopeIntervals tree(g_);
    std::vector<int> last_run_start(ns, -1);
    int prev_scope = -1;
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      int sc = g_.nodes[ni].scope;
      // NB: once a module holds the previous node, so do its ancestors: the
      // new calls are the modules below the first one that does.
      for (int s = sc; s >= 0; s = g_.scopes[s].parent) {
        if (prev_scope >= 0 && tree.InSubtree(prev_scope, s)) break;
        last_run_start[s] = static_cast<int>(ni);
      }
      prev_scope = sc;
    }
    // Per value, its users' scopes first and last in pre-order (-1: none).
    // NB: a module holds every user iff it holds those two (its subtree is
    // one interval of the order).
    std::vector<int> first_user(g_.values.size(), -1),
        last_user(g_.values.size(), -1);
    for (const auto& node : g_.nodes) {
      const int sc = node.scope, order = tree.Order(sc);
      for (int vi : node.inputs) {
        if (first_user[vi] < 0 || order < tree.Order(first_user[vi]))
          first_user[vi] = sc;
        if (last_user[vi] < 0 || order > tree.Order(last_user[vi]))
          last_user[vi] = sc;
      }
    }
    // Graph outputs count as a use by no module.
    std::vector<bool> is_output(g_.values.size(), false);
    for (int vi : g_.outputs) is_output[vi] = true;
    // (module, value) in the order found; each module's outputs in that order.
    std::vector<std::pair<int, int>> outs;
    std::vector<int> num_outs(ns, 0);
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      const ir::Node& node = g_.nodes[ni];
      for (int vo : node.outputs) {
        if (g_.values[vo].kind != ir::ValueKind::kTensor ||
            !r_->values[vo].known)
          continue;
        // NB: the enclosing modules nest, so once one holds every user of
        // vo (and vo is no graph output), so do all outer ones: vo escapes
        // the modules below it only.
        for (int s = node.scope; s >= 0; s = g_.scopes[s].parent) {
          const bool escapes =
              is_output[vo] ||
              (first_user[vo] >= 0 && !(tree.InSubtree(first_user[vo], s) &&
                                        tree.InSubtree(last_user[vo], s)));
          if (!escapes) break;
          // Only the outputs of the last call of s count.
          if (last_run_start[s] <= static_cast<int>(ni)) {
            outs.emplace_back(s, vo);
            ++num_outs[s];
          }
        }
      }
    }
    for (size_t s = 0; s < ns; ++s)
      r_->modules[s].output_shapes.reserve(num_outs[s]);
    for (const auto& [s, vo] : outs)
      r_->modules[s].output_shapes.push_back(r_->values[vo].shape);
  }

  const ir::Graph& g_;
  Report* r_;
  // NB: views of the graph's scope paths, which outlive the aggregator.
  std::unordered_map<std::string_view, int> by_path_;
};

// Backward and optimizer FLOPs, per node, per module and in total.
void FillTrainingFlops(const ir::Graph& g, const passes::AutogradFacts& grads,
                       const TrainingOptions& options, Report* r) {
  TrainingReport& tr = r->training;
  tr.mode = options.mode;
  tr.optimizer = options.optimizer;
  tr.node_bwd_flops.assign(g.nodes.size(), sym::Expr(0));
  tr.module_bwd_flops.assign(g.scopes.size(), sym::Expr(0));
  tr.flops_forward = r->flops;
  tr.flops_backward = sym::Expr(0);
  tr.flops_lower_bound = r->lower_bound;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    tr.flops_lower_bound =
        tr.flops_lower_bound || grads.nodes[ni].unknown_backward;
    const sym::Expr& f = grads.nodes[ni].bwd_flops;
    if (f == sym::Expr(0)) continue;
    tr.node_bwd_flops[ni] = f;
    tr.flops_backward += f;
    for (int s = g.nodes[ni].scope; s >= 0; s = g.scopes[s].parent)
      tr.module_bwd_flops[s] += f;
  }
  tr.grad_params = 0;
  for (size_t i = 0; i < g.params.size(); ++i) {
    if (grads.param_trainable[i]) tr.grad_params += Numel(g.params[i].shape);
  }
  // Optimizer: a fixed number of FLOPs per trainable element
  // (training/optimizer_model.cc).
  const bool train = options.mode == StepMode::kTrain;
  tr.flops_optimizer =
      train ? sym::Expr(tr.grad_params *
                        training::ModelOf(options.optimizer).flops_per_element)
            : sym::Expr(0);
  // GaLore's AdamW: per parameter (projections, Adam on the projected state,
  // the amortized SVD).
  if (train && tr.galore) {
    tr.flops_optimizer = sym::Expr(0);
    int64_t flops = 0;
    for (size_t i = 0; i < g.params.size(); ++i) {
      if (grads.param_trainable[i])
        flops += training::GaloreFlops(g.params[i].shape, tr.galore_targets[i],
                                       *tr.galore);
    }
    tr.flops_optimizer = sym::Expr(flops);
  }
  // GradScaler's unscale_: one multiply by 1/scale per gradient element.
  if (train && options.grad_scaler)
    tr.flops_optimizer += sym::Expr(tr.grad_params);
  tr.accumulate = options.accumulate;
  tr.foreach = options.foreach;
  tr.torch_version = options.torch_version;
  tr.fused = options.fused;
  tr.set_to_none = options.set_to_none;
  // NB: adding a gradient into an allocated .grad (set_to_none=False, or the
  // later micro-batches of an accumulation) costs one add per element;
  // AccumulateGrad otherwise takes the new gradient as is.
  // Adds per step: every micro-batch with set_to_none=False, all but the first
  // otherwise.
  const int64_t adds =
      options.set_to_none ? options.accumulate - 1 : options.accumulate;
  // NB: a checkpointed segment's forward runs again in backward; its FLOPs
  // (found by the step simulation) count as backward FLOPs.
  tr.flops_backward += tr.flops_recompute;
  const sym::Expr base_backward = tr.flops_backward;
  // The modelled micro-batch adds.
  if (train && adds > 0) tr.flops_backward += sym::Expr(tr.grad_params);
  tr.flops_step =
      train
          ? sym::Expr(options.accumulate) * (tr.flops_forward + base_backward) +
                sym::Expr(adds * tr.grad_params) + tr.flops_optimizer
          : tr.flops_forward;
}

// Checks that the first output is a 0-dim loss where the step takes it as
// one (any loss but sum: appended by ApplyLoss, or the model's own).
Status CheckLoss(const ir::Graph& g, const passes::ShapeFacts& facts,
                 const TrainingOptions& options) {
  if (options.mode != StepMode::kTrain ||
      options.loss.kind == LossSpec::Kind::kSum || g.outputs.empty()) {
    return Status::Ok();
  }
  const rules::RValue& out = facts.values[g.outputs[0]];
  if (out.kind != rules::RValue::Kind::kTensor || out.t.shape.empty())
    return Status::Ok();
  const std::string shape = rules::ShapeToString(out.t.shape);
  if (options.loss.kind == LossSpec::Kind::kNone) {
    return Status::InvalidArgument(g.source +
                                   ": loss none: the model's first output is " +
                                   shape + ", not a 0-dim loss");
  }
  return Status::InvalidArgument(g.source + ": loss " + options.loss.text +
                                 ": the first output is " + shape +
                                 "; append the loss with ApplyLoss first");
}

// Checks what every analysis needs of the graph: a root module, nodes, and
// parameters and buffers whose bytes fit int64.
Status CheckGraph(const ir::Graph& original) {
  if (original.scopes.empty())
    return Status::InvalidArgument(original.source +
                                   ": the graph has no root module");
  if (original.nodes.empty())
    return Status::InvalidArgument(
        original.source + ": the graph has no nodes: nothing to analyse");
  // NB: tensor sizes multiply with overflow checks (16 bytes per element at
  // most: complex128): a parameter or buffer of 2^63 bytes or more is an error,
  // not a wrap.
  for (const auto* table : {&original.params, &original.buffers}) {
    for (const ir::TensorEntry& e : *table) {
      int64_t bytes = 16;
      for (int64_t d : e.shape) {
        if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes)) {
          return Status::InvalidArgument(original.source + ": " + e.name +
                                         ": its size overflows int64 bytes");
        }
      }
    }
  }
  return Status::Ok();
}

// Everything after shape propagation: totals, autograd, checkpointing, the
// step's simulation, FLOPs and sharding.
// NB: takes `facts` to change: what only autograd reads is freed once it has
// run.
Result<Report> AnalyzeFacts(const ir::Graph& graph, sym::Context& ctx,
                            const AnalysisOptions& options,
                            passes::ShapeFacts& facts, Report report) {
  try {
    Aggregator(graph, &report).Run();
    TORCHCOST_RETURN_IF_ERROR(CheckLoss(graph, facts, options.training));
    passes::AutogradFacts grads;
    TORCHCOST_RETURN_IF_ERROR(
        passes::RunAutograd(graph, facts, options.training, &grads));
    // The rules' per-argument backward costs are in `grads` now; nothing reads
    // them again.
    for (auto& applied : facts.applied) {
      std::vector<std::pair<int, sym::Expr>>().swap(applied->bwd_flops);
      applied->bwd_transcendentals.clear();
      applied->workspace_bwd.clear();
    }
    TORCHCOST_ASSIGN_OR_RETURN(
        report.training.checkpoint_segments,
        training::FindCheckpointSegments(graph, options.training));
    report.training.checkpoint = options.training.checkpoint;
    report.training.checkpoint_group = options.training.checkpoint_group;
    if (options.training.checkpoint == "selective") {
      // Fewer cores than repeated blocks: some attention was not recognised.
      const size_t blocks = training::RepeatedBlocks(graph).size();
      const size_t cores = report.training.checkpoint_segments.size();
      if (cores < blocks) {
        report.diagnostics.push_back(
            {Diagnostic::Severity::kWarning,
             "StepConfig.checkpoint selective: " + std::to_string(cores) +
                 (cores == 1 ? " attention core" : " attention cores") +
                 " found in " + std::to_string(blocks) +
                 " repeated blocks; the other blocks' attention is not "
                 "recomputed"});
      }
    }
    if (options.training.mode == StepMode::kTrain) {
      for (const std::string& gap : graph.train_gaps) {
        report.diagnostics.push_back({Diagnostic::Severity::kWarning, gap});
      }
    }
    report.training.galore.reset();
    TORCHCOST_RETURN_IF_ERROR(CheckOptimizerSettings(options.training));
    report.training.paged =
        options.training.paged && options.training.mode == StepMode::kTrain;
    report.training.paged_opt_bytes = 0;
    report.training.state_dtype = options.training.mode == StepMode::kTrain
                                      ? options.training.state_dtype
                                      : DType::kUnknown;
    if ((options.training.galore || options.training.foreach) &&
        (options.training.sharding.strategy != ShardStrategy::kNone ||
         options.training.master_weights)) {
      return Status::InvalidArgument(
          "GaLore and the foreach step are not modelled with sharding or "
          "master weights");
    }
    if (options.training.galore && options.training.mode == StepMode::kTrain) {
      TORCHCOST_ASSIGN_OR_RETURN(
          report.training.galore_targets,
          training::GaloreTargets(graph, grads.param_trainable,
                                  *options.training.galore));
      report.training.galore = options.training.galore;
      report.training.galore_params = 0;
      for (size_t i = 0; i < graph.params.size(); ++i) {
        if (report.training.galore_targets[i])
          report.training.galore_params += Numel(graph.params[i].shape);
      }
    }
    // The simulation first: it finds which segments are recomputed (their
    // FLOPs).
    memory::SimulateStep(graph, facts, grads, options.training, &report);
    FillTrainingFlops(graph, grads, options.training, &report);
    if (options.moved_bytes)
      analysis::FillMovedBytes(graph, facts, grads, options.training, &report);
    // One rank's memory under data-parallel sharding or master weights.
    TORCHCOST_RETURN_IF_ERROR(training::ShardStep(graph, grads.param_trainable,
                                                  grads.requires_grad,
                                                  options.training, &report));
  } catch (const sym::Error& e) {
    return Status::OutOfRange(graph.source + ": " + e.what());
  }
  std::set<std::string> symbols;
  for (const auto& in : options.inputs) {
    for (const auto& d : in.shape) {
      for (auto& s : sym::FreeSymbols(d)) symbols.insert(s);
    }
  }
  report.symbols.assign(symbols.begin(), symbols.end());
  // NB: parameters built or traced in 16 bits (a family's dtype, a half
  // model) name the precision as converted ones do.
  AnalysisOptions named = options;
  if (named.param_dtype == DType::kUnknown)
    named.param_dtype = StoredParamDtype(graph);
  report.training.precision = PrecisionName(named);
  report.training.loss = LossDescription(options.training.loss);
  report.training.grad_scaler =
      options.training.grad_scaler && options.training.mode == StepMode::kTrain;
  if (options.strict && !report.unknown_ops.empty()) {
    std::string ops;
    for (const auto& u : report.unknown_ops)
      ops += (ops.empty() ? "" : ", ") + u.op + " (x" +
             std::to_string(u.count) + ")";
    return Status::Unimplemented(graph.source + ": " +
                                 std::to_string(report.unknown_ops.size()) +
                                 " operators without rules: " + ops);
  }
  return report;
}

}  // namespace

Result<Report> Analyze(const ir::Graph& original, const RuleSet& rules,
                       sym::Context& ctx, const AnalysisOptions& options) {
  Report report;
  report.model = original.source;
  TORCHCOST_RETURN_IF_ERROR(CheckGraph(original));
  // With a parameter dtype given, floating-point parameters and buffers are
  // analysed as if the model had been converted (`model.to(dtype)`).
  ir::Graph converted;
  if (options.param_dtype != DType::kUnknown) {
    converted = original;
    for (auto* table : {&converted.params, &converted.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = options.param_dtype;
      }
    }
  }
  const ir::Graph& graph =
      options.param_dtype != DType::kUnknown ? converted : original;
  passes::ShapeFacts facts;
  try {
    TORCHCOST_RETURN_IF_ERROR(
        passes::PropagateShapes(graph, rules, ctx, options, &facts, &report));
  } catch (const sym::Error& e) {
    return Status::OutOfRange(graph.source + ": " + e.what());
  }
  return AnalyzeFacts(graph, ctx, options, facts, std::move(report));
}

Result<Report> analysis::AnalyzePropagated(const ir::Graph& graph,
                                           const RuleSet& rules,
                                           sym::Context& ctx,
                                           const AnalysisOptions& options,
                                           passes::ShapeFacts facts,
                                           Report propagated) {
  if (options.param_dtype != DType::kUnknown) {
    return Status::Internal(
        graph.source +
        ": AnalyzePropagated takes a converted graph (param_dtype unset)");
  }
  propagated.model = graph.source;
  TORCHCOST_RETURN_IF_ERROR(CheckGraph(graph));
  return AnalyzeFacts(graph, ctx, options, facts, std::move(propagated));
}

}  // namespace torchcost
