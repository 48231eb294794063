#include "passes/repeat_span.h"

namespace torchcost::passes {
namespace {

// True if `a` and `b` are constants of one kind, dtype and value (a value's
// fact is a function of those three).
bool SameConstant(const ir::Value& a, const ir::Value& b) {
  return a.has_constant && b.has_constant && a.producer < 0 && b.producer < 0 &&
         a.kind == b.kind && a.elem_kind == b.elem_kind && a.dtype == b.dtype &&
         a.constant == b.constant;
}

}  // namespace

bool RepeatsSource(const ir::Graph& g, const ir::RepeatSpan& s,
                   std::vector<std::pair<int, int>>* outside) {
  const int num_nodes = static_cast<int>(g.nodes.size());
  const int num_values = static_cast<int>(g.values.size());
  // Both runs within the graph, each after the other's end.
  if (s.nodes <= 0 || s.source_node < 0 || s.source_node + s.nodes > s.node ||
      s.node > num_nodes - s.nodes || s.values < 0 || s.source_value < 0 ||
      s.value_shift < s.values ||
      s.source_value > num_values - s.values - s.value_shift) {
    return false;
  }
  const int node_shift = s.node - s.source_node;
  auto in_source_nodes = [&](int n) {
    return n >= s.source_node && n < s.source_node + s.nodes;
  };
  auto in_source_values = [&](int v) {
    return v >= s.source_value && v < s.source_value + s.values;
  };
  // The values: each image alike, made by its source's image node or the
  // same constant.
  for (int v = s.source_value; v < s.source_value + s.values; ++v) {
    const ir::Value &x = g.values[v], &y = g.values[v + s.value_shift];
    if (x.kind != y.kind || x.has_traced_shape != y.has_traced_shape ||
        x.traced_shape != y.traced_shape) {
      return false;
    }
    if (in_source_nodes(x.producer)) {
      if (y.producer != x.producer + node_shift) return false;
    } else if (!SameConstant(x, y)) {
      return false;
    }
  }
  // The nodes: alike, reading the images of the source run's values.
  for (int k = 0; k < s.nodes; ++k) {
    const ir::Node& a = g.nodes[s.source_node + k];
    const ir::Node& b = g.nodes[s.node + k];
    if (a.inputs.size() != b.inputs.size() ||
        a.outputs.size() != b.outputs.size() || a.op != b.op ||
        a.overload != b.overload || a.input_names != b.input_names) {
      return false;
    }
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      const int va = a.inputs[i], vb = b.inputs[i];
      if (in_source_values(va)) {
        if (vb != va + s.value_shift) return false;
      } else if (va < 0 || va >= num_values || vb < 0 || vb >= num_values ||
                 g.values[vb].producer >= s.node) {
        return false;
      } else if (va != vb && !SameConstant(g.values[va], g.values[vb])) {
        outside->emplace_back(va, vb);
      }
    }
    for (size_t o = 0; o < a.outputs.size(); ++o) {
      if (!in_source_values(a.outputs[o]) ||
          b.outputs[o] != a.outputs[o] + s.value_shift) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace torchcost::passes
