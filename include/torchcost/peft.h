// Parameter-efficient fine-tuning as graph rewrites (LoRA), applied to any
// graph before the analysis.
#ifndef TORCHCOST_PEFT_H_
#define TORCHCOST_PEFT_H_

#include <string>
#include <string_view>

#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost {

// LoRA (Hu et al. 2021) as huggingface peft applies it to a Linear:
// y = W x + b + (B (A dropout(x))) * alpha / r, with W and b frozen.
struct LoraConfig {
  int64_t rank = 8;
  int64_t alpha = 8;
  double dropout = 0.0;    // peft uses an identity when 0.
  // ECMAScript regex matched against the last component of a Linear module's
  // path ("q_proj|v_proj"), or the whole path when it contains a dot.
  std::string targets = "q_proj|v_proj";
};

// Parses "r=8,alpha=16,dropout=0.05,targets=q_proj|v_proj" (keys optional).
Result<LoraConfig> ParseLoraConfig(std::string_view text);

// Returns `graph` with LoRA adapters on every aten::linear whose module matches
// `config.targets`: parameters `<path>.lora_A.weight` [r, in] and
// `<path>.lora_B.weight` [out, r] (trainable; every other parameter frozen),
// modules `<path>.lora_dropout`, `<path>.lora_A`, `<path>.lora_B`, and the ops
// dropout (if p > 0), linear, linear, mul by alpha/r, add. Errors if no module matches.
Result<ir::Graph> ApplyLora(const ir::Graph& graph, const LoraConfig& config);

}  // namespace torchcost

#endif  // TORCHCOST_PEFT_H_
