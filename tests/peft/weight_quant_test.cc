// Tests of weight-only quantization (src/peft/weight_quant.cc): each format's
// bytes per weight from its storage layout (derived here), the rewrite of a
// tiny decoder's Linear weights (the head kept dense), and generation with it.
#include "torchcost/weight_quant.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/analyze_graph.h"
#include "testing/built_models.h"
#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "torchcost/families.h"
#include "torchcost/generation.h"
#include "torchcost/peft.h"
#include "torchcost/step.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using testing::BuiltinRules;
using ::testing::HasSubstr;

TEST(WeightQuantTest, BytesPerFormat) {
  const int64_t out = 4096, in = 11008;
  // int8: one byte per weight, a float32 absmax (SCB) per output row.
  EXPECT_EQ(QuantizedWeightBytes(out, in, WeightQuant::kInt8),
            out * in + 4 * out);
  // int4 (AWQ, group 128): 4 bits per weight; per group of 128 inputs and each
  // output, a float16 scale and a 4-bit zero: 4 + (16 + 4) / 128 bits per
  // weight.
  EXPECT_EQ(QuantizedWeightBytes(out, in, WeightQuant::kInt4),
            out * in / 2 + (in / 128) * out * 2 + (in / 128) * out / 2);
  // fp8: one byte per weight, a float32 scale per output row.
  EXPECT_EQ(QuantizedWeightBytes(out, in, WeightQuant::kFp8),
            out * in + 4 * out);
  // nf4: QLoRA's layout.
  EXPECT_EQ(QuantizedWeightBytes(out, in, WeightQuant::kNf4),
            Nf4WeightBytes(out * in, QloraConfig{}));
  EXPECT_THAT(ParseWeightQuant("int3").status().message(),
              HasSubstr("expected int8, int4, nf4 or fp8"));
}

// 2 layers, hidden 64, 4 heads, 2 KV heads, intermediate 128, vocab 256 (head
// untied).
constexpr const char* kTiny =
    "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256,attn="
    "eager,make_vocab_size_divisible_by=1";

TEST(WeightQuantTest, GenerationHoldsTheQuantizedWeights) {
  // Per layer the Linears are q 64x64, k and v 32x64, o 64x64, gate and up
  // 128x64, down 64x128; the embedding (256x64), the norms (3 x 64 per model: 2
  // per layer + 1) and lm_head (256x64, the last Linear) stay float32.
  struct Lin {
    int64_t out, in;
  };
  const Lin layer[] = {{64, 64},  {32, 64},  {32, 64}, {64, 64},
                       {128, 64}, {128, 64}, {64, 128}};
  const int64_t dense = 4 * (256 * 64 + (2 * 2 + 1) * 64 + 256 * 64);
  // Parameter counts: every weight as out x in, whatever its storage; the
  // scales count none (as peft counts a Params4bit, numel x 2).
  int64_t quantized = 0;
  for (const Lin& l : layer) quantized += 2 * l.out * l.in;
  const int64_t params = dense / 4 + quantized;
  for (auto [name, format] :
       {std::pair<const char*, WeightQuant>{"int8", WeightQuant::kInt8},
        {"int4", WeightQuant::kInt4},
        {"fp8", WeightQuant::kFp8}}) {
    StepConfig c;
    c.mode = "generate";
    c.weight_quant = name;
    c.bindings = {{"B", 1}, {"S", 8}, {"T", 4}};
    Result<GenerationAnalysis> g =
        AnalyzeGeneration("llama", kTiny, BuiltinRules(), c);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    int64_t expected = dense;
    for (const Lin& l : layer)
      expected += 2 * QuantizedWeightBytes(l.out, l.in, format);
    EXPECT_EQ(g->prefill.report.param_bytes, expected) << name;
    EXPECT_EQ(g->decode.report.param_bytes, expected) << name;
    EXPECT_EQ(g->decode.report.params, params) << name;
    EXPECT_EQ(g->decode.report.quantized_params, quantized) << name;
    EXPECT_TRUE(g->decode.report.unknown_ops.empty()) << name;
  }
  StepConfig nf4;
  nf4.mode = "generate";
  nf4.weight_quant = "nf4";
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTiny, BuiltinRules(), nf4);
  ASSERT_TRUE(g.ok()) << g.status().message();
  int64_t expected = dense;
  for (const Lin& l : layer)
    expected += 2 * Nf4WeightBytes(l.out * l.in, QloraConfig{});
  EXPECT_EQ(g->prefill.report.param_bytes, expected);
  EXPECT_EQ(g->prefill.report.params, params);
  EXPECT_EQ(g->prefill.report.quantized_params, quantized);
}

// What an inference forward of x [B, S, 256] through a Linear 256 -> 128
// (float32, no bias) quantized as `format`, then a head 128 -> 8 (kept dense:
// no temporary), costs at B and S.
struct QuantizedLinearCost {
  int64_t temp = -1;   // The largest TEMP bytes live.
  int64_t bytes = -1;  // The quantized Linear's moved bytes (time model).
};

QuantizedLinearCost LinearCost(WeightQuant format, int64_t batch, int64_t seq) {
  testing::GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("proj.weight", {128, 256}, /*requires_grad=*/false);
  const int head = b.Param("head.weight", {8, 128}, /*requires_grad=*/false);
  b.Scope("proj", "Linear");
  const int h = b.One("aten::linear", {x, w}, {"input", "weight"});
  b.Scope("head", "Linear");
  b.Output(b.One("aten::linear", {h, head}, {"input", "weight"}));
  Result<ir::Graph> g = QuantizeWeights(b.graph(), format);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {};
  sym::Context ctx;
  AnalysisOptions opts;
  opts.training.mode = StepMode::kInfer;
  opts.moved_bytes = true;
  const Report r =
      testing::AnalyzeGraph(*g, BuiltinRules(), ctx, opts, "B,S,256");
  EXPECT_TRUE(r.unknown_ops.empty());
  const sym::Bindings at = {{"B", batch}, {"S", seq}};
  const PeakInfo peak = EvaluatePeak(r.training, at);
  EXPECT_TRUE(peak.error.empty()) << peak.error;
  QuantizedLinearCost cost;
  cost.temp =
      testing::At(peak.category_max[static_cast<int>(MemCategory::kTemp)]);
  for (size_t ni = 0; ni < g->nodes.size(); ++ni) {
    if (g->nodes[ni].op == "bnb::matmul_4bit" ||
        g->nodes[ni].op == "torchcost::weight_only_linear")
      cost.bytes = *sym::Evaluate(r.nodes[ni].bytes, at);
  }
  return cost;
}

int64_t LinearTemp(WeightQuant format, int64_t batch, int64_t seq) {
  return LinearCost(format, batch, seq).temp;
}

TEST(WeightQuantTest, TemporariesFollowEachLibrarysKernel) {
  // Each format's kernel, as its library dispatches it (rules/quantized.yaml
  // cites the sources), on M = B*S rows of a float32 input:
  constexpr int64_t kOut = 128, kIn = 256;
  struct Shape {
    int64_t batch, seq;
  };
  for (const Shape& at : {Shape{1, 1}, Shape{4, 1}, Shape{1, 1023},
                          Shape{1, 1024}, Shape{2, 512}, Shape{3, 700}}) {
    const int64_t m = at.batch * at.seq;
    SCOPED_TRACE("B=" + std::to_string(at.batch) +
                 " S=" + std::to_string(at.seq));
    // NB: inference holds the Linear's output h [M, 128] float32 as TEMP
    // (read by the head), live beside the kernel's temporaries.
    const int64_t h = 4 * m * kOut;
    // AWQ: the fused GEMM below x.shape[0] * x.shape[1] = B*S = 1024 rows, the
    // float16 weight [in, out] from there on; the input cast to float16 and
    // the float16 output before its cast back, either way.
    EXPECT_EQ(
        LinearTemp(WeightQuant::kInt4, at.batch, at.seq),
        h + (m >= 1024 ? 2 * kIn * kOut : 0) + 2 * m * kIn + 2 * m * kOut);
    // LLM.int8: the input's int8 codes and float32 row scales, the int32
    // product; never a dequantized weight.
    EXPECT_EQ(LinearTemp(WeightQuant::kInt8, at.batch, at.seq),
              h + m * kIn + 4 * m + 4 * m * kOut);
    // FBGEMM fp8 rowwise: the input's fp8 codes and float32 row scales.
    EXPECT_EQ(LinearTemp(WeightQuant::kFp8, at.batch, at.seq),
              h + m * kIn + 4 * m);
    // bitsandbytes nf4 under no_grad: gemv_4bit for one row (256 is a
    // multiple of the 64-weight block), else the weight dequantized to the
    // input's dtype.
    EXPECT_EQ(LinearTemp(WeightQuant::kNf4, at.batch, at.seq),
              h + (m == 1 ? 0 : kOut * kIn * 4));
  }
}

TEST(WeightQuantTest, MovedBytesWriteAndReadEachTemporaryOnce) {
  // The time model's bytes: the input [M, 256] and output [M, 128] float32,
  // the codes and the scales the node reads, and each temporary written once
  // and read once (the temporaries of the test above).
  constexpr int64_t kOut = 128, kIn = 256;
  for (int64_t m : {1, 2, 1024}) {
    SCOPED_TRACE("M=" + std::to_string(m));
    const int64_t io = 4 * m * kIn + 4 * m * kOut;
    // nf4: codes out*in/2; absmax one uint8 per 64 weights; absmax2 one
    // float32 per 256 of those.
    const int64_t nf4 = kOut * kIn / 2 + kOut * kIn / 64 + 4 * 2;
    EXPECT_EQ(LinearCost(WeightQuant::kNf4, 1, m).bytes,
              io + nf4 + (m == 1 ? 0 : 2 * kOut * kIn * 4));
    // int4: qweight in * out/8 int32; the node reads the float16 scales [in /
    // 128, out] (qzeros is held, not read by the node).
    const int64_t int4 = kIn * kOut / 2 + 2 * (kIn / 128) * kOut;
    EXPECT_EQ(LinearCost(WeightQuant::kInt4, 1, m).bytes,
              io + int4 +
                  2 * ((m >= 1024 ? 2 * kIn * kOut : 0) + 2 * m * kIn +
                       2 * m * kOut));
    // int8: codes out*in; SCB float32 [out].
    EXPECT_EQ(
        LinearCost(WeightQuant::kInt8, 1, m).bytes,
        io + kOut * kIn + 4 * kOut + 2 * (m * kIn + 4 * m + 4 * m * kOut));
  }
}

TEST(WeightQuantTest, NeedsGenerate) {
  StepConfig c;
  c.mode = "train";
  c.weight_quant = "int8";
  EXPECT_THAT(
      CheckStepConfig(c).message(),
      HasSubstr(
          "StepConfig.weight_quant int8 quantizes weights for generation"));
  c.mode = "generate";
  c.weight_quant = "int2";
  EXPECT_THAT(
      CheckStepConfig(c).message(),
      HasSubstr("StepConfig.weight_quant: unknown weight quantization 'int2'"));
}

}  // namespace
}  // namespace torchcost
