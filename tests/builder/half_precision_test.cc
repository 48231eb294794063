// The families in half precision (config key dtype): parameters, inputs and
// activations in the compute dtype, with exactly the float32 islands of the
// reference code (Hugging Face's LlamaRMSNorm and eager softmax), derived
// tensor by tensor for one llama-7b-like layer.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/built_models.h"
#include "torchcost/analysis.h"
#include "torchcost/families.h"
#include "torchcost/rules.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;
using testing::BuiltinRules;

// llama-7b-like's dims, two layers (layers.1's saved bytes are any layer's),
// eager attention (the HF code whose float32 softmax island is derived below).
constexpr char kLlama7bTwoLayers[] =
    "layers=2,hidden=4096,heads=32,kv_heads=32,intermediate=11008,vocab=32000,"
    "attn=eager";

// The saved bytes of layers.1 at (b, s).
int64_t LayerSavedBytes(const std::string& dtype, int64_t b, int64_t s) {
  const BuiltModel m = *BuildNamedModel(
      "llama", std::string(kLlama7bTwoLayers) + ",dtype=" + dtype);
  sym::Context ctx;
  const Report r = AnalyzeBuilt(m, ctx);
  for (size_t i = 0; i < m.graph.scopes.size(); ++i) {
    if (m.graph.scopes[i].path == "layers.1")
      return *sym::Evaluate(r.training.module_act_bytes[i],
                            {{"B", b}, {"S", s}});
  }
  ADD_FAILURE() << "no layers.1";
  return 0;
}

// One LlamaDecoderLayer's saved bytes in compute dtype of e bytes, from
// modeling_llama.py read op by op (autograd saves a mul's operand only when the
// other operand needs a gradient):
//   each of the two RMSNorms: x.to(float32) 4sbh (pow's and the normalizing
//     mul's input; in float32 the layer input itself), rsqrt's result 4sb, the
//     normalized x cast back e*sbh (weight * x keeps it), the norm's output
//     e*sbh (the next linears' input); torch 1.13 also x^2 4sbh (mean.dim's
//     input; torch 2.x saves no tensor for mean.dim);
//   attention: cos and sin e*s*hd each (RoPE's muls keep only the tables: they
//     need no gradient), the rotated q and k e*sbh each (QK^T keeps them), v
//     e*sbh (AV's contiguous copy), the softmax's float32 output 4*H*b*s^2 and,
//     in a half dtype, its cast to the query's dtype e*H*b*s^2 (AV keeps it; in
//     float32 the cast is the softmax output itself), o_proj's input e*sbh
//     (the 0-dim float64 divisor of the 1/sqrt(hd) scale is the host's on
//     CUDA);
//   SwiGLU: gate's output, silu's output, up's output, their product (down's
//     input), e*s*b*I each.
int64_t DerivedLayerBytes(int64_t e, int64_t b, int64_t s) {
  const int64_t h = 4096, heads = 32, hd = 128, inter = 11008;
  const int64_t norms = 2 * ((4 + 2 * e) * s * b * h + 4 * s * b);
  const int64_t scores = (4 + (e == 4 ? 0 : e)) * heads * b * s * s;
  const int64_t attention = 2 * e * s * hd + 4 * e * s * b * h + scores;
  const int64_t mlp = 4 * e * s * b * inter;
  return norms + attention + mlp;
}

TEST(HalfPrecisionTest, Llama7bLikeLayerSavedBytesFollowHuggingFacesIslands) {
  for (const auto& [b, s] :
       {std::pair<int64_t, int64_t>{1, 2048}, {2, 512}, {3, 7}}) {
    EXPECT_EQ(LayerSavedBytes("fp32", b, s), DerivedLayerBytes(4, b, s))
        << "b=" << b << " s=" << s;
    EXPECT_EQ(LayerSavedBytes("bf16", b, s), DerivedLayerBytes(2, b, s))
        << "b=" << b << " s=" << s;
    EXPECT_EQ(LayerSavedBytes("fp16", b, s), DerivedLayerBytes(2, b, s))
        << "b=" << b << " s=" << s;
  }
}

TEST(HalfPrecisionTest, Llama7bLikeLayerRoughlyHalvesInBf16) {
  // The per-token part (b*s terms, the part without the s x s scores):
  // float32 40h + 16I = 339968 bytes, bf16 24h + 8I = 186368: 0.548
  // (the RMSNorm's float32 islands, 8h per layer, do not shrink). The eager
  // scores grow instead (4 -> 6 bytes per element: the float32 softmax and its
  // cast), so at s = 128, where they weigh little, one layer's bytes are 0.59
  // of float32's.
  const int64_t s = 128;
  const double fp32 = static_cast<double>(LayerSavedBytes("fp32", 1, s));
  const double bf16 = static_cast<double>(LayerSavedBytes("bf16", 1, s));
  const double derived = static_cast<double>(DerivedLayerBytes(2, 1, s)) /
                         static_cast<double>(DerivedLayerBytes(4, 1, s));
  EXPECT_NEAR(bf16 / fp32, derived, 1e-12);
  EXPECT_GT(bf16 / fp32, 0.55);
  EXPECT_LT(bf16 / fp32, 0.65);
}

TEST(HalfPrecisionTest, FamiliesBuildEveryFloatingTensorInTheComputeDtype) {
  struct Case {
    const char* name;
    const char* config;
  };
  const Case cases[] = {
      {"llama",
       "layers=1,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=100,dtype="
       "bf16"},
      {"llama",
       "layers=1,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=100,dtype="
       "bf16,"
       "attn=eager,window=8"},
      {"gpt2", "layers=1,hidden=64,heads=4,vocab=100,context=32,dtype=bf16"},
      {"gpt2",
       "layers=1,hidden=64,heads=4,vocab=100,context=32,dtype=bf16,attn=eager"},
      {"vit",
       "image_size=32,patch=16,layers=1,hidden=64,heads=4,mlp=128,classes=10,"
       "dtype=bf16"},
      {"vit",
       "image_size=32,patch=16,layers=1,hidden=64,heads=4,mlp=128,classes=10,"
       "dtype=bf16,"
       "attn=eager"},
      {"resnet", "depth=18,classes=10,image_size=32,dtype=bf16"}};
  for (const Case& c : cases) {
    Result<BuiltModel> m = BuildNamedModel(c.name, c.config);
    ASSERT_TRUE(m.ok()) << c.name << ": " << m.status().message();
    for (const auto* table : {&m->graph.params, &m->graph.buffers}) {
      for (const auto& e : *table) {
        if (IsFloatingPoint(e.dtype))
          EXPECT_EQ(e.dtype, DType::kBFloat16) << c.name << " " << e.name;
      }
    }
    for (const InputDecl& in : m->inputs) {
      if (IsFloatingPoint(in.dtype))
        EXPECT_EQ(in.dtype, DType::kBFloat16) << c.name << " input " << in.name;
    }
    // The output (logits) is in the compute dtype: no silent promotion to
    // float32 on the way.
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    EXPECT_TRUE(r.unknown_ops.empty()) << c.name;
    EXPECT_EQ(r.values[m->graph.outputs[0]].dtype, DType::kBFloat16) << c.name;
  }
}

// Saved bytes of y * y where y = x[:, :, None].expand(2, 2, rep, 5, 3) reshaped
// to `out` (mul keeps both operands, one storage), x float32 [2, 2, 5, 3]
// needing a gradient.
int64_t SavedOfExpandedReshape(int64_t rep, std::vector<IntItem> out) {
  GraphBuilder b("M");
  Ref x = b.Input("x", {2, 2, 5, 3});
  Ref e = b.Expand(b.Unsqueeze(x, 2), b.IntList({2, 2, rep, 5, 3}));
  Ref y = b.Reshape(e, b.IntList(std::move(out)));
  b.Output(b.Mul(y, y));
  BuiltModel m = b.Finish();
  sym::Context ctx;
  AnalysisOptions options;
  options.training.optimizer = OptimizerKind::kSgd;
  options.training.inputs_require_grad = true;
  for (const InputDecl& in : m.inputs)
    options.inputs.push_back({ResolveShape(m, in, ctx), in.dtype});
  Result<Report> r = Analyze(m.graph, BuiltinRules(), ctx, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r->training.saved_bytes.AsConstant();
}

TEST(HalfPrecisionTest, ReshapeOfABroadcastCopies) {
  // repeat_kv's reshape merges the expanded dim (stride 0) with the heads: a
  // copy of 2*4*5*3 float32 elements (480 bytes), which mul keeps.
  EXPECT_EQ(SavedOfExpandedReshape(2, {2, 4, 5, 3}), 2 * 4 * 5 * 3 * 4);
  // Expanding by 1 broadcasts nothing: the reshape is a view of x (240 bytes).
  EXPECT_EQ(SavedOfExpandedReshape(1, {2, 2, 5, 3}), 2 * 2 * 5 * 3 * 4);
}

}  // namespace
}  // namespace torchcost::builder
