// Tests of the GaLore model: --galore spec parsing, projected state bytes for
// m >= n and m < n, the projector's storage, the update's temporaries (steady
// and SVD steps), FLOPs, and the per-layer update's GRAD bound on a two-layer
// MLP; every expected number derived by hand from the reference's code
// (galore_torch/adamw.py, galore_projector.py).
#include "training/galore_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "testing/toy_graphs.h"
#include "torchcost/analysis.h"
#include "torchcost/galore.h"

namespace torchcost {
namespace {

using testing::CategoryMax;
using testing::OptimizerTempOverBackward;
using training::Event;
using training::GaloreFlops;
using training::GaloreStateBytes;
using training::GaloreUpdate;

TEST(GaloreConfigTest, ParsesEveryKey) {
  auto c = ParseGaloreConfig(
      "r=8,gap=50,scale=0.5,targets=q_proj|v_proj,per_layer=true,svd=false");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->rank, 8);
  EXPECT_EQ(c->update_proj_gap, 50);
  EXPECT_DOUBLE_EQ(c->scale, 0.5);
  EXPECT_EQ(c->targets, "q_proj|v_proj");
  EXPECT_TRUE(c->per_layer);
  EXPECT_FALSE(c->svd_step);
  // Defaults: the reference README's rank 128, gap 200, scale 0.25.
  auto d = ParseGaloreConfig("");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->rank, 128);
  EXPECT_EQ(d->update_proj_gap, 200);
  EXPECT_DOUBLE_EQ(d->scale, 0.25);
  EXPECT_FALSE(d->per_layer);
  EXPECT_TRUE(d->svd_step);
}

TEST(GaloreConfigTest, BadSpecsSayWhy) {
  EXPECT_NE(
      ParseGaloreConfig("r=0").status().message().find("positive integer"),
      std::string::npos);
  EXPECT_NE(ParseGaloreConfig("rank=x").status().message().find("rank=x"),
            std::string::npos);
  EXPECT_NE(ParseGaloreConfig("alpha=3").status().message().find(
                "unknown key 'alpha'"),
            std::string::npos);
  EXPECT_NE(ParseGaloreConfig("targets=(")
                .status()
                .message()
                .find("not a valid regular expression"),
            std::string::npos);
  EXPECT_NE(ParseGaloreConfig("per_layer=maybe")
                .status()
                .message()
                .find("true or false"),
            std::string::npos);
  EXPECT_NE(
      ParseGaloreConfig("scale=-1").status().message().find("positive number"),
      std::string::npos);
  EXPECT_NE(ParseGaloreConfig("r8").status().message().find("not key=value"),
            std::string::npos);
}

GaloreConfig Rank(int64_t r) {
  GaloreConfig c;
  c.rank = r;
  return c;
}

TEST(GaloreStateTest, TallWeightProjectsRight) {
  // [64, 32], m >= n: low-rank grad [64, 8] (512 floats), exp_avg and
  // exp_avg_sq of that shape: 2 * 512 * 4; the projector Vh[:8, :] keeps
  // thin SVD's whole Vh [32, 32]: 32 * 32 * 4.
  EXPECT_EQ(GaloreStateBytes({64, 32}, DType::kFloat32, true, Rank(8)),
            2 * 512 * 4 + 32 * 32 * 4);
}

TEST(GaloreStateTest, WideWeightProjectsLeft) {
  // [32, 64], m < n: low-rank grad [8, 64] (512 floats); U[:, :8] keeps U [32,
  // 32].
  EXPECT_EQ(GaloreStateBytes({32, 64}, DType::kFloat32, true, Rank(8)),
            2 * 512 * 4 + 32 * 32 * 4);
  // [128, 512] (gpt_tiny's mlp.c_proj) at r=8: [8, 512] states, U [128, 128].
  EXPECT_EQ(GaloreStateBytes({128, 512}, DType::kFloat32, true, Rank(8)),
            2 * 8 * 512 * 4 + 128 * 128 * 4);
}

TEST(GaloreStateTest, HalfPrecisionKeepsACastCopyOfTheSlice) {
  // bfloat16 [32, 64]: states [8, 64] in bf16 (2 * 512 * 2); the projector is
  // U[:, :8].type(bf16), a new [32, 8] tensor: 256 * 2.
  EXPECT_EQ(GaloreStateBytes({32, 64}, DType::kBFloat16, true, Rank(8)),
            2 * 512 * 2 + 32 * 8 * 2);
  // [64, 32] bf16: Vh[:8, :].type(bf16) is [8, 32].
  EXPECT_EQ(GaloreStateBytes({64, 32}, DType::kBFloat16, true, Rank(8)),
            2 * 512 * 2 + 8 * 32 * 2);
}

TEST(GaloreStateTest, RankAboveTheSmallerDimIsClipped) {
  // [16, 64] at r=32: U[:, :32] has 16 columns; states [16, 64].
  EXPECT_EQ(GaloreStateBytes({16, 64}, DType::kFloat32, true, Rank(32)),
            2 * 16 * 64 * 4 + 16 * 16 * 4);
}

TEST(GaloreStateTest, OtherParametersKeepFullAdamStatesWithoutStep) {
  // Full-size exp_avg and exp_avg_sq; the reference's step is a Python int.
  EXPECT_EQ(GaloreStateBytes({10}, DType::kFloat32, false, Rank(8)),
            2 * 10 * 4);
  EXPECT_EQ(GaloreStateBytes({64, 32}, DType::kFloat32, false, Rank(8)),
            2 * 2048 * 4);
}

// Replays an update's events from empty slots: the most temporary bytes alive
// at a point, and what the slots still hold at the end.
struct Replayed {
  int64_t most = 0;
  int64_t left = 0;
};
Replayed Replay(const std::vector<Event>& events) {
  std::map<int, int64_t> bytes;
  std::map<int, int> slots;
  int64_t live = 0;
  Replayed r;
  for (const Event& e : events) {
    switch (e.kind) {
      case Event::Kind::kAlloc:
        bytes[e.tensor] = e.bytes;
        live += e.bytes;
        break;
      case Event::Kind::kFree:
        live -= bytes[e.tensor];
        break;
      case Event::Kind::kBind:
        if (slots.count(e.slot) && slots[e.slot] >= 0)
          live -= bytes[slots[e.slot]];
        slots[e.slot] = e.tensor;
        break;
      case Event::Kind::kPoint:
        r.most = std::max(r.most, live);
        break;
    }
  }
  r.left = live;
  return r;
}

TEST(GaloreUpdateTest, SteadyStepTemporaries) {
  // [64, 32] float32, r=8: low = grad @ P.t() (2048), denom (2048),
  // norm_grad = exp_avg / denom (2048), project_back's matmul (8192) and
  // its * scale (8192) together: 3 * 2048 + 2 * 8192.
  const Replayed r = Replay(
      GaloreUpdate({64, 32}, DType::kFloat32, true, Rank(8), /*svd=*/false));
  EXPECT_EQ(r.most, 3 * 2048 + 2 * 8192);
  // Bound to grad, denom and norm_grad until the next parameter rebinds them:
  // the low-rank grad and denom and the full-size scaled update.
  EXPECT_EQ(r.left, 2048 + 2048 + 8192);
}

TEST(GaloreUpdateTest, SvdStepAllocatesTheFactorsAndLapacksCopy) {
  // [64, 32] float32: LAPACK's column-major copy (64*32*4), U [64, 32]
  // (8192), S [32] (128), Vh [32, 32] (4096) and the int32 info (4) at once;
  // the steady temporaries come after they are gone.
  const Replayed r = Replay(
      GaloreUpdate({64, 32}, DType::kFloat32, true, Rank(8), /*svd=*/true));
  EXPECT_EQ(r.most, std::max<int64_t>(8192 + 8192 + 128 + 4096 + 4,
                                      3 * 2048 + 2 * 8192));
  // [256, 32]: the SVD moment, copy 32768 + U 32768 + S 128 + Vh 4096 + info 4,
  // against the steady one, low-rank [256, 8] (8192) three times + 2 * 32768.
  const Replayed tall = Replay(
      GaloreUpdate({256, 32}, DType::kFloat32, true, Rank(8), /*svd=*/true));
  EXPECT_EQ(tall.most, std::max<int64_t>(32768 + 32768 + 128 + 4096 + 4,
                                         3 * 8192 + 2 * 32768));
  // bfloat16 [32, 64]: grad.float() (8192) joins the SVD's tensors:
  // 8192 + 8192 + U 4096 + S 128 + Vh [32, 64] 8192 + 4.
  const Replayed half = Replay(
      GaloreUpdate({32, 64}, DType::kBFloat16, true, Rank(8), /*svd=*/true));
  EXPECT_EQ(half.most, 8192 + 8192 + 4096 + 128 + 8192 + 4);
}

TEST(GaloreUpdateTest, OtherParametersKeepDenomAndUpdate) {
  // exp_avg_sq.sqrt().add_(eps) and exp_avg / denom: two param-sized tensors,
  // both still bound.
  const Replayed r =
      Replay(GaloreUpdate({10}, DType::kFloat32, false, Rank(8), true));
  EXPECT_EQ(r.most, 2 * 40);
  EXPECT_EQ(r.left, 2 * 40);
}

TEST(GaloreFlopsTest, ProjectionsAdamAndAmortizedSvd) {
  // [64, 32], r=8, T=200: project 2*64*32*8, Adam 9 * 512, back 2*64*32*8,
  // scale 2048, p.add_ 2 * 2048, SVD (6*64*32^2 + 11*32^3) / 200 = 753664 /
  // 200.
  GaloreConfig c = Rank(8);
  EXPECT_EQ(GaloreFlops({64, 32}, true, c), 2 * 64 * 32 * 8 + 9 * 512 +
                                                2 * 64 * 32 * 8 + 2048 +
                                                2 * 2048 + 753664 / 200);
  EXPECT_EQ(training::SvdFlops(32, 64), 6 * 64 * 32 * 32 + 11 * 32 * 32 * 32);
  // Other parameters: 9 Adam FLOPs and the 2 of p.add_ per element.
  EXPECT_EQ(GaloreFlops({10}, false, c), 11 * 10);
}

// GaLoreAdamW8bit (the reference's galore_torch/adamw8bit.py on bitsandbytes'
// Optimizer2State, optim_bits=8).
GaloreConfig EightBit(int64_t rank) {
  GaloreConfig c = Rank(rank);
  c.eight_bit = true;
  return c;
}

TEST(Galore8bitTest, ProjectedStatesAreEightBitBlockwise) {
  // [1024, 512], r=128: projected [1024, 128] = 131072 elements (>= 4096):
  // uint8 state1, state2 (2 * 131072) + float32 absmax per 2048 (2 * 64 * 4);
  // the float32 projector keeps Vh's storage, 512 * 512 * 4.
  EXPECT_EQ(GaloreStateBytes({1024, 512}, DType::kFloat32, true, EightBit(128)),
            2 * 131072 + 2 * 64 * 4 + 512 * 512 * 4);
  // [64, 32], r=8: projected 512 elements (< 4096): float32 states, 2 * 512 *
  // 4, + Vh 32 * 32 * 4.
  EXPECT_EQ(GaloreStateBytes({64, 32}, DType::kFloat32, true, EightBit(8)),
            2 * 512 * 4 + 32 * 32 * 4);
  // Untargeted: bitsandbytes' Adam8bit states of the full shape.
  EXPECT_EQ(GaloreStateBytes({10}, DType::kFloat32, false, EightBit(8)),
            2 * 10 * 4);
}

TEST(Galore8bitTest, StepClonesTheWeightAndProjectsBack) {
  // [64, 32] float32, r=8 (low 2048, full 8192 bytes): grad = project(p.grad)
  // (low); p.saved_data = p.data.clone() (full, beside the parameter); p.data =
  // grad.clone() (low; the old storage goes as saved_data takes its place);
  // the fused 8-bit update (none); project_back's matmul and * scale (2 full):
  // at most low + low + 2 * full.
  const Replayed r = Replay(GaloreUpdate({64, 32}, DType::kFloat32, true,
                                         EightBit(8), /*svd=*/false));
  EXPECT_EQ(r.most, 2048 + 2048 + 2 * 8192);
  // grad, bound until the next parameter (it is p.grad too).
  EXPECT_EQ(r.left, 2048);
  // Untargeted: one fused kernel, nothing.
  const Replayed other =
      Replay(GaloreUpdate({10}, DType::kFloat32, false, EightBit(8), true));
  EXPECT_EQ(other.most, 0);
  // FLOPs: project and back 2 * 2mnk, 8-bit Adam 18 per projected element,
  // scale and saved_data.add_ one per element, SVD / T; others 8-bit Adam's 18.
  EXPECT_EQ(GaloreFlops({64, 32}, true, EightBit(8)),
            2 * (2 * 64 * 32 * 8) + 18 * 512 + 2 * 2048 + 753664 / 200);
  EXPECT_EQ(GaloreFlops({10}, false, EightBit(8)), 18 * 10);
}

// x [5, 8] -> l1 (W1 [4, 8]: 128 bytes) -> relu -> l2 (W2 [2, 4]: 32 bytes),
// both Linear.
class GaloreStepTest : public testing::ToyGraphTest {
 protected:
  void SetUp() override {
    ToyGraphTest::SetUp();
    testing::ToyMlp(b_);
  }
  Result<Report> Run(const std::string& spec) {
    AnalysisOptions opts;
    opts.training.optimizer = OptimizerKind::kAdamW;
    opts.training.galore = *ParseGaloreConfig(spec);
    return TryAnalyzeBuiltGraph(opts, "5,8");
  }
};

TEST_F(GaloreStepTest, ProjectedStatesAndTemporaries) {
  auto r = Run("r=2,targets=l1|l2,svd=false");
  ASSERT_TRUE(r.ok()) << r.status().message();
  // W1 [4, 8] (m < n, left): states [2, 8] (2 * 16 * 4) + U [4, 4] (64);
  // W2 [2, 4]: states [2, 4] (2 * 8 * 4) + U [2, 2] (16).
  EXPECT_EQ(CategoryMax(*r, MemCategory::kOpt), (128 + 64) + (64 + 16));
  EXPECT_EQ(r->training.galore_params, 32 + 8);
  // W1: low (64), denom (64), norm_grad (64), back (128), scaled (128) = 448;
  // W2's come after W1's low-rank grad and denom were rebound: less.
  EXPECT_EQ(OptimizerTempOverBackward(*r), 3 * 64 + 2 * 128);
  // W1: project 2*4*8*2 (128), Adam 9 * 16, back 128, scale 32, add 64, SVD
  // (6*8*4^2 + 11*4^3) / 200 = 1472 / 200 = 7; W2: 32 + 72 + 32 + 8 + 16 + 184
  // / 200 (0).
  EXPECT_EQ(*r->training.flops_optimizer.AsConstant(),
            (128 + 144 + 128 + 32 + 64 + 7) + (32 + 72 + 32 + 8 + 16));
}

TEST_F(GaloreStepTest, PerLayerFreesEachGradientAfterItsUpdate) {
  auto full = Run("r=2,targets=l1|l2");
  auto per_layer = Run("r=2,targets=l1|l2,per_layer=true");
  ASSERT_TRUE(full.ok() && per_layer.ok());
  // All gradients at the end of backward: 128 + 32; per layer, at most one:
  // W1's 128.
  EXPECT_EQ(CategoryMax(*full, MemCategory::kGrad), 128 + 32);
  EXPECT_EQ(CategoryMax(*per_layer, MemCategory::kGrad), 128);
  // Nothing is left for the optimizer phase.
  EXPECT_EQ(OptimizerTempOverBackward(*per_layer), 0);
  EXPECT_EQ(CategoryMax(*per_layer, MemCategory::kOpt),
            CategoryMax(*full, MemCategory::kOpt));
}

TEST_F(GaloreStepTest, TargetsMustMatch) {
  auto r = Run("targets=attn");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("match no trainable 2-D weight"),
            std::string::npos);
  // Only l1 matches: l2 keeps full states (2 * 32) and no projector.
  auto one = Run("r=2,targets=^l1$");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(CategoryMax(*one, MemCategory::kOpt), (128 + 64) + 2 * 32);
}

}  // namespace
}  // namespace torchcost
