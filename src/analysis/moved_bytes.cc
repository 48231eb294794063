#include "analysis/moved_bytes.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "memory/storages.h"
#include "training/optimizer_model.h"

namespace torchcost::analysis {
namespace {

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Returns the bytes of a value: a tensor's, or the sum of a tensor list's; 0
// otherwise.
sym::Expr ValueBytes(const rules::RValue& v) {
  if (v.kind == rules::RValue::Kind::kTensor) return memory::BytesOf(v.t);
  sym::Expr sum(0);
  if (v.kind == rules::RValue::Kind::kTensorList) {
    for (const rules::TensorType& t : v.tensors) sum += memory::BytesOf(t);
  }
  return sum;
}

// Returns true if the node's outputs are views of an input (nothing moves).
bool IsView(const ir::Graph& g, const passes::ShapeFacts& facts,
            const ir::Node& node, const passes::NodeFacts& nf) {
  const rules::Variant* v = nf.applied->variant;
  return v != nullptr && v->alias_output >= 0 && !v->inplace &&
         !memory::ReshapeCopiesBroadcast(g, facts, node);
}

}  // namespace

OpClass ClassOf(const rules::OpRule& rule, const rules::Variant& variant) {
  if (variant.op_class >= 0) return static_cast<OpClass>(variant.op_class);
  const std::string_view file = rule.file;
  if (EndsWith(file, "/conv.yaml")) return OpClass::kConvolution;
  for (std::string_view f : {"/matmul.yaml", "/rnn.yaml"}) {
    if (EndsWith(file, f)) return OpClass::kMatmul;
  }
  if (EndsWith(file, "/attention.yaml")) return OpClass::kAttention;
  for (std::string_view f : {"/reduction.yaml", "/norm.yaml", "/loss.yaml"}) {
    if (EndsWith(file, f)) return OpClass::kReduction;
  }
  return OpClass::kPointwise;
}

void FillMovedBytes(const ir::Graph& g, const passes::ShapeFacts& facts,
                    const passes::AutogradFacts& grads,
                    const TrainingOptions& options, Report* report) {
  const bool train = options.mode == StepMode::kTrain;
  report->moved_bytes = true;
  report->collectives.clear();
  TrainingReport& tr = report->training;
  tr.node_bwd_bytes.assign(train ? g.nodes.size() : 0, sym::Expr(0));
  std::vector<int> seen;  // Distinct inputs of one node.
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& node = g.nodes[ni];
    const passes::NodeFacts& nf = facts.nodes[ni];
    NodeCost& cost = report->nodes[ni];
    cost.bytes = sym::Expr(0);
    if (nf.rule == nullptr || !nf.ok || nf.applied->variant == nullptr)
      continue;  // Native, ignored or unknown.
    const rules::Applied& a = *nf.applied;
    cost.op_class = ClassOf(*nf.rule, *a.variant);
    const bool view = IsView(g, facts, node, nf);
    // Forward: inputs read, outputs and temporaries written.
    sym::Expr outputs(0);
    for (int v : node.outputs) outputs += ValueBytes(facts.values[v]);
    if (a.has_bytes_fwd) {
      cost.bytes = a.bytes_fwd;
    } else if (!view) {
      sym::Expr bytes = outputs;
      seen.clear();
      for (int v : node.inputs) {
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
        seen.push_back(v);
        bytes += ValueBytes(facts.values[v]);
      }
      for (const rules::TensorType& t : a.temporaries)
        bytes += memory::BytesOf(t);
      // A batched matmul's copy of an argument it cannot fold (the memory
      // model's fold copy): its bytes read + its bytes written, 0 where it
      // views. NB: bmm then reads the copy where the argument's bytes are
      // counted: the same bytes for an expand's view (repeat_kv with one KV
      // head), fewer for matmul's own broadcast of a dim of 1.
      if (node.op == "aten::matmul") {
        for (int arg = 0; arg < 2; ++arg) {
          bytes += sym::Expr(2) * memory::MatmulFoldCopyBytes(
                                      g, facts, static_cast<int>(ni), arg);
        }
      }
      // NB: a matmul with an empty output (0 rows: an expert no token is
      // routed to) returns before its kernel and reads nothing, its weight
      // included: min(output bytes, 1) is 0 then, and 1 wherever the dims are
      // provably positive (the expression is unchanged there).
      if (cost.op_class == OpClass::kMatmul)
        bytes = sym::Min(outputs, sym::Expr(1)) * bytes;
      cost.bytes = bytes;
    }
    const passes::NodeAutograd* na = train ? &grads.nodes[ni] : nullptr;
    const bool backward =
        na != nullptr && na->has_grad_fn && !na->unknown_backward;
    // Whether the backward makes the gradient of argument `arg`.
    auto needed = [&](int arg) {
      const int v = nf.arg_values[arg];
      bool made = false;
      for (int e : na->grad_inputs) made = made || e == v;
      // A Tensor[] argument: any of its elements.
      if (!made && v >= 0 && g.values[v].kind == ir::ValueKind::kList &&
          g.values[v].producer >= 0) {
        for (int e : g.nodes[g.values[v].producer].inputs) {
          for (int x : na->grad_inputs) made = made || x == e;
        }
      }
      return made;
    };
    // NB: a view's collectives count too (an all-reduce sums in place).
    for (const rules::AppliedCollectives& applied : a.collectives) {
      NodeCollectives node_collectives;
      node_collectives.node = static_cast<int>(ni);
      node_collectives.group = applied.group;
      for (const auto& [arg, call] : applied.calls) {
        if (arg < 0)
          node_collectives.forward.push_back(call);
        else if (backward && needed(arg))
          node_collectives.backward.push_back(call);
      }
      report->collectives.push_back(std::move(node_collectives));
    }
    if (!backward || view) continue;
    const passes::NodeAutograd& grad = *na;
    sym::Expr bwd(0);
    if (a.has_bytes_bwd) {
      for (const auto& [arg, bytes] : a.bytes_bwd)
        if (needed(arg)) bwd += bytes;
    } else {
      // NB: each input gradient is its own kernel (linear: grad @ weight, then
      // grad^T @ input), each reading the output gradients.
      for (int e : grad.grad_inputs)
        bwd += outputs + ValueBytes(facts.values[e]);
      for (const passes::SavedRef& s : grads.Saved(ni)) {
        if (s.value >= 0) bwd += ValueBytes(facts.values[s.value]);
        if (s.temporary >= 0)
          bwd += memory::BytesOf(a.temporaries[s.temporary]);
      }
    }
    tr.node_bwd_bytes[ni] = bwd;
  }
  // The optimizer: per trainable parameter, the parameter read and written,
  // its gradient read, its states read and written.
  tr.optimizer_bytes = sym::Expr(0);
  if (!train) return;
  int64_t opt = 0;
  for (size_t i = 0; i < g.params.size(); ++i) {
    if (!grads.param_trainable[i]) continue;
    const ir::TensorEntry& p = g.params[i];
    const int64_t param = ir::Numel(p.shape) * ElementSize(p.dtype);
    const DType state = training::StateDtype(p.dtype, options.state_dtype,
                                             options.master_weights);
    // 2 * param (read, write) + param (the gradient, in the parameter's dtype)
    // + 2 * states (read, write).
    opt +=
        3 * param + 2 * training::StateBytes(options.optimizer, p.shape, state);
  }
  tr.optimizer_bytes = sym::Expr(opt);
}

}  // namespace torchcost::analysis
