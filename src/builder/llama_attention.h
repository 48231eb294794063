// The LLaMA family's self-attention: the rotary tables a forward makes once,
// each layer's sliding window, and the attention block itself (projections,
// RoPE, the KV cache's update, and the eager, sdpa or flash core).
#ifndef TORCHCOST_SRC_BUILDER_LLAMA_ATTENTION_H_
#define TORCHCOST_SRC_BUILDER_LLAMA_ATTENTION_H_

#include <cstdint>

#include "builder/generation_phase.h"
#include "builder/llama_layer.h"
#include "torchcost/builder.h"
#include "torchcost/families.h"

namespace torchcost::builder {

// RoPE's cos and sin tables [T, rotated dims], in the compute dtype.
struct Rope {
  Ref cos, sin;
};

// What every layer reads that the model makes once per forward and passes to
// each decoder layer (Hugging Face's LlamaModel.forward: position_embeddings =
// self.rotary_emb(...); the sdpa sliding-window mask). NB: eager attention
// still makes its [T, T] causal mask in each layer, as the oracle's reference
// does.
struct ModelWide {
  Rope rope;
  Rope rope_local;  // Gemma-3's windowed layers' (rope_local_base).
  Ref window_mask;  // The sdpa sliding-window mask [B, 1, S, S]; none: id -1.
};

// Builds the cos and sin tables for positions 0..t-1 with `rope_base`
// (LlamaRotaryEmbedding), once per forward.
Rope RopeTables(GraphBuilder& b, const LlamaConfig& c, Ref t, double rope_base);

// This layer's sliding window (0: none): Gemma-2 windows the even layers,
// Gemma-3 all but every window_pattern-th.
int64_t LayerWindow(const LlamaConfig& c, int64_t layer);

// Builds layer `l`'s attention on its normed input x [B, T, hidden] and
// returns o_proj's output (all-reduced under tensor parallelism); `window` is
// LayerWindow's; with `gen`, the layer reads and updates the KV cache.
Ref Attention(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
              const ModelWide& wide, int64_t window, GenState* gen);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_LLAMA_ATTENTION_H_
