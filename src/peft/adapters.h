// The adapter branches LoRA and DoRA add beside a frozen Linear.
#ifndef TORCHCOST_SRC_PEFT_ADAPTERS_H_
#define TORCHCOST_SRC_PEFT_ADAPTERS_H_

#include <optional>
#include <string>

#include "passes/graph_edit.h"
#include "torchcost/peft.h"

namespace torchcost::peft {

// One Linear that gets an adapter, in the graph being rewritten.
struct AdapterSite {
  std::string path;  // Its module path.
  int scope = 0;     // Its module scope.
  int x = -1;        // The Linear's input.
  int weight = -1;   // The base weight (a packed NF4 parameter if quantized).
  int bias = -1;     // The bias, or -1.
  int y = -1;        // The Linear's output.
  int64_t out = 0, in = 0;
  bool quantized = false;
  // A Conv1D (transformers' GPT-2 projection, addmm(b, x, W) with W [in, out]):
  // peft's lora.Linear with fan_in_fan_out=True, which transposes W where it
  // reads it.
  bool fan_in_fan_out = false;
  // A Conv2d (peft's lora.Conv2d): the node, to clone with the adapters'
  // weights.
  std::optional<ir::Node> conv;
  std::vector<int64_t> kernel;  // The base weight's kernel dims.
};

// The LoRA parameters and modules of one site.
struct LoraBranch {
  int a = -1, b = -1;  // lora_A.weight [r, in], lora_B.weight [out, r].
  int scope_a = 0, scope_b = 0;
  double scaling = 1.0;  // alpha / r.
};

// Appends DoRA's ops (peft's DoraLinearLayer.forward) for `site`, given the
// adapter's input after dropout; returns y + the DoRA term.
int EmitDora(passes::GraphEditor& ed, const AdapterSite& site,
             const LoraConfig& config, const LoraBranch& lora, int x_dropped);

}  // namespace torchcost::peft

#endif  // TORCHCOST_SRC_PEFT_ADAPTERS_H_
