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
#include "rules/op_rule.h"

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
    return node == o.node && input == o.input && element == o.element && from == o.from && to == o.to;
  }
};

// Returns true for eligible dtypes: autocast casts floating-point tensors
// other than float64 (complex is not floating point in PyTorch).
bool Eligible(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16;
}

// Returns true for in-place op names ("aten::add_"), which autocast leaves alone.
bool IsInplaceName(const std::string& op) {
  return op.size() > 2 && op.back() == '_' && op[op.size() - 2] != '_';
}

class Rewriter {
 public:
  Rewriter(const ir::Graph& base, const AnalysisOptions& options, std::vector<bool> trainable)
      : base_(base), options_(options), trainable_(std::move(trainable)) {
    map_.resize(base.nodes.size());
    for (size_t i = 0; i < map_.size(); ++i) map_[i] = static_cast<int>(i);
  }

  // Decides the casts from a propagation of the last graph built (the base at first).
  std::vector<Cast> Decide(const passes::ShapeFacts& facts) const {
    std::vector<Cast> casts;
    const bool cpu = options_.device == "cpu";
    for (size_t n = 0; n < base_.nodes.size(); ++n) {
      const ir::Node& node = base_.nodes[n];
      const passes::NodeFacts& nf = facts.nodes[map_[n]];
      if (nf.rule == nullptr || !nf.ok || nf.applied.variant == nullptr || IsInplaceName(node.op)) continue;
      const rules::AutocastSpec& spec = nf.applied.variant->autocast;
      const AutocastPolicy policy = cpu ? spec.cpu : spec.cuda;
      if (policy == AutocastPolicy::kNone) continue;
      if (!spec.only.empty() && std::find(spec.only.begin(), spec.only.end(), node.op) == spec.only.end()) continue;
      // NB: an op called with an explicit dtype= is not autocast (PyTorch's autocast docs).
      const int dtype_arg = nf.rule->schema.FindArg("dtype");
      if (dtype_arg >= 0 && nf.arg_values[dtype_arg] >= 0 &&
          facts.values[nf.arg_values[dtype_arg]].kind != RValue::Kind::kNone) {
        continue;
      }
      // The eligible arguments, with their dtypes.
      std::vector<Cast> args;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const int v = node.inputs[i];
        const ir::Value& val = base_.values[v];
        if (val.kind == ir::ValueKind::kList) {
          if (val.producer < 0 || base_.nodes[val.producer].op != "prim::ListConstruct") continue;
          const auto& elems = base_.nodes[val.producer].inputs;
          for (size_t j = 0; j < elems.size(); ++j) AddEligible(facts, elems[j], n, i, j, &args);
        } else {
          AddEligible(facts, v, n, i, -1, &args);
        }
      }
      if (args.empty()) continue;
      DType target = policy == AutocastPolicy::kLower ? options_.autocast : DType::kFloat32;
      if (policy == AutocastPolicy::kPromote) {
        target = args[0].from;
        for (const Cast& a : args) target = PromoteTypes(target, a.from);
      }
      for (Cast& a : args) {
        if (a.from == target) continue;
        a.to = target;
        casts.push_back(a);
      }
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
    std::vector<int> cached;  // Cast copies of parameters, held to the region's end.
    size_t c = 0;
    for (size_t n = 0; n < base_.nodes.size(); ++n) {
      ir::Node node = base_.nodes[n];
      while (c < casts.size() && casts[c].node == static_cast<int>(n)) {
        const int input = casts[c].input;
        if (casts[c].element < 0) {
          node.inputs[input] = CastOf(g, node.inputs[input], casts[c], node.scope, &cached);
          ++c;
          continue;
        }
        // Elements of a Tensor[] argument: a new list of the cast elements.
        const int list = base_.nodes[n].inputs[input];
        ir::Node make = base_.nodes[base_.values[list].producer];
        for (; c < casts.size() && casts[c].node == static_cast<int>(n) && casts[c].input == input; ++c) {
          make.inputs[casts[c].element] = CastOf(g, make.inputs[casts[c].element], casts[c], node.scope, &cached);
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
  void AddEligible(const passes::ShapeFacts& facts, int v, size_t n, size_t i, int j, std::vector<Cast>* out) const {
    const RValue& rv = facts.values[v];
    if (rv.kind != RValue::Kind::kTensor || !Eligible(rv.t.dtype) || rv.t.has_scalar) return;
    Cast a;
    a.node = static_cast<int>(n);
    a.input = static_cast<int>(i);
    a.element = j;
    a.from = rv.t.dtype;
    out->push_back(a);
  }

  // Returns the value of `src` cast as `cast` says, adding the node (or
  // reusing the weight cache's copy).
  int CastOf(ir::Graph& g, int src, const Cast& cast, int scope, std::vector<int>* cached) {
    const ir::Value& sv = base_.values[src];
    // NB: autocast caches a cast only to the low precision, of a float32 leaf
    // that requires a gradient (autocast_mode.cpp, cached_cast).
    const bool cacheable = cast.to == options_.autocast && cast.from == DType::kFloat32 &&
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
  std::vector<bool> trainable_;  // Per parameter: requires a gradient (not frozen).
  std::vector<int> map_;         // Base node -> node of the last graph built.
  std::map<int, int> cache_;     // Parameter value -> its cached low-precision copy.
  std::map<DType, int> dtype_consts_;
};

// Per parameter: requires_grad and not frozen by options.training.freeze.
Result<std::vector<bool>> Trainable(const ir::Graph& g, const TrainingOptions& options) {
  std::vector<std::regex> freeze;
  for (const auto& pattern : options.freeze) {
    try {
      freeze.emplace_back(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("--freeze '" + pattern + "': not a valid regular expression (" + e.what() + ")");
    }
  }
  std::vector<bool> out(g.params.size(), false);
  for (size_t i = 0; i < g.params.size(); ++i) {
    const ir::TensorEntry& p = g.params[i];
    bool frozen = false;
    for (const auto& re : freeze) {
      frozen = frozen || std::regex_search(p.name, re);
      for (const auto& a : p.aliases) frozen = frozen || std::regex_search(a, re);
    }
    out[i] = p.requires_grad && !frozen;
  }
  return out;
}

}  // namespace

Result<ir::Graph> ApplyAutocast(const ir::Graph& graph, const RuleSet& rules, sym::Context& ctx,
                                const AnalysisOptions& options) {
  if (options.autocast != DType::kFloat16 && options.autocast != DType::kBFloat16) {
    return Status::InvalidArgument("autocast runs float16 or bfloat16, not " +
                                   std::string(DTypeName(options.autocast)));
  }
  if (options.device == "cpu" && options.autocast != DType::kBFloat16) {
    return Status::InvalidArgument("CPU autocast (torch 1.13) runs bfloat16 only");
  }
  // The dtypes the analysis will see: parameters converted as Analyze does.
  ir::Graph base = graph;
  if (options.param_dtype != DType::kUnknown) {
    for (auto* table : {&base.params, &base.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = options.param_dtype;
      }
    }
  }
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<bool> trainable, Trainable(base, options.training));
  Rewriter rewriter(base, options, std::move(trainable));
  ir::Graph current = base;
  std::vector<Cast> casts;
  try {
    for (int round = 0; round < kMaxRounds; ++round) {
      passes::ShapeFacts facts;
      Report scratch;
      TORCHCOST_RETURN_IF_ERROR(passes::PropagateShapes(current, rules, ctx, options, &facts, &scratch));
      std::vector<Cast> next = rewriter.Decide(facts);
      if (next == casts) return current;
      casts = std::move(next);
      current = rewriter.Build(casts);
    }
  } catch (const sym::Error& e) {
    return Status::OutOfRange(graph.source + ": " + e.what());
  }
  return Status::Internal(graph.source + ": autocast casts did not settle after " + std::to_string(kMaxRounds) +
                          " rounds of shape propagation");
}

std::string PrecisionName(const AnalysisOptions& options) {
  if (options.autocast == DType::kFloat16) return "fp16-mixed";
  if (options.autocast == DType::kBFloat16) return "bf16-mixed";
  if (options.param_dtype == DType::kBFloat16) return "bf16";
  if (options.param_dtype == DType::kFloat16) return "fp16";
  if (options.param_dtype == DType::kUnknown || options.param_dtype == DType::kFloat32) return "fp32";
  return std::string(DTypeName(options.param_dtype));
}

}  // namespace torchcost
