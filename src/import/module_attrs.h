// The module attributes a TorchScript archive loses (plain Python attributes
// such as nn.MultiheadAttention's `dropout`), read from the extra file
// tools/export/module_attrs.py writes into the archive.
#ifndef TORCHCOST_SRC_IMPORT_MODULE_ATTRS_H_
#define TORCHCOST_SRC_IMPORT_MODULE_ATTRS_H_

#include <map>
#include <string>
#include <unordered_map>

#include "torchcost/status.h"

namespace torchcost::import {

// The name of the extra file in the archive (torch.jit.save's `_extra_files`).
inline constexpr char kModuleAttrsFile[] = "torchcost_modules.json";

// What was recorded of one module.
struct ModuleAttrs {
  std::string type;  // Class name ("MultiheadAttention").
  // The module's mode when it was traced.
  bool training = false;
  // Number and bool attributes (bools as 0 / 1).
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> strings;
};

// Module path ("layers.0.self_attn") -> its attributes.
using ModuleAttrsMap = std::unordered_map<std::string, ModuleAttrs>;

// Parses the extra file's text; `where` names it in errors ("m.pt:
// torchcost_modules.json").
Result<ModuleAttrsMap> ParseModuleAttrs(const std::string& text,
                                        const std::string& where);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_MODULE_ATTRS_H_
