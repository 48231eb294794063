#include "passes/attention_core.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace torchcost::passes {
namespace {

bool OneOf(const std::string& op,
           std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

bool IsProduct(const std::string& op) {
  return OneOf(op, {"aten::matmul", "aten::bmm", "aten::baddbmm",
                    "aten::einsum", "aten::mm"});
}

bool IsSoftmax(const std::string& op) {
  return OneOf(op, {"aten::softmax", "aten::_softmax", "aten::_safe_softmax"});
}

bool IsFusedAttention(const std::string& op) {
  return OneOf(op, {"aten::scaled_dot_product_attention",
                    "aten::_scaled_dot_product_attention",
                    "aten::_scaled_dot_product_attention_math",
                    "aten::_scaled_dot_product_flash_attention",
                    "aten::_scaled_dot_product_flash_attention_for_cpu",
                    "aten::_scaled_dot_product_efficient_attention",
                    "flash_attn::flash_attn_func"});
}

// Ops that carry the scores unchanged in kind: views, casts, copies.
bool IsCarrier(const std::string& op) {
  return OneOf(
      op, {"aten::view", "aten::reshape", "aten::_unsafe_view", "aten::expand",
           "aten::contiguous", "aten::clone", "aten::to", "aten::_to_copy",
           "aten::type_as", "aten::float", "aten::half", "aten::bfloat16",
           "aten::alias", "prim::TupleUnpack", "prim::ListUnpack"});
}

// Between Q K^T and the softmax: the scale, the mask, a softcap.
bool IsScoreOp(const std::string& op) {
  return IsCarrier(op) ||
         OneOf(op, {"aten::div", "aten::div_", "aten::mul", "aten::mul_",
                    "aten::add", "aten::add_", "aten::sub", "aten::sub_",
                    "aten::where", "aten::masked_fill", "aten::masked_fill_",
                    "aten::tanh", "aten::tanh_", "aten::clamp"});
}

// Between the softmax and A V: dropout and casts.
bool IsProbabilityOp(const std::string& op) {
  return IsCarrier(op) ||
         OneOf(op, {"aten::dropout", "aten::dropout_", "aten::native_dropout",
                    "aten::feature_dropout"});
}

// NB: bounded breadth-first walks, each value visited once (linear in the
// region): a core's chain is a handful of ops; farther matches would span
// unrelated layers.
constexpr int kMaxHops = 12;

// The nearest (latest) product upstream of value `v` through score ops, or -1.
int ProductAbove(const ir::Graph& g, int v, std::vector<int>& frontier,
                 std::vector<int>& next, std::unordered_set<int>& seen) {
  int best = -1;
  frontier.assign(1, v);
  seen.clear();
  seen.insert(v);
  for (int hop = 0; hop <= kMaxHops && !frontier.empty(); ++hop) {
    next.clear();
    for (int value : frontier) {
      const int p = g.values[value].producer;
      if (p < 0) continue;
      const ir::Node& n = g.nodes[p];
      if (IsProduct(n.op)) {
        best = std::max(best, p);
        continue;
      }
      if (!IsScoreOp(n.op)) continue;
      for (int in : n.inputs) {
        if (g.values[in].kind == ir::ValueKind::kTensor &&
            seen.insert(in).second)
          next.push_back(in);
      }
    }
    frontier.swap(next);
  }
  return best;
}

// The nearest (earliest) product downstream of value `v` through probability
// ops, or -1.
int ProductBelow(const ir::Graph& g, const std::vector<std::vector<int>>& users,
                 int v, std::vector<int>& frontier, std::vector<int>& next,
                 std::unordered_set<int>& seen) {
  int best = -1;
  frontier.assign(1, v);
  seen.clear();
  seen.insert(v);
  for (int hop = 0; hop <= kMaxHops && !frontier.empty(); ++hop) {
    next.clear();
    for (int value : frontier) {
      for (int u : users[value]) {
        const ir::Node& n = g.nodes[u];
        if (IsProduct(n.op)) {
          if (best < 0 || u < best) best = u;
        } else if (IsProbabilityOp(n.op) && !n.outputs.empty() &&
                   seen.insert(n.outputs[0]).second) {
          next.push_back(n.outputs[0]);
        }
      }
    }
    frontier.swap(next);
  }
  return best;
}

// Layout and plumbing: ops that only reshape, copy or name what the core reads.
bool IsLayout(const std::string& op) {
  return IsCarrier(op) ||
         OneOf(op, {"aten::transpose", "aten::permute", "aten::t",
                    "aten::split", "aten::chunk", "aten::unsqueeze",
                    "aten::squeeze", "aten::slice", "aten::select",
                    "prim::ListConstruct", "prim::Constant", "aten::size",
                    "aten::Int", "prim::NumToTensor", "aten::ScalarImplicit"});
}

// Moves `core.first` back over the layout ops just before it whose results
// only the core reads (torch.export's expand / clone / _unsafe_view before
// bmm; the head split of q, k, v): Megatron's core-attention module does
// these itself, so they are recomputed, not saved.
void ExtendOverLayout(const ir::Graph& g,
                      const std::vector<std::vector<int>>& users,
                      AttentionCore& core) {
  while (core.first > 0) {
    const ir::Node& n = g.nodes[core.first - 1];
    if (!IsLayout(n.op)) return;
    for (int o : n.outputs) {
      for (int u : users[o]) {
        if (u > core.last) return;
      }
    }
    --core.first;
  }
}

}  // namespace

std::vector<AttentionCore> FindAttentionCores(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<std::vector<int>> users(g.values.size());
  for (int ni = 0; ni < n; ++ni) {
    for (int in : g.nodes[ni].inputs) users[in].push_back(ni);
  }
  std::vector<AttentionCore> cores;
  std::vector<int> frontier, next;
  std::unordered_set<int> seen;
  for (int ni = 0; ni < n; ++ni) {
    const ir::Node& node = g.nodes[ni];
    if (IsFusedAttention(node.op)) {
      cores.push_back({ni, ni, ni, true});
      continue;
    }
    if (!IsSoftmax(node.op) || node.inputs.empty() || node.outputs.empty())
      continue;
    const int qk = ProductAbove(g, node.inputs[0], frontier, next, seen);
    const int av =
        ProductBelow(g, users, node.outputs[0], frontier, next, seen);
    if (qk >= 0 && av > ni) cores.push_back({qk, av, qk, false});
  }
  for (AttentionCore& c : cores) ExtendOverLayout(g, users, c);
  // In node order; overlapping ranges merged.
  std::sort(cores.begin(), cores.end(),
            [](const AttentionCore& a, const AttentionCore& b) {
              return a.first < b.first;
            });
  std::vector<AttentionCore> merged;
  for (const AttentionCore& c : cores) {
    if (!merged.empty() && c.first <= merged.back().last) {
      merged.back().last = std::max(merged.back().last, c.last);
      merged.back().fused = merged.back().fused && c.fused;
    } else {
      merged.push_back(c);
    }
  }
  return merged;
}

}  // namespace torchcost::passes
