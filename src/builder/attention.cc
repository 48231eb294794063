#include "builder/attention.h"

namespace torchcost::builder {

bool ParseAttnImpl(const std::string& text, AttnImpl* out) {
  if (text == "eager") {
    *out = AttnImpl::kEager;
  } else if (text == "sdpa") {
    *out = AttnImpl::kSdpa;
  } else if (text == "flash" || text == "flash_attention_2") {
    *out = AttnImpl::kFlash;
  } else {
    return false;
  }
  return true;
}

std::string AttnImplError(const std::string& text) {
  AttnImpl impl;
  if (ParseAttnImpl(text, &impl)) return "";
  return "attn='" + text + "' is not eager, sdpa or flash";
}

Ref Sdpa(GraphBuilder& b, Ref q, Ref k, Ref v, Arg mask, double dropout_p,
         bool is_causal, bool enable_gqa) {
  return b.Op1("aten::scaled_dot_product_attention", "",
               {{"query", q},
                {"key", k},
                {"value", v},
                {"attn_mask", mask},
                {"dropout_p", dropout_p},
                {"is_causal", is_causal},
                {"scale", Arg::None()},
                {"enable_gqa", enable_gqa}});
}

Ref FlashAttnFunc(GraphBuilder& b, Ref q, Ref k, Ref v, double dropout_p,
                  bool causal, int64_t window) {
  // Hugging Face: window_size = (sliding_window - 1, sliding_window - 1); -1 =
  // unbounded.
  const int64_t w = window > 0 ? window - 1 : -1;
  return b.Op1("flash_attn::flash_attn_func", "",
               {{"q", q},
                {"k", k},
                {"v", v},
                {"dropout_p", dropout_p},
                {"softmax_scale", Arg::None()},
                {"causal", causal},
                {"window_size", std::vector<int64_t>{w, w}},
                {"softcap", 0.0},
                {"alibi_slopes", Arg::None()},
                {"deterministic", false},
                {"return_attn_probs", false}});
}

Ref RepeatKv(GraphBuilder& b, Ref x, int64_t rep) {
  if (rep == 1) return x;
  // batch, num_key_value_heads, slen, head_dim = hidden_states.shape; then
  // hidden_states[:, :, None, :, :] as the trace records it (slices and an
  // unsqueeze).
  Ref batch = b.Size(x, 0), kv = b.Size(x, 1), slen = b.Size(x, 2),
      hd = b.Size(x, 3);
  Ref e = b.Slice(b.Slice(x, 0, 0, kSliceToEnd), 1, 0, kSliceToEnd);
  e = b.Slice(b.Slice(b.Unsqueeze(e, 2), 3, 0, kSliceToEnd), 4, 0, kSliceToEnd);
  e = b.Expand(e, b.IntList({batch, kv, rep, slen, hd}));
  Ref heads = b.IntOf(b.Mul(b.NumToTensor(kv), b.ScalarTensorInt(rep)));
  return b.Reshape(e, b.IntList({batch, heads, slen, hd}));
}

Ref SlidingWindowMask(GraphBuilder& b, Ref seq_len, int64_t window) {
  Ref ones = b.Full(b.IntList({seq_len, seq_len}), true,
                    Arg::ScalarType(DType::kBool));
  // Causal: k <= q (tril); in the window: k > q - window (triu at -(window -
  // 1)).
  Ref causal = b.Op1("aten::tril", "", {{"self", ones}, {"diagonal", 0}});
  Ref recent =
      b.Op1("aten::triu", "", {{"self", ones}, {"diagonal", -(window - 1)}});
  return b.Op1("aten::logical_and", "", {{"self", causal}, {"other", recent}});
}

}  // namespace torchcost::builder
