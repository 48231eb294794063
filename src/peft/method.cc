#include "torchcost/method.h"

namespace torchcost {
namespace {

// The message of a settings error without its parser's "lora: " prefix (the
// spec, quoted, names the method already).
std::string Detail(const Status& s) {
  const std::string& m = s.message();
  for (const char* prefix : {"lora: ", "qlora: "}) {
    if (m.rfind(prefix, 0) == 0) return m.substr(std::string(prefix).size());
  }
  return m;
}

}  // namespace

Result<MethodSpec> ParseMethodSpec(std::string_view text) {
  MethodSpec m;
  m.text = std::string(text);
  const size_t colon = text.find(':');
  const std::string name(text.substr(0, colon));
  m.settings = colon == std::string_view::npos
                   ? ""
                   : std::string(text.substr(colon + 1));
  if (name == "full") {
    if (!m.settings.empty())
      return Status::InvalidArgument("'" + m.text +
                                     "': full takes no settings");
    m.kind = MethodSpec::Kind::kFull;
  } else if (name == "lora" || name == "dora") {
    Result<LoraConfig> c = ParseLoraConfig(m.settings);
    if (!c.ok())
      return Status::InvalidArgument("'" + m.text + "': " + Detail(c.status()));
    m.lora = *c;
    m.kind = name == "lora" ? MethodSpec::Kind::kLora : MethodSpec::Kind::kDora;
    if (name == "dora") m.lora.use_dora = true;
  } else if (name == "qlora") {
    Result<QloraConfig> c = ParseQloraConfig(m.settings);
    if (!c.ok())
      return Status::InvalidArgument("'" + m.text + "': " + Detail(c.status()));
    m.qlora = *c;
    m.kind = MethodSpec::Kind::kQlora;
  } else if (name == "galore") {
    m.kind = MethodSpec::Kind::kGalore;
  } else {
    return Status::InvalidArgument(
        "'" + m.text + "': unknown method '" + name +
        "'; expected full, lora, dora, qlora or galore");
  }
  return m;
}

Result<ir::Graph> ApplyMethod(const ir::Graph& graph,
                              const MethodSpec& method) {
  switch (method.kind) {
    case MethodSpec::Kind::kLora:
    case MethodSpec::Kind::kDora:
      return ApplyLora(graph, method.lora);
    case MethodSpec::Kind::kQlora:
      return ApplyQlora(graph, method.qlora);
    case MethodSpec::Kind::kFull:
    case MethodSpec::Kind::kGalore:
      break;
  }
  return graph;
}

}  // namespace torchcost
