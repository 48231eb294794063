// Composed ResNet costs against whole-graph analyses of the same blocks and
// kernel sizes.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

#include "testing/built_models.h"
#include "torchcost/families.h"
#include "torchcost/loss.h"
#include "torchcost/nas.h"

namespace torchcost {
namespace {

using testing::BuiltinRules;

struct Whole {
  int64_t params, trainable, fwd, bwd, act, peak;
};

std::string StageText(const std::array<int64_t, 4>& n) {
  return std::to_string(n[0]) + ":" + std::to_string(n[1]) + ":" +
         std::to_string(n[2]) + ":" + std::to_string(n[3]);
}

Whole AnalyseWhole(const ResnetStructureSpace& space,
                   const std::array<int64_t, 4>& n,
                   const std::array<int64_t, 4>& k) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "resnet",
      space.config + ",blocks=" + StageText(n) + ",kernels=" + StageText(k));
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
  const sym::Bindings b = {{"B", space.batch}};
  Whole w;
  w.params = r->params;
  w.trainable = r->trainable_params;
  w.fwd = *sym::Evaluate(r->training.flops_forward, b);
  w.bwd = *sym::Evaluate(r->training.flops_backward, b);
  w.act = *sym::Evaluate(r->training.saved_bytes, b);
  w.peak = *sym::Evaluate(EvaluatePeak(r->training, b, false).peak, {});
  return w;
}

void CheckComposer(const ResnetStructureSpace& space, int candidates) {
  Result<ResnetStructureComposer> composer =
      ResnetStructureComposer::Create(space, BuiltinRules());
  ASSERT_TRUE(composer.ok()) << composer.status().message();
  const int kernels = static_cast<int>(space.kernels.size());
  EXPECT_EQ(composer->analyses(), 1 + 4 * (2 * kernels - 1));
  std::mt19937_64 rng(11);
  for (int c = 0; c < candidates; ++c) {
    std::array<int64_t, 4> n, k;
    for (int64_t& v : n) v = 1 + static_cast<int64_t>(rng() % 4);
    for (int64_t& v : k) v = space.kernels[rng() % space.kernels.size()];
    const Result<StructuralCosts> got = composer->Evaluate(n, k);
    ASSERT_TRUE(got.ok()) << got.status().message();
    const Whole want = AnalyseWhole(space, n, k);
    const std::string at =
        "blocks=" + StageText(n) + ",kernels=" + StageText(k);
    EXPECT_EQ(got->params, want.params) << at;
    EXPECT_EQ(got->trainable_params, want.trainable) << at;
    EXPECT_EQ(got->flops_forward, want.fwd) << at;
    EXPECT_EQ(got->flops_backward, want.bwd) << at;
    EXPECT_EQ(got->act_bytes, want.act) << at;
    EXPECT_LE(got->peak_lower, want.peak) << at;
    EXPECT_GE(got->peak_upper, want.peak) << at;
  }
}

TEST(ResnetStructureTest, BasicBlocksComposeLikeWholeGraphs) {
  ResnetStructureSpace space;
  space.config = "depth=18,width=8,classes=10,image_size=32";
  space.batch = 2;
  CheckComposer(space, 5);
}

TEST(ResnetStructureTest, BottlenecksComposeLikeWholeGraphs) {
  ResnetStructureSpace space;
  space.config = "depth=50,width=8,classes=10,image_size=32";
  space.batch = 3;
  space.options.training.optimizer = OptimizerKind::kSgdMomentum;
  CheckComposer(space, 5);
}

TEST(ResnetStructureTest, KernelSizesComposeLikeWholeGraphs) {
  ResnetStructureSpace space;
  space.config = "depth=18,width=8,classes=10,image_size=32";
  space.kernels = {3, 5, 1};
  space.batch = 2;
  CheckComposer(space, 6);
  space.config = "block=bottleneck,depth=18,width=8,classes=10,image_size=28";
  space.kernels = {5, 3};
  CheckComposer(space, 6);
}

// A kernel size outside the space, or a malformed space, is an error naming it.
TEST(ResnetStructureTest, KernelsAreValidated) {
  ResnetStructureSpace space;
  space.config = "depth=18,width=8,classes=10,image_size=32";
  space.kernels = {3, 5};
  Result<ResnetStructureComposer> composer =
      ResnetStructureComposer::Create(space, BuiltinRules());
  ASSERT_TRUE(composer.ok()) << composer.status().message();
  Result<StructuralCosts> r = composer->Evaluate({1, 1, 1, 1}, {3, 7, 3, 3});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stage 2's kernel size 7"),
            std::string::npos)
      << r.status().message();
  EXPECT_FALSE(composer->Evaluate({1, 1, 1, 1}, {3, 64, 3, 3}).ok());
  for (std::vector<int64_t> bad : {std::vector<int64_t>{}, {4}, {3, 3}, {33}}) {
    space.kernels = bad;
    EXPECT_FALSE(ResnetStructureComposer::Create(space, BuiltinRules()).ok());
  }
  // The foreach step's temporaries grow with depth: no bound from the probes.
  space.kernels = {3};
  space.options.training.foreach = true;
  Result<ResnetStructureComposer> foreach =
      ResnetStructureComposer::Create(space, BuiltinRules());
  ASSERT_FALSE(foreach.ok());
  EXPECT_NE(foreach.status().message().find("options.training.foreach"),
            std::string::npos)
      << foreach.status().message();
}

// torchvision's resnet50 is blocks 3:4:6:3; the composed params are its
// 25,557,032.
TEST(ResnetStructureTest, Resnet50ParamsComposeToTorchvisions) {
  ResnetStructureSpace space;
  Result<ResnetStructureComposer> composer =
      ResnetStructureComposer::Create(space, BuiltinRules());
  ASSERT_TRUE(composer.ok()) << composer.status().message();
  EXPECT_EQ(composer->Evaluate({3, 4, 6, 3})->params, 25557032);
  EXPECT_FALSE(composer->Evaluate({3, 0, 6, 3}).ok());
}

TEST(ResnetStructureTest, StageKeysAreValidated) {
  EXPECT_TRUE(
      builder::BuildNamedModel("resnet", "depth=18,blocks=1:1:1:1").ok());
  for (const char* bad : {"blocks=1:1:1", "blocks=1:1:1:1:1", "blocks=1:0:1:1",
                          "blocks=a:1:1:1", "blocks=1:1:1:"}) {
    Result<builder::BuiltModel> m = builder::BuildNamedModel("resnet", bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.status().message().find("blocks="), std::string::npos)
        << m.status().message();
  }
  EXPECT_TRUE(
      builder::BuildNamedModel("resnet", "depth=18,kernels=1:3:5:31").ok());
  for (const char* bad :
       {"kernels=3:3:3", "kernels=3:4:3:3", "kernels=3:3:3:33",
        "kernels=0:3:3:3", "kernels=3:3:3:"}) {
    Result<builder::BuiltModel> m = builder::BuildNamedModel("resnet", bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.status().message().find("kernels="), std::string::npos)
        << m.status().message();
  }
  Result<builder::BuiltModel> m =
      builder::BuildNamedModel("resnet", "block=wide");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("block=wide must be basic or bottleneck"),
            std::string::npos);
}

}  // namespace
}  // namespace torchcost
