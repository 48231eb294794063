// A small builder of ir::Graphs for tests: inputs, constants, params and nodes
// in a few lines.
#ifndef TORCHCOST_TESTS_TESTING_GRAPH_BUILDER_H_
#define TORCHCOST_TESTS_TESTING_GRAPH_BUILDER_H_

#include <string>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::testing {

class GraphBuilder {
 public:
  explicit GraphBuilder(const std::string& root_type = "Net") {
    g_.source = "test.pt";
    g_.GetOrAddScope("", root_type);
  }
  // Adds a model input (a tensor whose shape comes from the analysis options).
  int Input(const std::string& name = "x") {
    ir::Value v;
    v.name = name;
    v.kind = ir::ValueKind::kTensor;
    v.role = ir::ValueRole::kInput;
    v.table_index = static_cast<int>(g_.inputs.size());
    int vi = g_.AddValue(v);
    g_.inputs.push_back(vi);
    return vi;
  }
  // Adds a parameter owned by the module at the path prefix of `name`.
  int Param(const std::string& name, std::vector<int64_t> shape,
            bool requires_grad = true) {
    ir::TensorEntry e;
    e.name = name;
    e.shape = std::move(shape);
    e.requires_grad = requires_grad;
    ir::Value v;
    v.name = name;
    v.kind = ir::ValueKind::kTensor;
    v.role = ir::ValueRole::kParam;
    v.table_index = static_cast<int>(g_.params.size());
    int vi = g_.AddValue(v);
    e.value = vi;
    g_.params.push_back(e);
    return vi;
  }
  int Int(int64_t i) { return Const(ir::ValueKind::kInt, i); }
  int Ints(std::vector<int64_t> l) {
    return Const(ir::ValueKind::kList, std::move(l));
  }
  int Bool(bool b) { return Const(ir::ValueKind::kBool, b); }
  int None() { return Const(ir::ValueKind::kNone, std::monostate()); }
  // Sets the module scope of the nodes added next ("" is the root), creating it
  // with `type`.
  void Scope(const std::string& path, const std::string& type) {
    scope_ = g_.GetOrAddScope(path, type);
  }
  // Adds a node; returns its outputs. `op` may carry an overload
  // ("aten::add.Tensor").
  std::vector<int> Node(const std::string& op, std::vector<int> inputs,
                        std::vector<std::string> names, int n_out = 1,
                        ir::ValueKind out_kind = ir::ValueKind::kTensor) {
    ir::Node n;
    size_t dot = op.find('.');
    n.op = op.substr(0, dot);
    if (dot != std::string::npos) n.overload = op.substr(dot + 1);
    n.inputs = std::move(inputs);
    n.input_names = std::move(names);
    n.scope = scope_;
    for (int i = 0; i < n_out; ++i) {
      ir::Value v;
      v.kind = out_kind;
      v.name = "v" + std::to_string(g_.values.size());
      n.outputs.push_back(g_.AddValue(v));
    }
    n.debug_name = "%" + g_.values[n.outputs[0]].name;
    g_.AddNode(n);
    const ir::ValueIds& outs = g_.nodes.back().outputs;
    return std::vector<int>(outs.begin(), outs.end());
  }
  int One(const std::string& op, std::vector<int> inputs,
          std::vector<std::string> names = {},
          ir::ValueKind out_kind = ir::ValueKind::kTensor) {
    return Node(op, std::move(inputs), std::move(names), 1, out_kind)[0];
  }
  void Output(int v) { g_.outputs.push_back(v); }
  ir::Graph& graph() { return g_; }

 private:
  int Const(ir::ValueKind kind, ir::Constant c) {
    ir::Value v;
    v.kind = kind;
    if (kind == ir::ValueKind::kList) v.elem_kind = ir::ValueKind::kInt;
    v.role = ir::ValueRole::kConstant;
    v.has_constant = true;
    v.constant = std::move(c);
    return g_.AddValue(v);
  }

  ir::Graph g_;
  int scope_ = 0;
};

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_GRAPH_BUILDER_H_
