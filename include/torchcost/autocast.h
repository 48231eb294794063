// Mixed precision as torch.autocast runs it: the casts autocast makes before
// ops are inserted into the graph as real ops, so memory, FLOPs, saved tensors
// and gradients follow from the rules.
#ifndef TORCHCOST_AUTOCAST_H_
#define TORCHCOST_AUTOCAST_H_

#include <string>

#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// The op that ends the autocast region: its inputs (the cached casts of
// parameters) live until it runs, at the end of the forward.
inline constexpr const char* kAutocastExitOp = "prim::AutocastExit";

// Returns `graph` with the casts torch.autocast(options.device,
// options.autocast) makes in the forward: before every op whose rule has an
// autocast policy for the device (rules/README.md), each floating-point tensor
// argument (float64 excepted) whose dtype differs from the policy's target is
// cast by a new aten::to node (a new tensor; its backward casts the gradient
// back). Parameters stay float32 (the master weights). NB: autocast's weight
// cache: a float32 parameter that requires a gradient is cast to the low
// precision once per forward, the copy shared by its users and kept until the
// region exits (a final prim::AutocastExit node reads it). The dtypes come from
// shape propagation, repeated until no new cast is needed. Errors:
// options.autocast not float16/bfloat16, or float16 on CPU (torch 1.13's CPU
// autocast runs bfloat16 only).
Result<ir::Graph> ApplyAutocast(const ir::Graph& graph, const RuleSet& rules,
                                sym::Context& ctx,
                                const AnalysisOptions& options);

// Returns the precision of the step: "fp16-mixed" / "bf16-mixed" (autocast),
// "bf16" / "fp16" (parameters converted), else "fp32".
std::string PrecisionName(const AnalysisOptions& options);

}  // namespace torchcost

#endif  // TORCHCOST_AUTOCAST_H_
