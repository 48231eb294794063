// Tests of AnalyzeGeneration (src/step/generation.cc) on tiny llama-family
// models: the KV cache's bytes and the decode FLOPs per token against closed
// forms derived here, the decode total against the sum of its steps, and the
// options it declines.
#include "torchcost/generation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "testing/built_models.h"
#include "testing/eval_or_fail.h"
#include "torchcost/generation_report.h"
#include "torchcost/gpu.h"

namespace torchcost {
namespace {

using testing::EvalOrFail;

using testing::BuiltinRules;
using ::testing::HasSubstr;

// 2 layers, hidden 64, 4 heads of 16, 2 KV heads, eager attention, float32.
constexpr const char* kTiny =
    "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256,attn="
    "eager,make_vocab_size_divisible_by=1";

StepConfig Generate(
    std::vector<std::pair<std::string, int64_t>> bindings = {}) {
  StepConfig c;
  c.mode = "generate";
  c.bindings = std::move(bindings);
  return c;
}

TEST(GenerationTest, KvCacheBytesClosedForm) {
  struct Case {
    std::string config;
    int64_t per_token;  // 2 x layers x kv_heads x head_dim x bytes
    int64_t window;
  };
  const Case cases[] = {
      {kTiny, 2 * /*layers*/ 2 * /*kv_heads*/ 2 * /*head_dim*/ 16 * /*fp32*/ 4,
       0},
      {std::string(kTiny) + ",dtype=bf16", 2 * 2 * 2 * 16 * /*bf16*/ 2, 0},
      {std::string(kTiny) + ",cache_dtype=fp8", 2 * 2 * 2 * 16 * /*fp8*/ 1, 0},
      {std::string(kTiny) + ",kv_heads=4", 2 * 2 * /*kv_heads*/ 4 * 16 * 4, 0},
      {std::string(kTiny) + ",window=24", 2 * 2 * 2 * 16 * 4, 24},
  };
  for (const Case& c : cases) {
    Result<GenerationAnalysis> g =
        AnalyzeGeneration("llama", c.config, BuiltinRules(), Generate());
    ASSERT_TRUE(g.ok()) << c.config << ": " << g.status().message();
    EXPECT_EQ(g->kv_bytes_per_token, c.per_token) << c.config;
    for (auto [b, s, t] :
         {std::array<int64_t, 3>{1, 7, 5}, {3, 40, 9}, {2, 1000, 100}}) {
      const sym::Bindings bind = {{"B", b}, {"S", s}, {"T", t}};
      // Tokens at the end: S + T, capped by the sliding window.
      const int64_t tokens = c.window > 0 ? std::min(s + t, c.window) : s + t;
      EXPECT_EQ(EvalOrFail(g->kv_cache_bytes, bind), c.per_token * tokens * b)
          << c.config << " B=" << b << " S=" << s;
    }
  }
}

TEST(GenerationTest, AWindowPatternCapsOnlyTheWindowedLayers) {
  // window_pattern 2 (Gemma-2/3's kind): layer 0 windowed (24), layer 1 global.
  Result<GenerationAnalysis> g = AnalyzeGeneration(
      "llama", std::string(kTiny) + ",window=24,window_pattern=2",
      BuiltinRules(), Generate());
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->layers, 2);
  EXPECT_EQ(g->windowed_layers, 1);
  EXPECT_EQ(g->window, 24);
  // Per layer 2 (K, V) x 2 kv heads x 16 x fp32 per token: min(S + T, 24)
  // tokens in layer 0, S + T in layer 1.
  const int64_t per_layer_token = 2 * 2 * 16 * 4;
  for (auto [b, s, t] : {std::array<int64_t, 3>{1, 7, 5}, {3, 40, 9}}) {
    EXPECT_EQ(EvalOrFail(g->kv_cache_bytes, {{"B", b}, {"S", s}, {"T", t}}),
              per_layer_token * b * (std::min<int64_t>(s + t, 24) + s + t))
        << "S=" << s;
  }
}

TEST(GenerationTest, DecodeFlopsPerCachedToken) {
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTiny, BuiltinRules(), Generate());
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(g->decode_linear);
  // One more cached token adds, per layer and head, a row of q k^T (2 x
  // head_dim), a column of att v (2 x head_dim), its scale division (1) and
  // softmax (4): 2 layers x B x 4 heads x (4 x 16 + 5).
  for (int64_t b : {1, 3}) {
    for (int64_t s : {5, 64}) {
      const sym::Bindings at = {{"B", b}, {"S", s}, {"T", 10}},
                          next = {{"B", b}, {"S", s}, {"T", 11}};
      EXPECT_EQ(EvalOrFail(g->decode_flops_last, next) -
                    EvalOrFail(g->decode_flops_last, at),
                /*layers*/ 2 * b * /*heads*/ 4 * (4 * /*head_dim*/ 16 + 5));
    }
  }
  // The per-token cost less its cache-length part is at least the weights'
  // matmuls: 2 x B x (per layer q 64x64, k and v 64x32, o 64x64, gate and up
  // 64x128, down 128x64; lm_head 64x256).
  const int64_t matmuls =
      2 * (2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128) + 64 * 256);
  const sym::Bindings first = {{"B", 1}, {"S", 1}, {"T", 2}};
  EXPECT_GE(EvalOrFail(g->decode_flops_first, first), matmuls);
  EXPECT_LT(EvalOrFail(g->decode_flops_first, first), matmuls * 11 / 10);
}

TEST(GenerationTest, DecodeTotalIsTheSumOfItsSteps) {
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTiny, BuiltinRules(), Generate());
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (int64_t t : {2, 3, 8, 33}) {
    // Step j = 1..T-1 has S + j - 1 tokens cached: the last step of a
    // generation of j + 1 tokens.
    int64_t sum = 0;
    for (int64_t j = 1; j <= t - 1; ++j)
      sum +=
          EvalOrFail(g->decode_flops_last, {{"B", 2}, {"S", 11}, {"T", j + 1}});
    const sym::Bindings at = {{"B", 2}, {"S", 11}, {"T", t}};
    EXPECT_EQ(EvalOrFail(g->decode_flops_total, at), sum) << "T=" << t;
    EXPECT_EQ(EvalOrFail(g->total_flops, at),
              EvalOrFail(g->prefill_flops, at) + sum);
  }
}

// With a sliding window a step's FLOPs stop growing at the window: no closed
// form, but the steps summed at the bindings.
TEST(GenerationTest, WindowedDecodeTotalIsTheSumOfItsSteps) {
  const std::string config = std::string(kTiny) + ",window=24";
  Result<GenerationAnalysis> symbolic =
      AnalyzeGeneration("llama", config, BuiltinRules(), Generate());
  ASSERT_TRUE(symbolic.ok()) << symbolic.status().message();
  EXPECT_FALSE(symbolic->decode_linear);
  EXPECT_FALSE(symbolic->decode_flops_summed.has_value());
  for (int64_t t : {2, 5, 40}) {
    Result<GenerationAnalysis> g =
        AnalyzeGeneration("llama", config, BuiltinRules(),
                          Generate({{"B", 2}, {"S", 11}, {"T", t}}));
    ASSERT_TRUE(g.ok()) << g.status().message();
    ASSERT_TRUE(g->decode_flops_summed.has_value());
    int64_t sum = 0;
    for (int64_t j = 1; j <= t - 1; ++j)
      sum +=
          EvalOrFail(g->decode_flops_last, {{"B", 2}, {"S", 11}, {"T", j + 1}});
    EXPECT_EQ(static_cast<int64_t>(*g->decode_flops_summed), sum) << "T=" << t;
  }
}

TEST(GenerationTest, DecodePeakHoldsTheWholeCache) {
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTiny, BuiltinRules(),
                        Generate({{"B", 2}, {"S", 100}, {"T", 20}}));
  ASSERT_TRUE(g.ok()) << g.status().message();
  const GenerationPeak d = PhasePeak(g->decode, g->decode.bindings);
  ASSERT_TRUE(d.decided);
  // At the last step's peak every layer's cache is live: at least S + T - 2
  // tokens each.
  const int64_t kv = EvalOrFail(d.kv_cache, g->decode.bindings);
  EXPECT_GE(kv, g->kv_bytes_per_token * (100 + 20 - 2) * 2);
  // ... and at most all of them at S + T - 1, plus one layer's keys and values
  // at S + T - 2.
  EXPECT_LE(kv, g->kv_bytes_per_token * (100 + 20 - 1) * 2 +
                    2 * 2 * 16 * 4 * (100 + 20 - 2) * 2);
  EXPECT_EQ(EvalOrFail(d.param, g->decode.bindings),
            g->decode.report.param_bytes);
  const GenerationPeak p = PhasePeak(g->prefill, g->decode.bindings);
  ASSERT_TRUE(p.decided);
  EXPECT_EQ(
      EvalOrFail(p.param + p.buffer + p.act + p.temp + p.other + p.kv_cache,
                 g->decode.bindings),
      EvalOrFail(p.peak, g->decode.bindings));
}

TEST(GenerationTest, TensorParallelRankHoldsItsShardsAndGathersTheLogits) {
  // One rank of tp=2 (Megatron's splits, Shoeybi et al. 2019): q, k, v, gate
  // and up split by columns, o and down by rows, the embedding and lm_head by
  // vocabulary rows; the norms replicated.
  const int64_t h = 64, hd = 16, heads = 4, kv = 2, inter = 128, vocab = 256,
                layers = 2, tp = 2, B = 3, S = 10, T = 4;
  // A GPU: the nodes' moved bytes are derived.
  StepConfig config = Generate({{"B", B}, {"S", S}, {"T", T}});
  config.gpu = "H100-SXM";
  Result<GenerationAnalysis> g = AnalyzeGeneration(
      "llama", std::string(kTiny) + ",tp=2", BuiltinRules(), config);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const int64_t per_layer = h * (heads / tp) * hd     // q_proj
                            + 2 * h * (kv / tp) * hd  // k_proj, v_proj
                            + (heads / tp) * hd * h   // o_proj
                            + 3 * h * (inter / tp)    // gate, up, down
                            + 2 * h;                  // two RMSNorms
  const int64_t params = 2 * (vocab / tp) * h + layers * per_layer + h;
  EXPECT_EQ(g->prefill.report.params, params);
  EXPECT_EQ(g->decode.report.params, params);
  // The rank caches kv / tp heads: 2 (K, V) x layers x 1 head x hd x fp32.
  EXPECT_EQ(g->kv_bytes_per_token, 2 * layers * (kv / tp) * hd * 4);
  EXPECT_EQ(EvalOrFail(g->kv_cache_bytes, g->decode.bindings),
            2 * layers * (kv / tp) * hd * 4 * (S + T) * B);
  // Each phase gathers its logits once: the rank's [B, 1, vocab / tp] slice
  // read, the whole [B, 1, vocab] written (fp32).
  for (const StepAnalysis* phase : {&g->prefill, &g->decode}) {
    int gathers = 0;
    for (size_t i = 0; i < phase->graph.nodes.size(); ++i) {
      if (phase->graph.nodes[i].op != "torchcost::all_gather") continue;
      ++gathers;
      EXPECT_EQ(EvalOrFail(phase->report.nodes[i].bytes, g->decode.bindings),
                B * (vocab / tp) * 4 + B * vocab * 4);
    }
    EXPECT_EQ(gathers, 1);
  }
  // The report says which rank it is.
  bool noted = false;
  for (const Diagnostic& d : g->prefill.report.diagnostics)
    noted = noted || d.message.find("tp=2: one rank of 2") == 0;
  EXPECT_TRUE(noted);
  // Each decode step waits for its collectives, as NCCL's tuner times a ring
  // of 2 (LL at these sizes, its bandwidth min(0.5 x 450, 141) GB/s, NCCL's
  // cap on a Hopper): the embedding's and 2 per layer's all-reduce of
  // [B, 1, h] float32, 768 bytes: 6.6 + 2 x 0.6 us + 768 B / 141 GB/s; the
  // logits' all-gather of [B, 1, vocab], 3072 bytes: 6.6 + 0.6 us + 1536 B /
  // 141 GB/s. Against the same steps without them, T - 1 = 3 of each.
  ASSERT_TRUE(g->time.present);
  const double all_reduce = 7.8e-6 + 768 / 141e9,
               all_gather = 7.2e-6 + 1536 / 141e9;
  const double with = g->time.decode_seconds;
  g->prefill.report.collectives.clear();
  g->decode.report.collectives.clear();
  Result<GenerationTime> without =
      EstimateGenerationTime(*g, *FindGpu("H100-SXM"), g->decode.bindings);
  ASSERT_TRUE(without.ok()) << without.status().message();
  EXPECT_NEAR(with - without->decode_seconds,
              (T - 1) * ((2 * layers + 1) * all_reduce + all_gather), 1e-12);
}

// Tiny GPT-2 and GPT-NeoX: 2 layers, hidden 64, 4 heads of 16 (every head
// cached: no grouped K/V), vocabulary 256, eager attention, float32.
constexpr const char* kTinyGpt2 =
    "layers=2,hidden=64,heads=4,vocab=256,context=512,attn=eager,"
    "make_vocab_size_divisible_by=1";
constexpr const char* kTinyNeox =
    "layers=2,hidden=64,heads=4,intermediate=256,vocab=256,context=512,"
    "attn=eager";

TEST(GenerationTest, QuantizedWeightsKeepTheComputeDtype) {
  // bitsandbytes and AWQ return the input's dtype from a quantized linear (the
  // float32 scales are not promoted into it): with bf16 compute the keys and
  // values, hence the cache, stay bf16: 2 x 2 layers x 2 KV heads x 16 x 2
  // bytes.
  for (const char* format : {"int8", "int4", "nf4", "fp8"}) {
    StepConfig c = Generate();
    c.weight_quant = format;
    Result<GenerationAnalysis> g = AnalyzeGeneration(
        "llama", std::string(kTiny) + ",dtype=bf16", BuiltinRules(), c);
    ASSERT_TRUE(g.ok()) << format << ": " << g.status().message();
    EXPECT_EQ(g->cache_dtype, "bfloat16") << format;
    EXPECT_EQ(g->kv_bytes_per_token, 2 * 2 * 2 * 16 * 2) << format;
  }
}

TEST(GenerationTest, ParametersBuiltInBf16NameThePrecisionAndPeak) {
  // The family builds its parameters in bf16 (the CLI's --param-dtype for a
  // built model): the step's precision is bf16, the dtype whose peak MFU
  // divides by (the H100's 989 dense TFLOP/s, not its fp32 67: an MFU of 10
  // before).
  StepConfig c = Generate({{"B", 2}, {"S", 16}, {"T", 4}});
  c.gpu = "H100-SXM";
  Result<GenerationAnalysis> g = AnalyzeGeneration(
      "llama", std::string(kTiny) + ",dtype=bf16", BuiltinRules(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->prefill.report.training.precision, "bf16");
  EXPECT_EQ(g->decode.report.training.precision, "bf16");
  Result<GenerationAnalysis> f =
      AnalyzeGeneration("llama", kTiny, BuiltinRules(), c);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->prefill.report.training.precision, "fp32");
}

TEST(GenerationTest, Gpt2AndNeoxKvCacheBytesClosedForm) {
  struct Case {
    std::string model, config;
    int64_t per_token;  // 2 x layers x kv_heads x head_dim x bytes
  };
  const Case cases[] = {
      {"gpt2", kTinyGpt2,
       2 * /*layers*/ 2 * /*heads*/ 4 * /*head_dim*/ 16 * /*fp32*/ 4},
      {"gpt2", std::string(kTinyGpt2) + ",dtype=bf16",
       2 * 2 * 4 * 16 * /*bf16*/ 2},
      {"gpt2", std::string(kTinyGpt2) + ",attn=sdpa,cache_dtype=fp8",
       2 * 2 * 4 * 16 * /*fp8*/ 1},
      {"gpt_neox", kTinyNeox, 2 * 2 * 4 * 16 * 4},
      // NB: the partial rotary (rotary_pct 0.25: 4 of 16 dims) changes no
      // cached byte.
      {"gpt_neox", std::string(kTinyNeox) + ",attn=sdpa,dtype=fp16",
       2 * 2 * 4 * 16 * /*fp16*/ 2},
      // GPT-2 small: 12 layers x 12 heads x 64 dims (768 / 12), float32.
      {"gpt2", "", 2 * 12 * 12 * 64 * 4},
  };
  for (const Case& c : cases) {
    Result<GenerationAnalysis> g =
        AnalyzeGeneration(c.model, c.config, BuiltinRules(), Generate());
    ASSERT_TRUE(g.ok()) << c.model << " " << c.config << ": "
                        << g.status().message();
    EXPECT_EQ(g->kv_bytes_per_token, c.per_token) << c.config;
    EXPECT_EQ(g->window, 0);
    for (auto [b, s, t] : {std::array<int64_t, 3>{1, 7, 5}, {3, 40, 9}}) {
      const sym::Bindings bind = {{"B", b}, {"S", s}, {"T", t}};
      EXPECT_EQ(EvalOrFail(g->kv_cache_bytes, bind), c.per_token * (s + t) * b)
          << c.model << " " << c.config << " B=" << b << " S=" << s;
    }
  }
}

TEST(GenerationTest, Gpt2AndNeoxDecodeFlops) {
  struct Case {
    std::string model, config;
    int64_t per_head;  // FLOPs per cached token, layer, sequence and head
    int64_t matmuls;   // The weights' matmuls of one token, 2 per FMA
  };
  // One more cached key adds a row of q k^T (2 x head_dim) and a column of
  // att v (2 x head_dim), and a score to scale and softmax (4). GPT-2 scales
  // by a division (1); GPT-NeoX by baddbmm's alpha (1) after adding its zeros
  // input (1). Weights per layer: GPT-2 c_attn 64x192, c_proj 64x64, c_fc
  // and mlp c_proj 64x256; GPT-NeoX query_key_value 64x192, dense 64x64,
  // dense_h_to_4h and dense_4h_to_h 64x256; lm_head (embed_out) 64x256.
  const int64_t matmuls =
      2 * (2 * (64 * 192 + 64 * 64 + 2 * 64 * 256) + 64 * 256);
  const Case cases[] = {
      {"gpt2", kTinyGpt2, 4 * 16 + 1 + 4, matmuls},
      {"gpt_neox", kTinyNeox, 4 * 16 + 2 + 4, matmuls},
  };
  for (const Case& c : cases) {
    Result<GenerationAnalysis> g =
        AnalyzeGeneration(c.model, c.config, BuiltinRules(), Generate());
    ASSERT_TRUE(g.ok()) << c.model << ": " << g.status().message();
    ASSERT_TRUE(g->decode_linear) << c.model;
    for (int64_t b : {1, 3}) {
      for (int64_t s : {5, 64}) {
        const sym::Bindings at = {{"B", b}, {"S", s}, {"T", 10}},
                            next = {{"B", b}, {"S", s}, {"T", 11}};
        EXPECT_EQ(EvalOrFail(g->decode_flops_last, next) -
                      EvalOrFail(g->decode_flops_last, at),
                  /*layers*/ 2 * b * /*heads*/ 4 * c.per_head)
            << c.model;
      }
    }
    // The per-token cost is at least the weights' matmuls, and the norms,
    // biases, GELU and residuals add under 10%.
    const sym::Bindings first = {{"B", 1}, {"S", 1}, {"T", 2}};
    EXPECT_GE(EvalOrFail(g->decode_flops_first, first), c.matmuls) << c.model;
    EXPECT_LT(EvalOrFail(g->decode_flops_first, first), c.matmuls * 11 / 10)
        << c.model;
    // B sequences cost B times one (every op is per sequence).
    const sym::Bindings three = {{"B", 3}, {"S", 9}, {"T", 4}},
                        one = {{"B", 1}, {"S", 9}, {"T", 4}};
    EXPECT_EQ(EvalOrFail(g->decode_flops_last, three),
              3 * EvalOrFail(g->decode_flops_last, one));
  }
}

TEST(GenerationTest, DecodeCatHoldsThePastAndTheNewCache) {
  // torch.cat([past, new]) allocates the grown cache while the past is alive
  // (it is read through the cat's list). GPT-2 tiny at B=1, S=16, T=2, the
  // last layer's values cat: layer 0's keys and values and layer 1's keys at
  // S + T - 1 = 17 tokens, layer 1's past values (16) and new values (17), of
  // 4 heads x 16 x 4 bytes = 256 per token: (4 x 17 + 16) x 256.
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("gpt2", kTinyGpt2, BuiltinRules(),
                        Generate({{"B", 1}, {"S", 16}, {"T", 2}}));
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Report& r = g->decode.report;
  const GenerationPeak d = PhasePeak(g->decode, g->decode.bindings);
  EXPECT_GE(EvalOrFail(d.peak, g->decode.bindings),
            r.param_bytes + r.buffer_bytes + (4 * 17 + 16) * 256);
}

// The generation's time on a GPU: the prefill's forward, and the decode steps
// summed, each against a generation of j + 1 tokens analysed on its own
// (whose last decode step is step j). The window of 24 tokens caps the cache
// midway (S + j - 1 runs 11..49), so the steps' times have a kink.
TEST(GenerationTest, TimeSumsEveryDecodeStep) {
  const std::string config = std::string(kTiny) + ",window=24";
  auto with_gpu = [](int64_t t) {
    StepConfig c = Generate({{"B", 2}, {"S", 11}, {"T", t}});
    c.gpu = "H100-SXM";
    return c;
  };
  const int64_t tokens = 40;
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", config, BuiltinRules(), with_gpu(tokens));
  ASSERT_TRUE(g.ok()) << g.status().message();
  const GenerationTime& time = g->time;
  ASSERT_TRUE(time.present);
  EXPECT_EQ(time.source, "roofline on H100-SXM");
  EXPECT_DOUBLE_EQ(time.prefill_seconds,
                   g->prefill.report.time.forward_seconds);
  double decode = 0, first = 0, last = 0;
  for (int64_t j = 1; j <= tokens - 1; ++j) {
    Result<GenerationAnalysis> step =
        AnalyzeGeneration("llama", config, BuiltinRules(), with_gpu(j + 1));
    ASSERT_TRUE(step.ok()) << step.status().message();
    const double seconds = step->decode.report.time.forward_seconds;
    ASSERT_GT(seconds, 0);
    decode += seconds;
    if (j == 1) first = seconds;
    last = seconds;
  }
  EXPECT_GT(last, first);
  EXPECT_NEAR(time.first_step_seconds, first, 1e-12 * first);
  EXPECT_NEAR(time.last_step_seconds, last, 1e-12 * last);
  EXPECT_NEAR(time.decode_seconds, decode, 1e-9 * decode);
  EXPECT_DOUBLE_EQ(time.total_seconds,
                   time.prefill_seconds + time.decode_seconds);
  // B x T new tokens; the decode steps make B x (T - 1) of them.
  EXPECT_DOUBLE_EQ(time.new_tokens, 2 * tokens);
  EXPECT_DOUBLE_EQ(time.tokens_per_second, 2 * tokens / time.total_seconds);
  EXPECT_DOUBLE_EQ(time.decode_tokens_per_second,
                   2 * (tokens - 1) / time.decode_seconds);
  EXPECT_EQ(time.decode_steps, tokens - 1);
  // T = 1: the prefill alone.
  Result<GenerationAnalysis> one =
      AnalyzeGeneration("llama", config, BuiltinRules(), with_gpu(1));
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->time.decode_steps, 0);
  EXPECT_EQ(one->time.decode_seconds, 0);
  EXPECT_DOUBLE_EQ(one->time.total_seconds, one->time.prefill_seconds);
  // No GPU, no time.
  Result<GenerationAnalysis> none =
      AnalyzeGeneration("llama", config, BuiltinRules(),
                        Generate({{"B", 2}, {"S", 11}, {"T", tokens}}));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->time.present);
  // A GPU needs every symbol bound.
  StepConfig unbound = Generate({{"B", 2}, {"S", 11}});
  unbound.gpu = "H100-SXM";
  EXPECT_THAT(AnalyzeGeneration("llama", config, BuiltinRules(), unbound)
                  .status()
                  .message(),
              HasSubstr("every symbol bound"));
}

TEST(GenerationTest, Errors) {
  const RuleSet& rules = BuiltinRules();
  EXPECT_THAT(
      AnalyzeGeneration("bert", "", rules, Generate()).status().message(),
      HasSubstr("has no generation phases"));
  EXPECT_THAT(
      AnalyzeGeneration("gpt2", "tp=2", rules, Generate()).status().message(),
      HasSubstr("phase=prefill needs tp=1"));
  EXPECT_THAT(AnalyzeGeneration("llama", std::string(kTiny) + ",tp=2,sp=true",
                                rules, Generate())
                  .status()
                  .message(),
              HasSubstr("phase=prefill needs sp=false"));
  StepConfig infer = Generate();
  infer.mode = "infer";
  EXPECT_THAT(
      AnalyzeGeneration("llama", kTiny, rules, infer).status().message(),
      HasSubstr("needs mode generate"));
  StepConfig inputs = Generate();
  inputs.inputs = {"B,S:int64"};
  EXPECT_THAT(
      AnalyzeGeneration("llama", kTiny, rules, inputs).status().message(),
      HasSubstr("give none"));
  EXPECT_THAT(
      AnalyzeGeneration("llama", std::string(kTiny) + ",cache_dtype=int3",
                        rules, Generate())
          .status()
          .message(),
      HasSubstr("cache_dtype=int3 must be fp32, bf16, fp16 or fp8"));
  // AnalyzeStep declines the mode.
  StepConfig step = Generate();
  step.inputs = {"B,S:int64"};
  ir::Graph empty;
  EXPECT_THAT(AnalyzeStep(empty, rules, step).status().message(),
              HasSubstr("AnalyzeGeneration"));
}

}  // namespace
}  // namespace torchcost
