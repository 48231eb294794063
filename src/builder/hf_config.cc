// Reading a Hugging Face config.json: the JSON, the overrides, the keys read
// (HfKeys), and the dispatch on model_type to its translation
// (hf_architectures.cc), whose family config BuildNamedModel then builds.
#include "torchcost/hf_config.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "builder/hf_keys.h"
#include "builder/key_values.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

using Json = nlohmann::json;

// The family's settings of the step rather than of the architecture, which an
// override may set on top of a file.
constexpr const char* kRunSettings[] = {"dtype",
                                        "attn",
                                        "tp",
                                        "sp",
                                        "make_vocab_size_divisible_by",
                                        "phase",
                                        "cache_dtype",
                                        "capacity_factor",
                                        "pad_to_capacity",
                                        "ep"};

// NB: a config is a few kB; 16 MiB bounds what a wrong path can make us read.
constexpr std::streamsize kMaxConfigBytes = std::streamsize{16} << 20;

std::string Join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

bool IsRunSetting(const std::string& key) {
  for (const char* k : kRunSettings) {
    if (key == k) return true;
  }
  return false;
}

// Splits "k=v,k=v" into a map; an item without '=' is an error.
Status ParseOverrides(const std::string& text, const std::string& file,
                      std::map<std::string, std::string>& out) {
  for (KeyValueItem& item : SplitKeyValues(text)) {
    if (item.key.empty())
      return Status::InvalidArgument("BuildNamedModel.config '" + item.text +
                                     "' (on " + file + "): expected KEY=VALUE");
    out[item.key] = std::move(item.value);
  }
  return Status::Ok();
}

// A JSON value as one line of text, for errors.
std::string Show(const Json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

}  // namespace

// --- HfKeys
// ---------------------------------------------------------------------

HfKeys::HfKeys(const Json& config, std::map<std::string, std::string> overrides,
               std::string file)
    : config_(config),
      overrides_(std::move(overrides)),
      file_(std::move(file)) {}

const std::string* HfKeys::Override(const std::string& key) {
  read_.insert(key);
  auto it = overrides_.find(key);
  return it == overrides_.end() ? nullptr : &it->second;
}

const Json* HfKeys::FileValue(const std::string& key) {
  read_.insert(key);
  auto it = config_.find(key);
  return it == config_.end() ? nullptr : &*it;
}

void HfKeys::Fail(const std::string& key, const std::string& problem) {
  if (error_.empty()) error_ = file_ + ": " + key + ": " + problem;
}

Status HfKeys::status() const {
  return error_.empty() ? Status::Ok() : Status::InvalidArgument(error_);
}

bool HfKeys::Has(const std::string& key) {
  if (const std::string* o = Override(key)) return *o != "null";
  const Json* v = FileValue(key);
  return v != nullptr && !v->is_null();
}

bool HfKeys::Given(const std::string& key) {
  return Override(key) != nullptr || FileValue(key) != nullptr;
}

Json HfKeys::Raw(const std::string& key) {
  if (const std::string* o = Override(key))
    return *o == "null" ? Json() : Json(*o);
  const Json* v = FileValue(key);
  return v == nullptr ? Json() : *v;
}

bool HfKeys::Int(const std::string& key, int64_t* out) {
  if (!Has(key)) {
    Fail(key, "missing (a required key)");
    return false;
  }
  OptInt(key, out);
  return ok();
}

void HfKeys::OptInt(const std::string& key, int64_t* out, bool allow_zero) {
  if (!Has(key)) return;
  int64_t v = 0;
  if (const std::string* o = Override(key)) {
    auto [ptr, ec] = std::from_chars(o->data(), o->data() + o->size(), v);
    if (o->empty() || ec != std::errc() || ptr != o->data() + o->size())
      return Fail(key, NotAnInteger(*o));
  } else {
    const Json& j = *FileValue(key);
    if (!j.is_number_integer())
      return Fail(key, Show(j) + " is not an integer");
    v = j.get<int64_t>();
  }
  // NB: the families' integer limit (2^31), so absurd values fail here, naming
  // the key.
  if (v < (allow_zero ? 0 : 1) || v >= (int64_t{1} << 31))
    return Fail(key, std::to_string(v) + " must be " +
                         (allow_zero ? ">= 0" : "positive") +
                         " and below 2^31");
  *out = v;
}

void HfKeys::OptDouble(const std::string& key, double* out) {
  if (!Has(key)) return;
  if (const std::string* o = Override(key)) {
    char* stop = nullptr;
    const double v = std::strtod(o->c_str(), &stop);
    if (o->empty() || stop != o->c_str() + o->size())
      return Fail(key, "'" + *o + "' is not a number");
    *out = v;
    return;
  }
  const Json& j = *FileValue(key);
  if (!j.is_number()) return Fail(key, Show(j) + " is not a number");
  *out = j.get<double>();
}

void HfKeys::OptBool(const std::string& key, bool* out) {
  if (!Has(key)) return;
  if (const std::string* o = Override(key)) {
    if (*o != "true" && *o != "false")
      return Fail(key, "'" + *o + "' is not true or false");
    *out = *o == "true";
    return;
  }
  const Json& j = *FileValue(key);
  if (!j.is_boolean()) return Fail(key, Show(j) + " is not true or false");
  *out = j.get<bool>();
}

void HfKeys::OptString(const std::string& key, std::string* out) {
  if (!Has(key)) return;
  if (const std::string* o = Override(key)) {
    *out = *o;
    return;
  }
  const Json& j = *FileValue(key);
  if (!j.is_string()) return Fail(key, Show(j) + " is not a string");
  *out = j.get<std::string>();
}

std::vector<std::string> HfKeys::UnreadFileKeys() const {
  std::vector<std::string> keys;
  for (auto it = config_.begin(); it != config_.end(); ++it) {
    if (!read_.count(it.key())) keys.push_back(it.key());
  }
  return keys;
}

std::vector<std::pair<std::string, std::string>> HfKeys::UnreadOverrides()
    const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : overrides_) {
    if (!read_.count(k)) out.emplace_back(k, v);
  }
  return out;
}

// --- Reading and dispatch
// ---------------------------------------------------------

bool IsHfConfigPath(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

std::vector<std::string> HfModelTypes() { return HfTranslatedTypes(); }

Result<BuiltModel> BuildHfConfig(const std::string& path,
                                 const std::string& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::InvalidArgument(path + ": cannot read the config file (" +
                                   std::strerror(errno) + ")");
  // NB: read in 64 KiB pieces up to the limit; a 16 MiB buffer zeroed up front
  // cost more than the whole graph build (it was read twice per generation).
  std::string text;
  char piece[1 << 16];
  while (in.read(piece, sizeof piece) || in.gcount() > 0) {
    text.append(piece, static_cast<size_t>(in.gcount()));
    if (static_cast<std::streamsize>(text.size()) > kMaxConfigBytes)
      return Status::InvalidArgument(path + ": over 16 MiB, not a config.json");
  }
  return BuildHfConfigText(text, path, overrides);
}

Result<BuiltModel> BuildHfConfigText(const std::string& json,
                                     const std::string& file,
                                     const std::string& overrides) {
  // NB: nlohmann's parser is recursive; nesting deeper than 64 (no config
  // comes near) is refused before parsing, so hostile input cannot exhaust the
  // stack.
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char ch : json) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      max_depth = std::max(max_depth, ++depth);
    } else if (ch == '}' || ch == ']') {
      --depth;
    }
  }
  if (max_depth > 64)
    return Status::InvalidArgument(file +
                                   ": JSON nested deeper than 64 levels");
  Json config = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded())
    return Status::InvalidArgument(file + ": not valid JSON");
  if (!config.is_object())
    return Status::InvalidArgument(file + ": not a JSON object");
  std::map<std::string, std::string> over;
  if (Status s = ParseOverrides(overrides, file, over); !s.ok()) return s;

  HfKeys keys(config, over, file);
  std::string model_type;
  keys.OptString("model_type", &model_type);
  if (!keys.ok()) return keys.status();
  if (model_type.empty())
    return Status::InvalidArgument(file +
                                   ": model_type: missing (a Hugging Face "
                                   "config.json names its architecture)");
  HfTranslation translate = FindHfTranslation(model_type);
  // NB: Gemma3ForConditionalGeneration's config nests the text model's.
  if (model_type == "gemma3")
    return Status::InvalidArgument(
        file +
        ": model_type: 'gemma3' is Gemma-3 with its SigLIP vision tower and "
        "projector, which are not modelled: give its text_config as a "
        "config.json of model_type gemma3_text (the text model alone)");
  if (translate == nullptr) {
    return Status::InvalidArgument(
        file + ": model_type: '" + model_type +
        "' is not supported (supported: " + Join(HfTranslatedTypes()) + ")");
  }
  FamilyConfig fc;
  translate(model_type, keys, fc);
  if (!keys.ok()) return keys.status();

  std::string text;
  for (const auto& [k, v] : fc.items)
    text += (text.empty() ? "" : ",") + k + "=" + v;
  for (const auto& [k, v] : keys.UnreadOverrides()) {
    if (!IsRunSetting(k)) {
      std::vector<std::string> settings(std::begin(kRunSettings),
                                        std::end(kRunSettings));
      return Status::InvalidArgument(
          "BuildNamedModel.config: key '" + k + "' is neither read from " +
          file + " (model_type " + model_type + ") nor a run setting (" +
          Join(settings) + ")");
    }
    text += (text.empty() ? "" : ",") + k + "=" + v;
  }
  Result<BuiltModel> built = BuildNamedModel(fc.family, text);
  if (!built.ok())
    return Status::InvalidArgument(file + " (model_type " + model_type +
                                   "): " + built.status().message());
  BuiltModel m = std::move(built).value();
  std::vector<std::string> notes = {file + ": model_type " + model_type +
                                    " built as the " + fc.family + " family"};
  for (std::string& n : fc.notes) notes.push_back(file + ": " + n);
  if (std::vector<std::string> unread = keys.UnreadFileKeys(); !unread.empty())
    notes.push_back(
        file +
        ": keys not used (no effect on the costs modelled): " + Join(unread));
  m.notes.insert(m.notes.begin(), notes.begin(), notes.end());
  return m;
}

}  // namespace torchcost::builder
