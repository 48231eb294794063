// The autocast rewrite: casts inserted where torch.autocast makes them, found
// by a fixpoint over shape propagation (casts change dtypes downstream, which
// may call for more casts or fewer).
#include "torchcost/autocast.h"

#include <algorithm>
#include <map>
#include <regex>
#include <utility>
#include <vector>

#include "passes/shape_prop.h"
#include "passes/user_regex.h"
#include "rules/op_rule.h"
#include "training/propagated.h"

namespace torchcost {
namespace {

using rules::AutocastPolicy;
using rules::RValue;

// Rounds of propagation before giving up; real models settle in 2 or 3.
constexpr int kMaxRounds = 8;

// One cast: the argument at `input` (an index into the original node's
// inputs; `element` >= 0: that element of a list built by prim::ListConstruct)
// of original node `node`, from dtype `from` to `to`.
struct Cast {
  int node = -1;
  int input = -1;
  int element = -1;
  DType from = DType::kUnknown;
  DType to = DType::kUnknown;
  bool operator==(const Cast& o) const {
    return node == o.node && input == o.input && element == o.element &&
           from == o.from && to == o.to;
  }
};

// Returns true for eligible dtypes: autocast casts floating-point tensors
// other than float64 (complex is not floating point in PyTorch).
bool Eligible(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16;
}

// Returns true for in-place op names ("aten::add_"), which autocast leaves
// alone.
bool IsInplaceName(const std::string& op) {
  return op.size() > 2 && op.back() == '_' && op[op.size() - 2] != '_';
}

class Rewriter {
 public:
  Rewriter(const ir::Graph& base, const AnalysisOptions& options,
           std::vector<bool> trainable)
      : base_(base), options_(options), trainable_(std::move(trainable)) {
    map_.resize(base.nodes.size());
    for (size_t i = 0; i < map_.size(); ++i) map_[i] = static_cast<int>(i);
  }

  // Decides the casts from a propagation of the last graph built (the base at
  // first). With `forecast`, the dtypes the casts give downstream are
  // forecast as it goes (below), so the first round is usually final.
  std::vector<Cast> Decide(const passes::ShapeFacts& facts,
                           bool forecast) const {
    std::vector<DType> dt(facts.values.size(), DType::kUnknown);
    for (size_t v = 0; v < dt.size(); ++v) {
      const RValue& rv = facts.values[v];
      if (rv.kind == RValue::Kind::kTensor) dt[v] = rv.t.dtype;
      if (rv.kind == RValue::Kind::kTensorList && !rv.tensors.empty())
        dt[v] = rv.tensors[0].dtype;
    }
    std::vector<Cast> casts;
    for (size_t n = 0; n < base_.nodes.size(); ++n) {
      const size_t first = casts.size();
      NodeCasts(facts, dt, n, &casts);
      if (forecast)
        Forecast(facts, n, casts.data() + first, casts.data() + casts.size(),
                 &dt);
    }
    return casts;
  }

  // Returns the base graph with `casts` (in node order) inserted.
  ir::Graph Build(const std::vector<Cast>& casts) {
    ir::Graph g = base_;
    g.nodes.clear();
    for (auto& v : g.values) v.producer = -1;
    cache_.clear();
    dtype_consts_.clear();
    // Cast copies of parameters, held to the region's end.
    std::vector<int> cached;
    size_t c = 0;
    for (size_t n = 0; n < base_.nodes.size(); ++n) {
      ir::Node node = base_.nodes[n];
      while (c < casts.size() && casts[c].node == static_cast<int>(n)) {
        const int input = casts[c].input;
        if (casts[c].element < 0) {
          node.inputs[input] =
              CastOf(g, node.inputs[input], casts[c], node.scope, &cached);
          ++c;
          continue;
        }
        // Elements of a Tensor[] argument: a new list of the cast elements.
        const int list = base_.nodes[n].inputs[input];
        ir::Node make = base_.nodes[base_.values[list].producer];
        for (; c < casts.size() && casts[c].node == static_cast<int>(n) &&
               casts[c].input == input;
             ++c) {
          make.inputs[casts[c].element] = CastOf(
              g, make.inputs[casts[c].element], casts[c], node.scope, &cached);
        }
        ir::Value out = base_.values[list];
        out.name += ".autocast";
        make.outputs = {g.AddValue(std::move(out))};
        make.scope = node.scope;
        make.debug_name = "%" + g.values[make.outputs[0]].name;
        node.inputs[input] = make.outputs[0];
        g.AddNode(std::move(make));
      }
      map_[n] = g.AddNode(std::move(node));
    }
    if (!cached.empty()) {
      ir::Node exit;
      exit.op = kAutocastExitOp;
      exit.inputs = cached;
      exit.debug_name = "%autocast_exit";
      g.AddNode(std::move(exit));
    }
    return g;
  }

 private:
  // Appends the casts autocast makes before base node `n`, given the dtypes
  // `dt`.
  void NodeCasts(const passes::ShapeFacts& facts, const std::vector<DType>& dt,
                 size_t n, std::vector<Cast>* casts) const {
    const ir::Node& node = base_.nodes[n];
    const passes::NodeFacts& nf = facts.nodes[map_[n]];
    if (nf.rule == nullptr || !nf.ok || nf.applied->variant == nullptr ||
        IsInplaceName(node.op))
      return;
    const rules::AutocastSpec& spec = nf.applied->variant->autocast;
    const AutocastPolicy policy =
        options_.device == "cpu" ? spec.cpu : spec.cuda;
    if (policy == AutocastPolicy::kNone) return;
    if (!spec.only.empty() && std::find(spec.only.begin(), spec.only.end(),
                                        node.op) == spec.only.end())
      return;
    // NB: an op called with an explicit dtype= is not autocast (PyTorch's
    // autocast docs).
    const int dtype_arg = nf.rule->schema.FindArg("dtype");
    if (dtype_arg >= 0 && nf.arg_values[dtype_arg] >= 0 &&
        facts.values[nf.arg_values[dtype_arg]].kind != RValue::Kind::kNone) {
      return;
    }
    // The eligible arguments, with their dtypes.
    std::vector<Cast> args;
    ForEachTensorInput(n, [&](int v, int i, int j) {
      const RValue& rv = facts.values[v];
      if (rv.kind != RValue::Kind::kTensor || rv.t.has_scalar ||
          !Eligible(dt[v]))
        return;
      Cast a;
      a.node = static_cast<int>(n);
      a.input = i;
      a.element = j;
      a.from = dt[v];
      args.push_back(a);
    });
    if (args.empty()) return;
    DType target =
        policy == AutocastPolicy::kLower ? options_.autocast : DType::kFloat32;
    if (policy == AutocastPolicy::kPromote) {
      target = args[0].from;
      for (const Cast& a : args) target = PromoteTypes(target, a.from);
    }
    for (Cast& a : args) {
      if (a.from == target) continue;
      a.to = target;
      casts->push_back(a);
    }
  }

  // Calls fn(value, input index, list element or -1) for each input of base
  // node `n`, the elements of a list built by prim::ListConstruct included.
  template <typename Fn>
  void ForEachTensorInput(size_t n, Fn fn) const {
    const ir::Node& node = base_.nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int v = node.inputs[i];
      const ir::Value& val = base_.values[v];
      if (val.kind == ir::ValueKind::kList) {
        if (val.producer < 0 ||
            base_.nodes[val.producer].op != "prim::ListConstruct")
          continue;
        const auto& elems = base_.nodes[val.producer].inputs;
        for (size_t j = 0; j < elems.size(); ++j)
          fn(elems[j], static_cast<int>(i), static_cast<int>(j));
      } else {
        fn(v, static_cast<int>(i), -1);
      }
    }
  }

  // Forecasts the dtypes of base node `n`'s outputs once its casts
  // [begin, end) are made: an op whose floating output had the promoted dtype
  // of its floating inputs (rank > 0) keeps following them; any other keeps
  // its dtype. NB: only a guess to save rounds: the fixpoint checks it.
  void Forecast(const passes::ShapeFacts& facts, size_t n, const Cast* begin,
                const Cast* end, std::vector<DType>* dt) const {
    const ir::Node& node = base_.nodes[n];
    if (node.op == "prim::ListUnpack" || node.op == "prim::TupleUnpack") {
      for (int o : node.outputs) (*dt)[o] = (*dt)[node.inputs[0]];
      return;
    }
    DType before = DType::kUnknown, after = DType::kUnknown;
    ForEachTensorInput(n, [&](int v, int i, int j) {
      const RValue& rv = facts.values[v];
      if (rv.kind != RValue::Kind::kTensor || rv.t.has_scalar ||
          rv.t.shape.empty() || !Eligible(rv.t.dtype))
        return;
      DType d = (*dt)[v];
      for (const Cast* c = begin; c != end; ++c) {
        if (c->input == i && c->element == j) d = c->to;
      }
      before = before == DType::kUnknown ? rv.t.dtype
                                         : PromoteTypes(before, rv.t.dtype);
      after = after == DType::kUnknown ? d : PromoteTypes(after, d);
    });
    // An output the rule gives a tensor argument's type (batch_norm's `out:
    // input`) follows that argument.
    const passes::NodeFacts& nf = facts.nodes[map_[n]];
    const rules::Variant* variant =
        nf.ok && nf.rule ? nf.applied->variant : nullptr;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int o = node.outputs[k];
      if (facts.values[o].kind != RValue::Kind::kTensor &&
          facts.values[o].kind != RValue::Kind::kTensorList)
        continue;
      const int same_as = variant && k < variant->outputs.size()
                              ? variant->outputs[k].same_as
                              : -1;
      if (same_as >= 0 && nf.arg_values[same_as] >= 0) {
        const int a = nf.arg_values[same_as];
        DType d = (*dt)[a];
        for (const Cast* c = begin; c != end; ++c) {
          if (node.inputs[c->input] == a && c->element < 0) d = c->to;
        }
        if (Eligible(d) && Eligible((*dt)[o])) (*dt)[o] = d;
        continue;
      }
      if (before != DType::kUnknown && Eligible(after) && (*dt)[o] == before)
        (*dt)[o] = after;
    }
  }

  // Returns the value of `src` cast as `cast` says, adding the node (or
  // reusing the weight cache's copy).
  int CastOf(ir::Graph& g, int src, const Cast& cast, int scope,
             std::vector<int>* cached) {
    const ir::Value& sv = base_.values[src];
    // NB: autocast caches a cast only to the low precision, of a float32 leaf
    // that requires a gradient (autocast_mode.cpp, cached_cast).
    const bool cacheable =
        cast.to == options_.autocast && cast.from == DType::kFloat32 &&
        sv.role == ir::ValueRole::kParam && trainable_[sv.table_index];
    if (cacheable) {
      auto it = cache_.find(src);
      if (it != cache_.end()) return it->second;
    }
    ir::Value out;
    out.kind = ir::ValueKind::kTensor;
    out.dtype = cast.to;
    out.name = sv.name + "." + std::string(DTypeName(cast.to));
    const int o = g.AddValue(std::move(out));
    ir::Node node;
    node.op = "aten::to";
    node.overload = "dtype";
    node.inputs = {src, DTypeConstant(g, cast.to)};
    node.input_names = {"self", "dtype"};
    node.outputs = {o};
    node.scope = scope;
    node.debug_name = "%" + g.values[o].name;
    g.AddNode(std::move(node));
    if (cacheable) {
      cache_[src] = o;
      cached->push_back(o);
    }
    return o;
  }

  // A ScalarType constant, as TorchScript passes dtypes (the c10 code).
  int DTypeConstant(ir::Graph& g, DType d) {
    auto it = dtype_consts_.find(d);
    if (it != dtype_consts_.end()) return it->second;
    ir::Value v;
    v.kind = ir::ValueKind::kInt;
    v.role = ir::ValueRole::kConstant;
    v.has_constant = true;
    v.constant = static_cast<int64_t>(d);
    const int id = g.AddValue(std::move(v));
    dtype_consts_[d] = id;
    return id;
  }

  const ir::Graph& base_;
  const AnalysisOptions& options_;
  // Per parameter: requires a gradient (not frozen).
  std::vector<bool> trainable_;
  std::vector<int> map_;  // Base node -> node of the last graph built.
  // Parameter value -> its cached low-precision copy.
  std::map<int, int> cache_;
  std::map<DType, int> dtype_consts_;
};

// Per parameter: requires_grad and not frozen by options.training.freeze.
Result<std::vector<bool>> Trainable(const ir::Graph& g,
                                    const TrainingOptions& options) {
  std::vector<std::regex> freeze;
  for (const auto& pattern : options.freeze) {
    try {
      freeze.push_back(passes::UserRegex(pattern));
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("StepConfig.freeze '" + pattern +
                                     "': not a valid regular expression (" +
                                     e.what() + ")");
    }
  }
  std::vector<bool> out(g.params.size(), false);
  for (size_t i = 0; i < g.params.size(); ++i) {
    const ir::TensorEntry& p = g.params[i];
    bool frozen = false;
    for (const auto& re : freeze) {
      frozen = frozen || std::regex_search(p.name, re);
      for (const auto& a : p.aliases)
        frozen = frozen || std::regex_search(a, re);
    }
    out[i] = p.requires_grad && !frozen;
  }
  return out;
}

}  // namespace

namespace training {

Result<ir::Graph> ApplyAutocastPropagated(const ir::Graph& graph,
                                          const RuleSet& rules,
                                          sym::Context& ctx,
                                          const AnalysisOptions& options,
                                          passes::ShapeFacts* facts,
                                          Report* propagated, bool given) {
  if (options.autocast != DType::kFloat16 &&
      options.autocast != DType::kBFloat16) {
    return Status::InvalidArgument("autocast runs float16 or bfloat16, not " +
                                   std::string(DTypeName(options.autocast)));
  }
  if (options.device == "cpu" && options.autocast != DType::kBFloat16) {
    return Status::InvalidArgument(
        "CPU autocast (torch 1.13) runs bfloat16 only");
  }
  // The dtypes the analysis will see: parameters converted as Analyze does.
  ir::Graph converted;
  if (options.param_dtype != DType::kUnknown) {
    converted = graph;
    for (auto* table : {&converted.params, &converted.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = options.param_dtype;
      }
    }
  }
  const ir::Graph& base =
      options.param_dtype != DType::kUnknown ? converted : graph;
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<bool> trainable,
                             Trainable(base, options.training));
  Rewriter rewriter(base, options, std::move(trainable));
  ir::Graph built;
  const ir::Graph* current = &base;
  std::vector<Cast> casts;
  try {
    for (int round = 0; round < kMaxRounds; ++round) {
      // NB: facts given are of `graph`; with a dtype conversion, `base`
      // differs.
      if (round > 0 || !given || options.param_dtype != DType::kUnknown) {
        *facts = passes::ShapeFacts();
        *propagated = Report();
        TORCHCOST_RETURN_IF_ERROR(passes::PropagateShapes(
            *current, rules, ctx, options, facts, propagated));
      }
      std::vector<Cast> next = rewriter.Decide(*facts, /*forecast=*/round == 0);
      // NB: the last round propagated the graph returned, so its facts are that
      // graph's.
      if (next == casts) return current == &built ? std::move(built) : base;
      casts = std::move(next);
      built = rewriter.Build(casts);
      current = &built;
    }
  } catch (const sym::Error& e) {
    return Status::OutOfRange(graph.source + ": " + e.what());
  }
  return Status::Internal(
      graph.source + ": autocast casts did not settle after " +
      std::to_string(kMaxRounds) + " rounds of shape propagation");
}

}  // namespace training

Result<ir::Graph> ApplyAutocast(const ir::Graph& graph, const RuleSet& rules,
                                sym::Context& ctx,
                                const AnalysisOptions& options) {
  passes::ShapeFacts facts;
  Report scratch;
  return training::ApplyAutocastPropagated(graph, rules, ctx, options, &facts,
                                           &scratch);
}

std::string PrecisionName(const AnalysisOptions& options) {
  if (options.autocast == DType::kFloat16) return "fp16-mixed";
  if (options.autocast == DType::kBFloat16) return "bf16-mixed";
  if (options.param_dtype == DType::kBFloat16) return "bf16";
  if (options.param_dtype == DType::kFloat16) return "fp16";
  if (options.param_dtype == DType::kUnknown ||
      options.param_dtype == DType::kFloat32)
    return "fp32";
  return std::string(DTypeName(options.param_dtype));
}

}  // namespace torchcost
