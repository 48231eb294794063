// A family's generation phases (config keys phase and cache_dtype), as
// Hugging Face's generate() runs a decoder with a DynamicCache
// (docs/generation.md): the cache's dtype, the past keys and values a decode
// step reads, and the cache updates each layer makes.
#ifndef TORCHCOST_SRC_BUILDER_GENERATION_PHASE_H_
#define TORCHCOST_SRC_BUILDER_GENERATION_PHASE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "builder/validate.h"
#include "torchcost/builder.h"

namespace torchcost::builder {

// One phase's cache: its dtype, each layer's past keys and values (decode), and
// the cache tensors made, in layer order.
struct GenState {
  bool generating = false;          // phase is prefill or decode.
  bool decode = false;              // phase is decode.
  DType compute = DType::kFloat32;  // The family's compute dtype.
  // NB: fp8 is carried as a 1-byte uint8.
  DType cache_dtype = DType::kFloat32;
  // decode: past_key.i, past_value.i per layer.
  std::vector<Ref> pasts;
  // The cache after each update, output after the logits.
  std::vector<Ref> caches;
  size_t next_past = 0;
};

// Reads the keys `phase` ("", "prefill" or "decode") and `cache_dtype` ("":
// `compute`; fp32, bf16, fp16 or fp8) into a GenState, reporting bad values to
// `v`.
GenState ReadPhase(Validator& v, const std::string& phase,
                   const std::string& cache_dtype, DType compute);

// Declares the decode step's inputs after its token ids: the previous step's
// float32 logits next_token_logits [B, vocab] (generate() holds them through
// this step: FinishCausalLm), then the past keys and values, past_key.i and
// past_value.i [B, kv_heads, past, head_dim] for each layer i, `past` being
// `pasts[i]` (a symbolic length such as "S+T-2").
void DeclarePasts(GraphBuilder& b, GenState& g, int64_t vocab, int64_t kv_heads,
                  int64_t head_dim, const std::vector<std::string>& pasts);

// Hugging Face's DynamicLayer.update (transformers
// src/transformers/cache_utils.py at 004999d972e478164dd7e8e508350937c803531e):
// self.keys = torch.cat([self.keys, key_states], dim=-2), returning self.keys;
// the prefill's self.keys is an empty tensor, so the cat copies the prompt's
// keys. A cache dtype other than the compute dtype casts before the cat and
// back after (a copy of the whole cache).
Ref CacheUpdate(GraphBuilder& b, GenState& g, Ref x);

// Outputs the caches made, in layer order (after the logits).
void OutputCaches(GraphBuilder& b, const GenState& g);

// Ends a causal LM's graph (Hugging Face's *ForCausalLM): outputs `logits`,
// then the caches made, and sets the causal-LM loss (src/training/loss.cc).
// NB: a generation phase runs under no_grad, so it has no loss; its caches,
// a key and a value per layer, keep the layer's sliding window from
// `layer_windows` (0: none). A phase outputs after its logits the float32
// copy generate() makes of them (GenerationMixin._sample, transformers
// src/transformers/generation/utils.py at
// 000034a44ef887621d9b36001a5eb7c46e64cb3f: next_token_logits =
// outputs.logits[:, -1, :].to(copy=True, dtype=torch.float32)), then the
// caches: the copy is held until the next step's replaces it.
BuiltModel FinishCausalLm(GraphBuilder& b, Ref logits, const GenState& g,
                          const std::vector<int64_t>& layer_windows);

// DeclarePasts' lengths for `layers` layers without a sliding window: S + T - 2
// tokens before the last decode step (the prompt and all new tokens but the
// last two).
std::vector<std::string> FullPasts(int64_t layers);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_GENERATION_PHASE_H_
