// A LLaMA decoder layer's weights, and the ops its attention, MLP and mixture
// of experts share: RMSNorm, the head dim, Megatron's parallel linears and
// Gemma-2's soft-capping.
#ifndef TORCHCOST_SRC_BUILDER_LLAMA_LAYER_H_
#define TORCHCOST_SRC_BUILDER_LLAMA_LAYER_H_

#include <array>
#include <cstdint>
#include <vector>

#include "torchcost/builder.h"
#include "torchcost/families.h"

namespace torchcost::builder {

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

// The per-head dim: head_dim when given, else hidden / heads.
int64_t HeadDim(const LlamaConfig& c);

// An optional bias argument: the bias, or None where it is unset.
Arg BiasArg(Ref bias);

// What RMSNorm's trace yields: the output, and the value the block's
// residual reads (HF: residual = hidden_states, taken before the norm).
// NB: in float32, x.to(float32) returns x itself, and the tracer then stands
// the to() output for that tensor object, so the residual reads xf; in a half
// dtype the cast is a new float32 tensor and the residual reads x.
struct NormOut {
  Ref out, residual;
};

// Builds LlamaRMSNorm (or GemmaRMSNorm, with the config's gemma) of x with
// `weight`.
NormOut RmsNorm(GraphBuilder& b, const LlamaConfig& c, Ref weight, Ref x);

// Whether Megatron's sequence parallelism applies (it is off at tp = 1).
bool Sp(const LlamaConfig& c);

// Megatron's row-parallel output (and the vocabulary-parallel embedding):
// the ranks' partial results summed by torchcost::all_reduce, in place; with
// sp, reduce-scattered to this rank's S/t of the sequence. The partial itself
// at tp = 1.
Ref AllReduceIf(GraphBuilder& b, const LlamaConfig& c, Ref partial);

// Megatron's `f` before column-parallel layers (tp > 1 without sp): the
// identity in forward, the all-reduce of x's gradient in backward
// (torchcost::copy_to_tp_region). x itself otherwise (sp gathers and
// reduce-scatters in torchcost::sp_linear instead).
Ref CopyToTpRegionIf(GraphBuilder& b, const LlamaConfig& c, Ref x);

// A column-parallel linear: with sp, on the sequence-parallel shard
// (rules/distributed.yaml).
Ref ColumnLinear(GraphBuilder& b, const LlamaConfig& c, Ref x, Ref weight);

// cap * tanh(x / cap) (Gemma-2's soft-capping: x / cap; tanh; * cap).
Ref SoftCap(GraphBuilder& b, Ref x, double cap);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_LLAMA_LAYER_H_
