// Parses the module attributes file (format "torchcost.modules", version 1;
// tools/export/module_attrs.py documents it).
#include "import/module_attrs.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace torchcost::import {

Result<ModuleAttrsMap> ParseModuleAttrs(const std::string& text,
                                        const std::string& where) {
  const nlohmann::json doc =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::ParseError(where + ": not valid JSON");
  if (!doc.is_object() || !doc.contains("format") ||
      doc["format"] != "torchcost.modules") {
    return Status::InvalidArgument(
        where + ": key 'format': expected \"torchcost.modules\"");
  }
  if (!doc.contains("version") || doc["version"] != 1) {
    return Status::InvalidArgument(where + ": key 'version': expected 1");
  }
  if (!doc.contains("modules") || !doc["modules"].is_object()) {
    return Status::InvalidArgument(where +
                                   ": key 'modules': expected an object");
  }
  ModuleAttrsMap out;
  for (const auto& [path, m] : doc["modules"].items()) {
    const std::string at = where + ": module '" + path + "'";
    if (!m.is_object())
      return Status::InvalidArgument(at + ": expected an object");
    ModuleAttrs attrs;
    if (m.contains("type")) {
      if (!m["type"].is_string())
        return Status::InvalidArgument(at + ": key 'type': expected a string");
      attrs.type = m["type"].get<std::string>();
    }
    if (m.contains("training")) {
      if (!m["training"].is_boolean())
        return Status::InvalidArgument(at +
                                       ": key 'training': expected a bool");
      attrs.training = m["training"].get<bool>();
    }
    if (m.contains("attrs")) {
      if (!m["attrs"].is_object())
        return Status::InvalidArgument(at +
                                       ": key 'attrs': expected an object");
      for (const auto& [name, v] : m["attrs"].items()) {
        if (v.is_boolean()) {
          attrs.numbers[name] = v.get<bool>() ? 1.0 : 0.0;
        } else if (v.is_number()) {
          attrs.numbers[name] = v.get<double>();
        } else if (v.is_string()) {
          attrs.strings[name] = v.get<std::string>();
        } else {
          return Status::InvalidArgument(
              at + ": attribute '" + name +
              "': expected a number, bool or string");
        }
      }
    }
    out.emplace(path, std::move(attrs));
  }
  return out;
}

}  // namespace torchcost::import
