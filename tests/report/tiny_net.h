// A hand-built graph and Report of a tiny CNN, for the report tests; no
// analysis runs, so these tests only depend on the renderers.
//
//   TinyNet(                      input x: [B, 1, 8, 8]
//     (features): Sequential(
//       (0): Conv2d(1, 4, 3)      -> [B, 4, 6, 6]
//       (1): ReLU()
//       (2): Conv2d(4, 4, 1))     -> [B, 4, 6, 6]
//     (flatten): Flatten()        -> [B, 144]
//     (classifier): Linear(144, 10))  -> [B, 10]
#ifndef TORCHCOST_TESTS_REPORT_TINY_NET_H_
#define TORCHCOST_TESTS_REPORT_TINY_NET_H_

#include <string>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/sym.h"

namespace torchcost::testing {

// Costs per sample (B = 1), written as derivations; the report multiplies them
// by B.
inline constexpr int64_t kConv0Params =
    4 * 1 * 3 * 3 + 4;  // weight + bias = 40
inline constexpr int64_t kConv2Params = 4 * 4 * 1 * 1 + 4;  // 20
inline constexpr int64_t kLinearParams = 144 * 10 + 10;     // 1450
inline constexpr int64_t kParams =
    kConv0Params + kConv2Params + kLinearParams;  // 1510
inline constexpr int64_t kConv0Macs =
    /*C_out*/ 4 * /*OH*/ 6 * /*OW*/ 6 * /*C_in*/ 1 * 3 * 3;            // 1296
inline constexpr int64_t kConv2Macs = 4 * 6 * 6 * /*C_in*/ 4 * 1 * 1;  // 576
inline constexpr int64_t kReluFlops =
    4 * 6 * 6;  // one compare per element = 144
inline constexpr int64_t kLinearMacs = 144 * 10;                         // 1440
inline constexpr int64_t kMacs = kConv0Macs + kConv2Macs + kLinearMacs;  // 3312
inline constexpr int64_t kFlops = 2 * kMacs + kReluFlops;                // 6768

// Owns the context, the graph and the report of TinyNet.
struct TinyNet {
  sym::Context ctx;
  ir::Graph graph;
  Report report;
  sym::Expr B;

  TinyNet() : B(ctx.Symbol("B")) {
    graph.source = "tiny.pt";
    // Scopes: 0 root, 1 features, 2 features.0, 3 features.1, 4 features.2, 5
    // flatten, 6 classifier.
    AddScope("", "TinyNet", "TinyNet", -1);
    AddScope("features", "features", "Sequential", 0);
    AddScope("features.0", "0", "Conv2d", 1);
    AddScope("features.1", "1", "ReLU", 1);
    AddScope("features.2", "2", "Conv2d", 1);
    AddScope("flatten", "flatten", "Flatten", 0);
    AddScope("classifier", "classifier", "Linear", 0);

    ir::Value x;
    x.name = "x";
    x.kind = ir::ValueKind::kTensor;
    x.role = ir::ValueRole::kInput;
    x.dtype = DType::kFloat32;
    x.table_index = 0;
    graph.values.push_back(x);
    graph.inputs.push_back(0);

    ValueInfo xi;
    xi.known = true;
    xi.shape = {B, 1, 8, 8};
    xi.dtype = DType::kFloat32;
    report.values.push_back(xi);

    report.model = "tiny.pt";
    report.symbols = {"B"};
    report.params = kParams;
    report.trainable_params = kParams - kConv2Params;  // features.2 frozen.
    report.buffers = 0;
    report.param_bytes = kParams * 4;
    report.macs = kMacs * B;
    report.flops = kFlops * B;
    report.transcendentals = 0;

    const std::vector<sym::Expr> act = {B, 4, 6, 6};
    Module(0, kParams, kParams - kConv2Params, kMacs, kFlops, {{B, 10}});
    Module(1, kConv0Params + kConv2Params, kConv0Params,
           kConv0Macs + kConv2Macs, 2 * (kConv0Macs + kConv2Macs) + kReluFlops,
           {act});
    Module(2, kConv0Params, kConv0Params, kConv0Macs, 2 * kConv0Macs, {act});
    Module(3, 0, 0, 0, kReluFlops, {act});
    Module(4, kConv2Params, 0, kConv2Macs, 2 * kConv2Macs, {act});
    Module(5, 0, 0, 0, 0, {{B, 144}});
    Module(6, kLinearParams, kLinearParams, kLinearMacs, 2 * kLinearMacs,
           {{B, 10}});

    Op("aten::_convolution", 2, kConv0Macs + kConv2Macs,
       2 * (kConv0Macs + kConv2Macs));
    Op("aten::flatten", 1, 0, 0);
    Op("aten::linear", 1, kLinearMacs, 2 * kLinearMacs);
    Op("aten::relu", 1, 0, kReluFlops);

    report.unknown_ops = {{"aten::mystery", 2}};
    report.assumptions = {"H >= 3 (features.0: kernel fits the input)"};
    Diagnostic d;
    d.severity = Diagnostic::Severity::kWarning;
    d.message =
        "tiny.pt: node %7 (aten::mystery, module flatten): no rule for "
        "operator aten::mystery";
    report.diagnostics.push_back(d);
  }

  void AddScope(std::string path, std::string name, std::string type,
                int parent) {
    ir::Scope s;
    s.path = std::move(path);
    s.name = std::move(name);
    s.type = std::move(type);
    s.parent = parent;
    s.depth = parent < 0 ? 0 : graph.scopes[parent].depth + 1;
    const int index = static_cast<int>(graph.scopes.size());
    graph.scopes.push_back(s);
    if (parent >= 0) graph.scopes[parent].children.push_back(index);
  }

  // Adds the stats of a scope; per-sample MACs and FLOPs are multiplied by B.
  void Module(int scope, int64_t params, int64_t trainable, int64_t macs,
              int64_t flops, std::vector<std::vector<sym::Expr>> shapes) {
    ModuleStats m;
    m.scope = scope;
    m.params = params;
    m.trainable_params = trainable;
    m.macs = macs * B;
    m.flops = flops * B;
    m.transcendentals = 0;
    m.output_shapes = std::move(shapes);
    report.modules.push_back(m);
  }

  void Op(std::string name, int64_t count, int64_t macs, int64_t flops) {
    OpStats op;
    op.op = std::move(name);
    op.count = count;
    op.macs = macs * B;
    op.flops = flops * B;
    op.transcendentals = 0;
    report.ops.push_back(op);
  }
};

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_REPORT_TINY_NET_H_
