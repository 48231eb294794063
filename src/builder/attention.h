// The attention implementations the families build, as Hugging Face's
// attn_implementation chooses them: eager (matmul + softmax), sdpa
// (torch.nn.functional.scaled_dot_product_attention) and flash
// (flash-attn 2's flash_attn_func).
#ifndef TORCHCOST_SRC_BUILDER_ATTENTION_H_
#define TORCHCOST_SRC_BUILDER_ATTENTION_H_

#include <cstdint>
#include <string>

#include "torchcost/builder.h"

namespace torchcost::builder {

// One of the `attn=` values of a family config.
enum class AttnImpl { kEager, kSdpa, kFlash };

// Parses "eager", "sdpa" or "flash" (also "flash_attention_2"); false if none.
bool ParseAttnImpl(const std::string& text, AttnImpl* out);

// Returns the one-line error for a bad `attn=` value, or "" if it parses.
std::string AttnImplError(const std::string& text);

// Adds aten::scaled_dot_product_attention on [B, H, S, D] q and [B, Hk, S, D]
// k, v (Hk < H needs enable_gqa), with an optional mask, dropout and is_causal.
Ref Sdpa(GraphBuilder& b, Ref q, Ref k, Ref v, Arg mask, double dropout_p,
         bool is_causal, bool enable_gqa);

// Adds flash_attn::flash_attn_func on [B, S, H, D] q and [B, S, Hk, D] k, v;
// `window` > 0 is Hugging Face's sliding_window (window_size (window - 1,
// window - 1)).
Ref FlashAttnFunc(GraphBuilder& b, Ref q, Ref k, Ref v, double dropout_p,
                  bool causal, int64_t window);

// Hugging Face's repeat_kv: [B, Hk, S, D] -> [B, Hk * rep, S, D] by
// x[:, :, None].expand(B, Hk, rep, S, D).reshape(B, Hk * rep, S, D), op for
// op as a trace records it; the reshape of the expanded view copies (the
// memory model's ReshapeCopiesBroadcast); x itself when rep is 1.
Ref RepeatKv(GraphBuilder& b, Ref x, int64_t rep);

// Hugging Face's sliding-window causal mask for SDPA (masking_utils,
// sliding_window_causal_mask_function): bool [S, S], true where
// q - window < k <= q, built once per forward from ones(S, S).
Ref SlidingWindowMask(GraphBuilder& b, Ref seq_len, int64_t window);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_ATTENTION_H_
