// The ops a LLaMA decoder layer's parts share (src/builder/llama_layer.cc):
// RMSNorm's trace in float32 and in a half dtype, the head dim, and Megatron's
// parallel linears by tp and sp.
#include "builder/llama_layer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::builder {
namespace {

// The ops of the graph `b` holds, in order, without the trace's list
// constructs (prim::).
std::vector<std::string> Ops(GraphBuilder& b) {
  BuiltModel m = b.Finish();
  std::vector<std::string> ops;
  for (const ir::Node& n : m.graph.nodes) {
    if (n.op.rfind("prim::", 0) != 0) ops.push_back(n.op);
  }
  return ops;
}

TEST(LlamaLayerTest, HeadDimIsGivenOrHiddenOverHeads) {
  LlamaConfig c;
  c.hidden = 4096;
  c.heads = 32;
  EXPECT_EQ(HeadDim(c), 128);
  c.head_dim = 256;  // Gemma-7B: 16 heads of 256 over hidden 3072.
  EXPECT_EQ(HeadDim(c), 256);
}

// NB: in float32, x.to(float32) is x itself, so the residual reads the norm's
// input cast (the tracer's stand-in); in bfloat16 the cast is a new tensor and
// the residual reads x.
TEST(LlamaLayerTest, RmsNormResidualFollowsTheDtype) {
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    LlamaConfig c;
    c.dtype = dtype;
    GraphBuilder b("Net");
    Ref x = b.Input("x", {"B", 8}, dtype);
    Ref w = b.Param("norm.weight", {8}, dtype);
    const NormOut n = RmsNorm(b, c, w, x);
    b.Output(n.out);
    EXPECT_EQ(n.residual.id == x.id, dtype != DType::kFloat32);
    // to(float32), pow, mean, add eps, rsqrt, mul, to(dtype), mul by weight.
    EXPECT_EQ(Ops(b), (std::vector<std::string>{
                          "aten::to", "aten::pow", "aten::mean", "aten::add",
                          "aten::rsqrt", "aten::mul", "aten::to", "aten::mul"}))
        << DTypeName(dtype);
  }
}

TEST(LlamaLayerTest, ParallelLinearsByTpAndSp) {
  LlamaConfig c;
  auto ops = [&](int64_t tp, bool sp) {
    c.tp = tp;
    c.sp = sp;
    GraphBuilder b("Net");
    Ref x = b.Input("x", {"B", "S", 8});
    Ref w = b.Param("fc.weight", {8, 8});
    b.Output(AllReduceIf(b, c, ColumnLinear(b, c, x, w)));
    return Ops(b);
  };
  EXPECT_EQ(ops(1, true), std::vector<std::string>{"aten::linear"});
  EXPECT_EQ(ops(2, false), (std::vector<std::string>{"aten::linear",
                                                     "torchcost::all_reduce"}));
  EXPECT_EQ(ops(2, true),
            (std::vector<std::string>{"torchcost::sp_linear",
                                      "torchcost::reduce_scatter"}));
  EXPECT_FALSE(Sp(c = LlamaConfig{}));
}

}  // namespace
}  // namespace torchcost::builder
