// The closed forms of symbolic architectures against fresh concrete analyses.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "testing/built_models.h"
#include "torchcost/evaluator.h"
#include "torchcost/families.h"
#include "torchcost/loss.h"
#include "torchcost/nas.h"

namespace torchcost {
namespace {

using testing::BuiltinRules;

// What a fresh concrete analysis of the space at `arch` says for batch B and
// sequence S.
struct Truth {
  int64_t params, trainable, fwd, bwd, peak;
};

Truth Analyse(const ArchSpace& space, const std::vector<int64_t>& arch,
              const sym::Bindings& inputs) {
  Result<std::string> config = ConfigAt(space, arch);
  EXPECT_TRUE(config.ok()) << config.status().message();
  Result<builder::BuiltModel> m =
      builder::BuildNamedModel(space.model, *config);
  EXPECT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  AnalysisOptions options = space.options;
  for (const builder::InputDecl& in : m->inputs)
    options.inputs.push_back({builder::ResolveShape(*m, in, ctx), in.dtype});
  options.training.loss = *ParseLossSpec(m->default_loss);
  Result<ir::Graph> g = ApplyLoss(m->graph, BuiltinRules(), ctx, &options);
  EXPECT_TRUE(g.ok()) << g.status().message();
  Result<Report> r = Analyze(*g, BuiltinRules(), ctx, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  Truth t;
  t.params = r->params;
  t.trainable = r->trainable_params;
  t.fwd = *sym::Evaluate(r->training.flops_forward, inputs);
  t.bwd = *sym::Evaluate(r->training.flops_backward, inputs);
  const PeakInfo peak = EvaluatePeak(r->training, inputs, false);
  t.peak = *sym::Evaluate(peak.peak, {});
  return t;
}

// Compiles the space and checks `n` random candidates against fresh analyses.
void CheckSpace(const ArchSpace& space,
                const std::vector<std::pair<int64_t, int64_t>>& input_ranges,
                int n) {
  sym::Context ctx;
  Result<ArchCosts> costs = AnalyzeArchSpace(space, BuiltinRules(), ctx);
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  Result<Evaluator> ev = Evaluator::Compile(costs->costs, costs->symbols);
  ASSERT_TRUE(ev.ok()) << ev.status().message();
  const size_t k = space.symbols.size();
  ASSERT_EQ(costs->symbols.size(), k + input_ranges.size());
  std::mt19937_64 rng(7);
  for (int c = 0; c < n; ++c) {
    std::vector<int64_t> values;
    for (const ArchSymbol& s : space.symbols) {
      const int64_t span = std::min<int64_t>((s.hi - s.lo) / s.step, 40);
      values.push_back(s.lo +
                       s.step * static_cast<int64_t>(rng() % (span + 1)));
    }
    sym::Bindings inputs;
    for (size_t i = 0; i < input_ranges.size(); ++i) {
      const auto [lo, hi] = input_ranges[i];
      values.push_back(lo + static_cast<int64_t>(
                                rng() % static_cast<uint64_t>(hi - lo + 1)));
      inputs[costs->symbols[k + i]] = values.back();
    }
    const CandidateCosts got = ev->Evaluate(values);
    const Truth want =
        Analyse(space, std::vector<int64_t>(values.begin(), values.begin() + k),
                inputs);
    ASSERT_TRUE(got.ok);
    EXPECT_EQ(got.params, want.params) << "candidate " << c;
    EXPECT_EQ(got.trainable_params, want.trainable) << "candidate " << c;
    EXPECT_EQ(got.flops_forward, want.fwd) << "candidate " << c;
    EXPECT_EQ(got.flops_backward, want.bwd) << "candidate " << c;
    EXPECT_EQ(got.peak_bytes, want.peak) << "candidate " << c;
  }
}

// GPT-2 with heads H and head dim D (hidden = H * D): the GPT-2 block's
// params are 12 h^2 + 13 h per layer (c_attn h x 3h + 3h, c_proj h x h + h,
// c_fc h x 4h + 4h, proj 4h x h + h, two LayerNorms 4h), so the degree in H
// and in D is 2.
TEST(ArchSpaceTest, Gpt2HeadsAndHeadDimMatchFreshAnalyses) {
  ArchSpace space;
  space.model = "gpt2";
  space.config = "layers=2,heads=H,hidden=H*D,vocab=96,context=64";
  space.symbols = {{"H", 1, 6, 1}, {"D", 4, 64, 4}};
  space.options.training.optimizer = OptimizerKind::kAdamW;
  sym::Context ctx;
  Result<ArchCosts> costs = AnalyzeArchSpace(space, BuiltinRules(), ctx);
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  EXPECT_EQ(costs->degrees, (std::vector<int>{2, 2}));
  // params = 2 layers * (12 h^2 + 13 h) + wte 96 h + wpe 64 h + ln_f 2 h at h =
  // 3 * 8.
  const int64_t h = 24;
  const sym::Bindings at = {{"H", 3}, {"D", 8}};
  EXPECT_EQ(*sym::Evaluate(costs->costs.params, at),
            2 * (12 * h * h + 13 * h) + 96 * h + 64 * h + 2 * h);
  CheckSpace(space, {{1, 4}, {1, 64}}, 4);
}

// LLaMA with kv heads K, groups G (heads = K * G), head dim 2 R (RoPE halves
// it: an exact division by 2, so the symbol is R) and intermediate I, in bf16
// with eager attention.
TEST(ArchSpaceTest, LlamaGqaMatchesFreshAnalyses) {
  ArchSpace space;
  space.model = "llama";
  space.config =
      "layers=1,kv_heads=K,heads=K*G,hidden=K*G*2*R,intermediate=I,vocab=64,"
      "attn=eager,dtype=bf16";
  // NB: K and G start at 2: kv_heads = 1 makes repeat_kv's reshape a view, and
  // G = 1 skips repeat_kv (the graph's structure changes; ArchSpace rejects
  // it).
  space.symbols = {
      {"K", 2, 4, 1}, {"G", 2, 3, 1}, {"R", 1, 16, 1}, {"I", 8, 256, 8}};
  CheckSpace(space, {{1, 3}, {1, 48}}, 4);
}

// A Hugging Face config.json with its keys as expressions: Qwen2-7B's file with
// one layer, hidden_size = 2 R * H (head_dim 2 R), H heads over 4 kv heads kept
// from the file (H = 4 G), and intermediate_size I.
TEST(ArchSpaceTest, HfConfigKeysTakeSymbols) {
  ArchSpace space;
  space.model =
      std::string(TORCHCOST_SOURCE_DIR) + "/examples/configs/Qwen2-7B.json";
  space.config =
      "num_hidden_layers=1,num_attention_heads=4*G,hidden_size=4*G*2*R,"
      "intermediate_size=I,"
      "vocab_size=64,attn=eager";
  space.symbols = {{"G", 2, 3, 1}, {"R", 1, 8, 1}, {"I", 8, 64, 8}};
  CheckSpace(space, {{1, 2}, {1, 16}}, 3);
}

TEST(ArchSpaceTest, VitWidthsMatchFreshAnalyses) {
  ArchSpace space;
  space.model = "vit";
  space.config =
      "image_size=32,patch=8,layers=1,heads=H,hidden=H*D,mlp=M,classes=10";
  space.symbols = {{"H", 1, 4, 1}, {"D", 4, 32, 4}, {"M", 16, 512, 16}};
  CheckSpace(space, {{1, 4}}, 3);
}

TEST(ArchSpaceTest, StructuralSymbolIsAnError) {
  ArchSpace space;
  space.model = "gpt2";
  space.config = "layers=L,hidden=16,heads=2,vocab=32,context=16";
  space.symbols = {{"L", 1, 4, 1}};
  sym::Context ctx;
  Result<ArchCosts> costs = AnalyzeArchSpace(space, BuiltinRules(), ctx);
  ASSERT_FALSE(costs.ok());
  EXPECT_NE(costs.status().message().find("structure"), std::string::npos)
      << costs.status().message();
}

TEST(ArchSpaceTest, BadSymbolsAreErrors) {
  ArchSpace space;
  space.model = "gpt2";
  space.config = "layers=1,heads=H,hidden=H*X";
  space.symbols = {{"H", 1, 4, 1}};
  sym::Context ctx;
  Result<ArchCosts> costs = AnalyzeArchSpace(space, BuiltinRules(), ctx);
  ASSERT_FALSE(costs.ok());
  EXPECT_NE(costs.status().message().find("'X' is not an arch symbol"),
            std::string::npos)
      << costs.status().message();
  space.symbols = {{"H", 0, 4, 1}};
  EXPECT_FALSE(AnalyzeArchSpace(space, BuiltinRules(), ctx).ok());
  EXPECT_EQ(
      *ConfigAt(
          ArchSpace{
              "gpt2", "heads=H,hidden=H*D,attn=sdpa", {{"H"}, {"D"}}, {}, ""},
          {3, 8}),
      "heads=3,hidden=24,attn=sdpa");
}

}  // namespace
}  // namespace torchcost
