// Tests of the generation-phase helpers (src/builder/generation_phase.cc):
// the phase and cache dtype keys, the decode step's past inputs, and the
// cache updates with and without a cast to the cache's dtype, and a causal
// LM's ending.
#include "builder/generation_phase.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace torchcost::builder {
namespace {

using ::testing::HasSubstr;

TEST(GenerationPhaseTest, ReadsThePhaseAndTheCacheDtype) {
  Validator v("test");
  GenState g = ReadPhase(v, "decode", "fp8", DType::kBFloat16);
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(g.generating);
  EXPECT_TRUE(g.decode);
  EXPECT_EQ(g.compute, DType::kBFloat16);
  // NB: fp8 is carried as a 1-byte uint8.
  EXPECT_EQ(g.cache_dtype, DType::kUInt8);
  g = ReadPhase(v, "", "", DType::kFloat16);
  EXPECT_FALSE(g.generating);
  EXPECT_EQ(g.cache_dtype, DType::kFloat16);  // The compute dtype.
  EXPECT_TRUE(v.ok());

  Validator bad_phase("test");
  ReadPhase(bad_phase, "train", "", DType::kFloat32);
  EXPECT_THAT(bad_phase.status().message(),
              HasSubstr("phase=train must be prefill or decode"));
  Validator bad_dtype("test");
  ReadPhase(bad_dtype, "prefill", "int8", DType::kFloat32);
  EXPECT_THAT(bad_dtype.status().message(),
              HasSubstr("cache_dtype=int8 must be fp32, bf16, fp16 or fp8"));
}

TEST(GenerationPhaseTest, DecodeCatsOntoThePastAndCasts) {
  Validator v("test");
  GenState g = ReadPhase(v, "decode", "fp16", DType::kFloat32);
  GraphBuilder b("Test", "test");
  Ref x = b.Input("x", {"B", 2, 1, 8});
  DeclarePasts(b, g, /*vocab=*/32, /*kv_heads=*/2, /*head_dim=*/8,
               FullPasts(3));
  ASSERT_EQ(g.pasts.size(), 6u);  // A key and a value per layer.
  Ref y = CacheUpdate(b, g, x);
  ASSERT_EQ(g.caches.size(), 1u);
  EXPECT_EQ(g.next_past, 1u);
  OutputCaches(b, g);
  b.Output(y);
  BuiltModel m = b.Finish();
  // Inputs: x, the previous step's float32 logits [B, 32], then past_key.0,
  // past_value.0, ..., past_value.2 [B, 2, S+T-2, 8] in float16.
  ASSERT_EQ(m.inputs.size(), 8u);
  EXPECT_EQ(m.inputs[1].name, "next_token_logits");
  ASSERT_EQ(m.inputs[1].shape.size(), 2u);
  EXPECT_EQ(m.inputs[1].shape[1].size(), 32);
  EXPECT_EQ(m.inputs[1].dtype, DType::kFloat32);
  EXPECT_EQ(m.inputs[2].name, "past_key.0");
  EXPECT_EQ(m.inputs[7].name, "past_value.2");
  ASSERT_EQ(m.inputs[2].shape.size(), 4u);
  EXPECT_EQ(m.inputs[2].shape[2].symbol(), "S+T-2");
  EXPECT_EQ(m.inputs[2].shape[1].size(), 2);
  EXPECT_EQ(m.inputs[2].dtype, DType::kFloat16);
  // The cast to float16, the cat, the cast back.
  std::vector<std::string> ops;
  for (const ir::Node& n : m.graph.nodes) ops.push_back(n.op);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "aten::cat"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "aten::to"), 2);
}

TEST(GenerationPhaseTest, ACausalLmEndsWithItsLogitsTheirCopyThenTheCaches) {
  Validator v("test");
  GenState prefill = ReadPhase(v, "prefill", "", DType::kFloat32);
  GraphBuilder b("Test", "test");
  Ref x = b.Input("x", {"B", 2, "S", 8});
  Ref cache = CacheUpdate(b, prefill, x);
  Ref logits = b.Add(cache, cache);
  // Two layers, the second with a window of 4 tokens.
  BuiltModel m = FinishCausalLm(b, logits, prefill, {0, 4});
  ASSERT_EQ(m.graph.outputs.size(), 3u);
  EXPECT_EQ(m.graph.outputs[0], logits.id);
  // generate()'s next_token_logits: logits[:, -1] copied to float32.
  const ir::Node& copy =
      m.graph.nodes[m.graph.values[m.graph.outputs[1]].producer];
  EXPECT_EQ(copy.op, "aten::to");
  EXPECT_EQ(m.graph.outputs[2], cache.id);
  // The cache after the logits and their copy; a prefill reads no cache.
  EXPECT_EQ(m.cache_outputs_from, 2);
  EXPECT_EQ(m.cache_inputs_from, -1);
  EXPECT_EQ(m.default_loss, "");  // generate() runs under no_grad.
  // A key and a value per layer.
  EXPECT_EQ(m.cache_windows, (std::vector<int64_t>{0, 0, 4, 4}));

  GenState training = ReadPhase(v, "", "", DType::kFloat32);
  GraphBuilder t("Test", "test");
  Ref y = t.Input("x", {"B", "S", 8});
  BuiltModel plain = FinishCausalLm(t, y, training, {0, 4});
  EXPECT_EQ(plain.graph.outputs.size(), 1u);
  EXPECT_EQ(plain.default_loss, "causal_lm");
  EXPECT_TRUE(plain.cache_windows.empty());
  EXPECT_TRUE(v.ok());
}

}  // namespace
}  // namespace torchcost::builder
