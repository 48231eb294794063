#include "analysis/async_backward.h"

#include <optional>
#include <string>

#include "analysis/gemm_operands.h"

namespace torchcost::analysis {
namespace {

constexpr char kCopyToTpRegion[] = "torchcost::copy_to_tp_region";

}  // namespace

AsyncBackwardOverlap::AsyncBackwardOverlap(
    const ir::Graph& graph, const Report& report, const std::vector<char>& grad,
    const std::vector<double>& gemm_seconds)
    : graph_(graph), grad_(grad), gemm_seconds_(gemm_seconds) {
  // Which copy_to_tp_region each value views (-1: none): its output, and the
  // outputs of the nodes that move nothing (views) from it.
  std::vector<int> from;
  for (size_t ni = 0; ni < graph.nodes.size(); ++ni) {
    const ir::Node& node = graph.nodes[ni];
    if (node.op != kCopyToTpRegion) continue;
    if (from.empty()) {
      from.assign(graph.values.size(), -1);
      users_weight_seconds_.assign(graph.nodes.size(), 0);
    }
    for (int v : node.outputs) from[v] = static_cast<int>(ni);
  }
  if (from.empty()) return;
  auto needs = [&](const ir::Node& node, int i) {
    return i >= 0 && i < static_cast<int>(node.inputs.size()) &&
           node.inputs[i] >= 0 && grad[node.inputs[i]];
  };
  for (size_t ni = 0; ni < graph.nodes.size(); ++ni) {
    const ir::Node& node = graph.nodes[ni];
    if (node.inputs.empty() || node.inputs[0] < 0) continue;
    if (const std::optional<GemmOperands> gemm = GemmOperandsOf(node.op)) {
      const int data = gemm->first;
      const int v =
          data < static_cast<int>(node.inputs.size()) ? node.inputs[data] : -1;
      if (v >= 0 && from[v] >= 0 && needs(node, data + 1))
        users_weight_seconds_[from[v]] += gemm_seconds[ni];
      continue;
    }
    // NB: a node that moves nothing and computes nothing is a view here.
    const int source = from[node.inputs[0]];
    if (source < 0 || ni >= report.nodes.size()) continue;
    const NodeCost& c = report.nodes[ni];
    if (c.bytes == sym::Expr(0) && c.flops == sym::Expr(0)) {
      for (int v : node.outputs) from[v] = source;
    }
  }
}

double AsyncBackwardOverlap::Beside(int node, CollectiveKind kind) const {
  if (node < 0 || static_cast<size_t>(node) >= graph_.nodes.size()) return 0;
  const ir::Node& n = graph_.nodes[node];
  if (n.op == kCopyToTpRegion && kind == CollectiveKind::kAllReduce)
    return users_weight_seconds_.empty() ? 0 : users_weight_seconds_[node];
  if (n.op != "torchcost::sp_linear") return 0;
  // The weight gradient's GEMM beside the reduce-scatter, the input
  // gradient's beside the all-gather: each runs where its operand needs it.
  const int data = GemmOperandsOf(n.op)->first;
  const int beside = kind == CollectiveKind::kReduceScatter ? data + 1
                     : kind == CollectiveKind::kAllGather   ? data
                                                            : -1;
  if (beside < 0 || beside >= static_cast<int>(n.inputs.size()) ||
      n.inputs[beside] < 0 || !grad_[n.inputs[beside]])
    return 0;
  return gemm_seconds_[node];
}

}  // namespace torchcost::analysis
