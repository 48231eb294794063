#include "testing/op_runner.h"

#include <sstream>

#include "rules/value.h"

namespace torchcost::testing {

OpArg OpArg::Tensor(std::string shape, DType dtype) {
  OpArg a;
  a.kind = Kind::kTensor;
  a.shape = std::move(shape);
  a.dtype = dtype;
  return a;
}
OpArg OpArg::TensorList(std::vector<std::string> shapes, DType dtype) {
  OpArg a;
  a.kind = Kind::kTensorList;
  for (size_t i = 0; i < shapes.size(); ++i)
    a.shape += (i ? ";" : "") + shapes[i];
  a.dtype = dtype;
  return a;
}
OpArg OpArg::Int(int64_t v) {
  OpArg a;
  a.kind = Kind::kInt;
  a.i = v;
  return a;
}
OpArg OpArg::Ints(std::vector<int64_t> v) {
  OpArg a;
  a.kind = Kind::kIntList;
  a.ints = std::move(v);
  return a;
}
OpArg OpArg::Float(double v) {
  OpArg a;
  a.kind = Kind::kFloat;
  a.f = v;
  return a;
}
OpArg OpArg::Bool(bool v) {
  OpArg a;
  a.kind = Kind::kBool;
  a.b = v;
  return a;
}
OpArg OpArg::None() { return OpArg(); }
OpArg OpArg::Str(std::string v) {
  OpArg a;
  a.kind = Kind::kString;
  a.s = std::move(v);
  return a;
}

OpRunner::OpRunner() : ctx_(std::make_unique<sym::Context>()) {
  auto r = RuleSet::Builtin();
  if (!r.ok()) {
    std::fprintf(stderr, "OpRunner: %s\n", r.status().message().c_str());
    std::abort();
  }
  rules_ = std::move(r).value();
}

OpRunner::OpRunner(std::string_view extra_rules) : OpRunner() {
  Status s = rules_.AddText(extra_rules, "extra.yaml");
  if (!s.ok()) {
    std::fprintf(stderr, "OpRunner: %s\n", s.message().c_str());
    std::abort();
  }
}

OpResult OpRunner::Run(const std::string& op,
                       const std::vector<std::pair<std::string, OpArg>>& args) {
  ir::Graph g;
  g.source = "test";
  g.GetOrAddScope("", "Test");
  AnalysisOptions options;
  options.device = device_;
  options.attention_backend = attention_backend_;
  options.training.inputs_require_grad = inputs_require_grad_;
  options.training.mode = mode_;
  options.training.torch_version = torch_version_;
  options.moved_bytes = true;  // Each node's bytes and kernel class.
  ir::Node node;
  size_t dot = op.find('.');
  node.op = op.substr(0, dot);
  if (dot != std::string::npos) node.overload = op.substr(dot + 1);
  auto add_tensor_input = [&](const std::string& shape, DType dtype) {
    ir::Value v;
    v.kind = ir::ValueKind::kTensor;
    v.role = ir::ValueRole::kInput;
    v.name = "in" + std::to_string(g.inputs.size());
    v.table_index = static_cast<int>(g.inputs.size());
    int vi = g.AddValue(v);
    g.inputs.push_back(vi);
    auto spec = shape.empty() ? Result<InputSpec>(InputSpec{{}, dtype})
                              : ParseInputSpec(*ctx_, shape, dtype);
    if (!spec.ok()) {
      std::fprintf(stderr, "OpRunner: %s\n", spec.status().message().c_str());
      std::abort();
    }
    // A 0-dim tensor is written as an empty shape string.
    options.inputs.push_back(*spec);
    return vi;
  };
  std::vector<ir::Node> pre_nodes;
  for (const auto& [name, a] : args) {
    int vi = -1;
    ir::Value v;
    switch (a.kind) {
      case OpArg::Kind::kTensor:
        vi = add_tensor_input(a.shape, a.dtype);
        break;
      case OpArg::Kind::kTensorList: {
        ir::Node list;
        list.op = "prim::ListConstruct";
        std::stringstream ss(a.shape);
        std::string item;
        while (std::getline(ss, item, ';'))
          list.inputs.push_back(add_tensor_input(item, a.dtype));
        ir::Value lv;
        lv.kind = ir::ValueKind::kList;
        lv.elem_kind = ir::ValueKind::kTensor;
        vi = g.AddValue(lv);
        list.outputs.push_back(vi);
        pre_nodes.push_back(list);
        break;
      }
      default:
        v.has_constant = true;
        v.role = ir::ValueRole::kConstant;
        if (a.kind == OpArg::Kind::kInt) {
          v.kind = ir::ValueKind::kInt;
          v.constant = a.i;
        }
        if (a.kind == OpArg::Kind::kIntList) {
          v.kind = ir::ValueKind::kList;
          v.elem_kind = ir::ValueKind::kInt;
          v.constant = a.ints;
        }
        if (a.kind == OpArg::Kind::kFloat) {
          v.kind = ir::ValueKind::kFloat;
          v.constant = a.f;
        }
        if (a.kind == OpArg::Kind::kBool) {
          v.kind = ir::ValueKind::kBool;
          v.constant = a.b;
        }
        if (a.kind == OpArg::Kind::kString) {
          v.kind = ir::ValueKind::kString;
          v.constant = a.s;
        }
        if (a.kind == OpArg::Kind::kNone) {
          v.kind = ir::ValueKind::kNone;
          v.constant = std::monostate();
        }
        vi = g.AddValue(v);
        break;
    }
    node.inputs.push_back(vi);
    node.input_names.push_back(name);
  }
  for (auto& n : pre_nodes) g.AddNode(n);
  // Outputs: as many as the rule's schema returns (one if the op has no rule).
  size_t n_out = 1;
  if (const rules::OpRule* rule = rules_.Find(node.op, node.overload)) {
    (void)rule;
  }
  OpResult result;
  // Try with one output first; the analysis reports a count mismatch, then
  // retry.
  for (size_t attempt = 0; attempt < 2; ++attempt) {
    ir::Graph g2 = g;
    ir::Node n2 = node;
    for (size_t i = 0; i < n_out; ++i) {
      ir::Value o;
      o.kind = ir::ValueKind::kTensor;
      n2.outputs.push_back(g2.AddValue(o));
    }
    n2.debug_name = "%out";
    int ni = g2.AddNode(n2);
    // With gradients, the node's outputs are the graph's (the loss is taken of
    // the first), so its backward runs and what it saves is kept.
    if (inputs_require_grad_)
      g2.outputs.assign(n2.outputs.begin(), n2.outputs.end());
    auto report = Analyze(g2, rules_, *ctx_, options);
    result = OpResult();
    if (!report.ok()) {
      result.errors.push_back(report.status().message());
      return result;
    }
    const std::string kMismatch = "outputs but the node has ";
    bool mismatch = false;
    for (const auto& d : report->diagnostics) {
      if (d.severity == Diagnostic::Severity::kError) {
        size_t at = d.message.find("the rule gives ");
        if (at != std::string::npos && attempt == 0) {
          n_out = std::stoul(d.message.substr(at + 15));
          mismatch = true;
        }
        result.errors.push_back(d.message);
      }
    }
    if (mismatch) continue;
    result.has_rule = report->nodes[ni].has_rule;
    result.macs = report->nodes[ni].macs;
    result.op_class = report->nodes[ni].op_class;
    result.flops = report->nodes[ni].flops;
    result.transcendentals = report->nodes[ni].transcendentals;
    result.assumptions = report->assumptions;
    for (int vo : n2.outputs) {
      const ValueInfo& info = report->values[vo];
      result.output_shapes.push_back(
          info.known ? rules::ShapeToString(info.shape) : "?");
      result.output_dtypes.push_back(info.dtype);
    }
    const TrainingReport& tr = report->training;
    if (static_cast<size_t>(ni) < tr.node_bwd_flops.size())
      result.bwd_flops = tr.node_bwd_flops[ni];
    result.saved_bytes = tr.saved_bytes;
    for (const SavedTensorInfo& s : tr.saved) {
      if (s.node != ni) continue;
      OpSaved o;
      o.what = s.what;
      o.bytes = s.bytes;
      o.counted = s.counted;
      // NB: the simulation numbers storages params, buffers, then the graph's
      // inputs in order (this graph has no params or buffers), then what the
      // nodes allocate: an id below the input count is that input's storage.
      o.input = s.storage >= 0 && s.storage < static_cast<int>(g2.inputs.size())
                    ? s.storage
                    : -1;
      result.saved.push_back(std::move(o));
    }
    break;
  }
  return result;
}

}  // namespace torchcost::testing
