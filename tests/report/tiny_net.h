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
#include "torchcost/training.h"

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

// The training step (adam; features.2 frozen; x needs no gradient), per
// sample. Backward FLOPs: conv0 only its weight and bias gradients (its input
// needs none), the frozen conv2 only its input gradient, the linear layer all
// three.
inline constexpr int64_t kConv0BwdFlops = 2 * kConv0Macs + 4 * 6 * 6;  // 2736
inline constexpr int64_t kReluBwdFlops = kReluFlops;                   // 144
inline constexpr int64_t kConv2BwdFlops = 2 * kConv2Macs;              // 1152
inline constexpr int64_t kLinearBwdFlops = 2 * 2 * kLinearMacs + 10;   // 5770
inline constexpr int64_t kBwdFlops =
    kConv0BwdFlops + kReluBwdFlops + kConv2BwdFlops + kLinearBwdFlops;  // 9802
// Saved activations, float32: relu saves its output, the linear layer its
// input (both [B, 4, 6, 6] = 144 elements per sample).
inline constexpr int64_t kReluActBytes = 144 * 4;    // 576
inline constexpr int64_t kLinearActBytes = 144 * 4;  // 576
// Bytes of the step's fixed state.
inline constexpr int64_t kParamBytes = kParams * 4;             // 6040
inline constexpr int64_t kGradParams = kParams - kConv2Params;  // 1490
inline constexpr int64_t kOptBytes =
    2 * kGradParams * 4;  // adam's exp_avg, exp_avg_sq: 11920
inline constexpr int64_t kOptTempBytes =
    12000;  // Adam's temporaries in the step.

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
    Training();

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
              int64_t flops, std::vector<sym::Shape> shapes) {
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

  void AddNode(std::string name, std::string op, int scope) {
    ir::Node n;
    n.debug_name = std::move(name);
    n.op = std::move(op);
    n.scope = scope;
    graph.nodes.push_back(std::move(n));
  }

  // Appends a timeline point; `live` is {param, buffer, grad, act, temp, opt,
  // oth}.
  void Point(StepPhase phase, int node, CategoryBytes live) {
    TimelinePoint p;
    p.phase = phase;
    p.node = node;
    p.live = live;
    for (const sym::Expr& e : live) p.total += e;
    report.training.timeline.push_back(std::move(p));
  }

  // The training step, a hand-written timeline (bytes; B the batch):
  //
  //   point  phase      node    grad    act     temp    what happens
  //   0      setup      -       0       0       0       params, adam state, x
  //   1      forward    conv0   0       576B    0       conv0's output
  //   2      forward    relu    0       1152B   0       relu's output too
  //   3      forward    relu    0       576B    0       conv0's output freed
  //   4      forward    conv2   0       1152B   0       conv2's output
  //   5      forward    linear  0       1192B   0       logits (40B)
  //   6      backward   linear  5800    1192B   616B    classifier's grads
  //   7      backward   relu    5800    576B    1152B   grad of relu's input
  //   8      backward   conv0   5960    0       576B    conv0's grads
  //   9      optimizer  -       5960    0       12000   adam's temporaries
  //   10     optimizer  -       5960    0       0       step done
  //
  // Every point also holds param 6040, opt 11920 and oth (x) 256B. The peak is
  // point 6 (23760 + 2064B) or point 9 (35920 + 256B): point 6 iff B >= 7.
  void Training() {
    AddNode("%input.1", "aten::_convolution", 2);
    AddNode("%input.3", "aten::relu", 3);
    AddNode("%input.5", "aten::_convolution", 4);
    AddNode("%x.1", "aten::flatten", 5);
    AddNode("%logits", "aten::linear", 6);
    TrainingReport& tr = report.training;
    tr.mode = StepMode::kTrain;
    tr.optimizer = OptimizerKind::kAdam;
    tr.flops_forward = kFlops * B;
    tr.flops_backward = kBwdFlops * B;
    tr.flops_optimizer = kGradParams * 12;  // 12 FLOPs per element.
    tr.flops_step = tr.flops_forward + tr.flops_backward + tr.flops_optimizer;
    tr.saved_bytes = (kReluActBytes + kLinearActBytes) * B;
    tr.grad_params = kGradParams;
    tr.node_bwd_flops = {kConv0BwdFlops * B, kReluBwdFlops * B,
                         kConv2BwdFlops * B, 0, kLinearBwdFlops * B};
    tr.module_bwd_flops = {
        kBwdFlops * B,
        (kConv0BwdFlops + kReluBwdFlops + kConv2BwdFlops) * B,
        kConv0BwdFlops * B,
        kReluBwdFlops * B,
        kConv2BwdFlops * B,
        0,
        kLinearBwdFlops * B};
    tr.module_act_bytes = {(kReluActBytes + kLinearActBytes) * B,
                           kReluActBytes * B,
                           0,
                           kReluActBytes * B,
                           0,
                           0,
                           kLinearActBytes * B};
    const sym::Expr P = kParamBytes, O = kOptBytes, X = 256 * B;
    const int64_t classifier_grad = kLinearParams * 4;  // 5800
    const int64_t all_grads = kGradParams * 4;          // 5960
    using S = StepPhase;
    Point(S::kSetup, -1, {P, 0, 0, 0, 0, O, X});
    Point(S::kForward, 0, {P, 0, 0, 576 * B, 0, O, X});
    Point(S::kForward, 1, {P, 0, 0, 1152 * B, 0, O, X});
    Point(S::kForward, 1, {P, 0, 0, 576 * B, 0, O, X});
    Point(S::kForward, 2, {P, 0, 0, 1152 * B, 0, O, X});
    Point(S::kForward, 4, {P, 0, 0, 1192 * B, 0, O, X});
    Point(S::kBackward, 4, {P, 0, classifier_grad, 1192 * B, 616 * B, O, X});
    Point(S::kBackward, 1, {P, 0, classifier_grad, 576 * B, 1152 * B, O, X});
    Point(S::kBackward, 0, {P, 0, all_grads, 0, 576 * B, O, X});
    Point(S::kOptimizer, -1, {P, 0, all_grads, 0, kOptTempBytes, O, X});
    Point(S::kOptimizer, -1, {P, 0, all_grads, 0, 0, O, X});
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
