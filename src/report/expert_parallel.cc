#include "report/expert_parallel.h"

#include <optional>
#include <variant>

#include "report/format.h"

namespace torchcost::report {
namespace {

// Returns the constant string input `name` of `n`, or "".
std::string StringArg(const ir::Graph& g, const ir::Node& n, const char* name) {
  for (size_t i = 0; i < n.inputs.size() && i < n.input_names.size(); ++i) {
    if (n.input_names[i] != name) continue;
    if (auto* s = std::get_if<std::string>(&g.values[n.inputs[i]].constant))
      return *s;
  }
  return "";
}

// Returns the constant int input `name` of `n`, or 0.
int64_t IntArg(const ir::Graph& g, const ir::Node& n, const char* name) {
  for (size_t i = 0; i < n.inputs.size() && i < n.input_names.size(); ++i) {
    if (n.input_names[i] != name) continue;
    if (auto* v = std::get_if<int64_t>(&g.values[n.inputs[i]].constant))
      return *v;
  }
  return 0;
}

// Returns the bytes of the tensor value `v`: numel x itemsize.
sym::Expr TensorBytes(const ValueInfo& v) {
  sym::Expr bytes(ElementSize(v.dtype));
  for (const sym::Expr& d : v.shape) bytes = bytes * d;
  return bytes;
}

std::string Bytes(const sym::Expr& e, const sym::Bindings& b) {
  return HumanAndExact(e, b, Unit::kBytes);
}

}  // namespace

AllToAll CollectAllToAll(const ir::Graph& graph, const Report& report) {
  AllToAll a;
  a.dispatch = a.combine = a.forward = a.backward = sym::Expr(0);
  bool first_dispatch = true, first_combine = true;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& n = graph.nodes[i];
    if (n.op != "torchcost::all_to_all" || n.outputs.empty()) continue;
    const ValueInfo& out = report.values[n.outputs[0]];
    if (!out.known) continue;
    const sym::Expr bytes = TensorBytes(out);
    const std::string purpose = StringArg(graph, n, "purpose");
    a.world = static_cast<int>(IntArg(graph, n, "world"));
    a.forward += bytes;
    if (purpose == "dispatch") {
      ++a.layers;
      if (first_dispatch) a.dispatch = bytes;
      first_dispatch = false;
    } else if (purpose == "combine" && first_combine) {
      a.combine = bytes;
      first_combine = false;
    }
  }
  // The backward sends each all-to-all's gradient back: the same bytes.
  if (report.training.mode == StepMode::kTrain) a.backward = a.forward;
  return a;
}

std::string RenderExpertParallel(const AllToAll& a, const sym::Bindings& b) {
  if (a.world == 0) return "";
  std::string out = "Expert parallelism: ep=" + std::to_string(a.world) + ", " +
                    std::to_string(a.layers) +
                    " MoE layers; all-to-all payload per rank (bytes sent)\n";
  out += "  Per MoE layer, forward: dispatch " + Bytes(a.dispatch, b) +
         ", combine " + Bytes(a.combine, b) + "\n";
  out += "  Per step: forward " + Bytes(a.forward, b) + ", backward " +
         Bytes(a.backward, b) + "\n";
  return out;
}

nlohmann::ordered_json ExpertParallelJson(const AllToAll& a,
                                          const sym::Bindings& b) {
  if (a.world == 0) return nullptr;
  auto symbolic = [&](const sym::Expr& e) {
    nlohmann::ordered_json j;
    j["expr"] = e.ToString();
    std::optional<__int128> v = TryEvaluate(e, b);
    if (v)
      j["value"] = static_cast<int64_t>(*v);
    else
      j["value"] = nullptr;
    return j;
  };
  nlohmann::ordered_json j;
  j["ep"] = a.world;
  j["moe_layers"] = a.layers;
  j["all_to_all"] = {{"dispatch_bytes_per_layer", symbolic(a.dispatch)},
                     {"combine_bytes_per_layer", symbolic(a.combine)},
                     {"forward_bytes_per_step", symbolic(a.forward)},
                     {"backward_bytes_per_step", symbolic(a.backward)}};
  return j;
}

}  // namespace torchcost::report
