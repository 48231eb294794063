// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", Table 2: activation memory per transformer layer under
// tensor parallelism (t), sequence parallelism, selective and full
// recomputation, reproduced on one layer (h.1) of the GPT-2 family in 16-bit
// with dropout, on CUDA (1-byte dropout masks). The paper's closed forms are
// derived below tensor by tensor (its Sec. 4.1 accounting); the terms the
// paper drops are written out beside them.
#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"
#include "torchcost/analysis.h"
#include "torchcost/families.h"
#include "torchcost/rules.h"

namespace torchcost::builder {
namespace {

using testing::BuiltinRules;

// The layer: h = 64, a = 4 heads, s = 128, b = 2 (every division below exact).
constexpr int64_t h = 64, a = 4, s = 128, b = 2;
constexpr int64_t sbh = s * b * h;
// NB: attn=eager: Korthikanti et al. count the materialized attention scores.
constexpr const char* kConfig =
    "layers=3,hidden=64,heads=4,vocab=512,context=128,dropout=0.1,attn=eager,"
    "dtype=fp16";

// torchcost's saved bytes attributed to layer h.1 (its subtree), the family
// computing in float16 (dtype=fp16), CUDA kernels, at b and s.
int64_t LayerBytes(const std::string& extra, const std::string& checkpoint,
                   int64_t* recompute_flops = nullptr) {
  Result<BuiltModel> m = BuildNamedModel("gpt2", std::string(kConfig) + extra);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return -1;
  sym::Context ctx;
  AnalysisOptions options;
  options.device = "cuda";
  options.training.optimizer = OptimizerKind::kSgd;
  options.training.checkpoint = checkpoint;
  for (const InputDecl& in : m->inputs)
    options.inputs.push_back({ResolveShape(*m, in, ctx), in.dtype});
  Result<Report> r = Analyze(m->graph, BuiltinRules(), ctx, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return -1;
  EXPECT_TRUE(r->unknown_ops.empty());
  if (recompute_flops)
    *recompute_flops =
        *sym::Evaluate(r->training.flops_recompute, {{"B", b}, {"S", s}});
  for (size_t i = 0; i < m->graph.scopes.size(); ++i) {
    if (m->graph.scopes[i].path != "h.1") continue;
    Result<int64_t> v =
        sym::Evaluate(r->training.module_act_bytes[i], {{"B", b}, {"S", s}});
    EXPECT_TRUE(v.ok()) << v.status().message();
    return v.ok() ? *v : -1;
  }
  ADD_FAILURE() << "no h.1";
  return -1;
}

// The paper's per-layer accounting (Sec. 4.1, 2-byte activations, 1-byte
// masks), tensor by tensor, with t-way tensor parallelism and, if `sp`,
// sequence parallelism (Sec. 4.2.2: the regions outside the t-split
// attention and MLP hold s/t of the sequence); `selective` drops the
// attention core's s x s tensors (Sec. 5).
int64_t Paper(int64_t t, bool sp, bool selective) {
  // The divisor of the LayerNorm / dropout regions.
  const int64_t rep = sp ? t : 1;
  // Attention block.
  // LayerNorm output, the QKV linear's input.
  const int64_t qkv_input = 2 * sbh / rep;
  const int64_t q_and_k = 4 * sbh / t;  // QK^T's inputs.
  const int64_t softmax_out = 2 * a * s * s * b / t;
  const int64_t softmax_dropout_mask = a * s * s * b / t;
  const int64_t softmax_dropout_out = 2 * a * s * s * b / t;  // A V's input.
  const int64_t v = 2 * sbh / t;
  // The output projection's input.
  const int64_t proj_input = 2 * sbh / t;
  const int64_t attn_dropout_mask = sbh / rep;
  const int64_t core = softmax_out + softmax_dropout_mask + softmax_dropout_out;
  const int64_t attention = qkv_input + q_and_k + (selective ? 0 : core) + v +
                            proj_input + attn_dropout_mask;
  // MLP block: the two linears' inputs (2sbh, 8sbh), GeLU's input (8sbh), the
  // dropout mask.
  const int64_t mlp = 2 * sbh / rep + 8 * sbh / t + 8 * sbh / t + sbh / rep;
  // Two LayerNorms, each keeping its 2sbh input.
  const int64_t norms = 2 * 2 * sbh / rep;
  return attention + mlp + norms;
}

// The terms the paper drops, as torchcost (and PyTorch) keeps them:
// - each LayerNorm's mean and rstd, [b, s/rep, 1] in float32 (CUDA's
//   layer_norm keeps its statistics in the accumulation type): 2 * 2 * 4 * sb /
//   rep;
// - the 0-dim float64 tensor of `att / sqrt(hd)` that DivBackward0 keeps
//   (the traced Python float): on CUDA the host's, so no device bytes (8 on
//   CPU).
// Biases add nothing: linear and addmm keep their input and weight only.
int64_t Dropped(int64_t t, bool sp, bool /*selective*/) {
  const int64_t rep = sp ? t : 1;
  return 2 * 2 * 4 * s * b / rep;
}

TEST(KorthikantiTable2Test, DerivationsMatchThePapersClosedForms) {
  // Table 2 in bytes: sbh(34 + 5as/h) = 34 sbh + 5 a s^2 b, and so on.
  for (int64_t t : {1, 2, 4}) {
    EXPECT_EQ(Paper(t, false, false),
              10 * sbh + 24 * sbh / t + 5 * a * s * s * b / t);
    EXPECT_EQ(Paper(t, true, false), 34 * sbh / t + 5 * a * s * s * b / t);
    EXPECT_EQ(Paper(t, false, true), 10 * sbh + 24 * sbh / t);
    EXPECT_EQ(Paper(t, true, true), 34 * sbh / t);
  }
  EXPECT_EQ(Paper(1, false, false), 34 * sbh + 5 * a * s * s * b);
}

TEST(KorthikantiTable2Test, NoParallelism) {
  // Row 1: sbh(34 + 5as/h).
  EXPECT_EQ(LayerBytes("", ""),
            Paper(1, false, false) + Dropped(1, false, false));
}

TEST(KorthikantiTable2Test, TensorParallel) {
  // Row 2: sbh(10 + 24/t + 5as/(ht)).
  for (int64_t t : {2, 4}) {
    SCOPED_TRACE("t=" + std::to_string(t));
    EXPECT_EQ(LayerBytes(",tp=" + std::to_string(t), ""),
              Paper(t, false, false) + Dropped(t, false, false));
  }
}

TEST(KorthikantiTable2Test, TensorAndSequenceParallel) {
  // Row 3: sbh(34/t + 5as/(ht)).
  for (int64_t t : {2, 4}) {
    SCOPED_TRACE("t=" + std::to_string(t));
    EXPECT_EQ(LayerBytes(",sp=true,tp=" + std::to_string(t), ""),
              Paper(t, true, false) + Dropped(t, true, false));
  }
}

TEST(KorthikantiTable2Test, TensorParallelWithSelectiveRecompute) {
  // Row 4: sbh(10 + 24/t); t = 1 too (selective without parallelism: 34 sbh).
  for (int64_t t : {1, 2, 4}) {
    SCOPED_TRACE("t=" + std::to_string(t));
    EXPECT_EQ(LayerBytes(",tp=" + std::to_string(t), "selective"),
              Paper(t, false, true) + Dropped(t, false, true));
  }
}

TEST(KorthikantiTable2Test, TensorAndSequenceParallelWithSelectiveRecompute) {
  // Row 5: sbh(34/t).
  for (int64_t t : {2, 4}) {
    SCOPED_TRACE("t=" + std::to_string(t));
    EXPECT_EQ(LayerBytes(",sp=true,tp=" + std::to_string(t), "selective"),
              Paper(t, true, true) + Dropped(t, true, true));
  }
}

TEST(KorthikantiTable2Test, FullRecompute) {
  // Row 6: 2sbh, the layer's input that the checkpoint keeps (nothing dropped:
  // the LayerNorm statistics and the scale are recomputed with the rest).
  EXPECT_EQ(LayerBytes("", "blocks"), 2 * sbh);
  EXPECT_EQ(LayerBytes(",tp=2", "blocks"), 2 * sbh);
  // Beyond the table: with sequence parallelism the kept input is the rank's
  // s/t of it.
  EXPECT_EQ(LayerBytes(",sp=true,tp=2", "blocks"), 2 * sbh / 2);
}

TEST(KorthikantiTable2Test, SelectiveRecomputesTheCoresForward) {
  // Per layer and rank: Q K^T and A V, 2 b s^2 h / t FLOPs each (2 per FMA),
  // and per score (a s^2 b / t of them) the scale 1, the causal select 1,
  // softmax 4 and CUDA dropout 2 (rules/README.md's per-element conventions); 3
  // layers.
  for (int64_t t : {1, 2}) {
    SCOPED_TRACE("t=" + std::to_string(t));
    int64_t flops = -1;
    LayerBytes(",tp=" + std::to_string(t), "selective", &flops);
    EXPECT_EQ(flops, 3 * (2 * 2 * b * s * s * h / t +
                          (1 + 1 + 4 + 2) * a * s * s * b / t));
  }
}

}  // namespace
}  // namespace torchcost::builder
