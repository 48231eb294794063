// The forward analysis: symbolic shape propagation through the rules, then
// parameters, MACs and FLOPs per node, per module and per op type.
#ifndef TORCHCOST_ANALYSIS_H_
#define TORCHCOST_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "torchcost/collective.h"
#include "torchcost/dtype.h"
#include "torchcost/graph.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"
#include "torchcost/training.h"

namespace torchcost {

// The shape and dtype the user gives one model input.
struct InputSpec {
  std::vector<sym::Expr> shape;
  DType dtype = DType::kFloat32;
};

// Parses "B,3,224,224" (dims are integers, symbol names or expressions of
// symbols such as "S+T-2" or "min(S+T-2, 4095)"; optionally
// "B,3,224,224:float16") into an InputSpec, creating symbols in `ctx`.
Result<InputSpec> ParseInputSpec(sym::Context& ctx, std::string_view text,
                                 DType default_dtype = DType::kFloat32);

// What the analysis is asked to do.
struct AnalysisOptions {
  // One per tensor input of the graph, in order. If empty, traced input shapes
  // are used.
  std::vector<InputSpec> inputs;
  // If true, an op without a rule is an error (exit code 1 in the CLI).
  bool strict = false;
  // The step modelled. NB: batch_norm's `training` and dropout's `train` follow
  // the mode (true in a training step, false in inference), whatever the trace
  // recorded, so one eval-mode trace serves both questions.
  TrainingOptions training;
  // The device whose kernels' behaviour is modelled where CPU and CUDA differ
  // (rules test device()): "cuda" (default) or "cpu". NB: on CPU,
  // PyTorch 1.13's dropout keeps a float mask of the input's dtype; on CUDA a
  // bool mask.
  std::string device = "cuda";
  // If set, floating-point parameters and buffers take this dtype (as after
  // `model.to(dtype)`); activations follow by type promotion with the inputs'
  // dtypes. kUnknown keeps the model's own dtypes. NB: a graph keeps its
  // casts (a float32 trace records x.to(float32) where the code reads
  // x.to(input_dtype)), so build a family in half precision with its config's
  // `dtype` instead (the CLI does for --param-dtype with --model).
  DType param_dtype = DType::kUnknown;
  // If float16 or bfloat16, the forward runs under torch.autocast with this
  // dtype (fp32 master weights): give the graph to ApplyAutocast
  // (torchcost/autocast.h) first. kUnknown: no autocast.
  DType autocast = DType::kUnknown;
  // The attention kernel scaled_dot_product_attention is modelled with: "math"
  // (keeps the attention weights), "flash" or "efficient" (keep the logsumexp
  // and recompute the scores in backward), or "auto": math on CPU; on CUDA
  // flash, or memory-efficient when an attention mask is given.
  std::string attention_backend = "auto";
  // If true, the bytes each node moves are derived (NodeCost::bytes,
  // TrainingReport::node_bwd_bytes and optimizer_bytes), as the time model
  // needs them; false leaves them 0.
  bool moved_bytes = false;
};

// A message about the model, naming file, node, op and module.
struct Diagnostic {
  enum class Severity { kNote, kWarning, kError };
  Severity severity = Severity::kWarning;
  std::string message;
};

// The symbolic type of one value after shape propagation.
struct ValueInfo {
  sym::Shape shape;               // Tensors.
  DType dtype = DType::kUnknown;  // Tensors.
  // False if no rule and no traced shape gave it.
  bool known = false;
  // True if no rule gave the shape: it came from the frontend's shape inference
  // (LibTorch's, for TorchScript) or from the trace.
  bool from_trace = false;
};

// The cost of one node.
struct NodeCost {
  sym::Expr macs;   // Multiply-accumulates.
  sym::Expr flops;  // NB: 1 FMA = 2 FLOPs; elementwise per the rule.
  // exp, log, tanh, erf, rsqrt, ... counted apart from flops.
  sym::Expr transcendentals;
  // Bytes the forward reads and writes (AnalysisOptions::moved_bytes): the
  // rule's `bytes.fwd`, or its tensor inputs and outputs (0 for views and ops
  // that move nothing).
  sym::Expr bytes;
  // The node's kernel class: the rule's `class:`, or its rule file's family.
  OpClass op_class = OpClass::kPointwise;
  bool has_rule = false;
  // True if the node's own cost is not known (no rule, or its rule could not
  // apply): it counts 0 here, and every total that includes it is a lower
  // bound.
  bool cost_unknown = false;
};

// The collectives one node runs (its rule's `collectives:`: tensor, sequence
// and expert parallelism's).
struct NodeCollectives {
  int node = -1;    // Index into Graph::nodes.
  sym::Expr group;  // Ranks that run them.
  std::vector<CollectiveCall> forward;
  // In backward, for the input gradients it makes (none outside training).
  std::vector<CollectiveCall> backward;
};

// Totals and shapes of one module, including its descendants.
struct ModuleStats {
  int scope = 0;  // Index into Graph::scopes.
  // Parameters owned by this module and its descendants (tied ones once).
  int64_t params = 0;
  int64_t trainable_params = 0;
  sym::Expr macs, flops, transcendentals;
  // True if a node in the subtree has an unknown cost (NodeCost::cost_unknown).
  bool lower_bound = false;
  int64_t num_nodes = 0;  // Nodes in this module's subtree.
  // Shapes of the values the module's last call returns (those used outside its
  // subtree).
  std::vector<sym::Shape> output_shapes;
};

// Totals of one op type ("aten::_convolution").
struct OpStats {
  std::string op;
  int64_t count = 0;
  sym::Expr macs, flops, transcendentals;
};

// An op that no rule covers, with how often it occurs.
struct UnknownOp {
  std::string op;
  int64_t count = 0;
};

// Everything the forward analysis found. Expressions live in the sym::Context
// passed to Analyze, which must outlive the Report.
struct Report {
  std::string model;  // File or model name.
  // Unique parameter elements; a quantized weight counts as the weight it
  // stores (ir::CountedElements).
  int64_t params = 0;
  // Of params: the elements of weights stored quantized (NF4, int8, int4,
  // fp8), whose bytes are param_bytes' stored ones.
  int64_t quantized_params = 0;
  // Parameters one token does not use: in each mixture's experts list
  // (ir::Scope::routed_top_k), the share of its parameters, adapters included,
  // held by the (n - top_k) of its n experts a token is not routed to. The
  // active parameters are params - inactive_params.
  // NB: negative where a rank holds fewer experts than top_k (expert
  // parallelism: params is one rank's, params - inactive_params the whole
  // model's active count).
  int64_t inactive_params = 0;
  int64_t trainable_params = 0;
  int64_t buffers = 0;  // Buffer elements.
  int64_t param_bytes = 0;
  int64_t buffer_bytes = 0;
  sym::Expr macs, flops, transcendentals;  // Forward totals.
  // True if a node's cost is unknown: the totals are lower bounds.
  bool lower_bound = false;
  // True if the bytes each node moves were derived
  // (AnalysisOptions::moved_bytes): what EstimateTime needs.
  bool moved_bytes = false;
  // The nodes that run collectives, in graph order
  // (AnalysisOptions::moved_bytes).
  std::vector<NodeCollectives> collectives;
  std::vector<ValueInfo> values;       // Parallel to Graph::values.
  std::vector<NodeCost> nodes;         // Parallel to Graph::nodes.
  std::vector<ModuleStats> modules;    // Parallel to Graph::scopes.
  std::vector<OpStats> ops;            // Sorted by op name.
  std::vector<UnknownOp> unknown_ops;  // Sorted by count, then name.
  // Requirements that could not be proven.
  std::vector<std::string> assumptions;
  std::vector<Diagnostic> diagnostics;
  std::vector<std::string> symbols;  // Free symbols of the inputs, sorted.
  // The step: backward FLOPs, saved activations, memory timeline.
  TrainingReport training;
  TimeReport time;  // The predicted time on a GPU, if one was asked for
                    // (torchcost/roofline.h).
  // StepConfig::budget_bytes: the device memory the renderings say the step
  // fits or not (torchcost/budget.h); 0: none.
  int64_t budget_bytes = 0;
  // StepConfig::budget_symbol, or B: the symbol searched against the budget.
  std::string budget_symbol = "B";
};

// Runs shape propagation and the FLOP analysis of `graph` under `rules`.
// Bad nodes become diagnostics and the analysis goes on; the Status is an error
// only for bad options (wrong number of inputs, wrong rank) or, in strict mode,
// for ops without rules.
Result<Report> Analyze(const ir::Graph& graph, const RuleSet& rules,
                       sym::Context& ctx, const AnalysisOptions& options);

}  // namespace torchcost

#endif  // TORCHCOST_ANALYSIS_H_
