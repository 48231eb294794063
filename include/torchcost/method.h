// A fine-tuning method as one word and its settings
// ("lora:r=8,targets=q_proj|v_proj"): the rows of `torchcost compare` and the
// value of --peft.
#ifndef TORCHCOST_METHOD_H_
#define TORCHCOST_METHOD_H_

#include <string>
#include <string_view>

#include "torchcost/graph.h"
#include "torchcost/peft.h"
#include "torchcost/status.h"

namespace torchcost {

// A method and its settings.
struct MethodSpec {
  enum class Kind { kFull, kLora, kDora, kQlora, kGalore };
  Kind kind = Kind::kFull;
  std::string text;   // As typed: the row's label.
  LoraConfig lora;    // kLora, kDora (use_dora set).
  QloraConfig qlora;  // kQlora.
  // What follows the colon (kGalore's settings, parsed by the optimizer side).
  std::string settings;
};

// Parses "full", "lora[:k=v,...]", "dora[:...]", "qlora[:...]", "galore[:...]".
Result<MethodSpec> ParseMethodSpec(std::string_view text);

// Returns the graph the method trains: the base for full and GaLore, the
// adapted graph for LoRA and DoRA, the NF4 base with adapters for QLoRA.
Result<ir::Graph> ApplyMethod(const ir::Graph& graph, const MethodSpec& method);

}  // namespace torchcost

#endif  // TORCHCOST_METHOD_H_
