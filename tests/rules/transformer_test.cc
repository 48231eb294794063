// Tests of the transformer rules: rules/attention.yaml, indexing.yaml,
// loss.yaml, the fused rms_norm, mean.dim's saved self and to()'s alias.
// Each expectation is derived in the comment beside it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/op_runner.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;

// Returns "what:bytes" of every counted saved tensor, in order.
std::vector<std::string> Saved(const OpResult& r) {
  std::vector<std::string> out;
  for (const auto& s : r.saved) {
    if (s.counted) out.push_back(s.what + ":" + s.bytes.ToString());
  }
  return out;
}

// ---- scaled_dot_product_attention
// ----------------------------------------------------

std::vector<std::pair<std::string, OpArg>> Qkv(const std::string& q,
                                               const std::string& k,
                                               const std::string& v) {
  return {{"query", OpArg::Tensor(q)},
          {"key", OpArg::Tensor(k)},
          {"value", OpArg::Tensor(v)}};
}

TEST(AttentionRuleTest, SdpaConcreteFlopsAreNeverZero) {
  OpRunner r;
  // N = [2, 4], L = 8, S = 10, E = 16, Ev = 32.
  OpResult a = r.Run("aten::scaled_dot_product_attention",
                     Qkv("2,4,8,16", "2,4,10,16", "2,4,10,32"));
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(a.output_shapes[0], "[2, 4, 8, 32]");
  const int64_t NB = 8, SC = NB * 8 * 10;   // 640 scores
  const int64_t QK = 2 * NB * 8 * 10 * 16;  // 20480
  const int64_t AV = 2 * NB * 8 * 10 * 32;  // 40960
  EXPECT_EQ(a.macs, sym::Expr(NB * 8 * 10 * (16 + 32)));
  // QK^T, scale, softmax 4, PV: 64640
  EXPECT_EQ(a.flops, sym::Expr(QK + SC + 4 * SC + AV));
  EXPECT_EQ(a.flops, sym::Expr(64640));
  EXPECT_EQ(a.transcendentals, sym::Expr(SC));  // one exp per score
  // is_causal counts the full L x S (NB: the convention), plus the mask: SC.
  auto args = Qkv("2,4,8,16", "2,4,10,16", "2,4,10,32");
  args.push_back({"is_causal", OpArg::Bool(true)});
  OpResult c = r.Run("aten::scaled_dot_product_attention", args);
  ASSERT_TRUE(c.errors.empty()) << c.errors[0];
  EXPECT_EQ(c.flops, sym::Expr(64640 + SC));
  // Dropout adds compare + multiply per score.
  args.push_back({"dropout_p", OpArg::Float(0.1)});
  EXPECT_EQ(r.Run("aten::scaled_dot_product_attention", args).flops,
            sym::Expr(64640 + SC + 2 * SC));
}

TEST(AttentionRuleTest, SdpaSymbolicAndBackends) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  sym::Expr B = r.S("B"), S = r.S("S");
  // LLaMA-like: [B, 32, S, 128] for q, k, v.
  auto args = Qkv("B,32,S,128", "B,32,S,128", "B,32,S,128");
  args.push_back({"is_causal", OpArg::Bool(true)});
  const sym::Expr SC = B * 32 * S * S;
  const sym::Expr QK = 2 * B * 32 * S * S * 128;  // == AV
  // cuda (default), bfloat16: flash. Forward: QK + AV + scale 1 + mask 1 +
  // softmax 4 = 4*B*32*S^2*128 + 6*SC.
  args = {{"query", OpArg::Tensor("B,32,S,128", DType::kBFloat16)},
          {"key", OpArg::Tensor("B,32,S,128", DType::kBFloat16)},
          {"value", OpArg::Tensor("B,32,S,128", DType::kBFloat16)},
          {"is_causal", OpArg::Bool(true)}};
  OpResult f = r.Run("aten::scaled_dot_product_attention", args);
  ASSERT_TRUE(f.errors.empty()) << f.errors[0];
  EXPECT_EQ(f.output_shapes[0], "[B, 32, S, 128]");
  EXPECT_EQ(f.flops, 2 * QK + 6 * SC);
  // Backward: 5 products (2.5x the forward's 2) + scale/-lse 2 + softmax
  // backward 4.
  EXPECT_EQ(f.bwd_flops, 5 * QK + 6 * SC)
      << f.bwd_flops.ToString() << " vs " << (5 * QK + 6 * SC).ToString();
  // Saved: query, key, value (inputs), out, the float32 logsumexp [B, 32, S] (4
  // bytes per row) and the philox seed and offset (0-dim int64: 8 + 8 bytes;
  // derivatives.yaml passes them to backward). bytes of one [B, 32, S, 128]
  // bfloat16 tensor
  const sym::Expr T = B * 32 * S * 128 * 2;
  EXPECT_EQ(f.saved_bytes, 4 * T + B * 32 * S * 4 + 16);
  EXPECT_THAT(Saved(f), ::testing::Contains(HasSubstr("lse:")));
  EXPECT_THAT(Saved(f), ::testing::Contains("philox_seed:8"));
  // float32 on cuda: flash takes half precision only (sdp_utils.cpp
  // check_dtypes_low_precision), so memory-efficient: the logsumexp rows padded
  // to ceildiv(S, 32)*32.
  args = Qkv("B,32,S,128", "B,32,S,128", "B,32,S,128");
  args.push_back({"is_causal", OpArg::Bool(true)});
  OpResult e = r.Run("aten::scaled_dot_product_attention", args);
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  EXPECT_EQ(
      e.saved_bytes,
      4 * (2 * T) + B * 32 * (sym::CeilDiv(S, sym::Expr(32)) * 32) * 4 + 16);
  EXPECT_EQ(e.bwd_flops, f.bwd_flops);  // the same recompute
  // cpu: the math path. Backward: 4 products (no recompute) + softmax backward
  // 4 + scale 1.
  r.set_device("cpu");
  OpResult m = r.Run("aten::scaled_dot_product_attention", args);
  ASSERT_TRUE(m.errors.empty()) << m.errors[0];
  EXPECT_EQ(m.flops, f.flops);  // the forward does not depend on the backend
  EXPECT_EQ(m.bwd_flops, 4 * QK + 5 * SC);
  // Saved (float32): q*sqrt(scale), k*sqrt(scale) (new tensors), the weights
  // [B, 32, S, S] and value.
  EXPECT_EQ(m.saved_bytes, 3 * (2 * T) + SC * 4);
  EXPECT_THAT(Saved(m), ::testing::Contains(HasSubstr("attn:")));
}

TEST(AttentionRuleTest, SdpaBackendChosenExplicitly) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  auto args = Qkv("1,2,40,8", "1,2,40,8", "1,2,40,8");
  const int64_t T = 1 * 2 * 40 * 8 * 4;  // bytes of one q/k/v/out tensor
  // --attention-backend math on CUDA: q*sqrt(scale), k*sqrt(scale), the weights
  // [1,2,40,40] and v.
  r.set_attention_backend("math");
  EXPECT_EQ(r.Run("aten::scaled_dot_product_attention", args).saved_bytes,
            sym::Expr(3 * T + 1 * 2 * 40 * 40 * 4));
  // flash on CPU: q, k, v, out, the float32 logsumexp [1, 2, 40] and the philox
  // seed and offset (16).
  r.set_device("cpu");
  r.set_attention_backend("flash");
  EXPECT_EQ(r.Run("aten::scaled_dot_product_attention", args).saved_bytes,
            sym::Expr(4 * T + 1 * 2 * 40 * 4 + 16));
  // efficient: the logsumexp rows padded to ceil(40/32)*32 = 64.
  r.set_attention_backend("efficient");
  EXPECT_EQ(r.Run("aten::scaled_dot_product_attention", args).saved_bytes,
            sym::Expr(4 * T + 1 * 2 * 64 * 4 + 16));
}

TEST(AttentionRuleTest, SdpaEfficientWithMaskAndBadInputs) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  auto args = Qkv("1,2,40,8", "1,2,40,8", "1,2,40,8");
  args.push_back({"attn_mask", OpArg::Tensor("40,40")});
  // cuda + mask: memory-efficient
  OpResult e = r.Run("aten::scaled_dot_product_attention", args);
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  // logsumexp padded to ceil(40/32)*32 = 64 rows: 1*2*64*4 = 512 bytes; q, k,
  // v, out 4*2560; mask 6400; philox seed and offset 16.
  EXPECT_EQ(e.saved_bytes, sym::Expr(4 * 2560 + 512 + 6400 + 16));
  OpResult bad = r.Run("aten::scaled_dot_product_attention",
                       Qkv("2,4,8,16", "2,4,10,8", "2,4,10,16"));
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("argument 'key' dim 3 must equal E"));
  OpResult bad2 = r.Run("aten::scaled_dot_product_attention",
                        Qkv("2,4,8,16", "2,4,10,16", "2,4,12,16"));
  ASSERT_FALSE(bad2.errors.empty());
  EXPECT_THAT(bad2.errors[0], HasSubstr("argument 'value' dim 2 must equal S"));
}

TEST(AttentionRuleTest, SdpaGroupedKeysFollowTheKernel) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // enable_gqa: 8 query heads, 2 K/V heads, L = S = 64, E = 16.
  auto gqa = [](DType d) {
    return std::vector<std::pair<std::string, OpArg>>{
        {"query", OpArg::Tensor("1,8,64,16", d)},
        {"key", OpArg::Tensor("1,2,64,16", d)},
        {"value", OpArg::Tensor("1,2,64,16", d)},
        {"is_causal", OpArg::Bool(true)},
        {"enable_gqa", OpArg::Bool(true)}};
  };
  // bfloat16 on cuda: flash, which takes grouped K/V natively (sdp_utils.cpp:
  // check_batch_size_and_num_heads_dense<true>): q 1*8*64*16*2 = 16384, k and v
  // 1*2*64*16*2 = 4096 each, out 16384, logsumexp 1*8*64*4 = 2048, philox 16.
  OpResult f =
      r.Run("aten::scaled_dot_product_attention", gqa(DType::kBFloat16));
  ASSERT_TRUE(f.errors.empty()) << f.errors[0];
  EXPECT_EQ(f.output_shapes[0], "[1, 8, 64, 16]");
  EXPECT_EQ(f.saved_bytes, sym::Expr(16384 + 4096 + 4096 + 16384 + 2048 + 16));
  // Scores are per query head: SC = 8*64*64 = 32768; QK = AV = 2*SC*16.
  const int64_t SC = 8 * 64 * 64, QK = 2 * SC * 16;
  EXPECT_EQ(f.flops, sym::Expr(2 * QK + 6 * SC));
  // float32: no flash, and memory-efficient takes no grouped K/V
  // (check_batch_size_and_num_heads_dense<false>), so math: K and V repeated to
  // 8 heads. Saved: q*sqrt(scale) 1*8*64*16*4 = 32768, the repeated
  // k*sqrt(scale) 32768, the weights 1*8*64*64*4 = 131072 and the repeated
  // value 32768.
  OpResult m =
      r.Run("aten::scaled_dot_product_attention", gqa(DType::kFloat32));
  ASSERT_TRUE(m.errors.empty()) << m.errors[0];
  EXPECT_EQ(m.saved_bytes, sym::Expr(32768 + 32768 + 131072 + 32768));
  // Grouped K/V without enable_gqa is an error.
  auto bad = gqa(DType::kBFloat16);
  bad.pop_back();
  OpResult e = r.Run("aten::scaled_dot_product_attention", bad);
  ASSERT_FALSE(e.errors.empty());
}

TEST(AttentionRuleTest, SdpaBoolMaskIsConvertedForMemoryEfficient) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  auto args = Qkv("1,2,40,8", "1,2,40,8", "1,2,40,8");
  args.push_back({"attn_mask", OpArg::Tensor("40,40", DType::kBool)});
  // convert_boolean_attn_mask makes a [40, 40] float32 bias (6400 bytes), which
  // backward keeps; q, k, v, out 4*2560; logsumexp 1*2*64*4 = 512; philox 16.
  OpResult e = r.Run("aten::scaled_dot_product_attention", args);
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  EXPECT_EQ(e.saved_bytes, sym::Expr(4 * 2560 + 512 + 40 * 40 * 4 + 16));
  EXPECT_THAT(Saved(e), ::testing::Contains("bias:6400"));
}

// flash_attn::flash_attn_func (flash-attn 2, FlashAttnFunc): derivations from
// flash_attn_interface.py and csrc/flash_attn/flash_api.cpp
// (rules/attention.yaml).
TEST(AttentionRuleTest, FlashAttnFuncSavesGroupedKvAndLse) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // [B, S, H, D]: B = 2, L = S = 64, 8 query heads, 2 K/V heads, D = 16,
  // bfloat16, causal.
  auto args = [](double dropout, std::vector<int64_t> window) {
    return std::vector<std::pair<std::string, OpArg>>{
        {"q", OpArg::Tensor("2,64,8,16", DType::kBFloat16)},
        {"k", OpArg::Tensor("2,64,2,16", DType::kBFloat16)},
        {"v", OpArg::Tensor("2,64,2,16", DType::kBFloat16)},
        {"dropout_p", OpArg::Float(dropout)},
        {"causal", OpArg::Bool(true)},
        {"window_size", OpArg::Ints(std::move(window))}};
  };
  OpResult f = r.Run("flash_attn::flash_attn_func", args(0.0, {-1, -1}));
  ASSERT_TRUE(f.errors.empty()) << f.errors[0];
  EXPECT_EQ(f.output_shapes[0], "[2, 64, 8, 16]");
  EXPECT_EQ(f.output_dtypes[0], DType::kBFloat16);
  // Causal alone counts all 64 keys per row (the file's NB): SC = 2*8*64*64 =
  // 65536.
  const int64_t SC = 2 * 8 * 64 * 64, QK = 2 * SC * 16;  // QK = AV = 2097152
  EXPECT_EQ(f.macs, sym::Expr(SC * (16 + 16)));
  // QK^T, scale, mask, softmax 4, PV = 4587520
  EXPECT_EQ(f.flops, sym::Expr(2 * QK + 6 * SC));
  EXPECT_EQ(f.flops, sym::Expr(4587520));
  // Backward: recompute QK^T, dV, dP, dQ, dK = 5 products; scale and - lse 2,
  // softmax backward 4.
  EXPECT_EQ(f.bwd_flops, sym::Expr(5 * QK + 6 * SC));
  // Saved (ctx.save_for_backward(q, k, v, out_padded, softmax_lse, rng_state)):
  // q 2*64*8*16*2 = 32768; k, v 2*64*2*16*2 = 8192 each (2 heads: no repeat);
  // out 32768; softmax_lse float32 [2, 8, 64] = 4096; rng_state int64 [2] = 16.
  EXPECT_EQ(f.saved_bytes, sym::Expr(32768 + 8192 + 8192 + 32768 + 4096 + 16));
  EXPECT_THAT(Saved(f), ::testing::Contains("softmax_lse:4096"));
  EXPECT_THAT(Saved(f), ::testing::Contains("rng_state:16"));
  // Hugging Face's sliding_window 16: window_size (15, 15), causal -> each row
  // counts min(64, 15 + 0 + 1) = 16 keys: SC = 2*8*64*16 = 16384.
  OpResult w = r.Run("flash_attn::flash_attn_func", args(0.0, {15, 15}));
  ASSERT_TRUE(w.errors.empty()) << w.errors[0];
  const int64_t SCW = 2 * 8 * 64 * 16, QKW = 2 * SCW * 16;
  EXPECT_EQ(w.flops, sym::Expr(2 * QKW + 6 * SCW));
  // the window changes no saved tensor
  EXPECT_EQ(w.saved_bytes, f.saved_bytes);
  // Dropout: compare and multiply per score forward, the mask regenerated and
  // applied in backward.
  OpResult d = r.Run("flash_attn::flash_attn_func", args(0.1, {-1, -1}));
  ASSERT_TRUE(d.errors.empty()) << d.errors[0];
  EXPECT_EQ(d.flops, sym::Expr(2 * QK + 6 * SC + 2 * SC));
  EXPECT_EQ(d.bwd_flops, sym::Expr(5 * QK + 6 * SC + 2 * SC));
  // rng_state is saved with or without dropout
  EXPECT_EQ(d.saved_bytes, f.saved_bytes);
  // 3 K/V heads do not divide 8 query heads.
  auto bad = args(0.0, {-1, -1});
  bad[1].second = OpArg::Tensor("2,64,3,16", DType::kBFloat16);
  bad[2].second = OpArg::Tensor("2,64,3,16", DType::kBFloat16);
  ASSERT_FALSE(r.Run("flash_attn::flash_attn_func", bad).errors.empty());
}

TEST(AttentionRuleTest, ExplicitBackendRemodelsARecordedKernel) {
  // An aten-level export records the kernel PyTorch picked (here the CPU flash
  // kernel); an explicit backend re-models it. q, k, v [1, 2, 40, 8] float32:
  // T = 2560 bytes each, the output too.
  OpRunner r;
  r.set_inputs_require_grad(true);
  const auto args = Qkv("1,2,40,8", "1,2,40,8", "1,2,40,8");
  const int64_t T = 1 * 2 * 40 * 8 * 4;
  auto saved = [&](const std::string& backend) {
    r.set_attention_backend(backend);
    OpResult o =
        r.Run("aten::_scaled_dot_product_flash_attention_for_cpu", args);
    EXPECT_TRUE(o.errors.empty()) << o.errors[0];
    return o.saved_bytes;
  };
  // auto: as recorded: q, k, v, output, logsumexp [1, 2, 40] float32 (320).
  EXPECT_EQ(saved("auto"), sym::Expr(4 * T + 320));
  // flash (CUDA): the same plus the philox seed and offset (8 + 8).
  EXPECT_EQ(saved("flash"), sym::Expr(4 * T + 320 + 16));
  // efficient: logsumexp rows padded to ceildiv(40, 32)*32 = 64: 1*2*64*4 =
  // 512; philox 16.
  EXPECT_EQ(saved("efficient"), sym::Expr(4 * T + 512 + 16));
  // math: q*sqrt(scale), k*sqrt(scale), the weights [1, 2, 40, 40] (12800) and
  // value.
  EXPECT_EQ(saved("math"), sym::Expr(3 * T + 12800));
  // The CUDA flash op under math: the same math tensors.
  r.set_attention_backend("math");
  OpResult f = r.Run("aten::_scaled_dot_product_flash_attention", args);
  ASSERT_TRUE(f.errors.empty()) << f.errors[0];
  EXPECT_EQ(f.saved_bytes, sym::Expr(3 * T + 12800));
  // The memory-efficient op under flash: the unpadded logsumexp [1, 2, 40]
  // (320) and philox 16.
  r.set_attention_backend("flash");
  auto eff = args;
  eff.push_back({"attn_bias", OpArg::None()});
  eff.push_back({"compute_log_sumexp", OpArg::Bool(true)});
  OpResult e = r.Run("aten::_scaled_dot_product_efficient_attention", eff);
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  EXPECT_EQ(e.saved_bytes, sym::Expr(4 * T + 320 + 16));
}

TEST(AttentionRuleTest, AtenFlashTakesGroupedKv) {
  // torch >= 2.5 passes grouped K/V to the flash kernel as they are. bfloat16
  // q [1, 8, 64, 16] (16384 bytes), k and v [1, 2, 64, 16] (4096 each): saved
  // q, k, v, output 16384, logsumexp [1, 8, 64] float32 2048, philox 8 + 8.
  OpRunner r;
  r.set_inputs_require_grad(true);
  std::vector<std::pair<std::string, OpArg>> args = {
      {"query", OpArg::Tensor("1,8,64,16", DType::kBFloat16)},
      {"key", OpArg::Tensor("1,2,64,16", DType::kBFloat16)},
      {"value", OpArg::Tensor("1,2,64,16", DType::kBFloat16)}};
  OpResult f = r.Run("aten::_scaled_dot_product_flash_attention", args);
  ASSERT_TRUE(f.errors.empty()) << f.errors[0];
  EXPECT_EQ(f.output_shapes[0], "[1, 8, 64, 16]");
  EXPECT_EQ(f.output_shapes[1], "[1, 8, 64]");
  EXPECT_EQ(f.saved_bytes, sym::Expr(16384 + 4096 + 4096 + 16384 + 2048 + 16));
  // Scores per query head: SC = 8*64*64; Q K^T and P V 2*SC*16 each, scale 1,
  // softmax 4.
  const int64_t SC = 8 * 64 * 64;
  EXPECT_EQ(f.flops, sym::Expr(2 * (2 * SC * 16) + 5 * SC));
  // 3 K/V heads do not divide 8.
  args[1].second = OpArg::Tensor("1,3,64,16", DType::kBFloat16);
  args[2].second = OpArg::Tensor("1,3,64,16", DType::kBFloat16);
  ASSERT_FALSE(
      r.Run("aten::_scaled_dot_product_flash_attention", args).errors.empty());
}

TEST(AttentionRuleTest, AtenLevelForms) {
  OpRunner r;
  // flash: 9 returns, max_q/max_k ints; logsumexp float32 [B, H, L].
  OpResult f = r.Run("aten::_scaled_dot_product_flash_attention",
                     Qkv("B,4,S,16", "B,4,S,16", "B,4,S,16"));
  ASSERT_TRUE(f.errors.empty()) << f.errors[0];
  EXPECT_EQ(f.output_shapes[0], "[B, 4, S, 16]");
  EXPECT_EQ(f.output_shapes[1], "[B, 4, S]");
  EXPECT_EQ(f.output_dtypes[1], DType::kFloat32);
  sym::Expr SC = r.S("B") * 4 * r.S("S") * r.S("S");
  // QK + AV (E = Ev = 16) + scale + softmax 4
  EXPECT_EQ(f.flops, 2 * 2 * SC * 16 + 5 * SC);
  OpResult m = r.Run("aten::_scaled_dot_product_attention_math",
                     Qkv("B,4,S,16", "B,4,S,16", "B,4,S,16"));
  ASSERT_TRUE(m.errors.empty()) << m.errors[0];
  EXPECT_EQ(m.output_shapes[1], "[B, 4, S, S]");  // the attention weights
  EXPECT_EQ(m.flops, f.flops);
  // torch 1.13's private op (math): saves q/sqrt(E) (new), key, weights, value
  // (measured).
  r.set_inputs_require_grad(true);
  OpResult p = r.Run("aten::_scaled_dot_product_attention",
                     Qkv("2,3,5,4", "2,3,7,4", "2,3,7,6"));
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  // as saved_tensors_hooks reports
  EXPECT_EQ(p.saved_bytes, sym::Expr(480 + 672 + 840 + 1008));
}

// ---- einsum
// -------------------------------------------------------------------------

TEST(EinsumRuleTest, ShapesMacsAndErrors) {
  OpRunner r;
  auto run = [&](const std::string& eq, std::vector<std::string> shapes) {
    return r.Run("aten::einsum", {{"equation", OpArg::Str(eq)},
                                  {"tensors", OpArg::TensorList(shapes)}});
  };
  OpResult a = run("bhqd,bhkd->bhqk", {"B,8,S,64", "B,8,S,64"});
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(a.output_shapes[0], "[B, 8, S, S]");
  sym::Expr macs = r.S("B") * 8 * r.S("S") * 64 * r.S("S");  // b h q d k
  EXPECT_EQ(a.macs, macs);
  EXPECT_EQ(a.flops, 2 * macs);
  // "..." broadcasts [2, 3] with [3]
  OpResult e = run("...qd,...kd->...qk", {"2,3,5,4", "3,7,4"});
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  EXPECT_EQ(e.output_shapes[0], "[2, 3, 5, 7]");
  EXPECT_EQ(e.macs, sym::Expr(2 * 3 * 5 * 4 * 7));
  // implicit output: letters used once, sorted: "ik"
  OpResult i = run("ij,jk", {"3,4", "4,5"});
  EXPECT_EQ(i.output_shapes[0], "[3, 5]");
  EXPECT_EQ(i.macs, sym::Expr(60));
  OpResult t = run("ij->ji", {"3,4"});  // one operand: no arithmetic
  EXPECT_EQ(t.output_shapes[0], "[4, 3]");
  EXPECT_EQ(t.flops, sym::Expr(0));
  EXPECT_EQ(run("ij->i", {"3,4"}).flops, sym::Expr(12 - 3));  // row sums
  EXPECT_THAT(run("ij,jk->ik", {"3,4", "5,6"}).errors[0],
              HasSubstr("subscript 'j' has size 4 and, in operand 1, size 5"));
  EXPECT_THAT(run("ijk,jk->i", {"3,4", "4,5"}).errors[0],
              HasSubstr("operand 0 has shape [3, 4] (rank 2)"));
  EXPECT_THAT(run("ij,jk->iz", {"3,4", "4,5"}).errors[0],
              HasSubstr("output subscript 'z' appears in no operand"));
  // Backward: one einsum per operand (2*MACs each); saved: both operands.
  r.set_inputs_require_grad(true);
  OpResult g = run("bij,bjk->bik", {"2,3,4", "2,4,5"});
  EXPECT_EQ(g.bwd_flops, sym::Expr(2 * 2 * 120));
  EXPECT_EQ(g.saved_bytes, sym::Expr((24 + 40) * 4));
}

// ---- indexing
// --------------------------------------------------------------------------

TEST(IndexingRuleTest, RepeatInterleaveForGroupedQueryAttention) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // K/V heads [B, 2, S, 32] repeated 4 times on dim 1 -> 8 heads.
  OpResult k = r.Run("aten::repeat_interleave.self_int",
                     {{"self", OpArg::Tensor("B,2,S,32")},
                      {"repeats", OpArg::Int(4)},
                      {"dim", OpArg::Int(1)}});
  ASSERT_TRUE(k.errors.empty()) << k.errors[0];
  EXPECT_EQ(k.output_shapes[0], "[B, 8, S, 32]");
  // a gather
  EXPECT_EQ(k.flops, sym::Expr(0));
  // index_add: 1 add per grad element
  EXPECT_EQ(k.bwd_flops, r.S("B") * 8 * r.S("S") * 32);
  // int64 index [2*4] (measured: 6 -> 48 B)
  EXPECT_EQ(k.saved_bytes, sym::Expr(2 * 4 * 8));
  OpResult flat =
      r.Run("aten::repeat_interleave.self_int",
            {{"self", OpArg::Tensor("2,3")}, {"repeats", OpArg::Int(2)}});
  EXPECT_EQ(flat.output_shapes[0], "[12]");
  OpResult bad =
      r.Run("aten::repeat_interleave.self_int", {{"self", OpArg::Tensor("2,3")},
                                                 {"repeats", OpArg::Int(2)},
                                                 {"dim", OpArg::Int(2)}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("dim 2 out of range"));
}

TEST(IndexingRuleTest, TriuMaskedFillSelectGatherTopkRepeatOuter) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  OpResult t = r.Run("aten::triu", {{"self", OpArg::Tensor("S,S")},
                                    {"diagonal", OpArg::Int(1)}});
  ASSERT_TRUE(t.errors.empty()) << t.errors[0];
  EXPECT_EQ(t.flops, r.S("S") * r.S("S"));
  // TriuBackward0 saves only the diagonal
  EXPECT_EQ(t.saved_bytes, sym::Expr(0));
  EXPECT_THAT(r.Run("aten::tril", {{"self", OpArg::Tensor("5")}}).errors[0],
              HasSubstr("rank(self) >= 2"));
  OpResult mf = r.Run("aten::masked_fill.Tensor",
                      {{"self", OpArg::Tensor("B,4,S,S")},
                       {"mask", OpArg::Tensor("S,S", DType::kBool)},
                       {"value", OpArg::Tensor("")}});
  ASSERT_TRUE(mf.errors.empty()) << mf.errors[0];
  EXPECT_EQ(mf.output_shapes[0], "[B, 4, S, S]");
  EXPECT_EQ(mf.saved_bytes, r.S("S") * r.S("S"));  // the bool mask
  OpResult is = r.Run("aten::index_select",
                      {{"self", OpArg::Tensor("10,B,7")},
                       {"dim", OpArg::Int(-1)},
                       {"index", OpArg::Tensor("3", DType::kInt64)}});
  ASSERT_TRUE(is.errors.empty()) << is.errors[0];
  EXPECT_EQ(is.output_shapes[0], "[10, B, 3]");
  EXPECT_EQ(is.saved_bytes, sym::Expr(24));  // the index
  OpResult g =
      r.Run("aten::gather", {{"self", OpArg::Tensor("4,5")},
                             {"dim", OpArg::Int(1)},
                             {"index", OpArg::Tensor("4,2", DType::kInt64)}});
  ASSERT_TRUE(g.errors.empty()) << g.errors[0];
  EXPECT_EQ(g.output_shapes[0], "[4, 2]");
  // self and index (GatherBackward0)
  EXPECT_EQ(g.saved_bytes, sym::Expr(80 + 64));
  OpResult tk = r.Run("aten::topk",
                      {{"self", OpArg::Tensor("B,50")}, {"k", OpArg::Int(5)}});
  ASSERT_TRUE(tk.errors.empty()) << tk.errors[0];
  EXPECT_EQ(tk.output_shapes[0], "[B, 5]");
  EXPECT_EQ(tk.output_shapes[1], "[B, 5]");
  EXPECT_EQ(tk.output_dtypes[1], DType::kInt64);
  EXPECT_EQ(tk.saved_bytes, r.S("B") * 5 * 8);  // int64 indices
  EXPECT_THAT(r.Run("aten::topk",
                    {{"self", OpArg::Tensor("4,5")}, {"k", OpArg::Int(6)}})
                  .errors[0],
              HasSubstr("k <= "));
  OpResult rp = r.Run("aten::repeat", {{"self", OpArg::Tensor("3,B")},
                                       {"repeats", OpArg::Ints({2, 1, 4})}});
  ASSERT_TRUE(rp.errors.empty()) << rp.errors[0];
  EXPECT_EQ(rp.output_shapes[0], "[2, 3, 4*B]");
  // sum over the 8 copies
  EXPECT_EQ(rp.bwd_flops, 24 * r.S("B") - 3 * r.S("B"));
  OpResult o = r.Run("aten::outer", {{"self", OpArg::Tensor("S")},
                                     {"vec2", OpArg::Tensor("64")}});
  EXPECT_EQ(o.output_shapes[0], "[S, 64]");
  EXPECT_EQ(o.flops, 64 * r.S("S"));
}

// ---- losses
// -------------------------------------------------------------------------------

TEST(LossRuleTest, CrossEntropyAndNll) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // Logits [N, V] = [B*S, 512], target [B*S] int64, mean.
  OpResult ce = r.Run("aten::cross_entropy_loss",
                      {{"self", OpArg::Tensor("N,512")},
                       {"target", OpArg::Tensor("N", DType::kInt64)}});
  ASSERT_TRUE(ce.errors.empty()) << ce.errors[0];
  EXPECT_EQ(ce.output_shapes[0], "[]");
  sym::Expr N = r.S("N"), E = N * 512;
  // log_softmax 4, pick -logp, mean's sum
  EXPECT_EQ(ce.flops, 4 * E + N + N);
  EXPECT_EQ(ce.transcendentals, E + N);  // exp per element, log per row
  EXPECT_EQ(ce.bwd_flops, N + 3 * E);    // scatter, log_softmax backward
  // Saved (measured on 1.13): log_softmax result, target, total_weight (a 0-dim
  // float).
  EXPECT_EQ(ce.saved_bytes, E * 4 + N * 8 + 4);
  OpResult none = r.Run("aten::cross_entropy_loss",
                        {{"self", OpArg::Tensor("4,5,3,2")},
                         {"target", OpArg::Tensor("4,3,2", DType::kInt64)},
                         {"reduction", OpArg::Int(0)}});
  ASSERT_TRUE(none.errors.empty()) << none.errors[0];
  EXPECT_EQ(none.output_shapes[0], "[4, 3, 2]");
  // as measured for [4, 5, 3, 2]
  EXPECT_EQ(none.saved_bytes, sym::Expr(480 + 192 + 4));
  OpResult ls = r.Run("aten::cross_entropy_loss",
                      {{"self", OpArg::Tensor("4,5")},
                       {"target", OpArg::Tensor("4", DType::kInt64)},
                       {"label_smoothing", OpArg::Float(0.1)}});
  ASSERT_TRUE(ls.errors.empty()) << ls.errors[0];
  // measured: + bool[4], float[4], bool[4]
  EXPECT_EQ(ls.saved_bytes, sym::Expr(80 + 32 + 4 + 4 + 16 + 4));
  OpResult prob =
      r.Run("aten::cross_entropy_loss",
            {{"self", OpArg::Tensor("4,5")}, {"target", OpArg::Tensor("4,5")}});
  ASSERT_TRUE(prob.errors.empty()) << prob.errors[0];
  // log_softmax result and the target
  EXPECT_EQ(prob.saved_bytes, sym::Expr(80 + 80));
  OpResult bad = r.Run("aten::cross_entropy_loss",
                       {{"self", OpArg::Tensor("4,5")},
                        {"target", OpArg::Tensor("3", DType::kInt64)}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("argument 'target' dim 0 must equal N"));
  OpResult nll = r.Run("aten::nll_loss_nd",
                       {{"self", OpArg::Tensor("4,5")},
                        {"target", OpArg::Tensor("4", DType::kInt64)}});
  ASSERT_TRUE(nll.errors.empty()) << nll.errors[0];
  EXPECT_EQ(nll.flops, sym::Expr(4 + 4));
  // self, target, total_weight
  EXPECT_EQ(nll.saved_bytes, sym::Expr(80 + 32 + 4));
  OpResult fw = r.Run("aten::nll_loss_forward",
                      {{"self", OpArg::Tensor("4,5")},
                       {"target", OpArg::Tensor("4", DType::kInt64)},
                       {"weight", OpArg::None()},
                       {"reduction", OpArg::Int(1)},
                       {"ignore_index", OpArg::Int(-100)}});
  ASSERT_TRUE(fw.errors.empty()) << fw.errors[0];
  EXPECT_EQ(fw.output_shapes[1], "[]");
}

// ---- RMSNorm: fused and decomposed
// ------------------------------------------------------------

TEST(RmsNormRuleTest, FusedAndDecomposedPieces) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  sym::Expr B = r.S("B"), S = r.S("S");
  for (const char* op : {"aten::rms_norm", "torchcost::rms_norm"}) {
    OpResult f = r.Run(op, {{"input", OpArg::Tensor("B,S,64")},
                            {"normalized_shape", OpArg::Ints({64})},
                            {"weight", OpArg::Tensor("64")}});
    ASSERT_TRUE(f.errors.empty()) << op << ": " << f.errors[0];
    EXPECT_EQ(f.flops, 4 * B * S * 64);   // square, sum, mul rstd, mul weight
    EXPECT_EQ(f.transcendentals, B * S);  // rsqrt per row
    // Saved: input, weight, rstd float32 [B, S, 1].
    EXPECT_EQ(f.saved_bytes, B * S * 64 * 4 + 64 * 4 + B * S * 4) << op;
  }
  // Decomposed: mean.dim saves self on 1.13 (MeanBackward1._saved_self), not
  // on 2.x (its sizes and numel only); mean(self) saves no tensor on either.
  const std::vector<std::pair<std::string, OpArg>> mean_args = {
      {"self", OpArg::Tensor("B,S,64")},
      {"dim", OpArg::Ints({-1})},
      {"keepdim", OpArg::Bool(true)}};
  OpResult m = r.Run("aten::mean.dim", mean_args);
  ASSERT_TRUE(m.errors.empty()) << m.errors[0];
  EXPECT_EQ(m.output_shapes[0], "[B, S, 1]");
  EXPECT_EQ(m.saved_bytes, sym::Expr(0));
  r.set_torch_version("1.13");
  EXPECT_EQ(r.Run("aten::mean.dim", mean_args).saved_bytes, B * S * 64 * 4);
  EXPECT_EQ(
      r.Run("aten::mean", {{"self", OpArg::Tensor("B,S,64")}}).saved_bytes,
      sym::Expr(0));
  OpResult rs = r.Run("aten::rsqrt", {{"self", OpArg::Tensor("B,S,1")}});
  EXPECT_EQ(rs.saved_bytes, B * S * 4);  // its result
  OpResult p =
      r.Run("aten::pow.Tensor_Scalar",
            {{"self", OpArg::Tensor("B,S,64")}, {"exponent", OpArg::Int(2)}});
  EXPECT_EQ(p.saved_bytes, B * S * 64 * 4);  // self
  // RoPE broadcasting: [B, H, S, D] * [S, D].
  OpResult rope = r.Run(
      "aten::mul.Tensor",
      {{"self", OpArg::Tensor("B,4,S,32")}, {"other", OpArg::Tensor("S,32")}});
  ASSERT_TRUE(rope.errors.empty()) << rope.errors[0];
  EXPECT_EQ(rope.output_shapes[0], "[B, 4, S, 32]");
}

TEST(CastRuleTest, ToTheSameDtypeIsAnAlias) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // softmax(..., dtype=float32).to(float32): no new tensor, so the matmul after
  // it saves softmax's own storage (measured on 1.13 in llama_tiny).
  OpResult same = r.Run(
      "aten::to.dtype",
      {{"self", OpArg::Tensor("B,3")}, {"dtype", OpArg::Int(6) /*float32*/}});
  ASSERT_TRUE(same.errors.empty()) << same.errors[0];
  EXPECT_EQ(same.output_dtypes[0], DType::kFloat32);
  OpResult cast = r.Run(
      "aten::to.dtype",
      {{"self", OpArg::Tensor("B,3")}, {"dtype", OpArg::Int(5) /*float16*/}});
  EXPECT_EQ(cast.output_dtypes[0], DType::kFloat16);
}

}  // namespace
}  // namespace torchcost
