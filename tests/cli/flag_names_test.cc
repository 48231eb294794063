// Tests of the CLI's names for the library's options (src/cli/flag_names.cc):
// each StepConfig field the library names becomes the flag that sets it.
#include "cli/flag_names.h"

#include <gtest/gtest.h>

#include <string>

#include "torchcost/step.h"

namespace torchcost::cli {
namespace {

TEST(FlagNamesTest, FieldsBecomeTheirFlags) {
  struct Case {
    const char* library;
    const char* cli;
  };
  const Case kCases[] = {
      {"StepConfig.world 4 needs StepConfig.shard ddp|zero1|zero2|zero3|fsdp",
       "--world 4 needs --shard ddp|zero1|zero2|zero3|fsdp"},
      // The longest name wins: checkpoint_group is not checkpoint + "_group".
      {"StepConfig.checkpoint selective: StepConfig.checkpoint_group 2 does "
       "not apply",
       "--checkpoint selective: --checkpoint-group 2 does not apply"},
      {"StepConfig.inputs_require_grad and StepConfig.inputs",
       "--inputs-require-grad and --input"},
      // A flag that sets a field to one value.
      {"no StepConfig.accumulate or StepConfig.set_to_none=false",
       "no --accumulate or --zero-grad zeros"},
      {"StepConfig.optimizer_impl foreach: lion has no torch foreach "
       "implementation",
       "--optimizer-impl foreach: lion has no torch foreach implementation"},
      {"StepConfig.input_dtype float99: unknown dtype",
       "--dtype float99: unknown dtype"},
      {"StepConfig.bindings Q=3: unknown symbol 'Q'",
       "--set Q=3: unknown symbol 'Q'"},
      {"SweepSpec B=1:4: expected START:STOP:STEP",
       "--sweep B=1:4: expected START:STOP:STEP"},
      {"BuildNamedModel.config: unknown key", "--config: unknown key"},
      {"StepConfig.gpu a100: the time needs every symbol bound "
       "(StepConfig.bindings)",
       "--gpu a100: the time needs every symbol bound (--set)"},
      {"BuildNamedModel.name 'gptx': unknown family",
       "--model 'gptx': unknown family"},
      // Not a field: left as it is.
      {"StepConfig.nothing, StepConfig., model.StepConfig",
       "StepConfig.nothing, StepConfig., model.StepConfig"},
      {"no names here", "no names here"},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(WithFlagNames(c.library), c.cli) << c.library;
}

TEST(FlagNamesTest, TheMethodIsNamedByTheInvocation) {
  const std::string galore =
      "StepConfig.method galore:r=4 wraps StepConfig.optimizer adamw";
  EXPECT_EQ(WithFlagNames(galore), "--peft galore:r=4 wraps --optimizer adamw");
  EXPECT_EQ(WithFlagNames("StepConfig.method: no Linear",
                          {{"StepConfig.method", "--lora"}}),
            "--lora: no Linear");
  // A compare row: its label alone.
  const FlagOverrides row = {{"StepConfig.method ", ""},
                             {"StepConfig.method", "lora:r=8"}};
  EXPECT_EQ(WithFlagNames(galore, row), "galore:r=4 wraps --optimizer adamw");
  EXPECT_EQ(WithFlagNames("StepConfig.method: no Linear", row),
            "lora:r=8: no Linear");
}

// Every error CheckStepConfig gives for a flag's field comes out naming a flag.
TEST(FlagNamesTest, CheckStepConfigErrorsNameFlags) {
  StepConfig c;
  c.inputs = {"B,16"};
  c.galore = "r=4,per_layer=true";
  c.accumulate = 2;
  const Status s = CheckStepConfig(c);
  ASSERT_FALSE(s.ok());
  const std::string cli = WithFlagNames(s.message());
  EXPECT_EQ(cli.find("StepConfig."), std::string::npos) << cli;
  EXPECT_EQ(cli,
            "--galore per_layer=true frees each gradient in backward: no "
            "--accumulate or --zero-grad zeros");

  // One bad value per field the CLI sets: no library name is left.
  void (*const kBad[])(StepConfig&) = {
      [](StepConfig& c) { c.input_dtype = "x"; },
      [](StepConfig& c) { c.mode = "x"; },
      [](StepConfig& c) { c.optimizer = "x"; },
      [](StepConfig& c) { c.shard = "x"; },
      [](StepConfig& c) { c.world = 2; },
      [](StepConfig& c) { c.ddp_bucket_mib = -1; },
      [](StepConfig& c) { c.optimizer = "lion", c.optimizer_impl = "foreach"; },
      [](StepConfig& c) { c.galore = "r=4", c.master_weights = true; },
      [](StepConfig& c) { c.optimizer = "sgd", c.paged = true; },
      [](StepConfig& c) { c.state_dtype = "int8"; },
      [](StepConfig& c) { c.param_dtype = "x"; },
      [](StepConfig& c) { c.autocast = "fp16", c.device = "cpu"; },
      [](StepConfig& c) { c.loss = "x"; },
      [](StepConfig& c) { c.device = "x"; },
      [](StepConfig& c) { c.attention_backend = "x"; },
      [](StepConfig& c) { c.torch_version = "x"; },
      [](StepConfig& c) { c.accumulate = 0; },
      [](StepConfig& c) { c.freeze = {"("}; },
      [](StepConfig& c) { c.checkpoint = "("; },
      [](StepConfig& c) { c.checkpoint_group = 0; },
      [](StepConfig& c) { c.shard = "zero3", c.world = 2, c.fsdp_unit = "("; },
      [](StepConfig& c) { c.method = "x"; },
      [](StepConfig& c) { c.inputs = {"B,?"}; },
      [](StepConfig& c) {
        c.bindings = {{"Q", 1}};
      },
  };
  for (auto set : kBad) {
    StepConfig bad;
    bad.inputs = {"B,16"};
    set(bad);
    const Status st = CheckStepConfig(bad);
    ASSERT_FALSE(st.ok());
    const std::string m = WithFlagNames(st.message());
    EXPECT_EQ(m.find("StepConfig."), std::string::npos) << m;
    EXPECT_EQ(m.rfind("--", 0), 0u) << m;
  }
}

}  // namespace
}  // namespace torchcost::cli
