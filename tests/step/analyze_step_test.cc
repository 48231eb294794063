// Tests of AnalyzeStep (src/step/analyze_step.cc): the stage and option each
// error names, the stages' order, strict mode as a status, and results equal
// to the stages called by hand in the order the CLI called them before the
// pipeline existed (src/cli/driver.cc at 03db8a9: method, loss, autocast,
// analysis). The options' own checks: step_config_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "testing/built_models.h"
#include "testing/graph_builder.h"
#include "testing/linear_graphs.h"
#include "testing/timeline.h"
#include "testing/toy_step_config.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/builder.h"
#include "torchcost/families.h"
#include "torchcost/galore.h"
#include "torchcost/loss.h"
#include "torchcost/method.h"
#include "torchcost/report.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using testing::ToyStepConfig;

using testing::BuiltinRules;
using testing::GraphBuilder;
using ::testing::HasSubstr;
using testing::TwoLinears;

// TwoLinears with an op no rule covers between the layers.
ir::Graph WithUnknownOp() {
  GraphBuilder b;
  int x = b.Input();
  int wq = b.Param("q_proj.weight", {12, 16});
  b.Scope("q_proj", "Linear");
  int h = b.One("aten::linear", {x, wq, b.None()}, {"input", "weight", "bias"});
  b.Scope("", "Net");
  b.Output(b.One("mylib::frobnicate", {h}, {"self"}));
  return b.graph();
}

TEST(AnalyzeStepTest, StageErrorsNameTheStageAndTheOption) {
  StepStage stage = StepStage::kOptions;
  StepConfig c = ToyStepConfig();
  c.method = "lora:targets=k_proj";
  Result<StepAnalysis> r = AnalyzeStep(TwoLinears(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(stage, StepStage::kMethod);
  EXPECT_THAT(r.status().message(), HasSubstr("StepConfig.method: "));

  c = ToyStepConfig();
  c.loss = "causal_lm";
  r = AnalyzeStep(TwoLinears(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(stage, StepStage::kLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("StepConfig.loss causal_lm: "));
  EXPECT_THAT(r.status().message(), HasSubstr("needs logits [B, S, V]"));

  c = ToyStepConfig();
  c.inputs = {"B,16", "B,16"};
  r = AnalyzeStep(TwoLinears(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(stage, StepStage::kAnalysis);
  EXPECT_THAT(
      r.status().message(),
      HasSubstr(
          "the model takes 1 tensor input but 2 StepConfig.inputs were given"));

  // A wrong-rank input is a shape error of a node: the inputs do not fit the
  // model.
  c = ToyStepConfig();
  c.inputs = {"B,15"};
  r = AnalyzeStep(TwoLinears(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(stage, StepStage::kAnalysis);

  c = ToyStepConfig();
  c.budget_bytes = 1 << 20;
  c.budget_symbol = "S";
  r = AnalyzeStep(TwoLinears(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(stage, StepStage::kInputs);
  EXPECT_EQ(r.status().message(),
            "StepConfig.budget_symbol 'S' is not a symbol of the inputs (B)");

  c = ToyStepConfig();
  c.checkpoint = "decoder";
  r = AnalyzeStep(TwoLinears(), BuiltinRules(), c, &stage);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("StepConfig.checkpoint 'decoder': matches no module"));
}

// --- Strict mode: a status of the result, from one lenient analysis ---------

TEST(AnalyzeStepTest, StrictFailureIsAStatusWithTheWholeReport) {
  StepConfig c = ToyStepConfig();
  c.strict = true;
  Result<StepAnalysis> r = AnalyzeStep(WithUnknownOp(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->strict.code(), Status::Code::kUnimplemented);
  EXPECT_EQ(r->strict.message(),
            "test.pt: 1 operators without rules: mylib::frobnicate (x1)");
  ASSERT_EQ(r->report.unknown_ops.size(), 1u);
  // The report is complete: the linear's forward FLOPs, 2 * B * 16 * 12.
  EXPECT_EQ(r->report.flops.ToString(), "384*B");
  c.strict = false;
  r = AnalyzeStep(WithUnknownOp(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->strict.ok());
  EXPECT_EQ(r->report.unknown_ops.size(), 1u);
}

// --- Order: dtypes, method, GaLore, loss, autocast -------------------------

TEST(AnalyzeStepTest, DtypesBeforeTheMethodKeepAdaptersInFloat32) {
  StepConfig c = ToyStepConfig();
  c.param_dtype = "bf16";
  c.method = "lora:r=4,targets=q_proj";
  Result<StepAnalysis> r = AnalyzeStep(TwoLinears(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const ir::TensorEntry& p : r->graph.params) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.dtype, p.name.find("lora_") != std::string::npos
                           ? DType::kFloat32
                           : DType::kBFloat16);
  }
}

// The report names the parameters' dtype, which the step converts before the
// analysis: bf16 parameters train in "bf16" (the --json training.precision).
TEST(AnalyzeStepTest, PrecisionNamesTheParameterDtype) {
  struct Case {
    const char* param_dtype;
    const char* autocast;
    const char* precision;
  };
  const Case kCases[] = {
      {"", "", "fp32"},           {"float32", "", "fp32"},
      {"bf16", "", "bf16"},       {"fp16", "", "fp16"},
      {"float64", "", "float64"}, {"", "bf16", "bf16-mixed"},
  };
  for (const Case& k : kCases) {
    SCOPED_TRACE(std::string(k.param_dtype) + " / " + k.autocast);
    StepConfig c = ToyStepConfig();
    c.param_dtype = k.param_dtype;
    c.autocast = k.autocast;
    Result<StepAnalysis> r = AnalyzeStep(TwoLinears(), BuiltinRules(), c);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->report.training.precision, k.precision);
    EXPECT_THAT(
        RenderJson(r->graph, r->report, r->bindings),
        HasSubstr(std::string("\"precision\": \"") + k.precision + "\""));
  }
}

TEST(AnalyzeStepTest, LoraThenGaloreProjectsTheAdaptersNotTheFrozenBase) {
  StepConfig c = ToyStepConfig();
  c.method = "lora:r=4,targets=q_proj";
  c.galore = "r=2,targets=q_proj";
  Result<StepAnalysis> r = AnalyzeStep(TwoLinears(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TrainingReport& t = r->report.training;
  ASSERT_TRUE(t.galore.has_value());
  // The adapters of q_proj: A [4, 16] and B [12, 4]; q_proj.weight [12, 16] is
  // frozen.
  const int64_t adapters = 4 * 16 + 12 * 4;
  EXPECT_EQ(r->report.trainable_params, adapters);
  EXPECT_EQ(t.galore_params, adapters);
  // GaLore's own method wins over StepConfig.galore.
  c.method = "galore:r=2,targets=o_proj";
  r = AnalyzeStep(TwoLinears(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->report.training.galore_params, 16 * 12);
}

TEST(AnalyzeStepTest, AdamwStatesOfTheAdaptersOnly) {
  StepConfig c = ToyStepConfig();
  c.method = "lora:r=4,targets=q_proj";
  c.bindings = {{"B", 5}};
  Result<StepAnalysis> r = AnalyzeStep(TwoLinears(), BuiltinRules(), c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const PeakInfo peak = EvaluatePeak(r->report.training, r->bindings);
  ASSERT_TRUE(peak.decided);
  // AdamW keeps exp_avg and exp_avg_sq in float32 for each trainable element,
  // and (torch 1.13) a float32 `step` tensor per parameter: 2 adapters.
  const int64_t adapters = 4 * 16 + 12 * 4;
  EXPECT_EQ(peak.category_max[testing::kOpt].ToString(),
            std::to_string(2 * 4 * adapters + 2 * 4));
  EXPECT_EQ(r->bindings.at("B"), 5);
}

// --- Equal to the stages called by hand ------------------------------------

// The old CLI's sequence, with its options set field by field.
struct Manual {
  AnalysisOptions options;
  std::string method;  // ParseMethodSpec's text, or empty.
  ir::Graph graph;
};

Report RunManual(Manual m, sym::Context& ctx) {
  const RuleSet& rules = BuiltinRules();
  // The precision the report names: the parameters' dtype.
  const AnalysisOptions named = m.options;
  if (m.options.param_dtype != DType::kUnknown) {
    for (auto* table : {&m.graph.params, &m.graph.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = m.options.param_dtype;
      }
    }
    m.options.param_dtype = DType::kUnknown;
  }
  ir::Graph g = m.graph;
  if (!m.method.empty()) {
    Result<MethodSpec> spec = ParseMethodSpec(m.method);
    EXPECT_TRUE(spec.ok());
    g = std::move(ApplyMethod(g, *spec)).value();
    if (spec->kind == MethodSpec::Kind::kGalore) {
      m.options.training.galore = *ParseGaloreConfig(spec->settings);
    }
  }
  if (LossAppendsOps(m.options.training.loss) &&
      m.options.training.mode == StepMode::kTrain) {
    Result<ir::Graph> l = ApplyLoss(g, rules, ctx, &m.options);
    EXPECT_TRUE(l.ok()) << l.status().message();
    g = std::move(l).value();
  }
  if (m.options.autocast != DType::kUnknown) {
    Result<ir::Graph> a = ApplyAutocast(g, rules, ctx, m.options);
    EXPECT_TRUE(a.ok()) << a.status().message();
    g = std::move(a).value();
  }
  Result<Report> r = Analyze(g, rules, ctx, m.options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok()) r->training.precision = PrecisionName(named);
  return std::move(r).value();
}

// Expects `a` and `b` to agree on every total and on the peak at `bindings`.
void ExpectSameReport(const Report& a, const Report& b,
                      const sym::Bindings& bindings) {
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.trainable_params, b.trainable_params);
  EXPECT_EQ(a.nodes.size(), b.nodes.size());
  EXPECT_EQ(a.flops.ToString(), b.flops.ToString());
  EXPECT_EQ(a.macs.ToString(), b.macs.ToString());
  EXPECT_EQ(a.training.flops_backward.ToString(),
            b.training.flops_backward.ToString());
  EXPECT_EQ(a.training.flops_step.ToString(), b.training.flops_step.ToString());
  EXPECT_EQ(a.training.saved_bytes.ToString(),
            b.training.saved_bytes.ToString());
  EXPECT_EQ(a.training.precision, b.training.precision);
  EXPECT_EQ(a.training.loss, b.training.loss);
  EXPECT_EQ(a.training.galore_params, b.training.galore_params);
  EXPECT_EQ(a.training.timeline.size(), b.training.timeline.size());
  ASSERT_EQ(a.diagnostics.size(), b.diagnostics.size());
  for (size_t i = 0; i < a.diagnostics.size(); ++i)
    EXPECT_EQ(a.diagnostics[i].message, b.diagnostics[i].message);
  ASSERT_EQ(a.unknown_ops.size(), b.unknown_ops.size());
  EXPECT_EQ(a.assumptions, b.assumptions);
  const PeakInfo pa = EvaluatePeak(a.training, bindings);
  const PeakInfo pb = EvaluatePeak(b.training, bindings);
  EXPECT_EQ(pa.peak.ToString(), pb.peak.ToString());
  for (int k = 0; k < kNumMemCategories; ++k)
    EXPECT_EQ(pa.at_peak[k].ToString(), pb.at_peak[k].ToString());
}

constexpr const char* kLlama =
    "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256";

struct Equivalence {
  const char* name;
  const char* family;
  const char* family_config;
  void (*set)(StepConfig&, AnalysisOptions&, std::string&);
};

const Equivalence kEquivalences[] = {
    {"llama_full_adamw_causal_lm", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string&) {
       c.loss = "causal_lm";
       o.training.loss = *ParseLossSpec("causal_lm");
       // torch 2.x's default on CUDA.
       c.optimizer_impl = "auto";
       o.training.foreach = true;
     }},
    {"llama_bf16_lora_flash", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string& method) {
       c.loss = "causal_lm";
       c.method = method = "lora:r=8,targets=q_proj|v_proj";
       c.attention_backend = o.attention_backend = "flash";
       c.param_dtype = "bf16";
       o.param_dtype = DType::kBFloat16;
       o.training.loss = *ParseLossSpec("causal_lm");
     }},
    {"llama_lora_galore_8bit", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string& method) {
       c.method = method = "lora:r=8,targets=all-linear";
       c.galore = "r=4,targets=lora";
       c.optimizer = "adam8bit";
       o.training.optimizer = OptimizerKind::kAdam8bit;
       o.training.galore = *ParseGaloreConfig("r=4,targets=lora");
       o.training.galore->eight_bit = true;
     }},
    {"llama_autocast_fp16_chunked_loss", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string&) {
       c.autocast = "fp16";
       c.loss = "causal_lm:chunks=4";
       o.autocast = DType::kFloat16;
       o.training.grad_scaler = true;
       o.training.loss = *ParseLossSpec("causal_lm:chunks=4");
     }},
    {"llama_checkpoint_zero3", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string&) {
       c.checkpoint = o.training.checkpoint = "blocks";
       c.shard = "zero3";
       c.world = 4;
       o.training.sharding.strategy = ShardStrategy::kZero3;
       o.training.sharding.world = 4;
     }},
    {"llama_qlora_paged", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string& method) {
       c.method = method = "qlora:r=16";
       c.optimizer = "adam8bit";
       c.paged = true;
       o.training.optimizer = OptimizerKind::kAdam8bit;
       o.training.paged = true;
     }},
    {"llama_infer", "llama", kLlama,
     [](StepConfig& c, AnalysisOptions& o, std::string&) {
       c.mode = "infer";
       o.training.mode = StepMode::kInfer;
     }},
    {"gpt2_dora_accumulate_zeros_sgd", "gpt2",
     "layers=2,hidden=64,heads=4,vocab=512,context=128",
     [](StepConfig& c, AnalysisOptions& o, std::string& method) {
       c.method = method = "dora:r=4,targets=c_attn";
       c.optimizer = "sgd_momentum";
       c.accumulate = o.training.accumulate = 4;
       c.set_to_none = o.training.set_to_none = false;
       o.training.optimizer = OptimizerKind::kSgdMomentum;
     }},
    {"vit_mse_flash_unread", "vit",
     "image_size=32,patch=8,layers=2,hidden=64,heads=4,mlp=128,classes=10",
     [](StepConfig& c, AnalysisOptions& o, std::string&) {
       c.loss = "mse";
       c.attention_backend = o.attention_backend = "flash";
       o.training.loss = *ParseLossSpec("mse");
     }},
    {"vit_cross_entropy_autocast_bf16_cpu", "vit",
     "image_size=32,patch=8,layers=2,hidden=64,heads=4,mlp=128,classes=10",
     [](StepConfig& c, AnalysisOptions& o, std::string&) {
       c.loss = "cross_entropy";
       c.autocast = "bf16";
       c.device = o.device = "cpu";
       o.autocast = DType::kBFloat16;
       o.training.loss = *ParseLossSpec("cross_entropy");
     }},
};

TEST(StepConfigForTest, TheBuiltModelsInputsBoundsAndLoss) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "gpt2", "layers=1,hidden=64,heads=4,vocab=512,context=128");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const StepConfig c = StepConfigFor(*m);
  // GPT-2 reads token ids [B, S] with learned positions: S <= context
  // (n_positions).
  EXPECT_EQ(c.inputs, std::vector<std::string>{"B,S:int64"});
  ASSERT_EQ(c.symbol_bounds.size(), 1u);
  EXPECT_EQ(c.symbol_bounds[0], (std::pair<std::string, int64_t>{"S", 128}));
  EXPECT_EQ(c.loss, "causal_lm");
  EXPECT_EQ(c.optimizer, StepConfig().optimizer);
}

TEST(AnalyzeStepTest, EqualsTheStagesCalledByHand) {
  for (const Equivalence& e : kEquivalences) {
    SCOPED_TRACE(e.name);
    Result<builder::BuiltModel> m =
        builder::BuildNamedModel(e.family, e.family_config);
    ASSERT_TRUE(m.ok()) << m.status().message();
    StepConfig config = StepConfigFor(*m);
    // As the manual path's defaults; each case sets its own.
    config.loss = "sum";
    config.optimizer_impl = "single";
    Manual manual;
    manual.graph = m->graph;
    e.set(config, manual.options, manual.method);
    sym::Context ctx;
    for (const builder::InputDecl& in : m->inputs) {
      manual.options.inputs.push_back(
          {builder::ResolveShape(*m, in, ctx), in.dtype});
    }
    const Report expected = RunManual(manual, ctx);
    Result<StepAnalysis> got = AnalyzeStep(m->graph, BuiltinRules(), config);
    ASSERT_TRUE(got.ok()) << got.status().message();
    const sym::Bindings at = {{"B", 2}, {"S", 16}};
    ExpectSameReport(got->report, expected, at);
    // The result stands alone: the JSON renders from its own parts.
    const std::string json = RenderJson(got->graph, got->report, at);
    EXPECT_THAT(json, HasSubstr("\"flops\""));
  }
}

TEST(AnalyzeStepTest, TheResultOutlivesTheInputsAndMoves) {
  StepAnalysis kept;
  {
    ir::Graph g = TwoLinears();
    StepConfig c = ToyStepConfig();
    c.loss = "mse";
    Result<StepAnalysis> r = AnalyzeStep(g, BuiltinRules(), c);
    ASSERT_TRUE(r.ok()) << r.status().message();
    kept = std::move(r).value();
  }
  // The loss's target became an input: x [B, 16] and the target [B, 16].
  ASSERT_EQ(kept.options.inputs.size(), 2u);
  EXPECT_EQ(kept.graph.inputs.size(), 2u);
  // Forward: two linears (2*B*16*12 + 2*B*12*16) plus the loss's elementwise
  // ops.
  const Result<int64_t> flops = sym::Evaluate(kept.report.flops, {{"B", 3}});
  ASSERT_TRUE(flops.ok());
  EXPECT_GE(*flops, 2 * 3 * 16 * 12 * 2);
  EXPECT_EQ(kept.report.training.loss.rfind("mse", 0), 0u)
      << kept.report.training.loss;
}

// --- The CUDA allocator model's input: the step's allocations ---------------

// Replaying StepConfig.allocator cuda's recorded allocations at their exact
// bytes reproduces the timeline's peak: the allocator model sees every
// allocation and free the simulation makes, and no moment the timeline misses
// rises above its peak. The allocator's allocated peak is at least that
// (blocks are rounded up) and at most reserved.
TEST(AnalyzeStepTest, RecordedAllocationsReproduceTheTimelinePeak) {
  struct Case {
    const char* name;
    const char* family;
    const char* config;
    void (*set)(StepConfig&);
  };
  const char* kGpt2 = "layers=2,hidden=64,heads=4,vocab=512,context=128";
  const Case cases[] = {
      {"adamw", "gpt2", kGpt2, [](StepConfig&) {}},
      {"foreach_fp16_scaler", "gpt2", kGpt2,
       [](StepConfig& c) {
         c.optimizer_impl = "foreach";
         c.autocast = "fp16";
       }},
      {"checkpoint_accumulate_sgd", "gpt2", kGpt2,
       [](StepConfig& c) {
         c.checkpoint = "blocks";
         c.accumulate = 2;
         c.optimizer = "sgd_momentum";
       }},
      {"galore_per_layer", "llama",
       "layers=2,hidden=64,heads=4,kv_heads=4,intermediate=128,vocab=256",
       [](StepConfig& c) { c.galore = "r=8,targets=proj,per_layer=true"; }},
      {"adam8bit_lora", "llama",
       "layers=2,hidden=64,heads=4,kv_heads=4,intermediate=128,vocab=256",
       [](StepConfig& c) {
         c.method = "lora:r=4";
         c.optimizer = "adam8bit";
       }},
      {"infer", "gpt2", kGpt2, [](StepConfig& c) { c.mode = "infer"; }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    Result<builder::BuiltModel> m =
        builder::BuildNamedModel(k.family, k.config);
    ASSERT_TRUE(m.ok()) << m.status().message();
    StepConfig c = StepConfigFor(*m);
    c.bindings = {{"B", 2}, {"S", 16}};
    c.allocator = "cuda";
    k.set(c);
    Result<StepAnalysis> r =
        AnalyzeStep(std::move(m->graph), BuiltinRules(), c);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const TrainingReport& tr = r->report.training;
    ASSERT_FALSE(tr.allocations.empty());
    std::map<int, int64_t> live;
    int64_t now = 0, most = 0;
    for (const AllocationEvent& e : tr.allocations) {
      if (e.alloc) {
        Result<int64_t> v = sym::Evaluate(e.bytes, r->bindings);
        ASSERT_TRUE(v.ok());
        ASSERT_EQ(live.count(e.id), 0u) << "allocated twice: " << e.id;
        live[e.id] = *v;
        now += *v;
        most = std::max(most, now);
      } else {
        ASSERT_EQ(live.count(e.id), 1u) << "freed but not live: " << e.id;
        now -= live[e.id];
        live.erase(e.id);
      }
    }
    const PeakInfo peak = EvaluatePeak(tr, r->bindings);
    ASSERT_TRUE(peak.decided);
    EXPECT_EQ(most, *peak.peak.AsConstant());
    const AllocatorPeak a = EvaluateAllocator(tr, r->bindings);
    ASSERT_TRUE(a.error.empty()) << a.error;
    EXPECT_GE(a.allocated_peak, most);
    EXPECT_GE(a.reserved_peak, a.allocated_peak);
    EXPECT_EQ(a.context_bytes, DefaultCudaContextBytes());
    EXPECT_EQ(tr.cuda_allocator->context_source, "an H200's");
    int64_t sum = 0;
    for (int64_t b : a.at_peak) sum += b;
    EXPECT_EQ(sum, a.allocated_peak);
  }
}

// Without StepConfig.allocator nothing is recorded, and the model says why it
// cannot run.
TEST(AnalyzeStepTest, NoAllocatorNoRecording) {
  Result<StepAnalysis> r =
      AnalyzeStep(TwoLinears(), BuiltinRules(), ToyStepConfig());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->report.training.allocations.empty());
  EXPECT_THAT(EvaluateAllocator(r->report.training, {}).error,
              HasSubstr("StepConfig.allocator cuda"));
}

}  // namespace
}  // namespace torchcost
