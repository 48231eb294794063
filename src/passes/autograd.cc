#include "passes/autograd.h"

#include <algorithm>
#include <regex>

#include "passes/user_regex.h"
#include "rules/op_rule.h"
#include "torchcost/dtype.h"
#include "torchcost/loss.h"

namespace torchcost::passes {
namespace {

bool MatchesAny(const std::vector<std::regex>& res, const ir::TensorEntry& p) {
  for (const auto& re : res) {
    if (std::regex_search(p.name, re)) return true;
    for (const auto& a : p.aliases) {
      if (std::regex_search(a, re)) return true;
    }
  }
  return false;
}

// Returns the values a (possibly list-valued) argument stands for: a list made
// by prim::ListConstruct stands for its elements.
void Expand(const ir::Graph& g, int v, std::vector<int>* out) {
  const ir::Value& val = g.values[v];
  if (val.kind == ir::ValueKind::kList && val.producer >= 0 &&
      g.nodes[val.producer].op == "prim::ListConstruct") {
    for (int e : g.nodes[val.producer].inputs) out->push_back(e);
    return;
  }
  out->push_back(v);
}

// Returns the bytes of a tensor value (its gradient's: same shape and dtype), 0
// for any other.
sym::Expr TensorBytes(const rules::RValue& rv) {
  if (rv.kind != rules::RValue::Kind::kTensor) return sym::Expr(0);
  sym::Expr n(1);
  // Elements: the product of the dims.
  for (const auto& d : rv.t.shape) n = n * d;
  return n * (rv.t.dtype == DType::kUnknown ? 4 : ElementSize(rv.t.dtype));
}

}  // namespace

Status RunAutograd(const ir::Graph& g, const ShapeFacts& shapes,
                   const TrainingOptions& options, AutogradFacts* out) {
  out->requires_grad.assign(g.values.size(), false);
  out->nodes.assign(g.nodes.size(), NodeAutograd());
  out->saved.clear();
  out->param_trainable.assign(g.params.size(), false);
  if (options.mode != StepMode::kTrain) return Status::Ok();

  std::vector<std::regex> freeze;
  for (const auto& pattern : options.freeze) {
    try {
      freeze.push_back(UserRegex(pattern));
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("StepConfig.freeze '" + pattern +
                                     "': not a valid regular expression (" +
                                     e.what() + ")");
    }
  }
  for (size_t i = 0; i < g.params.size(); ++i) {
    const ir::TensorEntry& p = g.params[i];
    const bool trainable =
        p.requires_grad && IsFloatingPoint(p.dtype) && !MatchesAny(freeze, p);
    out->param_trainable[i] = trainable;
    if (trainable && p.value >= 0) out->requires_grad[p.value] = true;
  }
  if (options.inputs_require_grad) {
    // NB: a loss's target (the last input ApplyLoss appends) never requires a
    // gradient.
    const size_t model_inputs =
        g.inputs.size() -
        (LossAppendsOps(options.loss) && !g.inputs.empty() ? 1 : 0);
    for (size_t i = 0; i < model_inputs; ++i) {
      const int v = g.inputs[i];
      const auto& rv = shapes.values[v];
      out->requires_grad[v] = rv.kind == rules::RValue::Kind::kTensor &&
                              IsFloatingPoint(rv.t.dtype);
    }
  }

  std::vector<int> expanded;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& node = g.nodes[ni];
    const NodeFacts& nf = shapes.nodes[ni];
    NodeAutograd& na = out->nodes[ni];
    bool any = false;
    for (int v : node.inputs) any = any || out->requires_grad[v];
    if (!any) continue;
    if (nf.no_rule || (nf.rule != nullptr && !nf.ok)) {
      // NB: an op without a rule (or whose rule could not apply, as after an
      // unknown value) is taken as differentiable in every tensor input that
      // requires a gradient, so the parameters behind it and those it reads
      // get gradients; its backward FLOPs and saved tensors are unknown
      // (NodeAutograd::unknown_backward), and so are the sizes of gradients of
      // values of unknown shape (counted 0 bytes).
      bool any_output = false;
      for (int o : node.outputs) {
        const auto& rv = shapes.values[o];
        const bool grad = rv.kind == rules::RValue::Kind::kTensor
                              ? IsFloatingPoint(rv.t.dtype)
                              : rv.kind == rules::RValue::Kind::kUnknown &&
                                    g.values[o].kind == ir::ValueKind::kTensor;
        out->requires_grad[o] = grad;
        any_output = any_output || grad;
      }
      if (!any_output) continue;
      na.has_grad_fn = true;
      na.unknown_backward = true;
      for (int in : node.inputs) {
        expanded.clear();
        Expand(g, in, &expanded);
        for (int e : expanded) {
          const auto& rv = shapes.values[e];
          if (out->requires_grad[e] &&
              (rv.kind == rules::RValue::Kind::kTensor ||
               rv.kind == rules::RValue::Kind::kUnknown) &&
              std::find(na.grad_inputs.begin(), na.grad_inputs.end(), e) ==
                  na.grad_inputs.end()) {
            na.grad_inputs.push_back(e);
          }
        }
      }
      continue;
    }
    if (nf.rule == nullptr || !nf.ok) {
      // Lists, tuples and unpacking pass requires_grad through; size queries do
      // not.
      const bool plumbing =
          node.op == "prim::ListConstruct" ||
          node.op == "prim::TupleConstruct" || node.op == "prim::ListUnpack" ||
          node.op == "prim::TupleUnpack" || node.op == "aten::__getitem__" ||
          node.op == "prim::TupleIndex";
      for (int o : node.outputs) {
        const auto& rv = shapes.values[o];
        const bool tensorish =
            rv.kind == rules::RValue::Kind::kTensor
                ? IsFloatingPoint(rv.t.dtype)
                : rv.kind == rules::RValue::Kind::kTensorList ||
                      rv.kind == rules::RValue::Kind::kList;
        out->requires_grad[o] = plumbing && tensorish;
      }
      continue;
    }
    const rules::Variant& v = *nf.applied->variant;
    const rules::Schema& schema = nf.rule->schema;
    // detach and friends: outputs never require gradients.
    if (!v.differentiable) continue;
    na.has_grad_fn = true;
    // Input gradients, with their FLOPs.
    std::vector<bool> arg_needs(schema.args.size(), false);
    // What each argument's gradients take.
    std::vector<sym::Expr> arg_grad_bytes(schema.args.size(), sym::Expr(0));
    for (size_t a = 0; a < schema.args.size(); ++a) {
      int val = nf.arg_values[a];
      if (val < 0 || schema.args[a].type.base != rules::ArgType::Base::kTensor)
        continue;
      if (!v.differentiable_args.empty() &&
          std::find(v.differentiable_args.begin(), v.differentiable_args.end(),
                    static_cast<int>(a)) == v.differentiable_args.end()) {
        // NB: an argument read for its shape or dtype only (view_as, type_as)
        // gets no gradient.
        continue;
      }
      expanded.clear();
      Expand(g, val, &expanded);
      for (int e : expanded) {
        if (out->requires_grad[e]) {
          arg_needs[a] = true;
          na.grad_inputs.push_back(e);
          arg_grad_bytes[a] = arg_grad_bytes[a] + TensorBytes(shapes.values[e]);
        }
      }
    }
    for (const auto& [arg, flops] : nf.applied->bwd_flops) {
      if (arg_needs[arg]) na.bwd_flops += flops;
    }
    for (const auto& [arg, t] : nf.applied->bwd_transcendentals) {
      if (arg_needs[arg]) na.bwd_transcendentals += t;
    }
    if (v.workspace_bwd_phased) {
      // The gradients are made in argument order, one phase per needed input;
      // a phase peaks at the gradients made so far plus its entry. The
      // simulator allocates them all at once, so the scratch is that peak
      // less all of them (at least the last phase's entry, so never negative).
      std::vector<const sym::Expr*> entry(schema.args.size(), nullptr);
      for (const auto& [arg, w] : nf.applied->workspace_bwd) entry[arg] = &w;
      sym::Expr made(0), peak(0);
      for (size_t a = 0; a < schema.args.size(); ++a) {
        if (!arg_needs[a]) continue;
        made = made + arg_grad_bytes[a];
        peak = sym::Max(peak, entry[a] != nullptr ? made + *entry[a] : made);
      }
      na.bwd_workspace = peak - made;
    } else {
      for (const auto& [arg, w] : nf.applied->workspace_bwd) {
        if (arg < 0 || arg_needs[arg])
          na.bwd_workspace = sym::Max(na.bwd_workspace, w);
      }
    }
    // Saved tensors: NB: PyTorch's generated code saves a tensor only if a
    // gradient that reads it will be computed (`needed_for`).
    na.saved_begin = static_cast<uint32_t>(out->saved.size());
    for (const auto& s : v.saved) {
      bool needed = s.needed_for.empty();
      for (int a : s.needed_for) needed = needed || arg_needs[a];
      if (!needed) continue;
      SavedRef ref;
      ref.slot = s.slot;
      if (s.slot < static_cast<int>(schema.args.size())) {
        ref.value = nf.arg_values[s.slot];
        if (ref.value >= 0 &&
            g.values[ref.value].kind == ir::ValueKind::kList) {
          // A saved Tensor[] argument (einsum's operands): each tensor element
          // is saved.
          expanded.clear();
          Expand(g, ref.value, &expanded);
          for (int e : expanded) {
            if (shapes.values[e].kind != rules::RValue::Kind::kTensor) continue;
            SavedRef el = ref;
            el.value = e;
            out->saved.push_back(el);
          }
          continue;
        }
        if (ref.value < 0) continue;
        if (shapes.values[ref.value].kind != rules::RValue::Kind::kTensor)
          continue;
      } else {
        for (size_t o = 0; o < v.output_slots.size() && ref.value < 0; ++o) {
          if (v.output_slots[o] == s.slot && o < node.outputs.size())
            ref.value = node.outputs[o];
        }
        for (size_t t = 0;
             t < v.temporaries.size() && ref.value < 0 && ref.temporary < 0;
             ++t) {
          if (v.temporaries[t].slot == s.slot)
            ref.temporary = static_cast<int>(t);
        }
        if (ref.value < 0 && ref.temporary < 0) continue;
      }
      out->saved.push_back(ref);
    }
    na.saved_end = static_cast<uint32_t>(out->saved.size());
    // Outputs: floating-point results of a node with a grad_fn require
    // gradients.
    for (int o : node.outputs) {
      const auto& rv = shapes.values[o];
      if (rv.kind == rules::RValue::Kind::kTensor)
        out->requires_grad[o] = IsFloatingPoint(rv.t.dtype);
      else if (rv.kind == rules::RValue::Kind::kTensorList)
        out->requires_grad[o] = true;
    }
  }
  return Status::Ok();
}

}  // namespace torchcost::passes
