// The llama family's mixture of experts (src/builder/llama_moe.cc): beyond
// balanced routing, Megatron-core's capacity factor (capped or padded rows per
// expert), the decode phase's assignments dealt one by one and expert
// parallelism (one rank's experts); Mixtral's expert names and Qwen2-MoE's
// shared expert. Every expected number is derived here from the config and the
// routing arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "testing/built_models.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

// A tiny MoE decoder: hidden h = 64, 8 experts of width I = 32, top 2.
constexpr int64_t kH = 64, kI = 32, kE = 8, kK = 2;
const std::string kTiny =
    "layers=1,hidden=64,heads=4,kv_heads=4,intermediate=32,vocab=100,experts=8,"
    "top_k=2";

// One expert's MACs per routed row: gate, up and down, each h x I.
constexpr int64_t kMacsPerRow = 3 * kH * kI;

// The analysis of the tiny model with `extra` config keys.
struct Analysed {
  BuiltModel model;
  sym::Context ctx;
  Report report;
};

std::unique_ptr<Analysed> Analyse(const std::string& extra) {
  auto a = std::make_unique<Analysed>();
  Result<BuiltModel> m =
      BuildNamedModel("llama", kTiny + (extra.empty() ? "" : "," + extra));
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  a->model = std::move(m).value();
  a->report = AnalyzeBuilt(a->model, a->ctx);
  EXPECT_TRUE(a->report.unknown_ops.empty());
  return a;
}

// The forward MACs of module `path` under `bindings`.
int64_t ModuleMacs(const Analysed& a, const std::string& path,
                   const sym::Bindings& bindings) {
  for (size_t i = 0; i < a.model.graph.scopes.size(); ++i) {
    if (a.model.graph.scopes[i].path != path) continue;
    Result<int64_t> v = sym::Evaluate(a.report.modules[i].macs, bindings);
    EXPECT_TRUE(v.ok()) << v.status().message();
    return v.ok() ? *v : -1;
  }
  ADD_FAILURE() << "no module " << path;
  return -1;
}

// The saved activation bytes attributed to module `path` under `bindings`.
int64_t ModuleAct(const Analysed& a, const std::string& path,
                  const sym::Bindings& bindings) {
  for (size_t i = 0; i < a.model.graph.scopes.size(); ++i) {
    if (a.model.graph.scopes[i].path != path) continue;
    Result<int64_t> v =
        sym::Evaluate(a.report.training.module_act_bytes[i], bindings);
    EXPECT_TRUE(v.ok()) << v.status().message();
    return v.ok() ? *v : -1;
  }
  ADD_FAILURE() << "no module " << path;
  return -1;
}

TEST(LlamaMoeTest, CapacityFactorCapsOrPadsTheRowsPerExpert) {
  // B*S = 4*15 = 60 tokens: 60*2 = 120 assignments, routed 120 // 8 = 15 per
  // expert.
  const sym::Bindings at = {{"B", 4}, {"S", 15}};
  const int64_t routed = 60 * kK / kE;
  ASSERT_EQ(routed, 15);
  struct Case {
    std::string config;
    int64_t rows;  // Per expert.
  };
  const std::vector<Case> cases = {
      {"", routed},
      // capacity = ceil(120 / 8 * 0.5) = ceil(7.5) = 8 < 15: 7 tokens per
      // expert dropped.
      {"capacity_factor=0.5", 8},
      // ceil(15 * 1.25) = ceil(18.75) = 19 >= 15: min(15, 19) = 15; padded, 19
      // rows.
      {"capacity_factor=1.25", 15},
      {"capacity_factor=1.25,pad_to_capacity=true", 19},
      // 1.1 read as 11/10: ceil(120 * 11 / 80) = ceil(16.5) = 17 (no binary
      // rounding).
      {"capacity_factor=1.1,pad_to_capacity=true", 17},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Analysed> a = Analyse(c.config);
    ASSERT_TRUE(a) << c.config;
    EXPECT_EQ(ModuleMacs(*a, "layers.0.mlp.experts", at),
              kE * c.rows * kMacsPerRow)
        << c.config;
    // One expert's saved activations follow its rows: its input [n, h] (read by
    // gate_proj and up_proj), gate's output [n, I] (silu's input), silu's and
    // up's outputs [n, I] (the product's inputs) and the product [n, I]
    // (down_proj's input): n * (h + 4 I) * 4 bytes.
    EXPECT_EQ(ModuleAct(*a, "layers.0.mlp.experts.3", at),
              c.rows * (kH + 4 * kI) * 4)
        << c.config;
  }
}

TEST(LlamaMoeTest, CapacityFactorIsNoted) {
  std::unique_ptr<Analysed> a = Analyse("capacity_factor=0.5");
  ASSERT_TRUE(a);
  bool noted = false;
  for (const std::string& n : a->model.notes)
    noted |= n.find("capacity_factor=0.5") != std::string::npos &&
             n.find("dropped") != std::string::npos;
  EXPECT_TRUE(noted);
  Result<BuiltModel> bad =
      BuildNamedModel("llama", kTiny + ",pad_to_capacity=true");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pad_to_capacity"), std::string::npos);
}

TEST(LlamaMoeTest, DecodeDealsTheAssignmentsOneByOne) {
  // Decoding, B tokens make B*2 assignments; expert e takes (B*2 + 7 - e) // 8
  // of them, so min(8, B*2) experts compute and the rows sum to B*2 (balanced
  // routing's (B*2) // 8 would give every expert 0 rows at B <= 3).
  std::unique_ptr<Analysed> a = Analyse("phase=decode");
  ASSERT_TRUE(a);
  for (int64_t b : {1, 2, 3, 5, 8}) {
    const sym::Bindings at = {{"B", b}, {"S", 7}, {"T", 3}};
    int64_t rows = 0, touched = 0;
    for (int64_t e = 0; e < kE; ++e) {
      const int64_t n = (b * kK + kE - 1 - e) / kE;
      rows += n;
      touched += n > 0;
      EXPECT_EQ(ModuleMacs(*a, "layers.0.mlp.experts." + std::to_string(e), at),
                n * kMacsPerRow)
          << b;
    }
    EXPECT_EQ(rows, b * kK);
    EXPECT_EQ(touched, std::min(kE, b * kK));
    EXPECT_EQ(ModuleMacs(*a, "layers.0.mlp.experts", at), b * kK * kMacsPerRow)
        << b;
  }
}

TEST(LlamaMoeTest, DecodeReadsOnlyTheTouchedExpertsWeights) {
  // At B = 1 the 2 assignments go to experts 0 and 1: each gate_proj reads its
  // [32, 64] fp32 weight, its one row [1, 64] and writes [1, 32]; the other six
  // read nothing.
  Result<BuiltModel> m = BuildNamedModel("llama", kTiny + ",phase=decode");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  AnalysisOptions options;
  options.moved_bytes = true;
  options.training.mode = StepMode::kInfer;
  for (const InputDecl& in : m->inputs)
    options.inputs.push_back({ResolveShape(*m, in, ctx), in.dtype});
  Result<Report> r = Analyze(m->graph, testing::BuiltinRules(), ctx, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const sym::Bindings at = {{"B", 1}, {"S", 7}, {"T", 3}};
  int found = 0;
  for (size_t i = 0; i < m->graph.nodes.size(); ++i) {
    const std::string& path = m->graph.scopes[m->graph.nodes[i].scope].path;
    for (int64_t e = 0; e < kE; ++e) {
      if (path != "layers.0.mlp.experts." + std::to_string(e) + ".gate_proj" ||
          m->graph.nodes[i].op != "aten::linear")
        continue;
      ++found;
      const int64_t expected = e < kK ? (kI * kH + kH + kI) * 4 : 0;
      EXPECT_EQ(sym::Evaluate(r->nodes[i].bytes, at).value(), expected) << e;
    }
  }
  EXPECT_EQ(found, kE);
}

TEST(LlamaMoeTest, ExpertParallelRankHoldsItsExperts) {
  std::unique_ptr<Analysed> one = Analyse("layers=2");
  std::unique_ptr<Analysed> four = Analyse("layers=2,ep=4");
  ASSERT_TRUE(one && four);
  // Each rank holds 8 / 4 = 2 experts: 2 layers x 6 experts x 3 h I fewer
  // parameters.
  EXPECT_EQ(four->report.params,
            one->report.params - 2 * (kE - kE / 4) * kMacsPerRow);
  // The whole model's active parameters are unchanged.
  EXPECT_EQ(four->report.params - four->report.inactive_params,
            one->report.params - one->report.inactive_params);
  // The rank's 2 experts each compute on the rows 4 ranks send: 4 * (B*S*2 //
  // 8), the same B*S*2 rows in all as without expert parallelism.
  const sym::Bindings at = {{"B", 2}, {"S", 16}};
  EXPECT_EQ(ModuleMacs(*four, "layers.0.mlp.experts", at),
            2 * 16 * kK * kMacsPerRow);
  EXPECT_EQ(ModuleMacs(*four, "layers.0.mlp.experts", at),
            ModuleMacs(*one, "layers.0.mlp.experts", at));
  EXPECT_EQ(ModuleMacs(*four, "layers.0.mlp.experts.1", at),
            4 * (2 * 16 * kK / kE) * kMacsPerRow);
}

TEST(LlamaMoeTest, ExpertParallelDegreeMustDivideTheExperts) {
  Result<BuiltModel> m = BuildNamedModel("llama", kTiny + ",ep=3");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("ep=3 must divide experts=8"),
            std::string::npos)
      << m.status().message();
  EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
  Result<BuiltModel> decode =
      BuildNamedModel("llama", kTiny + ",ep=2,phase=decode");
  ASSERT_FALSE(decode.ok());
  EXPECT_NE(decode.status().message().find("needs ep=1"), std::string::npos)
      << decode.status().message();
}

TEST(LlamaMoeTest, MixtralNamesEachExpertsW1W2W3) {
  // classes=Mixtral: per layer a router gate [E, h] and E experts of w1 [I, h],
  // w2 [h, I] and w3 [I, h] (registered in MixtralBlockSparseTop2MLP.__init__'s
  // order) under block_sparse_moe.
  std::unique_ptr<Analysed> moe = Analyse("layers=2,classes=Mixtral");
  std::unique_ptr<Analysed> dense = Analyse("layers=2,experts=0");
  ASSERT_TRUE(moe && dense);
  std::vector<std::pair<std::string, std::vector<int64_t>>> expert5;
  std::vector<int64_t> router;
  for (const ir::TensorEntry& e : moe->model.graph.params) {
    const std::string prefix = "layers.1.block_sparse_moe.experts.5.";
    if (e.name.rfind(prefix, 0) == 0)
      expert5.emplace_back(e.name.substr(prefix.size()), e.shape);
    if (e.name == "layers.1.block_sparse_moe.gate.weight") router = e.shape;
    EXPECT_EQ(e.name.find(".mlp."), std::string::npos) << e.name;
  }
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"w1.weight", {kI, kH}},
      {"w2.weight", {kH, kI}},
      {"w3.weight", {kI, kH}}};
  EXPECT_EQ(expert5, expected);
  EXPECT_EQ(router, (std::vector<int64_t>{kE, kH}));
  // Each layer's gated MLP (3 h I) becomes the router (h E) and E experts of
  // 3 h I; a token uses top_k of them, so E - top_k experts are inactive.
  EXPECT_EQ(moe->report.params - dense->report.params,
            2 * (kH * kE + kE * 3 * kH * kI - 3 * kH * kI));
  EXPECT_EQ(moe->report.inactive_params, 2 * (kE - kK) * 3 * kH * kI);
  // The forward keeps the names: w3 (up) of expert 3 on its B*S*2 // 8 rows.
  const sym::Bindings at = {{"B", 2}, {"S", 12}};
  EXPECT_EQ(ModuleMacs(*moe, "layers.0.block_sparse_moe.experts.3.w3", at),
            (2 * 12 * kK / kE) * kH * kI);
}

TEST(LlamaMoeTest, SharedExpertAndItsGateSeeEveryToken) {
  // Qwen2-MoE: routed experts of expert_intermediate Ie = 16, and a shared
  // expert of Is = 48 (gate, up, down) with its gate Linear(h, 1), both on all
  // B*S tokens.
  constexpr int64_t kIe = 16, kIs = 48;
  std::unique_ptr<Analysed> a =
      Analyse("expert_intermediate=16,shared_intermediate=48");
  std::unique_ptr<Analysed> plain = Analyse("");
  ASSERT_TRUE(a && plain);
  const sym::Bindings at = {{"B", 3}, {"S", 8}};
  const int64_t tokens = 3 * 8;
  EXPECT_EQ(ModuleMacs(*a, "layers.0.mlp.shared_expert", at),
            tokens * 3 * kH * kIs);
  EXPECT_EQ(ModuleMacs(*a, "layers.0.mlp.shared_expert_gate", at),
            tokens * kH * 1);
  EXPECT_EQ(ModuleMacs(*a, "layers.0.mlp.experts", at),
            kE * (tokens * kK / kE) * 3 * kH * kIe);
  // One layer: E experts of 3 h Ie instead of 3 h I, plus the shared expert's
  // 3 h Is and its gate's h.
  EXPECT_EQ(a->report.params - plain->report.params,
            kE * 3 * kH * (kIe - kI) + 3 * kH * kIs + kH);
  // The shared expert is always active: only E - top_k routed experts idle.
  EXPECT_EQ(a->report.inactive_params, (kE - kK) * 3 * kH * kIe);
}

}  // namespace
}  // namespace torchcost::builder
