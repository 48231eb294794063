// Hugging Face config.json files as model graphs: the file's model_type picks
// the builder family that expresses the architecture (docs/hf-config.md lists
// each model_type's keys, what they become, and what is left out), so
// `BuildNamedModel("path/config.json", "hidden_size=2048")` builds the model
// the file describes, with the file's keys overridden.
#ifndef TORCHCOST_HF_CONFIG_H_
#define TORCHCOST_HF_CONFIG_H_

#include <string>
#include <vector>

#include "torchcost/builder.h"
#include "torchcost/status.h"

namespace torchcost::builder {

// Returns true if BuildNamedModel reads `name` as a config file (it ends in
// ".json").
bool IsHfConfigPath(const std::string& name);

// Builds the model the config file at `path` describes. `overrides`
// ("hidden_size=2048,dtype=bf16") replaces the file's keys, or sets the
// family's run settings (dtype, attn, tp, sp, make_vocab_size_divisible_by).
// Keys the translation does not read become one note of the model; an
// unreadable file, an unsupported model_type, or a missing or bad key is a
// one-line error naming the file and the key.
Result<BuiltModel> BuildHfConfig(const std::string& path,
                                 const std::string& overrides);

// Builds the model of the config text `json`; `file` names it in errors and
// notes.
Result<BuiltModel> BuildHfConfigText(const std::string& json,
                                     const std::string& file,
                                     const std::string& overrides);

// Returns the model_type values BuildHfConfig supports.
std::vector<std::string> HfModelTypes();

}  // namespace torchcost::builder

#endif  // TORCHCOST_HF_CONFIG_H_
