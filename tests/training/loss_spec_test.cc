// Tests of loss specs ("causal_lm:chunks=8"): parsing, errors, descriptions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "torchcost/loss.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;

TEST(LossSpecTest, ParsesEachLoss) {
  EXPECT_EQ(ParseLossSpec("sum")->kind, LossSpec::Kind::kSum);
  EXPECT_EQ(ParseLossSpec("none")->kind, LossSpec::Kind::kNone);
  EXPECT_EQ(ParseLossSpec("cross_entropy")->kind,
            LossSpec::Kind::kCrossEntropy);
  EXPECT_EQ(ParseLossSpec("mse")->kind, LossSpec::Kind::kMse);
  auto lm = ParseLossSpec("causal_lm");
  ASSERT_TRUE(lm.ok());
  EXPECT_EQ(lm->kind, LossSpec::Kind::kCausalLm);
  EXPECT_TRUE(lm->upcast);
  EXPECT_FALSE(lm->shift_labels);
  EXPECT_EQ(lm->chunks, 1);
  auto labels = ParseLossSpec("causal_lm:shift=labels,upcast=false");
  ASSERT_TRUE(labels.ok());
  EXPECT_TRUE(labels->shift_labels);
  EXPECT_FALSE(labels->upcast);
  EXPECT_EQ(labels->text, "causal_lm:shift=labels,upcast=false");
  EXPECT_EQ(ParseLossSpec("causal_lm:chunks=8")->chunks, 8);
  EXPECT_FALSE(LossAppendsOps(*ParseLossSpec("sum")));
  EXPECT_FALSE(LossAppendsOps(*ParseLossSpec("none")));
  EXPECT_TRUE(LossAppendsOps(*ParseLossSpec("mse")));
  EXPECT_EQ(ParseLossSpec("lm")->kind, LossSpec::Kind::kLm);
  EXPECT_TRUE(LossAppendsOps(*ParseLossSpec("lm")));
  auto vocab = ParseLossSpec("vocab_parallel:world=4");
  ASSERT_TRUE(vocab.ok()) << vocab.status().message();
  EXPECT_EQ(vocab->kind, LossSpec::Kind::kVocabParallel);
  EXPECT_EQ(vocab->world, 4);
  EXPECT_EQ(ParseLossSpec("vocab_parallel")->world, 1);
  EXPECT_TRUE(LossAppendsOps(*vocab));
}

TEST(LossSpecTest, ErrorsNameTheSpec) {
  EXPECT_THAT(ParseLossSpec("hinge").status().message(),
              HasSubstr("unknown loss 'hinge'"));
  EXPECT_THAT(ParseLossSpec("mse:chunks=2").status().message(),
              HasSubstr("mse takes no settings"));
  EXPECT_THAT(ParseLossSpec("lm:chunks=2").status().message(),
              HasSubstr("lm takes no settings"));
  EXPECT_THAT(ParseLossSpec("causal_lm:chunks=0").status().message(),
              HasSubstr("chunks=0 must be an integer"));
  EXPECT_THAT(ParseLossSpec("causal_lm:shift=both").status().message(),
              HasSubstr("shift=both must be logits or labels"));
  EXPECT_THAT(ParseLossSpec("causal_lm:upcast=yes").status().message(),
              HasSubstr("upcast=yes must be true or false"));
  EXPECT_THAT(ParseLossSpec("causal_lm:foo=1").status().message(),
              HasSubstr("unknown setting 'foo'"));
  EXPECT_THAT(ParseLossSpec("causal_lm:chunks").status().message(),
              HasSubstr("'chunks' is not key=value"));
  EXPECT_THAT(
      ParseLossSpec("causal_lm:chunks=8,shift=labels").status().message(),
      HasSubstr("give no shift"));
  EXPECT_EQ(ParseLossSpec("vocab_parallel:world=0").status().message(),
            "'vocab_parallel:world=0': world=0 must be an integer in [1, "
            "4096]");
  EXPECT_EQ(ParseLossSpec("vocab_parallel:chunks=2").status().message(),
            "'vocab_parallel:chunks=2': unknown setting 'chunks' (world)");
  EXPECT_THAT(ParseLossSpec("causal_lm:world=2").status().message(),
              HasSubstr("unknown setting 'world'"));
}

TEST(LossSpecTest, DescriptionsNameTheImplementation) {
  EXPECT_THAT(LossDescription(*ParseLossSpec("causal_lm")),
              HasSubstr("LlamaForCausalLM"));
  EXPECT_THAT(LossDescription(*ParseLossSpec("causal_lm:shift=labels")),
              HasSubstr("ForCausalLMLoss"));
  EXPECT_THAT(LossDescription(*ParseLossSpec("causal_lm:chunks=8")),
              HasSubstr("torchtune's chunked cross-entropy over 8"));
  EXPECT_THAT(LossDescription(*ParseLossSpec("sum")), HasSubstr("out.sum()"));
  EXPECT_THAT(LossDescription(*ParseLossSpec("lm")),
              HasSubstr("BertForMaskedLM"));
  EXPECT_THAT(LossDescription(*ParseLossSpec("vocab_parallel:world=4")),
              HasSubstr("Megatron-core's vocab_parallel_cross_entropy over 4 "
                        "ranks' vocabulary slices"));
}

}  // namespace
}  // namespace torchcost
