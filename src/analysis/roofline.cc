// The roofline time model: per node max(FLOPs / peak, bytes / bandwidth)
// divided by its class's efficiency, summed per module, op type and phase.
#include "torchcost/roofline.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/async_backward.h"
#include "analysis/collective_time.h"
#include "analysis/gemm_operands.h"
#include "sym/linear_pieces.h"
#include "training/optimizer_model.h"

namespace torchcost {
namespace {

// Evaluates costs under the bindings; the first error is kept and later values
// are 0.
class Evaluator {
 public:
  explicit Evaluator(const sym::Bindings& b) : b_(b) {}
  double operator()(const sym::Expr& e) {
    if (e.IsConstant()) return static_cast<double>(*e.AsConstant());
    Result<__int128> v = sym::Evaluate128(e, b_);
    if (!v.ok()) {
      if (error_.ok()) error_ = v.status();
      return 0;
    }
    return static_cast<double>(*v);
  }
  const Status& error() const { return error_; }

 private:
  const sym::Bindings& b_;
  Status error_;
};

// The dtype a node computes in: its first tensor output's.
DType NodeDtype(const ir::Node& node, const Report& report) {
  for (int v : node.outputs) {
    if (v >= 0 && static_cast<size_t>(v) < report.values.size() &&
        report.values[v].known && report.values[v].dtype != DType::kUnknown) {
      return report.values[v].dtype;
    }
  }
  return DType::kFloat32;
}

// The dtype of the step's matmuls, from the precision the report names.
DType StepDtype(const std::string& precision) {
  if (precision.rfind("bf16", 0) == 0) return DType::kBFloat16;
  if (precision.rfind("fp16", 0) == 0) return DType::kFloat16;
  return DType::kFloat32;
}

// Marks the values that get a gradient in backward: trainable parameters and,
// in forward order, the floating-point outputs of a node with such an input
// (detach stops it).
std::vector<char> GradValues(const ir::Graph& graph, const Report& report) {
  std::vector<char> grad(graph.values.size(), 0);
  for (const ir::TensorEntry& p : graph.params) {
    if (p.requires_grad && p.value >= 0 &&
        static_cast<size_t>(p.value) < grad.size())
      grad[p.value] = 1;
  }
  for (const ir::Node& node : graph.nodes) {
    if (node.op.find("detach") != std::string::npos) continue;
    bool any = false;
    for (int v : node.inputs) any = any || (v >= 0 && grad[v]);
    if (!any) continue;
    for (int v : node.outputs) {
      const bool floating = static_cast<size_t>(v) >= report.values.size() ||
                            !report.values[v].known ||
                            report.values[v].dtype == DType::kUnknown ||
                            IsFloatingPoint(report.values[v].dtype);
      if (v >= 0 && floating) grad[v] = 1;
    }
  }
  return grad;
}

// The kernels of a node's backward, given that it runs (torch 1.13's
// tools/autograd/derivatives.yaml). A matrix product launches one GEMM per
// matrix operand that needs a gradient (mm: self: grad.mm(mat2.t()), mat2:
// self.t().mm(grad); linear and conv decompose to the same, conv through
// convolution_backward's output_mask), and its additive operand (linear's
// and conv's bias, addmm's self) one reduction (grad summed over the dims it
// was broadcast along) when it needs a gradient and has a lower rank than
// the output. Every other op: one.
double BackwardKernels(const ir::Node& node, const Report& report,
                       const std::vector<char>& grad) {
  const std::optional<analysis::GemmOperands> operands =
      analysis::GemmOperandsOf(node.op);
  if (!operands) return 1;
  const int first_gemm = operands->first, additive = operands->additive;
  auto needs = [&](int i) {
    return i < static_cast<int>(node.inputs.size()) && node.inputs[i] >= 0 &&
           grad[node.inputs[i]];
  };
  auto rank = [&](int v) {
    return v >= 0 && static_cast<size_t>(v) < report.values.size() &&
                   report.values[v].known
               ? static_cast<int>(report.values[v].shape.size())
               : -1;
  };
  double kernels = needs(first_gemm) + needs(first_gemm + 1);
  if (additive >= 0 && needs(additive) && !node.outputs.empty() &&
      rank(node.inputs[additive]) < rank(node.outputs[0]))
    kernels += 1;
  // NB: a backward that runs with no operand marked (a gradient this
  // propagation misses) still counts as one.
  return kernels > 0 ? kernels : 1;
}

// The peak FLOP/s of `node`'s class and dtype on `gpu`.
double NodePeak(const ir::Node& node, const NodeCost& c, const Report& report,
                const GpuSpec& gpu) {
  // NB: cuDNN convolutions use TF32 on float32 by default
  // (torch.backends.cudnn.allow_tf32).
  return PeakFlops(gpu, c.op_class, NodeDtype(node, report),
                   c.op_class == OpClass::kConvolution);
}

// One node's forward seconds as a function of one symbol x, the others bound:
// max(f(x) / peak, b(x) / bandwidth) / efficiency + overhead if it runs, summed
// over a range of x.
class NodeSecondsOverRange {
 public:
  NodeSecondsOverRange(double peak, const GpuSpec& gpu, double efficiency)
      : peak_(peak), gpu_(gpu), efficiency_(efficiency) {}

  // Returns the sum over x = first..last of the node whose FLOPs and bytes are
  // `flops` and `bytes`, exact on each piece where both are linear in x
  // (sym::ForEachLinearPiece).
  Result<double> Sum(const sym::Expr& flops, const sym::Expr& bytes,
                     const sym::Bindings& bindings, const std::string& symbol,
                     int64_t first, int64_t last) const {
    double sum = 0;
    TORCHCOST_RETURN_IF_ERROR(sym::ForEachLinearPiece(
        {flops, bytes}, bindings, symbol, first, last,
        [&](const sym::LinearPiece& p) {
          sum += LinearSum(p.lo, p.hi, (*p.at_lo)[0], (*p.at_lo)[1],
                           (*p.at_hi)[0], (*p.at_hi)[1]);
        }));
    return sum;
  }

 private:
  // The sum over lo..hi of max(g1, g2) / efficiency + overhead, for the lines
  // g1 = f / peak and g2 = b / bandwidth through (lo: f = fa, b = ba) and
  // (hi: fz, bz), all >= 0.
  double LinearSum(int64_t lo, int64_t hi, __int128 fa_i, __int128 ba_i,
                   __int128 fz_i, __int128 bz_i) const {
    const double fa = static_cast<double>(fa_i), fz = static_cast<double>(fz_i),
                 ba = static_cast<double>(ba_i), bz = static_cast<double>(bz_i);
    const double n = static_cast<double>(hi - lo);
    // A line's value at x from its values at lo and hi.
    auto at = [&](double va, double vz, int64_t x) {
      return n > 0 ? va + (vz - va) * static_cast<double>(x - lo) / n : va;
    };
    auto compute = [&](double f) { return peak_ > 0 ? f / peak_ : 0; };
    auto memory = [&](double b) {
      return gpu_.bandwidth > 0 ? b / gpu_.bandwidth : 0;
    };
    // The roofline seconds summed over p..q where one line stays the larger:
    // its arithmetic series, (q - p + 1)(g(p) + g(q)) / 2.
    auto roofline = [&](int64_t p, int64_t q) {
      const double g1 = compute(at(fa, fz, p)) + compute(at(fa, fz, q)),
                   g2 = memory(at(ba, bz, p)) + memory(at(ba, bz, q));
      return static_cast<double>(q - p + 1) * std::max(g1, g2) / 2;
    };
    const double ha = compute(fa) - memory(ba), hz = compute(fz) - memory(bz);
    double seconds;
    if ((ha >= 0) == (hz >= 0)) {
      seconds = roofline(lo, hi);
    } else {
      // h = g1 - g2 changes sign once: at lo + ha / (ha - hz) (hi - lo).
      int64_t k = lo + static_cast<int64_t>(ha / (ha - hz) * n);
      k = std::min(std::max(k, lo), hi - 1);
      seconds = roofline(lo, k) + roofline(k + 1, hi);
    }
    // Kernels: one per x where the node moves or computes anything. Lines >= 0
    // at both ends are zero inside only where zero throughout, so only the
    // ends can be idle.
    const bool idle_a = fa_i == 0 && ba_i == 0, idle_z = fz_i == 0 && bz_i == 0;
    if (idle_a && idle_z) return 0;
    const double kernels = static_cast<double>(hi - lo + 1) - (idle_a ? 1 : 0) -
                           (lo < hi && idle_z ? 1 : 0);
    return seconds / efficiency_ + kernels * gpu_.kernel_overhead;
  }

  double peak_;
  const GpuSpec& gpu_;
  double efficiency_;
};

// NB: without derived bytes every node would be timed on its FLOPs alone.
Status CheckMovedBytes(const Report& report) {
  if (report.moved_bytes) return Status::Ok();
  return Status::InvalidArgument(
      "the analysis was made without a GPU (StepConfig.gpu or gpu_file, "
      "AnalysisOptions::moved_bytes): no bytes moved per node to time");
}

}  // namespace

double RooflineSeconds(double flops, double bytes, double peak_flops,
                       double bandwidth) {
  return std::max(peak_flops > 0 ? flops / peak_flops : 0.0,
                  bandwidth > 0 ? bytes / bandwidth : 0.0);
}

Result<TimeReport> EstimateTime(const ir::Graph& graph, const Report& report,
                                const GpuSpec& gpu,
                                const sym::Bindings& bindings) {
  TORCHCOST_RETURN_IF_ERROR(CheckMovedBytes(report));
  TimeReport t;
  t.present = true;
  t.gpu = gpu.name;
  t.efficiency = gpu.efficiency;
  t.kernel_overhead = gpu.kernel_overhead;
  t.host = gpu.host;
  const double o = gpu.kernel_overhead;
  const bool fitted = std::any_of(gpu.efficiency.begin(), gpu.efficiency.end(),
                                  [](double e) { return e != 1; });
  t.source =
      "roofline on " + gpu.name + (fitted ? " with fitted efficiencies" : "");
  const TrainingReport& tr = report.training;
  const bool train = tr.mode == StepMode::kTrain;
  const double accumulate = train ? tr.accumulate : 1;
  const size_t n = graph.nodes.size();
  Evaluator value(bindings);
  t.node_forward_seconds.assign(n, 0);
  t.node_backward_seconds.assign(n, 0);
  std::vector<OpClass> classes(n, OpClass::kPointwise);
  const std::vector<char> grad =
      train ? GradValues(graph, report) : std::vector<char>();
  // Per node: one backward GEMM's seconds, where collectives may run beside.
  std::vector<double> gemm_seconds;
  if (train && !report.collectives.empty()) gemm_seconds.assign(n, 0);
  for (size_t ni = 0; ni < n && ni < report.nodes.size(); ++ni) {
    const ir::Node& node = graph.nodes[ni];
    const NodeCost& c = report.nodes[ni];
    classes[ni] = c.op_class;
    const int cls = static_cast<int>(c.op_class);
    const double peak = NodePeak(node, c, report, gpu);
    const double fwd =
        RooflineSeconds(value(c.flops), value(c.bytes), peak, gpu.bandwidth);
    // A node that moves bytes or computes launches a kernel: + overhead.
    const double fwd_kernels = fwd > 0 ? 1 : 0;
    t.node_forward_seconds[ni] = fwd / gpu.efficiency[cls] + fwd_kernels * o;
    t.class_roofline_seconds[cls] += accumulate * fwd;
    t.class_forward_roofline_seconds[cls] += accumulate * fwd;
    t.class_kernels[cls] += accumulate * fwd_kernels;
    t.class_forward_kernels[cls] += accumulate * fwd_kernels;
    if (train && ni < tr.node_bwd_bytes.size()) {
      const double bwd =
          RooflineSeconds(value(tr.node_bwd_flops[ni]),
                          value(tr.node_bwd_bytes[ni]), peak, gpu.bandwidth);
      const double bwd_kernels = !(bwd > 0) ? 0
                                 : c.op_class == OpClass::kMatmul ||
                                         c.op_class == OpClass::kConvolution
                                     ? BackwardKernels(node, report, grad)
                                     : 1;
      t.node_backward_seconds[ni] = bwd / gpu.efficiency[cls] + bwd_kernels * o;
      // NB: a product's backward GEMMs take equal shares of its time (the
      // bias's reduction counted as one).
      if (!gemm_seconds.empty() && bwd_kernels > 0 &&
          c.op_class == OpClass::kMatmul)
        gemm_seconds[ni] = t.node_backward_seconds[ni] / bwd_kernels;
      t.class_roofline_seconds[cls] += accumulate * bwd;
      t.class_backward_roofline_seconds[cls] += accumulate * bwd;
      t.class_kernels[cls] += accumulate * bwd_kernels;
      t.class_backward_kernels[cls] += accumulate * bwd_kernels;
    }
  }
  // The graph's collectives: NCCL's time for each call, in its node's time.
  // NB: no kernel counted (NCCL's launch is not modelled), and no class
  // roofline: a calibration fits the kernels alone.
  // Megatron's column-parallel backward collectives run beside its GEMMs:
  // only what exceeds them adds to the node's time.
  std::vector<double> collective_forward;  // Per node, where any runs one.
  if (!report.collectives.empty()) collective_forward.assign(n, 0);
  std::optional<analysis::AsyncBackwardOverlap> overlap;
  if (!gemm_seconds.empty()) overlap.emplace(graph, report, grad, gemm_seconds);
  for (const NodeCollectives& node : report.collectives) {
    if (node.node < 0 || static_cast<size_t>(node.node) >= n) continue;
    const int group = static_cast<int>(value(node.group));
    auto seconds = [&](const CollectiveCall& call) {
      return analysis::NcclCallSeconds(call.kind, value(call.payload), group,
                                       group, gpu.interconnect,
                                       &t.communication_untimed);
    };
    double fwd = 0;
    for (const CollectiveCall& call : node.forward) fwd += seconds(call);
    collective_forward[node.node] += fwd;
    t.node_forward_seconds[node.node] += fwd;
    t.model_parallel_communication_seconds += accumulate * fwd;
    if (!train) continue;
    for (const CollectiveCall& call : node.backward) {
      const double bwd = seconds(call);
      const double exposed =
          std::max(0.0, bwd - overlap->Beside(node.node, call.kind));
      t.node_backward_seconds[node.node] += exposed;
      t.model_parallel_communication_seconds += accumulate * bwd;
      t.model_parallel_overlapped_seconds += accumulate * (bwd - exposed);
    }
  }
  if (!value.error().ok()) return value.error();
  // A checkpointed segment's forward runs again in backward.
  if (train) {
    for (const CheckpointSegment& seg : tr.checkpoint_segments) {
      if (!seg.recomputed) continue;
      for (int ni = std::max(seg.first, 0);
           ni <= seg.last && ni < static_cast<int>(n); ++ni) {
        t.node_backward_seconds[ni] += t.node_forward_seconds[ni];
        const int cls = static_cast<int>(classes[ni]);
        // The node's forward time less its overhead and its collective, back
        // to roofline seconds.
        const double collective =
            collective_forward.empty() ? 0 : collective_forward[ni];
        t.model_parallel_communication_seconds += accumulate * collective;
        const double kernel = t.node_forward_seconds[ni] - collective;
        const double launches = kernel > 0 ? 1 : 0;
        const double again =
            accumulate * (kernel - launches * o) * gpu.efficiency[cls];
        t.class_roofline_seconds[cls] += again;
        t.class_backward_roofline_seconds[cls] += again;
        t.class_kernels[cls] += accumulate * launches;
        t.class_backward_kernels[cls] += accumulate * launches;
      }
    }
  }
  // Phases, modules (own nodes, then subtrees bottom-up) and op types.
  t.module_forward_seconds.assign(graph.scopes.size(), 0);
  t.module_backward_seconds.assign(graph.scopes.size(), 0);
  t.op_seconds.assign(report.ops.size(), 0);
  t.op_classes.assign(report.ops.size(), OpClass::kPointwise);
  std::vector<char> op_classed(report.ops.size(), 0);  // 1: a node's; 2: timed.
  for (size_t ni = 0; ni < n; ++ni) {
    const ir::Node& node = graph.nodes[ni];
    t.forward_seconds += t.node_forward_seconds[ni];
    t.backward_seconds += t.node_backward_seconds[ni];
    if (node.scope >= 0 &&
        static_cast<size_t>(node.scope) < graph.scopes.size()) {
      t.module_forward_seconds[node.scope] += t.node_forward_seconds[ni];
      t.module_backward_seconds[node.scope] += t.node_backward_seconds[ni];
    }
    auto it = std::lower_bound(
        report.ops.begin(), report.ops.end(), node.op,
        [](const OpStats& o, const std::string& op) { return o.op < op; });
    if (it != report.ops.end() && it->op == node.op) {
      const size_t oi = it - report.ops.begin();
      const double seconds =
          t.node_forward_seconds[ni] + t.node_backward_seconds[ni];
      t.op_seconds[oi] += seconds;
      const char rank = seconds > 0 ? 2 : 1;
      if (rank > op_classed[oi]) {
        t.op_classes[oi] = classes[ni];
        op_classed[oi] = rank;
      }
    }
  }
  std::vector<int> deepest_first(graph.scopes.size());
  for (size_t i = 0; i < deepest_first.size(); ++i)
    deepest_first[i] = static_cast<int>(i);
  std::stable_sort(deepest_first.begin(), deepest_first.end(),
                   [&](int a, int b) {
                     return graph.scopes[a].depth > graph.scopes[b].depth;
                   });
  for (int s : deepest_first) {
    const int parent = graph.scopes[s].parent;
    if (parent < 0) continue;
    t.module_forward_seconds[parent] += t.module_forward_seconds[s];
    t.module_backward_seconds[parent] += t.module_backward_seconds[s];
  }
  // The optimizer step: memory-bound elementwise work on the CUDA cores.
  // NB: ZeRO-Offload steps on the host (DeepSpeedCPUAdam): not the GPU's time
  // (the report's note says its time is not modelled).
  if (train && !tr.sharding.offload_optimizer) {
    const double opt =
        RooflineSeconds(value(tr.flops_optimizer), value(tr.optimizer_bytes),
                        gpu.fp32, gpu.bandwidth);
    const int cls = static_cast<int>(OpClass::kOptimizer);
    // The kernels torch.optim launches (OptimizerKernels, per the single-
    // tensor loop or the foreach step). NB: GaLore's step (projections, SVD)
    // and bitsandbytes' paged optimizers (a fused kernel per tensor) count one
    // per tensor. A sharded rank steps its flat shards.
    std::vector<int64_t> numels = tr.rank_step_tensors;
    if (numels.empty()) {
      for (const ir::TensorEntry& p : graph.params)
        if (p.requires_grad) numels.push_back(ir::Numel(p.shape));
    }
    double kernels =
        tr.galore || tr.paged ? static_cast<double>(numels.size())
        : tr.fused            ? static_cast<double>(
                         training::FusedOptimizerKernels(tr.optimizer, numels))
                   : static_cast<double>(training::OptimizerKernels(
                         tr.optimizer, tr.foreach, numels, tr.torch_version));
    if (!(opt > 0)) kernels = 0;
    t.optimizer_seconds = opt / gpu.efficiency[cls] + kernels * o;
    t.class_roofline_seconds[cls] += opt;
    t.class_kernels[cls] += kernels;
    t.optimizer_tensors = static_cast<double>(numels.size());
  }
  for (double k : t.class_kernels) t.overhead_seconds += k * o;
  // The host: kernels x its cost per launch (per micro-batch: the class
  // counts hold accumulate micro-batches), and per tensor in the optimizer.
  double forward_kernels = 0, backward_kernels = 0;
  for (int c = 0; c < kNumOpClasses; ++c) {
    forward_kernels += t.class_forward_kernels[c] / accumulate;
    backward_kernels += t.class_backward_kernels[c] / accumulate;
  }
  const double optimizer_kernels =
      t.class_kernels[static_cast<int>(OpClass::kOptimizer)];
  t.forward_device_seconds = t.forward_seconds;
  t.backward_device_seconds = t.backward_seconds;
  t.optimizer_device_seconds = t.optimizer_seconds;
  t.forward_host_seconds =
      gpu.host.Seconds(StepPhase::kForward, forward_kernels);
  t.backward_host_seconds =
      gpu.host.Seconds(StepPhase::kBackward, backward_kernels);
  t.optimizer_host_seconds = gpu.host.Seconds(
      StepPhase::kOptimizer, optimizer_kernels, t.optimizer_tensors);
  // A phase takes the larger: the host queues kernels ahead of the device.
  t.forward_seconds =
      std::max(t.forward_device_seconds, t.forward_host_seconds);
  t.backward_seconds =
      std::max(t.backward_device_seconds, t.backward_host_seconds);
  t.optimizer_seconds =
      std::max(t.optimizer_device_seconds, t.optimizer_host_seconds);
  // The data-parallel collectives: what exceeds the compute beside them,
  // and those after the optimizer step, add to the step.
  t.interconnect = gpu.interconnect;
  if (train) {
    const analysis::CollectiveSeconds c =
        analysis::TimeCollectives(tr.sharding, gpu.interconnect);
    const double beside =
        c.forward_backward > 0
            ? accumulate * (t.forward_seconds + t.backward_seconds)
            : accumulate * t.backward_seconds;
    t.communication_seconds = c.backward + c.forward_backward + c.after_step;
    t.exposed_communication_seconds =
        std::max(0.0, c.backward + c.forward_backward - beside) + c.after_step;
    if (t.communication_untimed.empty()) t.communication_untimed = c.untimed;
  }
  // step = accumulate * (forward + backward) + optimizer + exposed
  // communication.
  t.step_seconds = accumulate * (t.forward_seconds + t.backward_seconds) +
                   t.optimizer_seconds + t.exposed_communication_seconds;
  // MFU = model FLOPs / (step seconds * peak); model FLOPs leave recomputation
  // out.
  t.model_flops =
      train ? value(tr.flops_step) - accumulate * value(tr.flops_recompute)
            : value(report.flops);
  if (!value.error().ok()) return value.error();
  const DType dtype = StepDtype(tr.precision);
  t.peak_dtype = std::string(DTypeName(dtype));
  t.peak_flops = PeakFlops(gpu, OpClass::kMatmul, dtype);
  t.mfu = t.step_seconds > 0 && t.peak_flops > 0
              ? t.model_flops / (t.step_seconds * t.peak_flops)
              : 0;
  // Throughput: tokens if the first input holds token ids ([B, S] integers),
  // else samples (its first dim).
  if (!graph.inputs.empty() && graph.inputs[0] >= 0 &&
      static_cast<size_t>(graph.inputs[0]) < report.values.size()) {
    const ValueInfo& in = report.values[graph.inputs[0]];
    if (in.known && !in.shape.empty()) {
      const bool tokens = !IsFloatingPoint(in.dtype) &&
                          in.dtype != DType::kBool && in.shape.size() >= 2;
      double items = 1;
      for (size_t d = 0; d < (tokens ? in.shape.size() : 1); ++d)
        items *= value(in.shape[d]);
      if (!value.error().ok()) return value.error();
      t.throughput_unit = tokens ? "tokens" : "samples";
      t.items_per_step = accumulate * items;
      t.items_per_second =
          t.step_seconds > 0 ? t.items_per_step / t.step_seconds : 0;
    }
  }
  return t;
}

Result<TimeReport> EstimateTime(const ir::Graph& graph, const Report& report,
                                const TimedOn& on,
                                const sym::Bindings& bindings) {
  Result<TimeReport> t = EstimateTime(graph, report, on.gpu, bindings);
  if (!t.ok()) return t;
  t->source = on.source;
  t->calibrated = on.source.rfind("calibrated", 0) == 0;
  return t;
}

namespace {

// SumForwardSeconds of the device alone: each node's seconds summed exactly
// over x = first..last.
Result<double> SumDeviceForwardSeconds(const ir::Graph& graph,
                                       const Report& report, const GpuSpec& gpu,
                                       const sym::Bindings& bindings,
                                       const std::string& symbol, int64_t first,
                                       int64_t last) {
  TORCHCOST_RETURN_IF_ERROR(CheckMovedBytes(report));
  if (first > last) return 0.0;
  // NB: nodes with the same costs, peak and class (a model's repeated layers)
  // are summed once.
  struct Key {
    sym::Expr flops, bytes;
    double peak;
    int cls;
    bool operator==(const Key& o) const {
      return flops == o.flops && bytes == o.bytes && peak == o.peak &&
             cls == o.cls;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<sym::Expr>()(k.flops) * 31 +
             std::hash<sym::Expr>()(k.bytes) * 7 + static_cast<size_t>(k.cls);
    }
  };
  std::unordered_map<Key, double, KeyHash> sums;
  double total = 0;
  for (size_t ni = 0; ni < graph.nodes.size() && ni < report.nodes.size();
       ++ni) {
    const NodeCost& c = report.nodes[ni];
    const Key key{c.flops, c.bytes, NodePeak(graph.nodes[ni], c, report, gpu),
                  static_cast<int>(c.op_class)};
    auto it = sums.find(key);
    if (it == sums.end()) {
      const NodeSecondsOverRange node(key.peak, gpu, gpu.efficiency[key.cls]);
      TORCHCOST_ASSIGN_OR_RETURN(
          const double sum,
          node.Sum(c.flops, c.bytes, bindings, symbol, first, last));
      it = sums.emplace(key, sum).first;
    }
    total += it->second;
  }
  // The graph's collectives, each NCCL call at each x. NB: a payload free of
  // the symbol (a decode step's, of the batch alone) is timed once.
  std::string untimed;
  for (const NodeCollectives& node : report.collectives) {
    Evaluator value(bindings);
    const int group = static_cast<int>(value(node.group));
    for (const CollectiveCall& call : node.forward) {
      const std::vector<std::string> free = sym::FreeSymbols(call.payload);
      const bool varies =
          std::find(free.begin(), free.end(), symbol) != free.end();
      sym::Bindings at = bindings;
      for (int64_t x = first; x <= last; ++x) {
        at[symbol] = x;
        Evaluator at_x(at);
        const double seconds =
            analysis::NcclCallSeconds(call.kind, at_x(call.payload), group,
                                      group, gpu.interconnect, &untimed);
        if (!at_x.error().ok()) return at_x.error();
        if (!varies) {
          total += seconds * static_cast<double>(last - first + 1);
          break;
        }
        total += seconds;
      }
    }
    if (!value.error().ok()) return value.error();
  }
  return total;
}

// The kernels of one forward under `bindings`: the nodes that move bytes or
// compute.
Result<double> ForwardKernels(const ir::Graph& graph, const Report& report,
                              const sym::Bindings& bindings) {
  Evaluator value(bindings);
  double kernels = 0;
  for (size_t ni = 0; ni < graph.nodes.size() && ni < report.nodes.size();
       ++ni) {
    const NodeCost& c = report.nodes[ni];
    if (value(c.flops) > 0 || value(c.bytes) > 0) ++kernels;
  }
  if (!value.error().ok()) return value.error();
  return kernels;
}

}  // namespace

Result<double> SumForwardSeconds(const ir::Graph& graph, const Report& report,
                                 const GpuSpec& gpu,
                                 const sym::Bindings& bindings,
                                 const std::string& symbol, int64_t first,
                                 int64_t last) {
  TORCHCOST_ASSIGN_OR_RETURN(
      const double device, SumDeviceForwardSeconds(graph, report, gpu, bindings,
                                                   symbol, first, last));
  if (!(gpu.host.forward_kernel > 0) || first > last) return device;
  // Each forward takes max(device(x), host). NB: the host's is the kernels of
  // the forward at `last` x its cost per launch for every x, and the device's
  // is taken as nondecreasing in x (a cache that grows), so the forwards
  // below the first x where the device is the slower are the host's: found
  // by bisection, in log2(last - first) sums.
  sym::Bindings at = bindings;
  at[symbol] = last;
  TORCHCOST_ASSIGN_OR_RETURN(const double kernels,
                             ForwardKernels(graph, report, at));
  const double host = gpu.host.Seconds(StepPhase::kForward, kernels);
  auto device_at = [&](int64_t x) {
    return SumDeviceForwardSeconds(graph, report, gpu, bindings, symbol, x, x);
  };
  TORCHCOST_ASSIGN_OR_RETURN(const double at_first, device_at(first));
  if (at_first >= host) return device;
  TORCHCOST_ASSIGN_OR_RETURN(const double at_last, device_at(last));
  if (at_last <= host) return host * static_cast<double>(last - first + 1);
  int64_t lo = first, hi = last;  // device(lo) < host <= device(hi).
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    TORCHCOST_ASSIGN_OR_RETURN(const double d, device_at(mid));
    (d < host ? lo : hi) = mid;
  }
  TORCHCOST_ASSIGN_OR_RETURN(
      const double above,
      SumDeviceForwardSeconds(graph, report, gpu, bindings, symbol, hi, last));
  return host * static_cast<double>(hi - first) + above;
}

}  // namespace torchcost
