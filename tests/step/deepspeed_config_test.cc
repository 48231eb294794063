// Tests of reading a DeepSpeed JSON config into StepConfig fields: the keys
// as deepspeed/runtime/zero/config.py and Hugging Face's Trainer
// (transformers/integrations/deepspeed.py, trainer_config_finalize: "auto"
// reduce_bucket_size = hidden_size^2) read them, and every refusal.
#include "torchcost/deepspeed_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost {
namespace {

using ::testing::ElementsAre;

Result<std::vector<std::string>> Apply(const std::string& text, StepConfig* c) {
  return ApplyDeepSpeedConfigText(text, "ds.json", c);
}

TEST(DeepSpeedConfigTest, HuggingFaceZero2OffloadWithAutoValues) {
  // The shape of Hugging Face's ds_config_zero2.json with offload.
  const std::string text = R"({
    "fp16": {"enabled": "auto"}, "bf16": {"enabled": true},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
    "zero_optimization": {
      "stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true},
      "allgather_partitions": true, "allgather_bucket_size": 2e8,
      "overlap_comm": true, "reduce_scatter": true,
      "reduce_bucket_size": "auto", "contiguous_gradients": true},
    "gradient_accumulation_steps": "auto",
    "train_micro_batch_size_per_gpu": "auto"})";
  StepConfig c;
  c.hidden_size = 4096;
  Result<std::vector<std::string>> notes = Apply(text, &c);
  ASSERT_TRUE(notes.ok()) << notes.status().message();
  EXPECT_EQ(c.shard, "zero2");
  EXPECT_EQ(c.offload, "optimizer");
  EXPECT_TRUE(c.overlap_comm);
  EXPECT_TRUE(c.contiguous_gradients);
  EXPECT_EQ(c.reduce_bucket, 4096.0 * 4096.0);
  EXPECT_EQ(c.param_dtype, "bf16");
  EXPECT_TRUE(c.master_weights);
  EXPECT_EQ(c.optimizer, "adamw");
  EXPECT_EQ(c.optimizer_impl, "fused");  // DeepSpeed's FusedAdam.
  EXPECT_THAT(*notes, ElementsAre("DeepSpeed config ds.json: not modelled: "
                                  "train_micro_batch_size_per_gpu, "
                                  "zero_optimization.allgather_bucket_size"));
  EXPECT_EQ(c.accumulate, 1);  // "auto": as given.
}

TEST(DeepSpeedConfigTest, Zero3WithParameterOffload) {
  StepConfig c;
  Result<std::vector<std::string>> notes = Apply(
      R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": 1e6,
          "offload_optimizer": {"device": "nvme"},
          "offload_param": {"device": "cpu"}},
          "optimizer": {"type": "Adam", "params": {"adam_w_mode": false}},
          "gradient_accumulation_steps": 8})",
      &c);
  ASSERT_TRUE(notes.ok()) << notes.status().message();
  EXPECT_EQ(c.shard, "zero3");
  EXPECT_EQ(c.offload, "params");
  EXPECT_EQ(c.reduce_bucket, 1e6);
  EXPECT_EQ(c.optimizer, "adam");
  EXPECT_EQ(c.accumulate, 8);
  EXPECT_TRUE(notes->empty());
}

TEST(DeepSpeedConfigTest, Zero3FetchScheduleKeys) {
  // Hugging Face's ds_config_zero3.json: "auto" prefetch is 0.9 h^2 (rounded
  // down), "auto" persistence 10 h.
  StepConfig c;
  c.hidden_size = 4096;
  Result<std::vector<std::string>> notes = Apply(
      R"({"zero_optimization": {"stage": 3,
          "stage3_prefetch_bucket_size": "auto",
          "stage3_param_persistence_threshold": "auto",
          "stage3_max_live_parameters": 1e9,
          "stage3_max_reuse_distance": 5e8}})",
      &c);
  ASSERT_TRUE(notes.ok()) << notes.status().message();
  EXPECT_EQ(c.zero3_prefetch_bucket, 15099494);  // 0.9 * 4096^2 = 15099494.4
  EXPECT_EQ(c.zero3_persistence, 40960);
  EXPECT_EQ(c.zero3_max_live, 1e9);
  EXPECT_EQ(c.zero3_max_reuse, 5e8);
  EXPECT_TRUE(notes->empty());
  // At stage 2 DeepSpeed does not read them: left as given.
  StepConfig z2;
  ASSERT_TRUE(Apply(R"({"zero_optimization": {"stage": 2,
                        "stage3_max_reuse_distance": 0}})",
                    &z2)
                  .ok());
  EXPECT_EQ(z2.zero3_max_reuse, StepConfig().zero3_max_reuse);
}

TEST(DeepSpeedConfigTest, WhatTheFileLeavesOutStaysAsGiven) {
  StepConfig c;
  c.param_dtype = "bfloat16";  // Agrees with bf16.enabled.
  c.world = 8;
  ASSERT_TRUE(Apply(R"({"bf16": {"enabled": true},
                        "zero_optimization": {"stage": 0}})",
                    &c)
                  .ok());
  EXPECT_EQ(c.shard, "none");
  EXPECT_EQ(c.param_dtype, "bf16");
  EXPECT_EQ(c.world, 8);
  EXPECT_EQ(c.reduce_bucket, StepConfig().reduce_bucket);
  EXPECT_EQ(c.optimizer, StepConfig().optimizer);
  // SGD with momentum.
  ASSERT_TRUE(Apply(R"({"optimizer": {"type": "SGD",
                        "params": {"momentum": 0.9}}})",
                    &c)
                  .ok());
  EXPECT_EQ(c.optimizer, "sgd_momentum");
  EXPECT_EQ(c.optimizer_impl, "auto");
  // torch_adam: torch's Adam, not FusedAdam.
  StepConfig t;
  ASSERT_TRUE(Apply(R"({"optimizer": {"type": "AdamW",
                        "params": {"torch_adam": true}}})",
                    &t)
                  .ok());
  EXPECT_EQ(t.optimizer_impl, "auto");
}

TEST(DeepSpeedConfigTest, ErrorsNameTheFileAndKey) {
  struct Case {
    const char* text;
    const char* error;
    void (*set)(StepConfig&);
  } cases[] = {
      {"{", "ds.json: not valid JSON", nullptr},
      {"[1]", "ds.json: expected a JSON object", nullptr},
      {R"({"zero_optimization": {"stage": 4}})",
       "ds.json: zero_optimization.stage: expected 0, 1, 2 or 3", nullptr},
      {R"({"zero_optimization": {"reduce_bucket_size": "auto"}})",
       "ds.json: zero_optimization.reduce_bucket_size: \"auto\" is "
       "hidden_size^2, and the model's hidden size is unknown: give a number",
       nullptr},
      {R"({"zero_optimization": {"reduce_bucket_size": 0}})",
       "ds.json: zero_optimization.reduce_bucket_size: expected a whole number "
       "of elements from 1 to 2^50 or \"auto\"",
       nullptr},
      {R"({"zero_optimization": {"reduce_bucket_size": 2.5}})",
       "ds.json: zero_optimization.reduce_bucket_size: expected a whole number "
       "of elements from 1 to 2^50 or \"auto\"",
       nullptr},
      {R"({"zero_optimization": {"stage": 3,
          "stage3_param_persistence_threshold": "auto"}})",
       "ds.json: zero_optimization.stage3_param_persistence_threshold: "
       "\"auto\" is 10 hidden_size, and the model's hidden size is unknown: "
       "give a number",
       nullptr},
      {R"({"zero_optimization": {"stage": 3,
          "stage3_max_live_parameters": -1}})",
       "ds.json: zero_optimization.stage3_max_live_parameters: expected a "
       "whole number of elements from 0 to 2^50 or \"auto\"",
       nullptr},
      {R"({"zero_optimization": {"stage": 3,
          "stage3_max_reuse_distance": 0}})",
       "StepConfig.zero3_max_reuse 1000 disagrees with ds.json: "
       "zero_optimization.stage3_max_reuse_distance (0)",
       [](StepConfig& c) { c.zero3_max_reuse = 1000; }},
      {R"({"zero_optimization": {"overlap_comm": "yes"}})",
       "ds.json: zero_optimization.overlap_comm: expected true, false or "
       "\"auto\"",
       nullptr},
      {R"({"zero_optimization": {"stage": 2,
          "offload_optimizer": {"device": "gpu"}}})",
       "ds.json: zero_optimization.offload_optimizer.device: expected "
       "\"cpu\", \"nvme\" or \"none\"",
       nullptr},
      {R"({"zero_optimization": {"stage": 2,
          "offload_optimizer": {"device": "cpu"},
          "offload_param": {"device": "cpu"}}})",
       "ds.json: zero_optimization.offload_param: modelled with stage 3 and "
       "offload_optimizer only",
       nullptr},
      {R"({"zero_optimization": {"stage": 3,
          "offload_param": {"device": "cpu"}}})",
       "ds.json: zero_optimization.offload_param: modelled with stage 3 and "
       "offload_optimizer only",
       nullptr},
      {R"({"zero_optimization": {"stage": 1,
          "offload_optimizer": {"device": "cpu"}}})",
       "ds.json: zero_optimization.offload_optimizer: modelled with stage 2 "
       "or 3 only",
       nullptr},
      {R"({"gradient_accumulation_steps": 0})",
       "ds.json: gradient_accumulation_steps: expected a whole number from 1 "
       "to 2^20 or \"auto\"",
       nullptr},
      {R"({"gradient_accumulation_steps": 4})",
       "StepConfig.accumulate 2 disagrees with ds.json: "
       "gradient_accumulation_steps (4)",
       [](StepConfig& c) { c.accumulate = 2; }},
      {R"({"optimizer": {"type": "OneBitAdam"}})",
       "ds.json: optimizer.type: 'OneBitAdam' is not modelled (Adam, AdamW, "
       "SGD, Adagrad, Lion)",
       nullptr},
      {R"({"zero_optimization": {"stage": 2}})",
       "StepConfig.shard zero3 disagrees with ds.json: "
       "zero_optimization.stage (zero2)",
       [](StepConfig& c) { c.shard = "zero3"; }},
      {R"({"fp16": {"enabled": true}})",
       "StepConfig.param_dtype bf16 disagrees with ds.json: fp16.enabled "
       "(true)",
       [](StepConfig& c) { c.param_dtype = "bf16"; }},
      {R"({"optimizer": {"type": "AdamW"}})",
       "StepConfig.optimizer sgd disagrees with ds.json: optimizer.type "
       "(adamw)",
       [](StepConfig& c) { c.optimizer = "sgd"; }},
      {R"({"optimizer": {"type": "Adam"}})",
       "StepConfig.optimizer_impl foreach disagrees with ds.json: "
       "optimizer.type Adam (DeepSpeed's FusedAdam)",
       [](StepConfig& c) { c.optimizer_impl = "foreach"; }},
      {R"({"zero_optimization": {"stage": 2, "overlap_comm": false}})",
       "StepConfig.overlap_comm true disagrees with ds.json: "
       "zero_optimization.overlap_comm (false)",
       [](StepConfig& c) { c.overlap_comm = true; }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.text);
    StepConfig c;
    if (k.set != nullptr) k.set(c);
    Result<std::vector<std::string>> r = Apply(k.text, &c);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), k.error);
  }
  // Text starting with '{' is the config itself, named as inline.
  StepConfig c;
  Result<std::vector<std::string>> inline_text =
      ApplyDeepSpeedConfig(R"({"zero_optimization": {"stage": 4}})", &c);
  ASSERT_FALSE(inline_text.ok());
  EXPECT_EQ(inline_text.status().message(),
            "<inline DeepSpeed config>: zero_optimization.stage: expected 0, "
            "1, 2 or 3");
  ASSERT_TRUE(
      ApplyDeepSpeedConfig(R"({"zero_optimization": {"stage": 2}})", &c).ok());
  EXPECT_EQ(c.shard, "zero2");
  c = StepConfig();
  Result<std::vector<std::string>> missing =
      ApplyDeepSpeedConfig("/nonexistent/ds.json", &c);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/ds.json: cannot read the file");
}

}  // namespace
}  // namespace torchcost
