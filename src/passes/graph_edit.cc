#include "passes/graph_edit.h"

namespace torchcost::passes {

int GraphEditor::Constant(ir::ValueKind kind, ir::Constant c) {
  ir::Value v;
  v.kind = kind;
  v.role = ir::ValueRole::kConstant;
  v.has_constant = true;
  v.constant = std::move(c);
  if (kind == ir::ValueKind::kList) v.elem_kind = ir::ValueKind::kInt;
  return g_.AddValue(std::move(v));
}

int GraphEditor::Int(int64_t i) { return Constant(ir::ValueKind::kInt, i); }
int GraphEditor::Float(double f) { return Constant(ir::ValueKind::kFloat, f); }
int GraphEditor::Bool(bool b) { return Constant(ir::ValueKind::kBool, b); }
int GraphEditor::Str(std::string s) {
  return Constant(ir::ValueKind::kString, std::move(s));
}
int GraphEditor::None() {
  return Constant(ir::ValueKind::kNone, std::monostate());
}
int GraphEditor::Ints(std::vector<int64_t> l) {
  return Constant(ir::ValueKind::kList, std::move(l));
}

int GraphEditor::WrappedNumber(DType dtype) {
  ir::Value v;
  v.name = "wrapped" + std::to_string(g_.values.size());
  v.kind = ir::ValueKind::kTensor;
  v.role = ir::ValueRole::kConstant;
  v.dtype = dtype;
  v.has_traced_shape = true;  // Shape [].
  return g_.AddValue(std::move(v));
}

int GraphEditor::Param(const std::string& name, std::vector<int64_t> shape,
                       DType dtype, bool requires_grad) {
  ir::TensorEntry e;
  e.name = name;
  e.shape = std::move(shape);
  e.dtype = dtype;
  e.requires_grad = requires_grad;
  ir::Value v;
  v.name = name;
  v.kind = ir::ValueKind::kTensor;
  v.role = ir::ValueRole::kParam;
  v.dtype = dtype;
  v.has_traced_shape = true;
  v.traced_shape = e.shape;
  v.table_index = static_cast<int>(g_.params.size());
  const int value = g_.AddValue(std::move(v));
  e.value = value;
  g_.params.push_back(std::move(e));
  return value;
}

int GraphEditor::QuantState(const std::string& name, std::vector<int64_t> shape,
                            DType dtype) {
  const int value = Param(name, std::move(shape), dtype, false);
  g_.params.back().counted_elements = 0;
  return value;
}

int GraphEditor::Op(const std::string& op, const std::string& overload,
                    std::vector<int> inputs, std::vector<std::string> names,
                    int scope) {
  ir::Value out;
  out.kind = ir::ValueKind::kTensor;
  out.name = "peft" + std::to_string(g_.values.size());
  const int o = g_.AddValue(std::move(out));
  ir::Node n;
  n.op = op;
  n.overload = overload;
  n.inputs = std::move(inputs);
  n.input_names = std::move(names);
  n.outputs = {o};
  n.scope = scope;
  n.debug_name = "%" + g_.values[o].name;
  g_.AddNode(std::move(n));
  return o;
}

void GraphEditor::KeepAlive(std::vector<int> values, int scope) {
  ir::Node n;
  n.op = "torchcost::keep_alive";
  n.inputs = std::move(values);
  n.scope = scope;
  n.debug_name = "%keep_alive" + std::to_string(g_.nodes.size());
  g_.AddNode(std::move(n));
}

int NodeArg(const ir::Node& node, const std::string& name, size_t position) {
  for (size_t i = 0; i < node.input_names.size() && i < node.inputs.size();
       ++i) {
    if (node.input_names[i] == name) return node.inputs[i];
  }
  if (node.input_names.empty() && position < node.inputs.size())
    return node.inputs[position];
  return -1;
}

std::string LeafName(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace torchcost::passes
