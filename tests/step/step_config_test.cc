// Tests of CheckStepConfig (src/step/step_config.cc): every option and every
// combination of options is one error naming StepConfig's fields, checked
// before anything runs, in AnalyzeStep too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"
#include "testing/linear_graphs.h"
#include "testing/toy_step_config.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using testing::ToyStepConfig;

using testing::BuiltinRules;
using testing::OneLinear;

// --- Errors: every option and combination, named by StepConfig's fields ----

struct BadConfig {
  const char* name;
  void (*set)(StepConfig&);
  const char* message;  // The whole message.
};

const BadConfig kBadConfigs[] = {
    {"input_dtype", [](StepConfig& c) { c.input_dtype = "float99"; },
     "StepConfig.input_dtype float99: unknown dtype 'float99'; accepted: "},
    {"mode", [](StepConfig& c) { c.mode = "eval"; },
     "StepConfig.mode: unknown mode 'eval'; expected train, infer or generate"},
    {"optimizer", [](StepConfig& c) { c.optimizer = "adamax"; },
     "StepConfig.optimizer: unknown optimizer 'adamax'"},
    {"shard", [](StepConfig& c) { c.shard = "zero4"; },
     "StepConfig.shard: unknown sharding strategy 'zero4'"},
    {"world_zero", [](StepConfig& c) { c.world = 0; },
     "StepConfig.world 0: must be at least 1"},
    {"world_without_strategy", [](StepConfig& c) { c.world = 4; },
     "StepConfig.world 4 needs StepConfig.shard ddp|zero1|zero2|zero3|fsdp"},
    {"shard_infer",
     [](StepConfig& c) {
       c.shard = "zero2";
       c.world = 2;
       c.mode = "infer";
     },
     "StepConfig.shard zero2 models a training step; it does not go with "
     "StepConfig.mode infer"},
    {"ddp_bucket", [](StepConfig& c) { c.ddp_bucket_mib = 0; },
     "StepConfig.ddp_bucket_mib: must be positive"},
    {"foreach_lion",
     [](StepConfig& c) {
       c.optimizer = "lion";
       c.optimizer_impl = "foreach";
     },
     "StepConfig.optimizer_impl foreach: lion has no torch foreach "
     "implementation"},
    {"impl_unknown", [](StepConfig& c) { c.optimizer_impl = "fast"; },
     "StepConfig.optimizer_impl 'fast': expected auto, single, foreach or "
     "fused"},
    {"foreach_shard",
     [](StepConfig& c) {
       c.optimizer_impl = "foreach";
       c.shard = "ddp";
       c.world = 2;
     },
     "StepConfig.optimizer_impl foreach with StepConfig.shard is not "
     "modelled"},
    {"galore_spec", [](StepConfig& c) { c.galore = "r=0"; },
     "StepConfig.galore: r=0 must be a positive integer"},
    {"galore_sgd",
     [](StepConfig& c) {
       c.galore = "r=4";
       c.optimizer = "sgd";
     },
     "StepConfig.galore wraps StepConfig.optimizer adamw (GaLoreAdamW) or "
     "adam8bit (GaLoreAdamW8bit); got 'sgd'"},
    {"galore_foreach",
     [](StepConfig& c) {
       c.galore = "r=4";
       c.optimizer_impl = "foreach";
     },
     "StepConfig.galore runs per parameter: no StepConfig.optimizer_impl "
     "foreach"},
    {"galore_master_weights",
     [](StepConfig& c) {
       c.galore = "r=4";
       c.master_weights = true;
     },
     "StepConfig.galore with StepConfig.shard or StepConfig.master_weights is "
     "not modelled"},
    {"galore_per_layer_accumulate",
     [](StepConfig& c) {
       c.galore = "r=4,per_layer=true";
       c.accumulate = 2;
     },
     "StepConfig.galore per_layer=true frees each gradient in backward: no "
     "StepConfig.accumulate or "
     "StepConfig.set_to_none=false"},
    {"method_galore_sgd",
     [](StepConfig& c) {
       c.method = "galore:r=4";
       c.optimizer = "sgd";
     },
     "StepConfig.method galore:r=4 wraps StepConfig.optimizer adamw "
     "(GaLoreAdamW) or adam8bit (GaLoreAdamW8bit); "
     "got 'sgd'"},
    {"paged_lion",
     [](StepConfig& c) {
       c.optimizer = "lion";
       c.paged = true;
     },
     "StepConfig.paged: paged states are modelled for adam, adamw and "
     "adam8bit"},
    // NB: each check sees the options before it: paged passes alone, the state
    // dtype then clashes.
    {"paged_state_dtype",
     [](StepConfig& c) {
       c.paged = true;
       c.state_dtype = "float32";
     },
     "StepConfig.state_dtype: paged states with a state dtype, master weights, "
     "the foreach or fused step, GaLore or sharding are not modelled"},
    {"state_dtype_int", [](StepConfig& c) { c.state_dtype = "int64"; },
     "StepConfig.state_dtype: state dtype int64 is not a float dtype"},
    {"state_dtype_adafactor",
     [](StepConfig& c) {
       c.state_dtype = "float32";
       c.optimizer = "adafactor";
     },
     "StepConfig.state_dtype: a state dtype does not apply to adafactor (its "
     "states have their own format)"},
    {"param_dtype", [](StepConfig& c) { c.param_dtype = "half-ish"; },
     "StepConfig.param_dtype: unknown dtype 'half-ish'"},
    {"autocast_float32", [](StepConfig& c) { c.autocast = "float32"; },
     "StepConfig.autocast 'float32': expected fp16 or bf16"},
    {"autocast_fp16_cpu",
     [](StepConfig& c) {
       c.autocast = "fp16";
       c.device = "cpu";
     },
     "StepConfig.autocast fp16: CPU autocast (torch 1.13) runs bfloat16 only"},
    {"loss", [](StepConfig& c) { c.loss = "hinge"; },
     "StepConfig.loss: unknown loss 'hinge'"},
    {"device", [](StepConfig& c) { c.device = "tpu"; },
     "StepConfig.device 'tpu': expected cuda or cpu"},
    {"attention_backend",
     [](StepConfig& c) { c.attention_backend = "xformers"; },
     "StepConfig.attention_backend 'xformers': expected auto, math, flash or "
     "efficient"},
    {"torch_version", [](StepConfig& c) { c.torch_version = "2.11"; },
     "StepConfig.torch_version '2.11': expected 1.13 or 2"},
    {"accumulate", [](StepConfig& c) { c.accumulate = 0; },
     "StepConfig.accumulate 0: must be at least 1"},
    {"freeze", [](StepConfig& c) { c.freeze = {"("}; },
     "StepConfig.freeze '(': not a valid regular expression ("},
    {"checkpoint_group", [](StepConfig& c) { c.checkpoint_group = 0; },
     "StepConfig.checkpoint_group 0: must be at least 1"},
    {"checkpoint_selective_group",
     [](StepConfig& c) {
       c.checkpoint = "selective";
       c.checkpoint_group = 2;
     },
     "StepConfig.checkpoint selective: StepConfig.checkpoint_group 2 does not "
     "apply (each attention core is its own "
     "segment)"},
    {"checkpoint_regex", [](StepConfig& c) { c.checkpoint = "(["; },
     "StepConfig.checkpoint '([': not a valid regular expression ("},
    {"fsdp_unit",
     [](StepConfig& c) {
       c.shard = "fsdp";
       c.world = 2;
       c.fsdp_unit = "(";
     },
     "StepConfig.fsdp_unit '(': not a regular expression ("},
    {"allocator", [](StepConfig& c) { c.allocator = "cpu"; },
     "StepConfig.allocator 'cpu': expected none or cuda"},
    {"expandable_without_allocator",
     [](StepConfig& c) { c.expandable_segments = true; },
     "StepConfig.expandable_segments sets the CUDA allocator model: it needs "
     "StepConfig.allocator cuda"},
    {"context_without_allocator",
     [](StepConfig& c) { c.cuda_context_bytes = 0; },
     "StepConfig.cuda_context_bytes sets the CUDA allocator model: it needs "
     "StepConfig.allocator cuda"},
    {"max_split_size_small",
     [](StepConfig& c) {
       c.allocator = "cuda";
       c.max_split_size_mb = 20;
     },
     "StepConfig.max_split_size_mb 20: must be more than 20 (PyTorch's limit), "
     "or 0 for none"},
    {"context_negative",
     [](StepConfig& c) {
       c.allocator = "cuda";
       c.cuda_context_bytes = -2;
     },
     "StepConfig.cuda_context_bytes -2: must be at least 0 (-1: the default)"},
    {"allocator_shard",
     [](StepConfig& c) {
       c.allocator = "cuda";
       c.shard = "ddp";
       c.world = 2;
     },
     "StepConfig.allocator cuda with StepConfig.shard is not modelled"},
    {"offload_unknown", [](StepConfig& c) { c.offload = "activations"; },
     "StepConfig.offload 'activations': expected none, optimizer or "
     "params"},
    {"offload_params_without_zero3",
     [](StepConfig& c) {
       c.offload = "params";
       c.shard = "zero2";
       c.world = 2;
     },
     "StepConfig.offload params needs StepConfig.shard zero3 or fsdp"},
    {"offload_params_and_paged",
     [](StepConfig& c) {
       c.optimizer = "adam";
       c.offload = "params";
       c.shard = "fsdp";
       c.paged = true;
     },
     "StepConfig.offload params and StepConfig.paged both place the "
     "optimizer states on the host: give one"},
    {"offload_without_zero2",
     [](StepConfig& c) {
       c.offload = "optimizer";
       c.shard = "ddp";
       c.world = 2;
     },
     "StepConfig.offload optimizer (ZeRO-Offload) needs StepConfig.shard "
     "zero2 or zero3"},
    {"offload_and_paged",
     [](StepConfig& c) {
       c.optimizer = "adam";
       c.offload = "optimizer";
       c.shard = "zero2";
       c.world = 2;
       c.paged = true;
     },
     "StepConfig.offload optimizer and StepConfig.paged both place the "
     "optimizer states on the host: give one"},
    {"fused_lion",
     [](StepConfig& c) {
       c.optimizer = "lion";
       c.optimizer_impl = "fused";
     },
     "StepConfig.optimizer_impl fused: lion has no torch fused implementation "
     "(adam, adamw, sgd, adagrad)"},
    {"reduce_bucket_zero",
     [](StepConfig& c) {
       c.shard = "zero2";
       c.reduce_bucket = 0;
     },
     "StepConfig.reduce_bucket: must be a whole number of elements from 1 to "
     "2^50"},
    {"reduce_bucket_fraction",
     [](StepConfig& c) {
       c.shard = "zero3";
       c.reduce_bucket = 2.5;
     },
     "StepConfig.reduce_bucket: must be a whole number of elements from 1 to "
     "2^50"},
    {"reduce_bucket_huge",
     [](StepConfig& c) {
       c.shard = "zero2";
       c.reduce_bucket = 2e15;  // Past 2^50 = 1.13e15.
     },
     "StepConfig.reduce_bucket: must be a whole number of elements from 1 to "
     "2^50"},
    {"reduce_bucket_without_zero", [](StepConfig& c) { c.reduce_bucket = 1e6; },
     "StepConfig.reduce_bucket is DeepSpeed's: it needs StepConfig.shard "
     "zero1|zero2|zero3"},
    {"overlap_comm_with_fsdp",
     [](StepConfig& c) {
       c.shard = "fsdp";
       c.overlap_comm = true;
     },
     "StepConfig.overlap_comm is DeepSpeed's: it needs StepConfig.shard "
     "zero1|zero2|zero3"},
    {"fsdp_sharding_unknown",
     [](StepConfig& c) {
       c.shard = "fsdp";
       c.fsdp_sharding = "no_shard";
     },
     "StepConfig.fsdp_sharding 'no_shard': expected full_shard, "
     "shard_grad_op, hybrid_shard or hybrid_shard_zero2"},
    {"fsdp_sharding_with_zero3",
     [](StepConfig& c) {
       c.shard = "zero3";
       c.fsdp_sharding = "shard_grad_op";
     },
     "StepConfig.fsdp_sharding shard_grad_op needs StepConfig.shard fsdp"},
    {"hybrid_without_group",
     [](StepConfig& c) {
       c.shard = "fsdp";
       c.fsdp_sharding = "hybrid_shard";
     },
     "StepConfig.fsdp_sharding hybrid_shard needs StepConfig.shard_group "
     "(ranks per group)"},
    {"group_not_dividing_world",
     [](StepConfig& c) {
       c.shard = "fsdp";
       c.world = 6;
       c.fsdp_sharding = "hybrid_shard_zero2";
       c.shard_group = 4;
     },
     "StepConfig.shard_group 4: must divide StepConfig.world 6"},
    {"group_without_hybrid",
     [](StepConfig& c) {
       c.shard = "fsdp";
       c.shard_group = 2;
     },
     "StepConfig.shard_group needs StepConfig.fsdp_sharding hybrid_shard or "
     "hybrid_shard_zero2"},
    {"zero3_max_reuse_with_zero2",
     [](StepConfig& c) {
       c.shard = "zero2";
       c.zero3_max_reuse = 0;
     },
     "StepConfig.zero3_max_reuse is DeepSpeed ZeRO-3's: it needs "
     "StepConfig.shard zero3"},
    {"zero3_prefetch_bucket_negative",
     [](StepConfig& c) {
       c.shard = "zero3";
       c.zero3_prefetch_bucket = -1;
     },
     "StepConfig.zero3_prefetch_bucket: must be a whole number of elements "
     "from 0 to 2^50"},
    {"zero3_persistence_fraction",
     [](StepConfig& c) {
       c.shard = "zero3";
       c.zero3_persistence = 0.5;
     },
     "StepConfig.zero3_persistence: must be a whole number of elements from 0 "
     "to 2^50"},
    {"contiguous_gradients_with_ddp",
     [](StepConfig& c) {
       c.shard = "ddp";
       c.contiguous_gradients = false;
     },
     "StepConfig.contiguous_gradients=false is DeepSpeed's: it needs "
     "StepConfig.shard zero1|zero2|zero3"},
    {"offload_without_contiguous_gradients",
     [](StepConfig& c) {
       c.optimizer = "adam";
       c.offload = "optimizer";
       c.shard = "zero2";
       c.contiguous_gradients = false;
     },
     "StepConfig.contiguous_gradients=false: DeepSpeed turns contiguous "
     "gradients on with StepConfig.offload optimizer at zero2"},
    {"network_without_gpu", [](StepConfig& c) { c.network_gbs = 50; },
     "StepConfig.network_gbs times the collectives: it needs StepConfig.gpu "
     "or StepConfig.gpu_file"},
    {"node_gpus_without_gpu", [](StepConfig& c) { c.node_gpus = 4; },
     "StepConfig.node_gpus times the collectives: it needs StepConfig.gpu or "
     "StepConfig.gpu_file"},
    {"network_negative",
     [](StepConfig& c) {
       c.gpu = "H100-SXM";
       c.network_gbs = -1;
     },
     "StepConfig.network_gbs: must be a bandwidth >= 0 (GB/s)"},
    {"node_gpus_zero",
     [](StepConfig& c) {
       c.gpu = "H100-SXM";
       c.node_gpus = 0;
     },
     "StepConfig.node_gpus 0: must be at least 1"},
    {"budget_negative", [](StepConfig& c) { c.budget_bytes = -1; },
     "StepConfig.budget_bytes -1: must be positive (0: none)"},
    {"budget_symbol_without_budget",
     [](StepConfig& c) { c.budget_symbol = "S"; },
     "StepConfig.budget_symbol S is searched against a budget: it needs "
     "StepConfig.budget_bytes"},
    {"budget_symbol_of_generation",
     [](StepConfig& c) {
       c.mode = "generate";
       c.budget_bytes = 1 << 30;
       c.budget_symbol = "H";
     },
     "StepConfig.budget_symbol 'H': a generation searches B, S or T"},
    {"cache_dtype", [](StepConfig& c) { c.cache_dtype = "int3"; },
     "StepConfig.cache_dtype 'int3': expected fp32, bf16, fp16 or fp8"},
    {"cache_dtype_without_generate",
     [](StepConfig& c) { c.cache_dtype = "fp8"; },
     "StepConfig.cache_dtype fp8 is the KV cache's dtype: it needs "
     "StepConfig.mode generate"},
    {"method", [](StepConfig& c) { c.method = "prefix:r=8"; },
     "StepConfig.method: 'prefix:r=8': unknown method 'prefix'"},
    {"inputs_empty_dim", [](StepConfig& c) { c.inputs = {"1,,16"}; },
     "StepConfig.inputs '1,,16': dim 1 '' is not an integer or a symbol name"},
    {"inputs_bad_dim", [](StepConfig& c) { c.inputs = {"B,x?"}; },
     "StepConfig.inputs 'B,x?': dim 1 'x?' is not an integer or a symbol name"},
    {"inputs_zero", [](StepConfig& c) { c.inputs = {"0,16"}; },
     "StepConfig.inputs: input '0,16': dim '0' must be a positive integer"},
    {"bindings_unknown",
     [](StepConfig& c) {
       c.bindings = {{"Q", 3}};
     },
     "StepConfig.bindings Q=3: unknown symbol 'Q'; symbols: B"},
    {"bindings_range",
     [](StepConfig& c) {
       c.bindings = {{"B", 0}};
     },
     "StepConfig.bindings B=0: value out of the range of B, [1, inf]"},
    {"bindings_bound",
     [](StepConfig& c) {
       c.symbol_bounds = {{"B", 4}};
       c.bindings = {{"B", 5}};
     },
     "StepConfig.bindings B=5: value out of the range of B, [1, 4]"},
};

TEST(StepConfigTest, EachBadOptionIsOneErrorNamingStepConfigFields) {
  for (const BadConfig& bad : kBadConfigs) {
    SCOPED_TRACE(bad.name);
    StepConfig c = ToyStepConfig();
    bad.set(c);
    const Status s = CheckStepConfig(c);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message().rfind(bad.message, 0), 0u) << s.message();
    EXPECT_EQ(s.message().find("--"), std::string::npos) << s.message();
    // AnalyzeStep checks the same, before anything runs.
    StepStage stage = StepStage::kAnalysis;
    Result<StepAnalysis> r =
        AnalyzeStep(OneLinear(), BuiltinRules(), c, &stage);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), s.message());
    EXPECT_TRUE(stage == StepStage::kOptions || stage == StepStage::kInputs)
        << StepStageName(stage);
  }
}

TEST(StepConfigTest, DefaultsAndGoodCombinationsPass) {
  EXPECT_TRUE(CheckStepConfig(StepConfig()).ok());
  StepConfig c = ToyStepConfig();
  c.shard = "zero3";
  c.world = 8;
  c.checkpoint = "blocks";
  c.autocast = "bf16";
  c.device = "cpu";
  c.galore = "";
  c.state_dtype = "bf16";
  c.bindings = {{"B", 4}};
  EXPECT_TRUE(CheckStepConfig(c).ok()) << CheckStepConfig(c).message();
  StepConfig a = ToyStepConfig();
  a.allocator = "cuda";
  a.max_split_size_mb = 64;
  a.expandable_segments = true;
  a.cuda_context_bytes = 0;
  EXPECT_TRUE(CheckStepConfig(a).ok()) << CheckStepConfig(a).message();
}

// StepConfig::optimizer_impl "auto" is torch's own default
// (torch/optim/optimizer.py, _default_to_fused_or_foreach): foreach for torch
// 2.x's optimizers on CUDA; the single-tensor loop on torch 1.13 (its
// foreach=None means False), on the CPU and for optimizers outside torch.optim;
// single with a note where the foreach step is not modelled.
TEST(StepConfigTest, AutoImplIsTorchsDefault) {
  struct Case {
    const char* name;
    void (*set)(StepConfig&);
    bool foreach;
    bool note;
  };
  const Case cases[] = {
      {"torch2_cuda", [](StepConfig&) {}, true, false},
      {"sgd_momentum", [](StepConfig& c) { c.optimizer = "sgd_momentum"; },
       true, false},
      {"torch113", [](StepConfig& c) { c.torch_version = "1.13"; }, false,
       false},
      {"cpu", [](StepConfig& c) { c.device = "cpu"; }, false, false},
      {"lion", [](StepConfig& c) { c.optimizer = "lion"; }, false, false},
      {"paged",
       [](StepConfig& c) {
         c.optimizer = "adam";
         c.paged = true;
       },
       false, false},
      {"infer", [](StepConfig& c) { c.mode = "infer"; }, false, false},
      {"single", [](StepConfig& c) { c.optimizer_impl = "single"; }, false,
       false},
      {"ddp",
       [](StepConfig& c) {
         c.shard = "ddp";
         c.world = 2;
       },
       false, true},
      {"master_weights",
       [](StepConfig& c) {
         c.param_dtype = "bf16";
         c.master_weights = true;
       },
       false, true},
      {"state_dtype", [](StepConfig& c) { c.state_dtype = "bf16"; }, false,
       true},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    StepConfig c = ToyStepConfig();
    c.bindings = {{"B", 2}};
    k.set(c);
    Result<StepAnalysis> r = AnalyzeStep(OneLinear(), BuiltinRules(), c);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->report.training.foreach, k.foreach);
    bool noted = false;
    for (const Diagnostic& d : r->report.diagnostics)
      noted |= d.message.find("foreach step, not modelled with") !=
               std::string::npos;
    EXPECT_EQ(noted, k.note);
  }
  // GaLore runs its own per-parameter loop: auto is no clash, whether GaLore
  // is given by its settings or as the fine-tuning method.
  StepConfig g = ToyStepConfig();
  g.galore = "r=4";
  EXPECT_TRUE(CheckStepConfig(g).ok()) << CheckStepConfig(g).message();
  StepConfig m = ToyStepConfig();
  m.method = "galore:r=4";
  EXPECT_TRUE(CheckStepConfig(m).ok()) << CheckStepConfig(m).message();
}

}  // namespace
}  // namespace torchcost
