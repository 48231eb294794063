// Reading Hugging Face config files: dispatch on model_type, overrides of the
// file's keys and of run settings, the notes listing unused keys, and
// one-line errors naming the file and the key.
#include "torchcost/hf_config.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

// A tiny Llama config (the keys LlamaForCausalLM reads, and two it does not).
constexpr const char* kTinyLlama = R"({
  "model_type": "llama", "architectures": ["LlamaForCausalLM"], "bos_token_id": 1,
  "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
  "rms_norm_eps": 1e-05, "tie_word_embeddings": false
})";

// embed 100*64 + per layer (q, o 64*64 each; k, v 64*32 each (2 kv heads of
// 16); MLP 3*64*176; norms 2*64) + final norm 64 + head 100*64.
constexpr int64_t kTinyLlamaParams =
    100 * 64 + 2 * (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 176 + 2 * 64) + 64 +
    100 * 64;

int64_t Params(const BuiltModel& m) {
  sym::Context ctx;
  return AnalyzeBuilt(m, ctx).params;
}

bool HasNote(const BuiltModel& m, const std::string& text) {
  for (const std::string& n : m.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(HfConfigTest, BuildsTheFileAndListsUnusedKeys) {
  Result<BuiltModel> m = BuildHfConfigText(kTinyLlama, "tiny.json", "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(Params(*m), kTinyLlamaParams);
  EXPECT_TRUE(
      HasNote(*m, "tiny.json: model_type llama built as the llama family"));
  EXPECT_TRUE(HasNote(*m,
                      "tiny.json: keys not used (no effect on the costs "
                      "modelled): architectures, bos_token_id"));
}

TEST(HfConfigTest, OverridesReplaceTheFilesKeys) {
  // Three layers instead of two: one more layer of 2*64*64 + 2*64*32 + 3*64*176
  // + 2*64.
  Result<BuiltModel> m =
      BuildHfConfigText(kTinyLlama, "tiny.json", "num_hidden_layers=3");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(Params(*m), kTinyLlamaParams + (2 * 64 * 64 + 2 * 64 * 32 +
                                            3 * 64 * 176 + 2 * 64));
  // A key the file lacks but the translation reads: tie_word_embeddings saves
  // the head's 100*64.
  m = BuildHfConfigText(kTinyLlama, "tiny.json", "tie_word_embeddings=true");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(Params(*m), kTinyLlamaParams - 100 * 64);
}

TEST(HfConfigTest, RunSettingsPassToTheFamily) {
  Result<BuiltModel> m =
      BuildHfConfigText(kTinyLlama, "tiny.json", "dtype=bf16,attn=eager");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->graph.params[0].dtype, DType::kBFloat16);
}

TEST(HfConfigTest, BuildNamedModelReadsJsonPaths) {
  EXPECT_TRUE(IsHfConfigPath("config.json"));
  EXPECT_TRUE(IsHfConfigPath("dir/Llama-2-7b-hf.json"));
  EXPECT_FALSE(IsHfConfigPath("llama"));
  EXPECT_FALSE(IsHfConfigPath(".json"));
  Result<BuiltModel> m = BuildNamedModel("/nonexistent/config.json", "");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message().rfind(
                "/nonexistent/config.json: cannot read the config file", 0),
            0u)
      << m.status().message();
}

TEST(HfConfigTest, ErrorsAreOneLineNamingTheFileAndTheKey) {
  const struct {
    const char* json;
    const char* overrides;
    const char* message;  // A prefix of the error.
  } cases[] = {
      {R"({"hidden_size": 64})", "", "c.json: model_type: missing"},
      {R"({"model_type": "mamba"})", "",
       "c.json: model_type: 'mamba' is not supported (supported: bert, gemma, "
       "gemma2,"},
      {R"({"model_type": "llama", "hidden_size": 64})", "",
       "c.json: num_hidden_layers: missing (a required key)"},
      {kTinyLlama, "hidden_size=abc",
       "c.json: hidden_size: 'abc' is not an integer"},
      // A symbol on top of the file: the key is named, and why it must be
      // concrete.
      {kTinyLlama, "hidden_size=H",
       "c.json: hidden_size: 'H' is not an integer (symbols are not supported "
       "here"},
      {kTinyLlama, "num_hidden_layers=L",
       "c.json: num_hidden_layers: 'L' is not an integer (symbols are not"},
      {kTinyLlama, "ep=3",
       "c.json (model_type llama): llama config: ep=3 must divide experts=0"},
      {kTinyLlama, "hidden_size=0", "c.json: hidden_size: 0 must be positive"},
      {kTinyLlama, "hidden_act=relu",
       "c.json: hidden_act: 'relu' is not supported"},
      {kTinyLlama, "frobnicate=1",
       "BuildNamedModel.config: key 'frobnicate' is neither read from c.json"},
      {kTinyLlama, "hidden_size=66", "c.json (model_type llama): "},
      {R"({"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "intermediate_size": 128, "vocab_size": 128, "architectures": ["BertForNextSentencePrediction"]})",
       "",
       "c.json: architectures: 'BertForNextSentencePrediction' is not "
       "supported (BertForMaskedLM, BertModel)"},
      {R"({"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "intermediate_size": 128, "vocab_size": 128, "position_embedding_type": "relative_key"})",
       "",
       "c.json: position_embedding_type: 'relative_key' is not supported "
       "(absolute)"},
      {R"({"model_type": "t5", "num_layers": 2, "d_model": 64, "d_ff": 128, "d_kv": 16, "num_heads": 4})",
       "", "c.json: vocab_size: missing (a required key)"},
      {R"({"model_type": "t5", "num_layers": 2, "d_model": 64, "d_ff": 128, "d_kv": 16, "num_heads": 4,
           "vocab_size": 128, "feed_forward_proj": "gated-silu"})",
       "", "c.json: feed_forward_proj: 'gated-silu' is not supported"},
      {R"({"model_type": "gemma2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "intermediate_size": 128, "vocab_size": 128, "query_pre_attn_scalar": 0})",
       "", "c.json: query_pre_attn_scalar: 0 must be positive"},
      {R"({"model_type": "llama", "num_hidden_layers": "2"})", "",
       "c.json: num_hidden_layers: \"2\" is not an integer"},
      {R"({"model_type": "qwen2", "use_sliding_window": true})", "",
       "c.json: num_hidden_layers: missing"},
      {"[1, 2]", "", "c.json: not a JSON object"},
      {"{", "", "c.json: not valid JSON"},
  };
  for (const auto& c : cases) {
    Result<BuiltModel> m = BuildHfConfigText(c.json, "c.json", c.overrides);
    ASSERT_FALSE(m.ok()) << c.message;
    const std::string& msg = m.status().message();
    EXPECT_EQ(msg.rfind(c.message, 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(HfConfigTest, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep =
      "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  Result<BuiltModel> m = BuildHfConfigText(deep, "deep.json", "");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "deep.json: JSON nested deeper than 64 levels");
}

TEST(HfConfigTest, ModelTypesAreListed) {
  EXPECT_EQ(HfModelTypes(),
            (std::vector<std::string>{
                "bert", "gemma", "gemma2", "gemma3_text", "gpt2", "gpt_neox",
                "granite", "llama", "mistral", "mixtral", "olmo2", "phi3",
                "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "t5"}));
}

}  // namespace
}  // namespace torchcost::builder
