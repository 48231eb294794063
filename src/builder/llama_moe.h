// The LLaMA family's mixture of experts (Hugging Face's MixtralSparseMoeBlock
// and Qwen2MoeSparseMoeBlock), and what the decoder layer shares with it: the
// layer's weights and the MLP's gate activation.
#ifndef TORCHCOST_SRC_BUILDER_LLAMA_MOE_H_
#define TORCHCOST_SRC_BUILDER_LLAMA_MOE_H_

#include <array>
#include <vector>

#include "torchcost/builder.h"
#include "torchcost/families.h"

namespace torchcost::build {

// One decoder layer's weights.
// NB: with fused projections (Phi-3), q holds qkv_proj's weight and gate
// gate_up_proj's; k, v and up are unused. Biases are unset Refs when absent.
struct LlamaLayer {
  Ref input_norm, q, k, v, o, post_norm, gate, up, down;
  // Gemma-2's sandwich: the norms before and after the MLP (unset otherwise).
  Ref pre_ff_norm, post_ff_norm;
  // Qwen3's per-head norms of q and k (unset otherwise).
  Ref q_norm, k_norm;
  Ref q_bias, k_bias, v_bias, o_bias, gate_bias, up_bias, down_bias;
  // Mixture of experts: the router, each expert's (gate, up, down), the shared
  // expert and its gate.
  Ref router, shared_gate, shared_up, shared_down, shared_scale;
  std::vector<std::array<Ref, 3>> experts;
};

// The MLP's gate activation (config key act).
inline Ref Act(GraphBuilder& b, const LlamaConfig& c, Ref x) {
  if (c.act == "gelu_tanh") return b.Gelu(x, "tanh");
  if (c.act == "gelu") return b.Gelu(x);
  return b.Silu(x);
}

// Whether the experts' projections take Mixtral's names (w1, w3, w2 under
// block_sparse_moe).
bool MixtralNames(const LlamaConfig& c);

// Builds the sparse MoE block's forward on the layer input x [B, S, hidden] and
// returns its output [B, S, hidden]; `decode` when a decode step builds it.
Ref MoeBlock(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
             bool decode);

}  // namespace torchcost::build

#endif  // TORCHCOST_SRC_BUILDER_LLAMA_MOE_H_
