// StepConfig::gpu through AnalyzeStep: the time is there with a GPU and every
// symbol bound, absent without one, and each misuse names StepConfig.gpu.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/built_models.h"
#include "testing/graph_builder.h"
#include "torchcost/families.h"
#include "torchcost/gpu.h"
#include "torchcost/roofline.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using testing::BuiltinRules;
using testing::GraphBuilder;
using ::testing::HasSubstr;

// x [B, 16] -> relu.
ir::Graph Relu() {
  GraphBuilder b;
  int x = b.Input();
  b.Output(b.One("aten::relu", {x}, {"self"}));
  return b.graph();
}

StepConfig Config() {
  StepConfig c;
  c.inputs = {"B,16"};
  c.mode = "infer";
  return c;
}

TEST(GpuTimeTest, TimeWithAGpuAndBoundSymbols) {
  StepConfig c = Config();
  c.gpu = "h100";
  c.bindings = {{"B", 4}};
  Result<StepAnalysis> r = AnalyzeStep(Relu(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimeReport& t = r->report.time;
  ASSERT_TRUE(t.present);
  EXPECT_EQ(t.source, "roofline on H100-SXM");
  // relu reads and writes 4*16 float32 at 3350 GB/s.
  EXPECT_DOUBLE_EQ(t.step_seconds, 2 * 4 * 16 * 4 / 3350e9);
}

TEST(GpuTimeTest, TimedLaterOnTheGpuTheResultNames) {
  // evaluate_time off: B stays free, the report is untimed, and the result
  // names the GPU; EstimateTime on it at B = 4 gives the time above.
  StepConfig c = Config();
  c.gpu = "h100";
  c.evaluate_time = false;
  Result<StepAnalysis> r = AnalyzeStep(Relu(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->report.time.present);
  ASSERT_TRUE(r->timed_on.has_value());
  EXPECT_EQ(r->timed_on->source, "roofline on H100-SXM");
  Result<TimeReport> t =
      EstimateTime(r->graph, r->report, *r->timed_on, {{"B", 4}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->step_seconds, 2 * 4 * 16 * 4 / 3350e9);
}

TEST(GpuTimeTest, NoGpuNoTime) {
  StepConfig c = Config();
  c.bindings = {{"B", 4}};
  Result<StepAnalysis> r = AnalyzeStep(Relu(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->report.time.present);
  EXPECT_FALSE(r->timed_on.has_value());
  EXPECT_EQ(r->report.nodes[0].bytes,
            sym::Expr(0));  // Bytes are derived only for a time.
}

TEST(GpuTimeTest, MisusesNameTheOption) {
  StepConfig c = Config();
  c.gpu = "b300";
  EXPECT_THAT(
      CheckStepConfig(c).message(),
      HasSubstr("StepConfig.gpu: unknown GPU 'b300'; known: A100-40GB-SXM"));
  c.gpu = "a100";
  c.device = "cpu";
  EXPECT_THAT(CheckStepConfig(c).message(),
              HasSubstr("StepConfig.gpu a100 models CUDA kernels; it does not "
                        "go with StepConfig.device cpu"));
  c.device = "cuda";
  StepStage stage = StepStage::kOptions;
  Result<StepAnalysis> r = AnalyzeStep(Relu(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(stage, StepStage::kAnalysis);
  EXPECT_THAT(r.status().message(),
              HasSubstr("StepConfig.gpu a100: the time needs every symbol "
                        "bound (StepConfig.bindings)"));
  EXPECT_THAT(r.status().message(), HasSubstr("'B'"));
}

// The collectives of a tensor-parallel llama over t = 2 ranks, in float32 at
// B = 2, S = 32, h = 64 (N = B S h = 4096 elements, 16384 bytes): in forward
// the vocab-parallel embedding's and, per layer, attention's and the MLP's
// all-reduce (`g`): 2L + 1 = 5; in backward the `f` before q/k/v, before
// gate/up and before the lm_head all-reduce the input's gradient: 5 more.
// Each, as NCCL's tuner times a ring of 2 in one node: 2 (t - 1) = 2 steps,
// 2 (t - 1) / t N = 16384 bytes sent; LL: 6.6 + 2 x 0.6 us + 16384 B /
// min(0.5 x 450, 141) GB/s (NCCL's cap on a Hopper) = 7.92 us; LL128: 14 + 2
// x 1.9 us + ... = 17.8 us; Simple: 8.4 + 2 x 3.4 us + ... = 15.2 us: LL's.
// The loss, Megatron's vocab-parallel cross entropy, all-reduces 3 float32
// [B, S] in forward: 256 bytes each, 7.8 us + 256 B / 141 GB/s.
TEST(GpuTimeTest, TensorParallelCollectivesAreTimedOverTheLink) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "llama",
      "layers=2,hidden=64,heads=8,kv_heads=4,intermediate=128,vocab=256,tp=2");
  ASSERT_TRUE(m.ok()) << m.status().message();
  StepConfig c = StepConfigFor(*m);
  c.gpu = "H100-SXM";
  c.optimizer = "sgd";
  c.bindings = {{"B", 2}, {"S", 32}};
  Result<StepAnalysis> a = AnalyzeStep(m->graph, BuiltinRules(), c);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const TimeReport& t = a->report.time;
  const double all_reduce = 7.8e-6 + 16384 / 141e9,
               loss = 3 * (7.8e-6 + 256 / 141e9);
  EXPECT_NEAR(t.model_parallel_communication_seconds, 10 * all_reduce + loss,
              1e-9 * all_reduce);
  EXPECT_EQ(t.communication_untimed, "");
  // Megatron runs each `f`'s all-reduce beside the weight-gradient GEMMs of
  // the linears that read its output (q/k/v, gate/up, the lm_head): each
  // such linear's backward is 2 GEMMs (input and weight gradients, no bias),
  // so half its time; at these sizes they are far shorter than the
  // all-reduce, which hides that much of itself.
  double beside = 0;
  const ir::Graph& g = a->graph;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& node = g.nodes[ni];
    if (node.op != "aten::linear") continue;
    for (size_t p = 0; p < g.nodes.size(); ++p) {
      if (g.nodes[p].op == "torchcost::copy_to_tp_region" &&
          g.nodes[p].outputs[0] == node.inputs[0])
        beside += t.node_backward_seconds[ni] / 2;
    }
  }
  ASSERT_GT(beside, 0);
  ASSERT_LT(beside, all_reduce);
  EXPECT_NEAR(t.model_parallel_overlapped_seconds, beside, 1e-9 * beside);
  // The phases wait for the rest: against the step without its collectives,
  // forward takes 5 all-reduces and the loss's longer, backward 5 less what
  // hides.
  Report none = a->report;
  none.collectives.clear();
  const GpuSpec h100 = *FindGpu("H100-SXM");
  Result<TimeReport> free = EstimateTime(a->graph, none, h100, a->bindings);
  ASSERT_TRUE(free.ok()) << free.status().message();
  EXPECT_NEAR(t.forward_seconds - free->forward_seconds, 5 * all_reduce + loss,
              1e-6 * all_reduce);
  EXPECT_NEAR(t.backward_seconds - free->backward_seconds,
              5 * all_reduce - beside, 1e-6 * all_reduce);
  EXPECT_NEAR(t.step_seconds - free->step_seconds,
              10 * all_reduce + loss - beside, 1e-6 * all_reduce);
  // No link bandwidth known: not timed, and said so.
  GpuSpec unknown = h100;
  unknown.interconnect.link = 0;
  Result<TimeReport> untimed =
      EstimateTime(a->graph, a->report, unknown, a->bindings);
  ASSERT_TRUE(untimed.ok());
  EXPECT_EQ(untimed->model_parallel_communication_seconds, 0);
  EXPECT_THAT(untimed->communication_untimed, HasSubstr("link bandwidth"));
}

}  // namespace
}  // namespace torchcost
