// What the per-model_type translations of Hugging Face configs share: config
// item values as text, the keys several architectures read alike (the RoPE
// base, the activation, dropouts the families leave out), and the
// translations defined outside hf_architectures.cc.
#ifndef TORCHCOST_SRC_BUILDER_HF_TRANSLATE_H_
#define TORCHCOST_SRC_BUILDER_HF_TRANSLATE_H_

#include <cstdint>
#include <string>

#include "builder/hf_keys.h"

namespace torchcost::builder {

// An integer config item's text.
std::string Int(int64_t v);
// A boolean config item's text: "true" or "false".
std::string Bool(bool v);
// The shortest text that reads back as the same double.
std::string Num(double v);

// Notes a dropout probability the family does not apply.
void NoteDropout(HfKeys& k, const std::string& key, const std::string& family,
                 FamilyConfig& out);

// Reads the RoPE base: rope_theta, or rope_parameters.rope_theta (transformers
// 5's layout); rope_scaling changes the tables' values, not their cost.
double RopeTheta(HfKeys& k, FamilyConfig& out);

// The family's act for ACT2FN[name]: "silu", "gelu" (nn.GELU),
// "gelu_pytorch_tanh" (F.gelu(approximate='tanh')); others fail on `key`.
std::string Activation(HfKeys& k, const std::string& key,
                       const std::string& name);

// Translates the decoders built as the llama family (hf_llama_like.cc):
// llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2,
// gemma3_text, granite, olmo2, phi3.
void TranslateLlamaLike(const std::string& type, HfKeys& k, FamilyConfig& out);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_HF_TRANSLATE_H_
