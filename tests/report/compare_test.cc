// Tests of the comparison rows: memory sizes, the row of an analysis, the
// largest batch under a budget (derived for an inference step by hand), and
// the three renderings.
#include "torchcost/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/built_models.h"
#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "torchcost/families.h"
#include "torchcost/generation_report.h"
#include "torchcost/gpu.h"
#include "torchcost/rules.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;

TEST(CompareTest, ParsesMemorySizes) {
  EXPECT_EQ(*ParseMemorySize("24GiB"), int64_t{24} << 30);
  EXPECT_EQ(*ParseMemorySize("24G"), int64_t{24} << 30);
  // NB: GB is decimal.
  EXPECT_EQ(*ParseMemorySize("80GB"), int64_t{80} * 1000 * 1000 * 1000);
  EXPECT_EQ(*ParseMemorySize("1.5KiB"), 1536);
  EXPECT_EQ(*ParseMemorySize("512"), 512);
  EXPECT_THAT(ParseMemorySize("24 parsecs").status().message(),
              HasSubstr("unknown unit"));
  EXPECT_THAT(ParseMemorySize("-3GiB").status().message(),
              HasSubstr("not a memory size"));
  EXPECT_THAT(ParseMemorySize("GiB").status().message(),
              HasSubstr("not a memory size"));
}

// x [B, 16] -> Linear(16 -> 8) under no_grad: the peak is the parameters, the
// input and the output, all live while the linear runs.
Report LinearInfer(sym::Context& ctx,
                   const CudaAllocatorOptions* allocator = nullptr) {
  testing::GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("fc.weight", {8, 16}), bias = b.Param("fc.bias", {8});
  b.Scope("fc", "Linear");
  b.Output(b.One("aten::linear", {x, w, bias}, {"input", "weight", "bias"}));
  const ir::Graph& g = b.graph();
  auto rules = RuleSet::Builtin();
  AnalysisOptions opts;
  opts.training.mode = StepMode::kInfer;
  opts.inputs.push_back(*ParseInputSpec(ctx, "B,16"));
  if (allocator) opts.training.cuda_allocator = *allocator;
  auto r = Analyze(g, *rules, ctx, opts);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

TEST(CompareTest, LargestBatchUnderABudget) {
  sym::Context ctx;
  Report r = LinearInfer(ctx);
  // peak(B) = 4*(8*16 + 8) params + 4*16*B input + 4*8*B output = 544 + 96*B.
  CompareOptions o;
  o.budget_bytes = 10000;
  auto row = EvaluateCompareRow(r, "infer", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->peak, 544 + 96);  // Evaluated at B = 1 (unbound).
  EXPECT_TRUE(row->fits);
  // 98: 544 + 96*98 = 9952 <= 10000 < 10048.
  EXPECT_EQ(row->max_batch, (10000 - 544) / 96);
  EXPECT_EQ(row->at_peak[testing::kParam], 544);
  o.bindings["B"] = 200;
  row = EvaluateCompareRow(r, "infer", o);
  EXPECT_EQ(row->peak, 544 + 96 * 200);
  EXPECT_FALSE(row->fits);
  EXPECT_EQ(row->max_batch, 98);
  o.budget_bytes = 600;  // Not even B = 1: 640 bytes.
  EXPECT_EQ(EvaluateCompareRow(r, "infer", o)->max_batch, 0);
  o.budget_bytes = 0;  // No budget: no search.
  EXPECT_EQ(EvaluateCompareRow(r, "infer", o)->max_batch, -1);
  o.budget_bytes = int64_t{1} << 60;  // The search stops at its limit.
  o.max_batch_limit = 1000;
  EXPECT_EQ(EvaluateCompareRow(r, "infer", o)->max_batch, 1000);
}

// With the CUDA allocator model a budget holds the reserved segments and the
// context.
TEST(CompareTest, CudaAllocatorBudgetIsReservedPlusContext) {
  sym::Context ctx;
  CudaAllocatorOptions a;
  a.context_bytes = 1000;
  Report r = LinearInfer(ctx, &a);
  // B = 1: weight 512, bias 32, input 64, output 32 bytes: four 512-byte blocks
  // of one 2 MiB small segment.
  CompareOptions o;
  o.budget_bytes = (2 << 20) + 1000;
  auto row = EvaluateCompareRow(r, "infer", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->peak, 4 * 512);
  EXPECT_EQ(row->at_peak[testing::kParam], 2 * 512);
  EXPECT_EQ(row->reserved_peak, 2 << 20);
  EXPECT_EQ(row->device_peak, (2 << 20) + 1000);
  EXPECT_TRUE(row->fits);
  // The segment holds 1024 + 64*B + 32*B (each rounded to 512) while the input
  // is small (64*B <= 1 MiB): B = 16384 gives 1024 + 1 MiB + 512 KiB; B = 16385
  // needs a 20 MiB large-pool segment.
  EXPECT_EQ(row->max_batch, 16384);
  o.budget_bytes = (2 << 20) + 999;
  EXPECT_FALSE(EvaluateCompareRow(r, "infer", o)->fits);
}

TEST(CompareTest, RendersTextJsonAndSvg) {
  sym::Context ctx;
  Report r = LinearInfer(ctx);
  CompareOptions o;
  o.budget_bytes = 10000;
  std::vector<CompareRow> rows{*EvaluateCompareRow(r, "full", o)};
  CompareRow bad;
  bad.label = "lora:r=8";
  bad.error = "no Linear layer matches";
  rows.push_back(bad);
  const std::string text = RenderCompareText("lin.pt", rows, o, "infer");
  EXPECT_THAT(text, HasSubstr("Max B"));
  EXPECT_THAT(text, HasSubstr("error: lora:r=8: no Linear layer matches"));
  auto j = nlohmann::json::parse(RenderCompareJson("lin.pt", rows, o, "infer"));
  EXPECT_EQ(j["schema"], "torchcost.compare");
  EXPECT_EQ(j["rows"][0]["max_batch"], 98);
  EXPECT_EQ(j["rows"][0]["peak"], 640);
  EXPECT_EQ(j["rows"][1]["error"], "no Linear layer matches");
  const std::string svg = RenderCompareSvg("lin.pt", rows, o, "infer");
  EXPECT_THAT(svg, HasSubstr("data-config=\"full\""));
  EXPECT_THAT(svg, HasSubstr("class=\"budget\""));
  EXPECT_THAT(svg, HasSubstr("data-category=\"param\" data-bytes=\"544\""));
}

// The linear's output goes through an op no rule covers: the row says its
// FLOPs are lower bounds and names the op, in the text and in JSON.
TEST(CompareTest, RowsSayWhenAnOpHasNoRule) {
  sym::Context ctx;
  testing::GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("fc.weight", {8, 16}), bias = b.Param("fc.bias", {8});
  b.Scope("fc", "Linear");
  const int y =
      b.One("aten::linear", {x, w, bias}, {"input", "weight", "bias"});
  b.Scope("", "Net");
  b.Output(b.One("aten::not_a_real_op", {y}, {"self"}));
  auto rules = RuleSet::Builtin();
  AnalysisOptions opts;
  opts.training.mode = StepMode::kInfer;
  opts.inputs.push_back(*ParseInputSpec(ctx, "B,16"));
  auto r = Analyze(b.graph(), *rules, ctx, opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  CompareOptions o;
  std::vector<CompareRow> rows{
      *EvaluateCompareRow(*r, "full", o),
      *EvaluateCompareRow(LinearInfer(ctx), "plain", o)};
  EXPECT_TRUE(rows[0].flops_lower_bound);
  // Inference: nothing is saved for a backward.
  EXPECT_FALSE(rows[0].memory_lower_bound);
  ASSERT_EQ(rows[0].unknown_ops.size(), 1u);
  EXPECT_EQ(rows[0].unknown_ops[0].op, "aten::not_a_real_op");
  EXPECT_FALSE(rows[1].flops_lower_bound);
  const std::string text = RenderCompareText("m.pt", rows, o, "infer");
  EXPECT_THAT(text, HasSubstr(">= "));
  EXPECT_THAT(
      text,
      HasSubstr("lower bounds (>=): no rule for full: aten::not_a_real_op x1"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("no rule for plain")));
  auto j = nlohmann::json::parse(RenderCompareJson("m.pt", rows, o, "infer"));
  EXPECT_EQ(j["rows"][0]["lower_bound"]["flops"], true);
  EXPECT_EQ(j["rows"][0]["lower_bound"]["memory"], false);
  EXPECT_EQ(j["rows"][0]["unknown_ops"][0]["op"], "aten::not_a_real_op");
  EXPECT_EQ(j["rows"][0]["unknown_ops"][0]["count"], 1);
  EXPECT_EQ(j["rows"][1]["lower_bound"]["flops"], false);
  EXPECT_TRUE(j["rows"][1]["unknown_ops"].empty());
}

// A generation's StepConfig with `bindings`.
StepConfig Generate(std::vector<std::pair<std::string, int64_t>> bindings) {
  StepConfig c;
  c.mode = "generate";
  c.bindings = std::move(bindings);
  return c;
}

// A tiny LLaMA's generation: 2 layers, hidden 64, 4 heads of 16, 2 KV heads,
// float32.
GenerationAnalysis TinyGeneration(
    std::vector<std::pair<std::string, int64_t>> bindings,
    const std::string& family = "llama",
    const std::string& config =
        "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256,attn="
        "eager,make_vocab_size_divisible_by=1") {
  StepConfig c;
  c.mode = "generate";
  c.bindings = std::move(bindings);
  Result<GenerationAnalysis> g =
      AnalyzeGeneration(family, config, testing::BuiltinRules(), c);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

// The larger phase's peak, evaluated by PhasePeak over the whole timeline
// (not the candidate moments the row's search uses).
int64_t GenerationPeakAt(const GenerationAnalysis& g, const sym::Bindings& b) {
  return std::max(*sym::Evaluate(PhasePeak(g.prefill, b).peak, b),
                  *sym::Evaluate(PhasePeak(g.decode, b).peak, b));
}

TEST(CompareTest, GenerationRowSearchesTheFreeSymbol) {
  // 2 (keys, values) x 2 layers x 2 KV heads x head_dim 16 x 4 bytes per token
  // and sequence.
  constexpr int64_t kPerToken = 2 * 2 * 2 * 16 * 4;
  const GenerationAnalysis g = TinyGeneration({{"S", 64}, {"T", 16}});
  CompareOptions o;
  o.generation = true;
  o.bindings = {{"S", 64}, {"T", 16}};
  o.budget_bytes = 2 << 20;
  Result<CompareRow> row = EvaluateGenerationCompareRow(g, "full", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  const sym::Bindings at1 = {{"B", 1}, {"S", 64}, {"T", 16}};
  // Evaluated at B = 1 (unbound).
  EXPECT_EQ(row->kv_cache_bytes, kPerToken * (64 + 16) * 1);
  EXPECT_EQ(row->prefill_peak,
            *sym::Evaluate(PhasePeak(g.prefill, at1).peak, at1));
  EXPECT_EQ(row->decode_peak,
            *sym::Evaluate(PhasePeak(g.decode, at1).peak, at1));
  EXPECT_EQ(row->peak, std::max(row->prefill_peak, row->decode_peak));
  int64_t sum = row->kv_cache_at_peak;
  for (int64_t v : row->at_peak) sum += v;
  EXPECT_EQ(sum, row->peak);
  // The boundary: the largest B whose peak fits, and B + 1 does not (a test
  // that can fail: the peak grows with B).
  const int64_t m = row->max_batch;
  ASSERT_GT(m, 1);
  EXPECT_LE(GenerationPeakAt(g, {{"B", m}, {"S", 64}, {"T", 16}}),
            o.budget_bytes);
  EXPECT_GT(GenerationPeakAt(g, {{"B", m + 1}, {"S", 64}, {"T", 16}}),
            o.budget_bytes);

  // B bound, the context searched: the analysis leaves S free.
  const GenerationAnalysis gs = TinyGeneration({{"B", 2}, {"T", 16}});
  o.bindings = {{"B", 2}, {"T", 16}};
  o.batch_symbol = "S";
  row = EvaluateGenerationCompareRow(gs, "full", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  const int64_t s = row->max_batch;
  ASSERT_GT(s, 1);
  EXPECT_LE(GenerationPeakAt(gs, {{"B", 2}, {"S", s}, {"T", 16}}),
            o.budget_bytes);
  EXPECT_GT(GenerationPeakAt(gs, {{"B", 2}, {"S", s + 1}, {"T", 16}}),
            o.budget_bytes);

  o.batch_symbol = "H";
  EXPECT_THAT(EvaluateGenerationCompareRow(gs, "full", o).status().message(),
              HasSubstr("B, S or T"));
  o.batch_symbol = "B";
  o.bindings = {{"T", 16}};
  EXPECT_THAT(EvaluateGenerationCompareRow(gs, "full", o).status().message(),
              HasSubstr("StepConfig.bindings"));
}

// With a GPU each row is timed at its own bindings (the batch symbol at 1
// when free); the analyses skip their own timing. The reference is the same
// configuration analysed with every symbol bound and timed by AnalyzeStep or
// AnalyzeGeneration themselves.
TEST(CompareTest, RowsAreTimedAtTheirBindings) {
  const std::string kTinyLlama =
      "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256,"
      "make_vocab_size_divisible_by=1";
  Result<GpuSpec> gpu = FindGpu("H100-SXM");
  ASSERT_TRUE(gpu.ok());
  Result<builder::BuiltModel> m = builder::BuildNamedModel("llama", kTinyLlama);
  ASSERT_TRUE(m.ok()) << m.status().message();
  StepConfig c = StepConfigFor(*m);
  c.gpu = "H100-SXM";
  c.evaluate_time = false;
  c.bindings = {{"S", 32}};
  Result<StepAnalysis> step = AnalyzeStep(m->graph, testing::BuiltinRules(), c);
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_FALSE(step->report.time.present);
  CompareOptions o;
  o.bindings = {{"S", 32}};
  o.time = TimedOn{*gpu, "roofline on H100-SXM"};
  Result<CompareRow> row = EvaluateCompareRow(*step, "full", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  StepConfig bound = StepConfigFor(*m);
  bound.gpu = "H100-SXM";
  bound.bindings = {{"B", 1}, {"S", 32}};
  Result<StepAnalysis> timed =
      AnalyzeStep(m->graph, testing::BuiltinRules(), bound);
  ASSERT_TRUE(timed.ok()) << timed.status().message();
  const TimeReport& want = timed->report.time;
  ASSERT_TRUE(want.present);
  EXPECT_DOUBLE_EQ(row->step_rate.step_seconds, want.step_seconds);
  EXPECT_DOUBLE_EQ(row->step_rate.items_per_second, want.items_per_second);
  EXPECT_EQ(row->step_rate.items_unit, "tokens");
  EXPECT_DOUBLE_EQ(row->step_rate.mfu, want.mfu);
  // Without a GPU option nothing is timed; a step analysed without a GPU
  // cannot be.
  o.time.reset();
  EXPECT_EQ(EvaluateCompareRow(*step, "full", o)->step_rate.step_seconds, -1);
  StepConfig plain = StepConfigFor(*m);
  Result<StepAnalysis> untimed =
      AnalyzeStep(m->graph, testing::BuiltinRules(), plain);
  ASSERT_TRUE(untimed.ok());
  o.time = TimedOn{*gpu, "roofline on H100-SXM"};
  EXPECT_THAT(EvaluateCompareRow(*untimed, "full", o).status().message(),
              HasSubstr("without a GPU"));

  // A generation: B free (1), S and T bound.
  auto generation = [&](std::vector<std::pair<std::string, int64_t>> b,
                        bool evaluate) {
    StepConfig g = Generate(std::move(b));
    g.gpu = "H100-SXM";
    g.evaluate_time = evaluate;
    Result<GenerationAnalysis> a =
        AnalyzeGeneration("llama", kTinyLlama, testing::BuiltinRules(), g);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return std::move(a).value();
  };
  const GenerationAnalysis g = generation({{"S", 64}, {"T", 16}}, false);
  EXPECT_FALSE(g.time.present);
  CompareOptions og;
  og.generation = true;
  og.bindings = {{"S", 64}, {"T", 16}};
  og.time = TimedOn{*gpu, "roofline on H100-SXM"};
  Result<CompareRow> grow = EvaluateGenerationCompareRow(g, "full", og);
  ASSERT_TRUE(grow.ok()) << grow.status().message();
  const GenerationAnalysis ref =
      generation({{"B", 1}, {"S", 64}, {"T", 16}}, true);
  ASSERT_TRUE(ref.time.present);
  EXPECT_DOUBLE_EQ(grow->prefill_seconds, ref.time.prefill_seconds);
  EXPECT_DOUBLE_EQ(grow->decode_step_seconds, ref.time.last_step_seconds);
  EXPECT_NEAR(grow->tokens_per_second, ref.time.tokens_per_second,
              1e-9 * ref.time.tokens_per_second);
}

// A weight-only quantized linear is a GEMM in its input's dtype: a prefill
// whose matmuls are compute-bound takes about as long with int4 weights as with
// bf16 ones (the dequantization adds one multiply per weight), not the CUDA
// cores' fp32 rate's ~15x.
TEST(CompareTest, QuantizedPrefillRunsOnTheMatmulPeak) {
  const std::string config =
      "layers=2,hidden=1024,heads=8,kv_heads=8,intermediate=2816,vocab=1024,"
      "make_vocab_size_divisible_by=1,dtype=bf16";
  auto prefill = [&](const std::string& quant) {
    StepConfig g = Generate({{"B", 4}, {"S", 2048}, {"T", 2}});
    g.gpu = "H100-SXM";
    g.weight_quant = quant;
    Result<GenerationAnalysis> a =
        AnalyzeGeneration("llama", config, testing::BuiltinRules(), g);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return a.ok() ? a->time.prefill_seconds : -1;
  };
  const double full = prefill(""), int4 = prefill("int4");
  ASSERT_GT(full, 0);
  EXPECT_GE(int4, full);
  EXPECT_LT(int4, 1.25 * full);
}

TEST(CompareTest, RendersGenerationRows) {
  const GenerationAnalysis g = TinyGeneration({{"S", 64}, {"T", 16}});
  CompareOptions o;
  o.generation = true;
  o.bindings = {{"S", 64}, {"T", 16}};
  o.budget_bytes = 2 << 20;
  Result<CompareRow> row = EvaluateGenerationCompareRow(g, "full", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  const std::string text = RenderCompareText("llama", {*row}, o, "generate");
  EXPECT_THAT(text, HasSubstr("KV cache"));
  EXPECT_THAT(text, HasSubstr("Decode peak"));
  EXPECT_THAT(text, HasSubstr("Max B"));
  EXPECT_THAT(text, HasSubstr("at B=1, S=64, T=16"));
  const nlohmann::json j =
      nlohmann::json::parse(RenderCompareJson("llama", {*row}, o, "generate"));
  EXPECT_EQ(j["mode"], "generate");
  EXPECT_EQ(j["rows"][0]["kv_cache_bytes"].get<int64_t>(), row->kv_cache_bytes);
  EXPECT_EQ(j["rows"][0]["max_batch"].get<int64_t>(), row->max_batch);
  EXPECT_EQ(j["rows"][0]["flops"]["decode_token"].get<int64_t>(),
            row->flops_decode_token);
  EXPECT_FALSE(j["rows"][0].contains("trainable_params"));
}

// The KV cache is its own part of the breakdown at the peak (as the generation
// report's kv_cache), apart from the model's buffers, in the row, the text,
// the JSON and the chart. A tiny GPT-2 (2 layers, hidden 64, 4 heads of 16,
// context 64, float32) at B=2, S=8, T=4: the prefill's peak (its logits) is the
// larger, with the whole prompt's cache live.
TEST(CompareTest, GenerationBreakdownShowsTheKvCacheApart) {
  constexpr int64_t kLayers = 2, kKvHeads = 4, kHeadDim = 16, kBytes = 4,
                    kB = 2, kS = 8, kT = 4, kContext = 64;
  // kv = 2 (keys, values) x layers x kv_heads x head_dim x tokens x B x bytes.
  auto kv = [&](int64_t tokens) {
    return 2 * kLayers * kKvHeads * kHeadDim * tokens * kB * kBytes;
  };
  // Each layer's causal mask buffer (GPT2Attention's `bias`): context x
  // context bools.
  constexpr int64_t kMaskBytes = kLayers * kContext * kContext * 1;
  const GenerationAnalysis g =
      TinyGeneration({{"B", kB}, {"S", kS}, {"T", kT}}, "gpt2",
                     "layers=2,hidden=64,heads=4,vocab=256,context=64,make_"
                     "vocab_size_divisible_by=1");
  CompareOptions o;
  o.generation = true;
  o.bindings = {{"B", kB}, {"S", kS}, {"T", kT}};
  Result<CompareRow> row = EvaluateGenerationCompareRow(g, "full", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  ASSERT_GT(row->prefill_peak, row->decode_peak);
  EXPECT_EQ(row->kv_cache_bytes, kv(kS + kT));
  EXPECT_EQ(row->kv_cache_at_peak, kv(kS));
  EXPECT_EQ(row->at_peak[testing::kBuffer], kMaskBytes);
  int64_t sum = row->kv_cache_at_peak;
  for (int64_t v : row->at_peak) sum += v;
  EXPECT_EQ(sum, row->peak);

  const nlohmann::json j =
      nlohmann::json::parse(RenderCompareJson("gpt2", {*row}, o, "generate"));
  EXPECT_EQ(j["rows"][0]["at_peak"]["kv_cache"].get<int64_t>(), kv(kS));
  EXPECT_EQ(j["rows"][0]["at_peak"]["buffer"].get<int64_t>(), kMaskBytes);
  // kv(8) = 16 KiB; the mask 8 KiB.
  const std::string text = RenderCompareText("gpt2", {*row}, o, "generate");
  EXPECT_THAT(text, HasSubstr("full: param "));
  EXPECT_THAT(text, HasSubstr("buffer 8.00 KiB, kv_cache 16.00 KiB"));
  const std::string svg = RenderCompareSvg("gpt2", {*row}, o, "generate");
  EXPECT_THAT(svg, HasSubstr("data-category=\"kv_cache\" data-bytes=\"" +
                             std::to_string(kv(kS)) + "\""));
  EXPECT_THAT(svg, HasSubstr("data-category=\"buffer\" data-bytes=\"" +
                             std::to_string(kMaskBytes) + "\""));
  EXPECT_THAT(svg, HasSubstr(">kv_cache</text>"));  // The legend's entry.

  // A decode-bound LLaMA (S=1, T=40): its peak's buffer part is the model's
  // buffers (none), the cache all in kv_cache, between the past cache (S + T
  // - 1 tokens, the last step's input) and twice the end's.
  const GenerationAnalysis d = TinyGeneration({{"B", 2}, {"S", 1}, {"T", 40}});
  o.bindings = {{"B", 2}, {"S", 1}, {"T", 40}};
  row = EvaluateGenerationCompareRow(d, "full", o);
  ASSERT_TRUE(row.ok()) << row.status().message();
  ASSERT_GT(row->decode_peak, row->prefill_peak);
  // 2 x 2 layers x 2 KV heads x 16 x tokens x B=2 x 4 bytes.
  constexpr int64_t kLlamaPerToken = 2 * 2 * 2 * 16 * 2 * 4;
  EXPECT_EQ(row->at_peak[testing::kBuffer], 0);
  EXPECT_GE(row->kv_cache_at_peak, kLlamaPerToken * (1 + 40 - 1));
  EXPECT_LE(row->kv_cache_at_peak, 2 * kLlamaPerToken * (1 + 40));
  // Training rows have no kv_cache part.
  EXPECT_THAT(RenderCompareSvg("gpt2", {}, CompareOptions(), ""),
              ::testing::Not(HasSubstr("kv_cache")));
}

// A sweep of S (B searched under a budget) gives at each point the row a
// single evaluation gives there, and a boundary checked against the whole
// timeline's peaks: the searched B fits, B + 1 does not.
TEST(CompareTest, GenerationSweepRowsArePointRows) {
  const GenerationAnalysis g = TinyGeneration({{"T", 16}});  // B, S free.
  CompareOptions o;
  o.generation = true;
  o.bindings = {{"T", 16}};
  o.budget_bytes = 2 << 20;
  const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
      {{"S", 32}}, {{"S", 64}}, {{"S", 128}}};
  Result<std::vector<CompareRow>> rows =
      EvaluateGenerationCompareSweep(g, "full", o, points);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  int64_t last_max = INT64_MAX;
  for (size_t i = 0; i < points.size(); ++i) {
    const CompareRow& r = (*rows)[i];
    const int64_t s = points[i][0].second;
    EXPECT_EQ(r.point, points[i]);
    CompareOptions one = o;
    one.bindings["S"] = s;
    Result<CompareRow> single = EvaluateGenerationCompareRow(g, "full", one);
    ASSERT_TRUE(single.ok()) << single.status().message();
    EXPECT_EQ(r.peak, single->peak);
    EXPECT_EQ(r.kv_cache_bytes, single->kv_cache_bytes);
    EXPECT_EQ(r.max_batch, single->max_batch);
    // 2 x 2 layers x 2 KV heads x 16 x (S + T) x B=1 x 4 bytes.
    EXPECT_EQ(r.kv_cache_bytes, 2 * 2 * 2 * 16 * (s + 16) * 1 * 4);
    const int64_t m = r.max_batch;
    ASSERT_GE(m, 1);
    EXPECT_LE(GenerationPeakAt(g, {{"B", m}, {"S", s}, {"T", 16}}),
              o.budget_bytes);
    EXPECT_GT(GenerationPeakAt(g, {{"B", m + 1}, {"S", s}, {"T", 16}}),
              o.budget_bytes);
    EXPECT_LE(m, last_max);  // A longer context fits no larger batch.
    last_max = m;
  }
  EXPECT_GT((*rows)[0].max_batch, (*rows)[2].max_batch);
  const std::string text = RenderCompareText("llama", *rows, o, "generate");
  EXPECT_THAT(text, HasSubstr("Config    S"));
  EXPECT_THAT(text, HasSubstr("full S=128:"));
  const nlohmann::json j =
      nlohmann::json::parse(RenderCompareJson("llama", *rows, o, "generate"));
  EXPECT_EQ(j["rows"][2]["at"]["S"].get<int64_t>(), 128);
  EXPECT_EQ(j["rows"][2]["max_batch"].get<int64_t>(), (*rows)[2].max_batch);
  EXPECT_THAT(RenderCompareSvg("llama", *rows, o, "generate"),
              HasSubstr(">full S=64</text>"));
}

}  // namespace
}  // namespace torchcost
