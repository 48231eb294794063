// Tests of the loss rewrite: the ops appended after the model's output, the
// targets as inputs, and the FLOPs and bytes the loss adds, derived from
// cross_entropy = log_softmax (4 FLOPs and an exp per element, a log per row)
// + nll (pick and mean: 1 FLOP per row each), as rules/loss.yaml counts them.
#include "torchcost/loss.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;
using ::testing::HasSubstr;

// x [N, 16] -> fc (Linear 16 -> 10, bias): logits [N, 10].
ir::Graph Classifier() {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("fc.weight", {10, 16});
  int bias = b.Param("fc.bias", {10});
  b.Scope("fc", "Linear");
  b.Output(b.One("aten::linear", {x, w, bias}, {"input", "weight", "bias"}));
  return b.graph();
}

// x [B, S, 4] -> lm_head (Linear 4 -> 11, no bias): logits [B, S, 11].
ir::Graph TinyLm(DType dtype = DType::kFloat32) {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("lm_head.weight", {11, 4});
  b.Scope("lm_head", "Linear");
  b.Output(
      b.One("aten::linear", {x, w, b.None()}, {"input", "weight", "bias"}));
  ir::Graph g = b.graph();
  g.params[0].dtype = dtype;
  return g;
}

struct Analysed {
  ir::Graph graph;
  AnalysisOptions options;
  Report report;
};

// Applies `loss` to `g` (inputs `input`) and analyses the step (SGD).
Analysed RunStep(const ir::Graph& g, const std::string& input,
                 const std::string& loss, sym::Context& ctx,
                 bool inputs_require_grad = false) {
  auto rules = RuleSet::Builtin();
  EXPECT_TRUE(rules.ok());
  Analysed a;
  a.options.training.optimizer = OptimizerKind::kSgd;
  a.options.training.inputs_require_grad = inputs_require_grad;
  a.options.moved_bytes = true;  // Each node's bytes and collectives too.
  a.options.inputs.push_back(*ParseInputSpec(ctx, input));
  auto spec = ParseLossSpec(loss);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  a.options.training.loss = *spec;
  auto rewritten = ApplyLoss(g, *rules, ctx, &a.options);
  EXPECT_TRUE(rewritten.ok()) << rewritten.status().message();
  a.graph = std::move(rewritten).value();
  auto r = Analyze(a.graph, *rules, ctx, a.options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  a.report = std::move(r).value();
  return a;
}

int64_t Value(const sym::Expr& e) { return *e.AsConstant(); }

// Returns the forward FLOPs of op `op` in the report's operator table.
int64_t OpFlops(const Report& r, const std::string& op) {
  for (const OpStats& o : r.ops) {
    if (o.op == op) return Value(o.flops);
  }
  return -1;
}

int64_t OtherMax(const Report& r) {
  PeakInfo p = EvaluatePeak(r.training, {});
  return Value(p.category_max[testing::kOther]);
}

TEST(LossTest, CrossEntropyAddsInt64TargetsAndTheRulesCosts) {
  sym::Context ctx;
  Analysed sum = RunStep(Classifier(), "4,16", "sum", ctx);
  Analysed ce = RunStep(Classifier(), "4,16", "cross_entropy", ctx);
  ASSERT_EQ(ce.graph.inputs.size(), 2u);
  ASSERT_EQ(ce.options.inputs.size(), 2u);
  EXPECT_EQ(ce.options.inputs[1].dtype, DType::kInt64);
  ASSERT_EQ(ce.options.inputs[1].shape.size(), 1u);
  EXPECT_EQ(ce.options.inputs[1].shape[0], sym::Expr(4));
  const int64_t E = 4 * 10, R = 4;
  // log_softmax, pick, mean
  EXPECT_EQ(OpFlops(ce.report, "aten::cross_entropy_loss"), 4 * E + R + R);
  EXPECT_EQ(Value(ce.report.flops) - Value(sum.report.flops), 4 * E + R + R);
  EXPECT_EQ(
      Value(ce.report.transcendentals) - Value(sum.report.transcendentals),
      E + R);
  // Backward: scatter -grad (R), log_softmax backward (3E).
  EXPECT_EQ(Value(ce.report.training.flops_backward) -
                Value(sum.report.training.flops_backward),
            R + 3 * E);
  // Saved: log_softmax's float32 result, the int64 target, nll's 0-dim
  // total_weight.
  EXPECT_EQ(Value(ce.report.training.saved_bytes) -
                Value(sum.report.training.saved_bytes),
            E * 4 + R * 8 + 4);
  // OTH: x, the target, the logits kept by the caller, the 0-dim loss (sum: x,
  // the logits, out.sum()).
  EXPECT_EQ(OtherMax(ce.report), 4 * 16 * 4 + R * 8 + E * 4 + 4);
  EXPECT_EQ(OtherMax(sum.report), 4 * 16 * 4 + E * 4 + 4);
  EXPECT_THAT(ce.report.training.loss, HasSubstr("cross_entropy"));
  EXPECT_THAT(sum.report.training.loss, HasSubstr("out.sum()"));
}

TEST(LossTest, MseTakesAFloatTargetOfTheOutputsShape) {
  sym::Context ctx;
  Analysed sum = RunStep(Classifier(), "4,16", "sum", ctx);
  Analysed mse = RunStep(Classifier(), "4,16", "mse", ctx);
  ASSERT_EQ(mse.options.inputs.size(), 2u);
  EXPECT_EQ(mse.options.inputs[1].dtype, DType::kFloat32);
  EXPECT_EQ(mse.options.inputs[1].shape.size(), 2u);
  const int64_t E = 4 * 10;
  // subtract, square; the mean's adds
  EXPECT_EQ(OpFlops(mse.report, "aten::mse_loss"), 2 * E + E);
  EXPECT_EQ(Value(mse.report.training.flops_backward) -
                Value(sum.report.training.flops_backward),
            3 * E);
  // Saved: self (the logits) and the target.
  EXPECT_EQ(Value(mse.report.training.saved_bytes) -
                Value(sum.report.training.saved_bytes),
            E * 4 + E * 4);
}

TEST(LossTest, TargetsNeverRequireGradients) {
  sym::Context ctx;
  const int64_t plain = Value(
      RunStep(Classifier(), "4,16", "mse", ctx).report.training.flops_backward);
  const int64_t with_x = Value(RunStep(Classifier(), "4,16", "mse", ctx, true)
                                   .report.training.flops_backward);
  // --inputs-require-grad adds x's gradient through fc (grad @ W: 2*4*10*16),
  // not the target's (3E).
  EXPECT_EQ(with_x - plain, 2 * 4 * 10 * 16);
}

TEST(LossTest, CausalLmShiftsTheLogitsAsLlamaForCausalLm) {
  sym::Context ctx;
  Analysed lm = RunStep(TinyLm(), "2,5,4", "causal_lm", ctx);
  std::vector<std::string> ops;
  for (const ir::Node& n : lm.graph.nodes) ops.push_back(n.op);
  EXPECT_THAT(ops, ::testing::ElementsAre(
                       "aten::linear", "aten::to", "aten::slice",
                       "aten::contiguous", "aten::slice", "aten::contiguous",
                       "aten::view", "aten::view", "aten::cross_entropy_loss"));
  ASSERT_EQ(lm.options.inputs.size(), 2u);
  EXPECT_EQ(lm.options.inputs[1].dtype, DType::kInt64);  // labels [B, S]
  EXPECT_EQ(lm.options.inputs[1].shape.size(), 2u);
  // B x (S - 1) tokens over V = 11 classes.
  const int64_t R = 2 * (5 - 1), E = R * 11;
  EXPECT_EQ(OpFlops(lm.report, "aten::cross_entropy_loss"), 4 * E + R + R);
  sym::Context ctx2;
  Analysed sum = RunStep(TinyLm(), "2,5,4", "sum", ctx2);
  // Saved: log-probs (float32), the shifted labels' int64 copy, total_weight.
  EXPECT_EQ(Value(lm.report.training.saved_bytes) -
                Value(sum.report.training.saved_bytes),
            E * 4 + R * 8 + 4);
  // The loss, and the logits the caller keeps.
  ASSERT_EQ(lm.graph.outputs.size(), 2u);
}

TEST(LossTest, CausalLmUpcastsHalfPrecisionLogitsAndKeepsTheFloat32Copy) {
  sym::Context ctx;
  Analysed lm =
      RunStep(TinyLm(DType::kBFloat16), "2,5,4:bfloat16", "causal_lm", ctx);
  const ir::Node& cast = lm.graph.nodes[1];
  ASSERT_EQ(cast.op, "aten::to");
  // LlamaForCausalLM returns logits.float().
  EXPECT_EQ(lm.graph.outputs[1], cast.outputs[0]);
  const int64_t R = 2 * 4, E = R * 11;
  // OTH: x (bf16), labels (int64), the float32 logits, the float32 loss.
  EXPECT_EQ(OtherMax(lm.report),
            2 * 5 * 4 * 2 + 2 * 5 * 8 + 2 * 5 * 11 * 4 + 4);
  EXPECT_EQ(OpFlops(lm.report, "aten::cross_entropy_loss"), 4 * E + R + R);
}

// Megatron-core's vocab-parallel cross entropy on one rank's slice, V / t =
// 11 here (megatron/core/tensor_parallel/cross_entropy.py at NVIDIA/
// Megatron-LM d98e8a64): it saves the float32 softmax of the slice, the
// target mask (bool, a token each) and masked_target_1d (int64, a token
// each); on float32 logits the softmax is computed in the logits' own
// storage, on half ones in their .float() copy. Per token: 3 float32
// all-reduces (the max, the predicted logit, the sum of exps).
TEST(LossTest, VocabParallelSavesTheFloat32SoftmaxOfTheSlice) {
  const int64_t N = 2 * 5, E = N * 11;  // Tokens (no shift), slice elements.
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    sym::Context ctx;
    const std::string input =
        dtype == DType::kFloat32 ? "2,5,4" : "2,5,4:bfloat16";
    Analysed vp = RunStep(TinyLm(dtype), input, "vocab_parallel:world=2", ctx);
    std::vector<std::string> ops;
    for (const ir::Node& n : vp.graph.nodes) ops.push_back(n.op);
    EXPECT_THAT(
        ops, ::testing::ElementsAre("aten::linear",
                                    "torchcost::vocab_parallel_cross_entropy",
                                    "aten::mean"));
    ASSERT_EQ(vp.options.inputs.size(), 2u);
    EXPECT_EQ(vp.options.inputs[1].dtype, DType::kInt64);  // labels [B, S]
    EXPECT_EQ(vp.options.inputs[1].shape.size(), 2u);
    sym::Context ctx2;
    Analysed sum = RunStep(TinyLm(dtype), input, "sum", ctx2);
    EXPECT_EQ(Value(vp.report.training.saved_bytes) -
                  Value(sum.report.training.saved_bytes),
              E * 4 + N * 1 + N * 8);
    // What holds the softmax: the logits themselves (float32), or a new
    // float32 tensor.
    std::string softmax;
    for (const SavedTensorInfo& s : vp.report.training.saved) {
      if (vp.graph.nodes[s.node].op ==
              "torchcost::vocab_parallel_cross_entropy" &&
          Value(s.bytes) == E * 4)
        softmax = s.what;
    }
    EXPECT_EQ(softmax, dtype == DType::kFloat32 ? "logits" : "softmax");
    // 4 FLOPs per slice element, 3 per token.
    EXPECT_EQ(OpFlops(vp.report, "torchcost::vocab_parallel_cross_entropy"),
              4 * E + 3 * N);
    // The three all-reduces of 4 N bytes among the 2 ranks.
    ASSERT_EQ(vp.report.collectives.size(), 1u);
    const NodeCollectives& c = vp.report.collectives[0];
    EXPECT_EQ(c.group, sym::Expr(2));
    ASSERT_EQ(c.forward.size(), 3u);
    for (const CollectiveCall& call : c.forward) {
      EXPECT_EQ(call.kind, CollectiveKind::kAllReduce);
      EXPECT_EQ(call.payload, sym::Expr(4 * N));
    }
    EXPECT_TRUE(c.backward.empty());
  }
}

TEST(LossTest, CausalLmShiftLabelsPadsTheLabelsAsForCausalLmLoss) {
  sym::Context ctx;
  Analysed lm = RunStep(TinyLm(DType::kBFloat16), "2,5,4:bfloat16",
                        "causal_lm:shift=labels", ctx);
  int pads = 0;
  for (const ir::Node& n : lm.graph.nodes)
    pads += n.op == "aten::constant_pad_nd";
  EXPECT_EQ(pads, 1);
  // The model's own (bf16) logits.
  EXPECT_EQ(lm.graph.outputs[1], lm.graph.nodes[0].outputs[0]);
  // Every position: the last label is -100.
  const int64_t R = 2 * 5, E = R * 11;
  EXPECT_EQ(OpFlops(lm.report, "aten::cross_entropy_loss"), 4 * E + R + R);
  // OTH: x, labels, the bf16 logits, the loss.
  EXPECT_EQ(OtherMax(lm.report),
            2 * 5 * 4 * 2 + 2 * 5 * 8 + 2 * 5 * 11 * 2 + 4);
}

TEST(LossTest, ChunkedCrossEntropySplitsTheOutputProjection) {
  sym::Context ctx;
  Analysed whole =
      RunStep(TinyLm(DType::kBFloat16), "2,5,4:bfloat16", "causal_lm", ctx);
  Analysed chunked = RunStep(TinyLm(DType::kBFloat16), "2,5,4:bfloat16",
                             "causal_lm:chunks=5", ctx);
  int linears = 0, ces = 0;
  for (const ir::Node& n : chunked.graph.nodes) {
    linears += n.op == "aten::linear";
    ces += n.op == "aten::cross_entropy_loss";
  }
  EXPECT_EQ(linears, 5);
  EXPECT_EQ(ces, 5);
  // The projection costs the same in chunks: 2 * B*S * 4 * 11.
  EXPECT_EQ(OpFlops(chunked.report, "aten::linear"), 2 * 2 * 5 * 4 * 11);
  EXPECT_EQ(OpFlops(whole.report, "aten::linear"), 2 * 2 * 5 * 4 * 11);
  // Each chunk: R = 2 rows of 11 (sum reduction: R adds).
  const int64_t R = 2, E = R * 11;
  EXPECT_EQ(OpFlops(chunked.report, "aten::cross_entropy_loss"),
            5 * (4 * E + R + R));
  // torchtune's recipes drop the logits before backward.
  ASSERT_EQ(chunked.graph.outputs.size(), 1u);
  // ACT: float32 log-probs of every chunk (B*S*V*4), the labels shifted (int64
  // [B, S]), a total_weight per chunk, each chunk of h (bf16) copied by
  // linear's fold, and the divisor total_elements (int64, 0-dim) that div
  // keeps.
  EXPECT_EQ(Value(chunked.report.training.saved_bytes),
            2 * 5 * 11 * 4 + 2 * 5 * 8 + 5 * 4 + 2 * 5 * 4 * 2 + 8);
}

TEST(LossTest, NoneTakesTheOutputAsTheLossAndChecksIt) {
  auto rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("fc.weight", {3, 4});
  b.Scope("fc", "Linear");
  int y = b.One("aten::linear", {x, w, b.None()}, {"input", "weight", "bias"});
  b.Scope("", "Net");
  b.Output(b.One("aten::sum", {y, b.None()}, {"self", "dtype"}));
  sym::Context ctx;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "2,4"));
  Report sum = *Analyze(b.graph(), *rules, ctx, opts);
  opts.training.loss = *ParseLossSpec("none");
  Report none = *Analyze(b.graph(), *rules, ctx, opts);
  // out.sum() of a 0-dim output adds one more 0-dim float32 (OTH); none does
  // not.
  EXPECT_EQ(OtherMax(sum) - OtherMax(none), 4);
  opts.inputs = {*ParseInputSpec(ctx, "2,16")};
  auto bad = Analyze(Classifier(), *rules, ctx, opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(
      bad.status().message(),
      HasSubstr(
          "loss none: the model's first output is [2, 10], not a 0-dim loss"));
}

TEST(LossTest, ErrorsNameTheProblem) {
  sym::Context ctx;
  auto rules = RuleSet::Builtin();
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "4,16"));
  opts.training.loss = *ParseLossSpec("causal_lm");
  auto g = ApplyLoss(Classifier(), *rules, ctx, &opts);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(
      g.status().message(),
      HasSubstr(
          "causal_lm needs logits [B, S, V]; the first output is [4, 10]"));
  // Not applied: Analyze refuses a non-scalar first output.
  auto r = Analyze(Classifier(), *rules, ctx, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("append the loss with ApplyLoss first"));
  // Inference: no loss, the graph unchanged.
  opts.training.mode = StepMode::kInfer;
  auto infer = ApplyLoss(Classifier(), *rules, ctx, &opts);
  ASSERT_TRUE(infer.ok());
  EXPECT_EQ(infer->nodes.size(), 1u);
}

}  // namespace
}  // namespace torchcost
