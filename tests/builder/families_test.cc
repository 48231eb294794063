// Family builders: parameter counts against closed forms, analysis with
// symbolic B and S, config errors.
#include "torchcost/families.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"
#include "torchcost/analysis.h"
#include "torchcost/rules.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

TEST(FamiliesTest, Gpt2PresetParamsMatchTheClosedForm) {
  // wte V*h + wpe n_ctx*h + per layer 12h^2 + 13h (qkv 3h^2+3h, proj h^2+h,
  // MLP 8h^2+5h, two LayerNorms 4h) + final LayerNorm 2h; the head is tied.
  const int64_t V = 50257, h = 768, L = 12, n_ctx = 1024;
  const int64_t expected =
      V * h + n_ctx * h + L * (12 * h * h + 13 * h) + 2 * h;
  ASSERT_EQ(expected, 124439808);
  Result<BuiltModel> m = BuildNamedModel("gpt2", "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  EXPECT_EQ(r.params, expected);
  EXPECT_TRUE(r.unknown_ops.empty());
  EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics[0].message;
  EXPECT_EQ(r.symbols, (std::vector<std::string>{"B", "S"}));
}

// embed V*h + per layer (q, o: h*h each; k, v: h*(kv_heads*hd) each; SwiGLU
// 3*h*I; two RMSNorm weights 2h) + final norm h + untied head V*h.
int64_t LlamaParams(int64_t V, int64_t h, int64_t L, int64_t heads,
                    int64_t kv_heads, int64_t I) {
  const int64_t kv = kv_heads * (h / heads);
  return V * h + L * (2 * h * h + 2 * h * kv + 3 * h * I + 2 * h) + h + V * h;
}

TEST(FamiliesTest, Llama7bLikeParamsMatchTheClosedForm) {
  const int64_t expected = LlamaParams(32000, 4096, 32, 32, 32, 11008);
  ASSERT_EQ(expected, 6738415616);
  Result<BuiltModel> m = BuildNamedModel("llama-7b-like", "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  EXPECT_EQ(r.params, expected);
  EXPECT_TRUE(r.unknown_ops.empty()) << r.unknown_ops[0].op;
  EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics[0].message;
}

TEST(FamiliesTest, LlamaGroupedQueryAttentionShrinksKeyAndValueProjections) {
  Result<BuiltModel> m =
      BuildNamedModel("llama",
                      "layers=32,hidden=4096,heads=32,kv_heads=8,intermediate="
                      "11008,vocab=32000");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  EXPECT_EQ(r.params, LlamaParams(32000, 4096, 32, 32, 8, 11008));
  EXPECT_TRUE(r.unknown_ops.empty());
  EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics[0].message;
}

// The value of `key` in a resolved config, or "" if it has none.
std::string ValueOf(const NamedConfig& c, const std::string& key) {
  for (const auto& [k, v] : c.values) {
    if (k == key) return v;
  }
  return "";
}

TEST(FamiliesTest, LlamaHeadsWithoutKvHeadsIsMultiHeadAttention) {
  // As LlamaConfig(num_attention_heads=4) leaves num_key_value_heads None:
  // 4 key/value heads, so k_proj and v_proj are [h, h] each.
  Result<NamedConfig> c =
      ResolveNamedConfig("llama", "layers=2,hidden=64,heads=4,vocab=256");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(ValueOf(*c, "kv_heads"), "4");
  Result<BuiltModel> m = BuildNamedModel(
      "llama", "layers=2,hidden=64,heads=4,vocab=256,intermediate=128");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  EXPECT_EQ(AnalyzeBuilt(*m, ctx).params, LlamaParams(256, 64, 2, 4, 4, 128));
  // Given, kv_heads stays as given.
  Result<NamedConfig> gqa =
      ResolveNamedConfig("llama", "heads=8,kv_heads=2,hidden=64");
  ASSERT_TRUE(gqa.ok()) << gqa.status().message();
  EXPECT_EQ(ValueOf(*gqa, "kv_heads"), "2");
}

TEST(FamiliesTest, ResnetDepthsMatchTorchvisionParams) {
  // torchvision's parameter counts (sum(p.numel() for p in
  // model.parameters())).
  const std::pair<int64_t, int64_t> cases[] = {{18, 11689512},
                                               {34, 21797672},
                                               {50, 25557032},
                                               {101, 44549160},
                                               {152, 60192808}};
  for (const auto& [depth, params] : cases) {
    ResnetConfig c;
    c.depth = depth;
    Result<BuiltModel> m = BuildResnet(c);
    ASSERT_TRUE(m.ok()) << m.status().message();
    int64_t n = 0;
    for (const ir::TensorEntry& e : m->graph.params) {
      int64_t k = 1;
      for (int64_t d : e.shape) k *= d;
      n += k;
    }
    EXPECT_EQ(n, params) << "resnet" << depth;
  }
}

int64_t ParamCount(const BuiltModel& m) {
  int64_t n = 0;
  for (const ir::TensorEntry& e : m.graph.params) {
    int64_t k = 1;
    for (int64_t d : e.shape) k *= d;
    n += k;
  }
  return n;
}

// block= overrides depth's block: depth 50's plan (3:4:6:3) of BasicBlocks is
// torchvision's resnet34 (21,797,672 parameters).
TEST(FamiliesTest, ResnetBlockOverridesDepths) {
  Result<BuiltModel> m = BuildNamedModel("resnet", "depth=50,block=basic");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(ParamCount(*m), 21797672);
}

// kernels= changes the k x k convolutions of each stage's BasicBlocks: a
// stage of planes p whose first block reads `in` channels has convolutions of
// in*p + (2n - 1)*p*p weights per k^2 (conv1 of the first block, then p*p for
// the rest), so each stage adds (k_s^2 - 9) * (in_s*p_s + (2n_s - 1)*p_s^2)
// to resnet18's 11,689,512.
TEST(FamiliesTest, ResnetKernelsChangeEachStagesConvolutions) {
  Result<BuiltModel> m = BuildNamedModel("resnet", "depth=18,kernels=3:5:7:1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const int64_t k[4] = {3, 5, 7, 1}, planes[4] = {64, 128, 256, 512},
                in[4] = {64, 64, 128, 256};
  int64_t want = 11689512;
  for (int s = 0; s < 4; ++s)
    want += (k[s] * k[s] - 9) * (in[s] * planes[s] + 3 * planes[s] * planes[s]);
  EXPECT_EQ(ParamCount(*m), want);
}

TEST(FamiliesTest, VitB16AnalysesWithSymbolicBatch) {
  Result<BuiltModel> m = BuildNamedModel("vit-b-16", "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  EXPECT_EQ(r.params, 86567656);  // torchvision vit_b_16.
  EXPECT_TRUE(r.unknown_ops.empty());
  EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics[0].message;
  EXPECT_EQ(r.symbols, (std::vector<std::string>{"B"}));
}

TEST(FamiliesTest, BadConfigsAreOneLineErrors) {
  struct Case {
    const char* name;
    const char* config;
    const char* says;
  };
  const Case bad[] = {
      {"llama", "layers=32,bogus=1", "unknown key 'bogus' for family llama"},
      {"llama", "layers=x", "value 'x' is not an integer"},
      {"llama", "heads=32,kv_heads=5",
       "heads=32 is not divisible by kv_heads=5"},
      {"gpt2", "hidden=100,heads=12",
       "hidden=100 is not divisible by heads=12"},
      {"gpt2", "layers=0", "layers=0 must be a positive integer"},
      {"gpt2", "dropout=1.5", "dropout=1.5 must lie in [0, 1)"},
      {"resnet", "depth=20", "depth=20 must be one of 18, 34, 50, 101, 152"},
      {"vit", "image_size=225", "image_size=225 is not divisible by patch=16"},
      {"llama", "layers", "expected KEY=VALUE"},
      {"mamba", "", "unknown family or preset"},
      // Limits that end absurd configs in an error instead of an endless build.
      {"gpt2", "layers=9223372036854775807",
       "layers=9223372036854775807 is above the limit"},
      {"llama", "layers=100001", "layers=100001 is above the limit 100000"},
      {"llama", "intermediate=4294967296",
       "intermediate=4294967296 is above the limit"},
      // Compute dtypes: the families run in float32, bfloat16 or float16 only.
      {"llama", "dtype=int8",
       "dtype=int8: value 'int8' is not fp32, bf16 or fp16"},
      {"vit", "dtype=float64", "is not fp32, bf16 or fp16"},
      {"gpt2", "dtype=bf17", "is not fp32, bf16 or fp16"},
      {"llama", "tie=yes", "is not true or false"},
  };
  for (const Case& c : bad) {
    Result<BuiltModel> m = BuildNamedModel(c.name, c.config);
    ASSERT_FALSE(m.ok()) << c.name << " " << c.config;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << m.status().message();
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
  }
}

TEST(FamiliesTest, EveryNameBuilds) {
  for (const std::string& name : ModelNames()) {
    Result<BuiltModel> m = BuildNamedModel(name, "");
    EXPECT_TRUE(m.ok()) << name << ": " << m.status().message();
  }
}

TEST(FamiliesTest, ResolveNamedConfigAppliesThePresetThenTheOverrides) {
  // llama-7b-like's preset (Touvron et al. 2023, Table 2: 32 layers, 4096),
  // with the override after it.
  Result<NamedConfig> c = ResolveNamedConfig(
      "llama-7b-like", "layers=2,eps=1e-05,tie=true,dtype=bf16");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->family, "llama");
  EXPECT_EQ(ValueOf(*c, "layers"), "2");
  EXPECT_EQ(ValueOf(*c, "hidden"), "4096");
  EXPECT_EQ(ValueOf(*c, "intermediate"), "11008");
  EXPECT_EQ(ValueOf(*c, "eps"), "1e-05");
  EXPECT_EQ(ValueOf(*c, "tie"), "true");
  EXPECT_EQ(ValueOf(*c, "dtype"), "bfloat16");
  // Every value reads back: the same config text builds the same graph.
  std::string text;
  for (const auto& [k, v] : c->values)
    text += (text.empty() ? "" : ",") + k + "=" + v;
  Result<BuiltModel> a = BuildNamedModel("llama", text);
  Result<BuiltModel> b = BuildNamedModel(
      "llama-7b-like", "layers=2,eps=1e-05,tie=true,dtype=bf16");
  ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? b.status() : a.status()).message();
  EXPECT_EQ(a->graph.nodes.size(), b->graph.nodes.size());
  EXPECT_EQ(a->graph.params.size(), b->graph.params.size());
  // Errors are BuildNamedModel's; a config.json is not a family.
  EXPECT_FALSE(ResolveNamedConfig("llama", "layerz=2").ok());
  EXPECT_FALSE(ResolveNamedConfig("nope", "").ok());
  EXPECT_FALSE(ResolveNamedConfig("examples/configs/gemma-7b.json", "").ok());
}

}  // namespace
}  // namespace torchcost::builder
