// The LLaMA family's mixture of experts (Hugging Face's MixtralSparseMoeBlock
// and Qwen2MoeSparseMoeBlock).
#ifndef TORCHCOST_SRC_BUILDER_LLAMA_MOE_H_
#define TORCHCOST_SRC_BUILDER_LLAMA_MOE_H_

#include "builder/llama_layer.h"
#include "torchcost/builder.h"
#include "torchcost/families.h"

namespace torchcost::builder {

// Whether the experts' projections take Mixtral's names (w1, w3, w2 under
// block_sparse_moe).
bool MixtralNames(const LlamaConfig& c);

// Builds the sparse MoE block's forward on the layer input x [B, S, hidden] and
// returns its output [B, S, hidden]; `decode` when a decode step builds it.
Ref MoeBlock(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
             bool decode);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_LLAMA_MOE_H_
