// The loss of a training step as real ops appended to the model's graph:
// cross-entropy, MSE and Hugging Face's causal-LM loss, so its FLOPs, saved
// tensors and temporaries come from the rules and its targets are inputs.
#ifndef TORCHCOST_LOSS_H_
#define TORCHCOST_LOSS_H_

#include <string>
#include <string_view>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"
#include "torchcost/training.h"

namespace torchcost {

// Parses "sum", "none", "cross_entropy", "mse", "lm", "causal_lm[:k=v,...]"
// with causal_lm's settings shift=logits|labels, upcast=true|false, chunks=N.
Result<LossSpec> ParseLossSpec(std::string_view text);

// Returns the loss in words, naming the implementation it follows.
std::string LossDescription(const LossSpec& spec);

// Returns true if `spec` appends ops to the graph (cross_entropy, mse,
// causal_lm).
bool LossAppendsOps(const LossSpec& spec);

// Returns `graph` with the loss's ops appended after its first output, whose
// symbolic shape and dtype are `out_shape` and `out_dtype`: the new first
// output is the 0-dim loss, the second the model's output as the caller keeps
// it (the float32 logits for causal_lm as LlamaForCausalLM returns them, the
// model's own with shift=labels; none with chunks: torchtune's recipes free
// the logits before backward), then the model's other outputs. The targets
// become new model inputs, their specs appended to `targets`. Errors: an output
// whose rank the loss cannot take, a symbolic class count.
Result<ir::Graph> AppendLoss(const ir::Graph& graph, const LossSpec& spec,
                             const sym::Shape& out_shape, DType out_dtype,
                             std::vector<InputSpec>* targets);

// Applies options->training.loss to `graph` for a training step: propagates
// shapes to learn the first output's (NB: not for a causal LM whose first
// input is token ids [B, S] and whose logits come from an aten::linear with a
// weight [V, H]: they are [B, S, V]), appends the loss (AppendLoss) and its
// targets to options->inputs (as traced shapes when options->inputs is
// empty). Returns the graph unchanged for sum, none, or inference.
Result<ir::Graph> ApplyLoss(const ir::Graph& graph, const RuleSet& rules,
                            sym::Context& ctx, AnalysisOptions* options);

}  // namespace torchcost

#endif  // TORCHCOST_LOSS_H_
