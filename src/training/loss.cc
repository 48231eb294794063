// The loss as ops appended after the model's first output, written as the
// reference code runs it:
// - cross_entropy / mse: torch.nn.functional.cross_entropy(out, target) and
//   mse_loss(out, target), mean reduction.
// - causal_lm: Hugging Face transformers' LlamaForCausalLM.forward (v4.40.0,
//   src/transformers/models/llama/modeling_llama.py):
//     logits = logits.float()
//     shift_logits = logits[..., :-1, :].contiguous()
//     shift_labels = labels[..., 1:].contiguous()
//     loss = CrossEntropyLoss()(shift_logits.view(-1, V),
//     shift_labels.view(-1))
//   shift=labels: ForCausalLMLoss (src/transformers/loss/loss_utils.py, commit
//   0114da07ec0e101b420a923dedeb6032b6ac3a44), which pads the labels instead:
//     logits = logits.float()
//     labels = F.pad(labels, (0, 1), value=-100); shift_labels = labels[...,
//     1:].contiguous() loss = F.cross_entropy(logits.view(-1, V),
//     shift_labels.view(-1), ignore_index=-100)
//   chunks=N: torchtune's CEWithChunkedOutputLoss
//   (torchtune/modules/loss/ce_chunked_output_loss.py, commit
//   10ff7cd2e2415a9ebb462a10cf7ed149bf531054) on the output projection run per
//   chunk (TransformerDecoder.chunked_output, torchtune/modules/transformer.py,
//   commit 3e5b0408e636e20ca18e9c6c58c68b4da9339129), the labels shifted by
//   padding as its recipes do (recipes/full_finetune_single_device.py:
//   torch.hstack((labels[..., 1:], ignore_labels_cache[:B]))):
//     logits = [lm_head(h_chunk) for h_chunk in h.chunk(N, dim=1)]
//     total_elements = (labels != -100).sum()
//     for each of N chunks along the sequence:
//     F.cross_entropy(logits_chunk.reshape(-1, V).float(),
//                                                              labels_chunk.reshape(-1),
//                                                              reduction="sum")
//     loss = sum of the chunks' losses / total_elements
// - lm: BertForMaskedLM.forward and T5ForConditionalGeneration.forward
//   (src/transformers/models/bert/modeling_bert.py at
//   004ad5f50b627b59bf0d581c31bc0052b6cfd40b):
//     loss = CrossEntropyLoss()(logits.view(-1, V), labels.view(-1))   (no
//     shift, no upcast)
#include "torchcost/loss.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "passes/graph_edit.h"
#include "passes/shape_prop.h"
#include "rules/value.h"
#include "training/propagated.h"

namespace torchcost {
namespace {

// CrossEntropyLoss's default ignore_index.
constexpr int64_t kIgnoreIndex = -100;
constexpr int64_t kMeanReduction = 1;  // at::Reduction::Mean.
constexpr int64_t kSumReduction = 2;   // at::Reduction::Sum.

Status Bad(const std::string& what) { return Status::InvalidArgument(what); }

// Appends ops for one loss to a copy of the graph.
class LossWriter {
 public:
  explicit LossWriter(ir::Graph& g) : g_(g), ed_(g) {}

  // Adds a model input (a target) of `shape` and `dtype` named `name`.
  int Target(const std::string& name, std::vector<sym::Expr> shape, DType dtype,
             std::vector<InputSpec>* specs) {
    ir::Value v;
    v.name = name;
    v.kind = ir::ValueKind::kTensor;
    v.role = ir::ValueRole::kInput;
    v.dtype = dtype;
    v.table_index = static_cast<int>(g_.inputs.size());
    // Concrete shapes are also recorded as traced ones (for analyses without
    // --input).
    v.has_traced_shape = true;
    for (const sym::Expr& d : shape) {
      if (!d.IsConstant()) {
        v.has_traced_shape = false;
        v.traced_shape.clear();
        break;
      }
      v.traced_shape.push_back(*d.AsConstant());
    }
    const int value = g_.AddValue(std::move(v));
    g_.inputs.push_back(value);
    InputSpec spec;
    spec.shape = std::move(shape);
    spec.dtype = dtype;
    specs->push_back(std::move(spec));
    return value;
  }

  // Appends `op` in the loss's module; names its output `name`.
  int Op(const std::string& op, const std::string& overload,
         std::vector<int> inputs, std::vector<std::string> names,
         const std::string& name) {
    const int o =
        ed_.Op(op, overload, std::move(inputs), std::move(names), scope_);
    g_.values[o].name = name + "." + std::to_string(o);
    g_.nodes.back().debug_name = "%" + g_.values[o].name;
    return o;
  }

  // Appends `op` returning a list of `n` tensors, unpacked (prim::ListUnpack).
  std::vector<int> SplitOp(const std::string& op, std::vector<int> inputs,
                           std::vector<std::string> names, int n,
                           const std::string& name, int scope = -1) {
    if (scope < 0) scope = scope_;
    ir::Value list;
    list.kind = ir::ValueKind::kList;
    list.elem_kind = ir::ValueKind::kTensor;
    list.name = name + "." + std::to_string(g_.values.size());
    const int l = g_.AddValue(std::move(list));
    ir::Node split;
    split.op = op;
    split.inputs = std::move(inputs);
    split.input_names = std::move(names);
    split.outputs = {l};
    split.scope = scope;
    split.debug_name = "%" + g_.values[l].name;
    g_.AddNode(std::move(split));
    ir::Node unpack;
    unpack.op = "prim::ListUnpack";
    unpack.inputs = {l};
    unpack.scope = scope;
    for (int i = 0; i < n; ++i) {
      ir::Value t;
      t.kind = ir::ValueKind::kTensor;
      t.name =
          name + std::to_string(i) + "." + std::to_string(g_.values.size());
      unpack.outputs.push_back(g_.AddValue(std::move(t)));
    }
    unpack.debug_name = "%" + g_.values[unpack.outputs[0]].name;
    g_.AddNode(std::move(unpack));
    const ir::ValueIds& outs = g_.nodes.back().outputs;
    return std::vector<int>(outs.begin(), outs.end());
  }

  int CrossEntropy(int self, int target, int64_t reduction) {
    return Op("aten::cross_entropy_loss", "",
              {self, target, ed_.None(), ed_.Int(reduction),
               ed_.Int(kIgnoreIndex), ed_.Float(0.0)},
              {"self", "target", "weight", "reduction", "ignore_index",
               "label_smoothing"},
              "loss");
  }
  int Slice(int self, int64_t dim, int start, int end,
            const std::string& name) {
    return Op("aten::slice", "Tensor",
              {self, ed_.Int(dim), start, end, ed_.Int(1)},
              {"self", "dim", "start", "end", "step"}, name);
  }
  int Contiguous(int self, const std::string& name) {
    return Op("aten::contiguous", "", {self, ed_.Int(0)},
              {"self", "memory_format"}, name);
  }
  int View(int self, std::vector<int64_t> size, const std::string& name) {
    return Op("aten::view", "", {self, ed_.Ints(std::move(size))},
              {"self", "size"}, name);
  }
  int Float(int self, const std::string& name) {
    return Op("aten::to", "dtype", {self, ed_.ScalarType(DType::kFloat32)},
              {"self", "dtype"}, name);
  }
  // labels[..., 1:] padded with -100 at the end: F.pad(labels, (0, 1),
  // value=-100)[..., 1:].
  int PadThenShift(int labels) {
    const int padded = Op("aten::constant_pad_nd", "",
                          {labels, ed_.Ints({0, 1}), ed_.Int(kIgnoreIndex)},
                          {"self", "pad", "value"}, "labels_padded");
    return Contiguous(Slice(padded, 1, ed_.Int(1), ed_.None(), "shift_labels"),
                      "shift_labels");
  }

  void SetScope(const std::string& type) {
    scope_ = g_.GetOrAddScope("loss", type);
  }
  passes::GraphEditor& ed() { return ed_; }

 private:
  ir::Graph& g_;
  passes::GraphEditor ed_;
  int scope_ = 0;
};

// Removes node `n` (whose outputs nothing reads) from `g`, renumbering
// producers.
void EraseNode(ir::Graph& g, int n) {
  g.nodes.erase(g.nodes.begin() + n);
  for (ir::Value& v : g.values) {
    if (v.producer == n) {
      v.producer = -1;
    } else if (v.producer > n) {
      --v.producer;
    }
  }
}

// Returns the node producing `value` if it is an aten::linear whose output
// only the graph's outputs read (the output projection), else -1.
int OutputProjection(const ir::Graph& g, int value) {
  const int p = g.values[value].producer;
  if (p < 0 || g.nodes[p].op != "aten::linear" ||
      g.nodes[p].outputs.size() != 1)
    return -1;
  for (const ir::Node& node : g.nodes) {
    for (int in : node.inputs) {
      if (in == value) return -1;
    }
  }
  return p;
}

// Returns the logits' shape [B, S, V] of a causal LM without propagating
// shapes, where the graph says it: the first input is token ids [B, S]
// (int64) and the first output comes from an output projection (aten::linear)
// with a weight [V, H]. Else nullopt (the caller propagates).
// NB: a fast path for the families (the whole propagation of a 7B model costs
// as much again as its analysis); a model it misreads fails the loss's rule.
std::optional<std::vector<sym::Expr>> LanguageModelLogits(
    const ir::Graph& g, const AnalysisOptions& options) {
  const LossSpec::Kind kind = options.training.loss.kind;
  if ((kind != LossSpec::Kind::kCausalLm && kind != LossSpec::Kind::kLm) ||
      options.inputs.empty())
    return std::nullopt;
  // NB: one input only: an encoder-decoder's logits follow its second input
  // (the decoder's).
  if (g.inputs.size() != 1) return std::nullopt;
  const InputSpec& ids = options.inputs[0];
  if (ids.dtype != DType::kInt64 || ids.shape.size() != 2) return std::nullopt;
  const int p = g.values[g.outputs[0]].producer;
  if (p < 0 || g.nodes[p].op != "aten::linear") return std::nullopt;
  const int w = passes::NodeArg(g.nodes[p], "weight", 1);
  if (w < 0 || g.values[w].role != ir::ValueRole::kParam) return std::nullopt;
  const std::vector<int64_t>& shape = g.params[g.values[w].table_index].shape;
  if (shape.size() != 2) return std::nullopt;
  return std::vector<sym::Expr>{ids.shape[0], ids.shape[1],
                                sym::Expr(shape[0])};
}

}  // namespace

Result<ir::Graph> AppendLoss(const ir::Graph& graph, const LossSpec& spec,
                             const sym::Shape& out_shape, DType out_dtype,
                             std::vector<InputSpec>* targets) {
  if (!LossAppendsOps(spec)) return graph;
  if (graph.outputs.empty())
    return Bad(graph.source + ": the model returns nothing to take a loss of");
  ir::Graph g = graph;
  LossWriter w(g);
  passes::GraphEditor& ed = w.ed();
  const int out = graph.outputs[0];
  const size_t rank = out_shape.size();
  const std::string shape_text = rules::ShapeToString(out_shape);
  int loss = -1;
  int kept = out;  // What the caller holds: the model's output.
  if (spec.kind == LossSpec::Kind::kCrossEntropy) {
    // Class indices: target [N, *D] for self [N, C, *D], [] for self [C].
    if (rank < 1)
      return Bad(
          graph.source +
          ": cross_entropy needs an output with classes; the output is []");
    w.SetScope("CrossEntropyLoss");
    std::vector<sym::Expr> tshape;
    for (size_t i = 0; i < rank; ++i) {
      if (i != 1) tshape.push_back(out_shape[i]);
    }
    if (rank == 1) tshape.clear();
    const int target = w.Target("target", tshape, DType::kInt64, targets);
    loss = w.CrossEntropy(out, target, kMeanReduction);
  } else if (spec.kind == LossSpec::Kind::kMse) {
    w.SetScope("MSELoss");
    const int target =
        w.Target("target", out_shape.ToVector(), out_dtype, targets);
    loss = w.Op("aten::mse_loss", "", {out, target, ed.Int(kMeanReduction)},
                {"self", "target", "reduction"}, "loss");
  } else if (spec.kind == LossSpec::Kind::kVocabParallel) {
    if (rank < 2)
      return Bad(graph.source +
                 ": vocab_parallel needs logits [*B, V / world]; the first "
                 "output is " +
                 shape_text);
    w.SetScope("VocabParallelCrossEntropy");
    std::vector<sym::Expr> tshape = out_shape.ToVector();
    tshape.pop_back();
    const int labels = w.Target("labels", tshape, DType::kInt64, targets);
    const int losses = w.Op("torchcost::vocab_parallel_cross_entropy", "",
                            {out, labels, ed.Int(spec.world)},
                            {"logits", "target", "world"}, "losses");
    // NB: Megatron's GPTModel masks the losses (sum(losses * loss_mask) /
    // loss_mask.sum()); a mean over the tokens here.
    loss =
        w.Op("aten::mean", "", {losses, ed.None()}, {"self", "dtype"}, "loss");
  } else if (spec.kind == LossSpec::Kind::kLm) {
    if (rank != 3)
      return Bad(graph.source +
                 ": lm needs logits [B, S, V]; the first output is " +
                 shape_text);
    const std::optional<int64_t> vocab = out_shape[2].AsConstant();
    if (!vocab)
      return Bad(graph.source +
                 ": lm needs a concrete vocabulary; the logits are " +
                 shape_text);
    w.SetScope("LMLoss");
    const int labels = w.Target("labels", {out_shape[0], out_shape[1]},
                                DType::kInt64, targets);
    loss = w.CrossEntropy(w.View(out, {-1, *vocab}, "logits_flat"),
                          w.View(labels, {-1}, "labels_flat"), kMeanReduction);
  } else {
    if (rank != 3) {
      return Bad(graph.source +
                 ": causal_lm needs logits [B, S, V]; the first output is " +
                 shape_text);
    }
    const std::optional<int64_t> vocab = out_shape[2].AsConstant();
    if (!vocab)
      return Bad(graph.source +
                 ": causal_lm needs a concrete vocabulary; the logits are " +
                 shape_text);
    w.SetScope("CausalLMLoss");
    const int labels = w.Target("labels", {out_shape[0], out_shape[1]},
                                DType::kInt64, targets);
    if (spec.chunks > 1) {
      const int n = spec.chunks;
      std::vector<int> logit_chunks;
      if (const int head = OutputProjection(g, out); head >= 0) {
        // TransformerDecoder.chunked_output: [self.output(chunk) for chunk in
        // h.chunk(n, dim=1)], so the whole logits never exist.
        const ir::Node proj = g.nodes[head];
        EraseNode(g, head);
        const int x = passes::NodeArg(proj, "input", 0);
        const int weight = passes::NodeArg(proj, "weight", 1);
        int bias = passes::NodeArg(proj, "bias", 2);
        if (bias < 0) bias = ed.None();
        const std::vector<int> h =
            w.SplitOp("aten::chunk", {x, ed.Int(n), ed.Int(1)},
                      {"self", "chunks", "dim"}, n, "h_chunk", 0);
        for (int i = 0; i < n; ++i) {
          // NB: a chunk of h along the sequence is not contiguous (B > 1):
          // linear's matmul folds it with reshape, a copy that its backward
          // saves (measured). Modelled for every B.
          const int hi = w.Contiguous(h[i], "h_chunk");
          logit_chunks.push_back(ed.Op("aten::linear", "", {hi, weight, bias},
                                       {"input", "weight", "bias"},
                                       proj.scope));
        }
      } else {
        logit_chunks = w.SplitOp("aten::chunk", {out, ed.Int(n), ed.Int(1)},
                                 {"self", "chunks", "dim"}, n, "logits_chunk");
      }
      // torch.hstack((labels[..., 1:], ignore_labels_cache[:B])): one new int64
      // [B, S]. NB: written as a pad with -100, which makes the same tensor.
      const int sliced =
          w.Slice(labels, 1, ed.Int(1), ed.None(), "shift_labels");
      const int shifted = w.Op("aten::constant_pad_nd", "",
                               {sliced, ed.Ints({0, 1}), ed.Int(kIgnoreIndex)},
                               {"self", "pad", "value"}, "shift_labels");
      // total_elements = (labels != ignore_index).sum()
      const int valid =
          w.Op("aten::ne", "Scalar", {shifted, ed.Int(kIgnoreIndex)},
               {"self", "other"}, "valid");
      const int total = w.Op("aten::sum", "", {valid, ed.None()},
                             {"self", "dtype"}, "total_elements");
      const std::vector<int> label_chunks =
          w.SplitOp("aten::chunk", {shifted, ed.Int(n), ed.Int(1)},
                    {"self", "chunks", "dim"}, n, "labels_chunk");
      int acc = -1;
      for (int i = 0; i < n; ++i) {
        const int lg =
            w.Op("aten::reshape", "", {logit_chunks[i], ed.Ints({-1, *vocab})},
                 {"self", "shape"}, "logits_chunk");
        const int lb =
            w.Op("aten::reshape", "", {label_chunks[i], ed.Ints({-1})},
                 {"self", "shape"}, "labels_chunk");
        const int ce =
            w.CrossEntropy(w.Float(lg, "logits_chunk_fp32"), lb, kSumReduction);
        acc = acc < 0 ? ce
                      : w.Op("aten::add", "Tensor", {acc, ce, ed.Int(1)},
                             {"self", "other", "alpha"}, "total_loss");
      }
      loss =
          w.Op("aten::div", "Tensor", {acc, total}, {"self", "other"}, "loss");
      // NB: the recipe holds the list of chunks until the loss returns, then
      // `del logits` before backward.
      ed.KeepAlive(logit_chunks, 0);
      kept = -1;
    } else {
      const int logits = spec.upcast ? w.Float(out, "logits") : out;
      // NB: LlamaForCausalLM rebinds `logits = logits.float()` and returns it;
      // ForCausalLMLoss upcasts a local copy and the model returns its own
      // logits.
      kept = spec.shift_labels ? out : logits;
      int flat_logits;
      int flat_labels;
      if (spec.shift_labels) {
        flat_logits = w.View(logits, {-1, *vocab}, "logits_flat");
        flat_labels = w.View(w.PadThenShift(labels), {-1}, "shift_labels_flat");
      } else {
        const int shift_logits = w.Contiguous(
            w.Slice(logits, 1, ed.Int(0), ed.Int(-1), "shift_logits"),
            "shift_logits");
        const int shift_labels = w.Contiguous(
            w.Slice(labels, 1, ed.Int(1), ed.None(), "shift_labels"),
            "shift_labels");
        flat_logits = w.View(shift_logits, {-1, *vocab}, "shift_logits_flat");
        flat_labels = w.View(shift_labels, {-1}, "shift_labels_flat");
      }
      loss = w.CrossEntropy(flat_logits, flat_labels, kMeanReduction);
    }
  }
  g.outputs.clear();
  g.outputs.push_back(loss);
  if (kept >= 0) g.outputs.push_back(kept);
  for (size_t i = 1; i < graph.outputs.size(); ++i)
    g.outputs.push_back(graph.outputs[i]);
  return g;
}

Result<ir::Graph> training::ApplyLossPropagated(
    const ir::Graph& graph, const RuleSet& rules, sym::Context& ctx,
    AnalysisOptions* options, passes::ShapeFacts* facts, Report* propagated,
    bool* extended) {
  if (extended != nullptr) *extended = false;
  const LossSpec& spec = options->training.loss;
  if (!LossAppendsOps(spec) || options->training.mode != StepMode::kTrain)
    return graph;
  if (graph.outputs.empty())
    return Bad(graph.source + ": the model returns nothing to take a loss of");
  const bool traced = options->inputs.empty();
  std::vector<InputSpec> targets;
  if (const std::optional<std::vector<sym::Expr>> shape =
          LanguageModelLogits(graph, *options)) {
    TORCHCOST_ASSIGN_OR_RETURN(
        ir::Graph g,
        AppendLoss(graph, spec, *shape, DType::kUnknown, &targets));
    for (auto& t : targets) options->inputs.push_back(std::move(t));
    return g;
  }
  // NB: as Analyze does, --param-dtype's conversion is seen by the propagation
  // (not kept in the graph).
  ir::Graph converted;
  if (options->param_dtype != DType::kUnknown) {
    converted = graph;
    for (auto* table : {&converted.params, &converted.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = options->param_dtype;
      }
    }
  }
  try {
    TORCHCOST_RETURN_IF_ERROR(passes::PropagateShapes(
        options->param_dtype != DType::kUnknown ? converted : graph, rules, ctx,
        *options, facts, propagated));
  } catch (const sym::Error& e) {
    return Status::OutOfRange(graph.source + ": " + e.what());
  }
  const rules::RValue& out = facts->values[graph.outputs[0]];
  if (out.kind != rules::RValue::Kind::kTensor) {
    return Bad(graph.source +
               ": the model's first output is not a tensor of known shape");
  }
  TORCHCOST_ASSIGN_OR_RETURN(
      ir::Graph g, AppendLoss(graph, spec, out.t.shape, out.t.dtype, &targets));
  if (!traced) {
    for (auto& t : targets) options->inputs.push_back(std::move(t));
  } else {
    for (size_t i = graph.inputs.size(); i < g.inputs.size(); ++i) {
      if (!g.values[g.inputs[i]].has_traced_shape) {
        return Bad(graph.source +
                   ": the loss's targets need concrete shapes (give "
                   "StepConfig.inputs)");
      }
    }
  }
  // NB: the base graph's propagation, extended over the loss's ops, is the
  // loss graph's: the analysis need not propagate it again. A failure here
  // (inputs that do not fit) is left for the analysis to report.
  if (extended != nullptr && options->param_dtype == DType::kUnknown) {
    try {
      *extended =
          passes::ExtendShapes(g, rules, ctx, *options, facts, propagated).ok();
    } catch (const sym::Error&) {
      *extended = false;
    }
  }
  return g;
}

Result<ir::Graph> ApplyLoss(const ir::Graph& graph, const RuleSet& rules,
                            sym::Context& ctx, AnalysisOptions* options) {
  passes::ShapeFacts facts;
  Report scratch;
  return training::ApplyLossPropagated(graph, rules, ctx, options, &facts,
                                       &scratch, nullptr);
}

}  // namespace torchcost
