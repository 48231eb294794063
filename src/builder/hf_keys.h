// The keys of one Hugging Face config.json as a translation reads them: the
// overrides first, then the file; every key read is remembered, so the keys
// nobody read can be listed, and the first bad key becomes a one-line error
// naming the file and the key.
#ifndef TORCHCOST_SRC_BUILDER_HF_KEYS_H_
#define TORCHCOST_SRC_BUILDER_HF_KEYS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "torchcost/status.h"

namespace torchcost::builder {

class HfKeys {
 public:
  // Reads `config` (a JSON object) named `file`, with `overrides` (key ->
  // value text) taking precedence over the file's keys.
  HfKeys(const nlohmann::json& config,
         std::map<std::string, std::string> overrides, std::string file);

  // Reads a required positive integer; false (and the error recorded) if
  // missing, null or bad.
  bool Int(const std::string& key, int64_t* out);
  // Reads an optional integer (> 0 unless `allow_zero`); *out keeps its default
  // when absent or null.
  void OptInt(const std::string& key, int64_t* out, bool allow_zero = false);
  // Reads an optional number; *out keeps its default when absent or null.
  void OptDouble(const std::string& key, double* out);
  // Reads an optional boolean; *out keeps its default when absent or null.
  void OptBool(const std::string& key, bool* out);
  // Reads an optional string; *out keeps its default when absent or null.
  void OptString(const std::string& key, std::string* out);
  // Returns true if the key is given (by an override or the file) and not null;
  // marks it read.
  bool Has(const std::string& key);
  // Returns true if the key is given at all (by an override or the file), null
  // included; marks it read.
  bool Given(const std::string& key);
  // Returns the key's JSON value (null if absent), marking it read; overrides
  // give strings.
  nlohmann::json Raw(const std::string& key);

  // Records an error on `key` (the first one wins): "<file>: <key>: <problem>".
  void Fail(const std::string& key, const std::string& problem);
  // Returns the first error, or Ok.
  Status status() const;
  bool ok() const { return error_.empty(); }
  const std::string& file() const { return file_; }

  // Returns the file's keys that no read asked for, in file order.
  std::vector<std::string> UnreadFileKeys() const;
  // Returns the overrides no read asked for, as (key, value), in key order.
  std::vector<std::pair<std::string, std::string>> UnreadOverrides() const;

 private:
  // Returns the override text of `key`, or nullptr; marks the key read.
  const std::string* Override(const std::string& key);
  // Returns the file's value of `key`, or nullptr when absent; marks the key
  // read.
  const nlohmann::json* FileValue(const std::string& key);

  const nlohmann::json& config_;
  std::map<std::string, std::string> overrides_;
  std::string file_;
  std::set<std::string> read_;
  std::string error_;
};

// What a translation makes of a config: a family, its config items
// ("layers" -> "32") and notes on what the family leaves out.
struct FamilyConfig {
  std::string family;
  std::vector<std::pair<std::string, std::string>> items;
  std::vector<std::string> notes;
};

// Translates the config of one model_type into a family config.
using HfTranslation = void (*)(const std::string& model_type, HfKeys& keys,
                               FamilyConfig& out);

// Returns the translation of `model_type`, or nullptr when none exists.
HfTranslation FindHfTranslation(const std::string& model_type);

// Returns the model_type values with a translation, sorted.
std::vector<std::string> HfTranslatedTypes();

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_HF_KEYS_H_
