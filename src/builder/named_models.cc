// Families and presets by name, with "key=value,..." config overrides.
#include <charconv>
#include <cstdlib>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "builder/key_values.h"
#include "builder/validate.h"
#include "torchcost/families.h"
#include "torchcost/hf_config.h"

namespace torchcost::builder {
namespace {

// One config key: the field of the family's config struct it sets.
struct Key {
  const char* name;
  std::variant<int64_t*, double*, bool*, std::string*, DType*> field;
};

// A family's config, its keys, and its builder.
struct Family {
  std::vector<Key> keys;
  std::function<Result<BuiltModel>()> build;
};

// Named presets: (name, family, config text).
struct Preset {
  const char* name;
  const char* family;
  const char* config;
};

// NB: sources of the numbers.
// gpt2*: Hugging Face's config.json of gpt2, gpt2-medium, gpt2-large, gpt2-xl
//   (n_layer, n_embd, n_head; vocab_size 50257, n_positions 1024), as in
//   Radford et al. 2019, Table 2.
// llama-7b-like / llama-13b-like: Touvron et al. 2023 (LLaMA), Table 2 (layers,
//   dimension, heads), with the intermediate sizes and vocabulary of Meta's
//   released configs (11008 and 13824, 32000); full multi-head attention
//   (kv_heads = heads), as LLaMA 1 and Llama 2 7B/13B.
// vit-b-16: Dosovitskiy et al. 2021, Table 1 (ViT-Base: 12 layers, hidden 768,
//   MLP 3072, 12 heads), patch 16 at 224x224, 1000 classes (torchvision
//   vit_b_16).
// resnet50: He et al. 2016, Table 1, 224x224, 1000 classes (torchvision
// resnet50).
constexpr Preset kPresets[] = {
    {"gpt2", "gpt2", "layers=12,hidden=768,heads=12,vocab=50257,context=1024"},
    {"gpt2-medium", "gpt2",
     "layers=24,hidden=1024,heads=16,vocab=50257,context=1024"},
    {"gpt2-large", "gpt2",
     "layers=36,hidden=1280,heads=20,vocab=50257,context=1024"},
    {"gpt2-xl", "gpt2",
     "layers=48,hidden=1600,heads=25,vocab=50257,context=1024"},
    {"llama-7b-like", "llama",
     "layers=32,hidden=4096,heads=32,kv_heads=32,intermediate=11008,vocab="
     "32000"},
    {"llama-13b-like", "llama",
     "layers=40,hidden=5120,heads=40,kv_heads=40,intermediate=13824,vocab="
     "32000"},
    {"vit-b-16", "vit",
     "image_size=224,patch=16,layers=12,hidden=768,heads=12,mlp=3072,classes="
     "1000"},
    {"resnet50", "resnet", "depth=50,classes=1000,image_size=224"},
};

constexpr const char* kFamilies[] = {"gpt2", "llama", "gpt_neox", "bert",
                                     "t5",   "vit",   "resnet"};

// Configs live here while a family is being built.
struct Configs {
  Gpt2Config gpt2;
  LlamaConfig llama;
  GptNeoxConfig neox;
  BertConfig bert;
  T5Config t5;
  VitConfig vit;
  ResnetConfig resnet;
};

Family MakeFamily(const std::string& family, Configs& c) {
  if (family == "gpt2") {
    Gpt2Config& g = c.gpt2;
    return {{{"layers", &g.layers},
             {"hidden", &g.hidden},
             {"heads", &g.heads},
             {"vocab", &g.vocab},
             {"context", &g.context},
             {"dropout", &g.dropout},
             {"eps", &g.eps},
             {"tp", &g.tp},
             {"make_vocab_size_divisible_by", &g.vocab_multiple},
             {"sp", &g.sp},
             {"attn", &g.attn},
             {"dtype", &g.dtype},
             {"phase", &g.phase},
             {"cache_dtype", &g.cache_dtype}},
            [&g] { return BuildGpt2(g); }};
  }
  if (family == "llama") {
    LlamaConfig& l = c.llama;
    return {{{"layers", &l.layers},
             {"hidden", &l.hidden},
             {"heads", &l.heads},
             {"kv_heads", &l.kv_heads},
             {"intermediate", &l.intermediate},
             {"vocab", &l.vocab},
             {"eps", &l.eps},
             {"rope_base", &l.rope_base},
             {"tp", &l.tp},
             {"make_vocab_size_divisible_by", &l.vocab_multiple},
             {"sp", &l.sp},
             {"attn", &l.attn},
             {"window", &l.window},
             {"dtype", &l.dtype},
             {"tie", &l.tie},
             {"head_dim", &l.head_dim},
             {"rotary_dim", &l.rotary_dim},
             {"qkv_bias", &l.qkv_bias},
             {"o_bias", &l.o_bias},
             {"mlp_bias", &l.mlp_bias},
             {"qk_norm", &l.qk_norm},
             {"qk_norm_full", &l.qk_norm_full},
             {"post_norms", &l.post_norms},
             {"act", &l.act},
             {"gemma", &l.gemma},
             {"fused", &l.fused},
             {"prefix", &l.prefix},
             {"classes", &l.classes},
             {"experts", &l.experts},
             {"top_k", &l.top_k},
             {"expert_intermediate", &l.expert_intermediate},
             {"shared_intermediate", &l.shared_intermediate},
             {"norm_topk", &l.norm_topk},
             {"capacity_factor", &l.capacity_factor},
             {"pad_to_capacity", &l.pad_to_capacity},
             {"ep", &l.ep},
             {"sandwich", &l.sandwich},
             {"alternate_window", &l.alternate_window},
             {"window_pattern", &l.window_pattern},
             {"rope_local_base", &l.rope_local_base},
             {"embed_scale_buffer", &l.embed_scale_buffer},
             {"embedding_multiplier", &l.embedding_multiplier},
             {"residual_multiplier", &l.residual_multiplier},
             {"logits_scaling", &l.logits_scaling},
             {"attn_softcap", &l.attn_softcap},
             {"logit_softcap", &l.logit_softcap},
             {"query_scalar", &l.query_scalar},
             {"phase", &l.phase},
             {"cache_dtype", &l.cache_dtype}},
            [&l] { return BuildLlama(l); }};
  }
  if (family == "gpt_neox") {
    GptNeoxConfig& n = c.neox;
    return {{{"layers", &n.layers},
             {"hidden", &n.hidden},
             {"heads", &n.heads},
             {"intermediate", &n.intermediate},
             {"vocab", &n.vocab},
             {"context", &n.context},
             {"rotary_pct", &n.rotary_pct},
             {"rope_base", &n.rope_base},
             {"eps", &n.eps},
             {"parallel_residual", &n.parallel_residual},
             {"bias", &n.bias},
             {"tie", &n.tie},
             {"dropout", &n.dropout},
             {"attn_dropout", &n.attn_dropout},
             {"act", &n.act},
             {"attn", &n.attn},
             {"dtype", &n.dtype},
             {"phase", &n.phase},
             {"cache_dtype", &n.cache_dtype}},
            [&n] { return BuildGptNeox(n); }};
  }
  if (family == "bert") {
    BertConfig& e = c.bert;
    return {{{"layers", &e.layers},
             {"hidden", &e.hidden},
             {"heads", &e.heads},
             {"intermediate", &e.intermediate},
             {"vocab", &e.vocab},
             {"positions", &e.positions},
             {"type_vocab", &e.type_vocab},
             {"eps", &e.eps},
             {"dropout", &e.dropout},
             {"attn_dropout", &e.attn_dropout},
             {"act", &e.act},
             {"head", &e.head},
             {"attn", &e.attn},
             {"dtype", &e.dtype}},
            [&e] { return BuildBert(e); }};
  }
  if (family == "t5") {
    T5Config& t = c.t5;
    return {{{"layers", &t.layers},
             {"decoder_layers", &t.decoder_layers},
             {"d_model", &t.d_model},
             {"d_ff", &t.d_ff},
             {"d_kv", &t.d_kv},
             {"heads", &t.heads},
             {"vocab", &t.vocab},
             {"buckets", &t.buckets},
             {"max_distance", &t.max_distance},
             {"eps", &t.eps},
             {"dropout", &t.dropout},
             {"act", &t.act},
             {"gated", &t.gated},
             {"tie", &t.tie},
             {"attn", &t.attn},
             {"dtype", &t.dtype}},
            [&t] { return BuildT5(t); }};
  }
  if (family == "vit") {
    VitConfig& v = c.vit;
    return {{{"image_size", &v.image_size},
             {"patch", &v.patch},
             {"layers", &v.layers},
             {"hidden", &v.hidden},
             {"heads", &v.heads},
             {"mlp", &v.mlp},
             {"classes", &v.classes},
             {"dropout", &v.dropout},
             {"eps", &v.eps},
             {"tp", &v.tp},
             {"attn", &v.attn},
             {"dtype", &v.dtype}},
            [&v] { return BuildVit(v); }};
  }
  ResnetConfig& r = c.resnet;
  return {{{"depth", &r.depth},
           {"classes", &r.classes},
           {"image_size", &r.image_size},
           {"width", &r.width},
           {"dtype", &r.dtype},
           {"blocks", &r.blocks},
           {"block", &r.block},
           {"kernels", &r.kernels}},
          [&r] { return BuildResnet(r); }};
}

std::string KeyList(const Family& f) {
  std::string s;
  for (const Key& k : f.keys)
    s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

// Applies "key=value,..." to the family's config.
Status ApplyConfig(const std::string& family, Family& f,
                   const std::string& text) {
  for (const KeyValueItem& kv : SplitKeyValues(text)) {
    const std::string &item = kv.text, &key = kv.key, &value = kv.value;
    if (key.empty())
      return Status::InvalidArgument("BuildNamedModel.config '" + item +
                                     "': expected KEY=VALUE");
    const Key* found = nullptr;
    for (const Key& k : f.keys) {
      if (key == k.name) found = &k;
    }
    if (!found) {
      return Status::InvalidArgument("BuildNamedModel.config: unknown key '" +
                                     key + "' for family " + family +
                                     "; keys: " + KeyList(f));
    }
    const char* begin = value.data();
    const char* end = begin + value.size();
    if (auto* ip = std::get_if<int64_t*>(&found->field)) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(begin, end, v);
      if (value.empty() || ec != std::errc() || ptr != end)
        return Status::InvalidArgument("BuildNamedModel.config " + item +
                                       ": value " + NotAnInteger(value));
      **ip = v;
    } else if (auto* sp = std::get_if<std::string*>(&found->field)) {
      **sp = value;  // Checked by the family's builder.
    } else if (auto* bp = std::get_if<bool*>(&found->field)) {
      if (value != "true" && value != "false")
        return Status::InvalidArgument("BuildNamedModel.config " + item +
                                       ": value '" + value +
                                       "' is not true or false");
      **bp = value == "true";
    } else if (auto* dp = std::get_if<DType*>(&found->field)) {
      Result<DType> d = ParseDType(value);
      if (!d.ok() || (*d != DType::kFloat32 && *d != DType::kBFloat16 &&
                      *d != DType::kFloat16))
        return Status::InvalidArgument("BuildNamedModel.config " + item +
                                       ": value '" + value +
                                       "' is not fp32, bf16 or fp16");
      **dp = *d;
    } else {
      char* stop = nullptr;
      const double v = std::strtod(value.c_str(), &stop);
      if (value.empty() || stop != value.c_str() + value.size())
        return Status::InvalidArgument("BuildNamedModel.config " + item +
                                       ": value '" + value +
                                       "' is not a number");
      *std::get<double*>(found->field) = v;
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> ModelNames() {
  std::vector<std::string> names(std::begin(kFamilies), std::end(kFamilies));
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

namespace {

// The family of `name` (a family or preset), its config with the preset and
// `config` applied, and its keys.
Status ResolveFamily(const std::string& name, const std::string& config,
                     Configs& configs, std::string& family, Family& f) {
  std::string preset_config;
  for (const char* known : kFamilies) {
    if (name == known) family = known;
  }
  for (const Preset& p : kPresets) {
    if (name == p.name) {
      family = p.family;
      preset_config = p.config;
    }
  }
  if (family.empty()) {
    std::string names;
    for (const std::string& n : ModelNames())
      names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument(
        "BuildNamedModel.name '" + name +
        "': unknown family or preset; known: " + names);
  }
  f = MakeFamily(family, configs);
  if (Status s = ApplyConfig(family, f, preset_config); !s.ok()) return s;
  if (Status s = ApplyConfig(family, f, config); !s.ok()) return s;
  // NB: as Hugging Face's LlamaConfig (num_key_value_heads None: the
  // attention heads), heads without kv_heads is multi-head attention.
  bool heads = false, kv_heads = false;
  for (const KeyValueItem& kv : SplitKeyValues(config)) {
    heads = heads || kv.key == "heads";
    kv_heads = kv_heads || kv.key == "kv_heads";
  }
  if (family == "llama" && heads && !kv_heads)
    configs.llama.kv_heads = configs.llama.heads;
  return Status::Ok();
}

// A key's value as ApplyConfig parses it back.
std::string ValueText(const Key& k) {
  if (auto* ip = std::get_if<int64_t*>(&k.field)) return std::to_string(**ip);
  if (auto* sp = std::get_if<std::string*>(&k.field)) return **sp;
  if (auto* bp = std::get_if<bool*>(&k.field)) return **bp ? "true" : "false";
  if (auto* dp = std::get_if<DType*>(&k.field))
    return std::string(DTypeName(**dp));
  // NB: shortest text that reads back as the same double.
  char buf[32];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), *std::get<double*>(k.field));
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

}  // namespace

Result<BuiltModel> BuildNamedModel(const std::string& name,
                                   const std::string& config) {
  if (IsHfConfigPath(name)) return BuildHfConfig(name, config);
  Configs configs;
  std::string family;
  Family f;
  if (Status s = ResolveFamily(name, config, configs, family, f); !s.ok())
    return s;
  return f.build();
}

Result<NamedConfig> ResolveNamedConfig(const std::string& name,
                                       const std::string& config) {
  if (IsHfConfigPath(name)) {
    return Status::InvalidArgument(
        "ResolveNamedConfig.name '" + name +
        "': a config.json has its own keys, not a family's");
  }
  Configs configs;
  NamedConfig out;
  Family f;
  if (Status s = ResolveFamily(name, config, configs, out.family, f); !s.ok())
    return s;
  for (const Key& k : f.keys) out.values.emplace_back(k.name, ValueText(k));
  return out;
}

}  // namespace torchcost::builder
