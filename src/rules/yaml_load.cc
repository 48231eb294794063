#include "rules/yaml_load.h"

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>

#include "rules/yaml_subset.h"

namespace torchcost::rules {
namespace {

YamlNode Convert(const YAML::Node& n, YamlDocument& doc) {
  YamlNode::Kind kind = YamlNode::Kind::kNull;
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      kind = YamlNode::Kind::kScalar;
      break;
    case YAML::NodeType::Sequence:
      kind = YamlNode::Kind::kSequence;
      break;
    case YAML::NodeType::Map:
      kind = YamlNode::Kind::kMap;
      break;
    default:
      break;
  }
  YamlNode::Data* d =
      doc.NewNode(kind, YamlMark{n.Mark().line, n.Mark().column});
  if (kind == YamlNode::Kind::kScalar) {
    d->scalar = n.Scalar();
    d->quoted = n.Tag() == "!";
  } else if (kind == YamlNode::Kind::kSequence) {
    for (const auto& item : n) d->items.emplace_back(Convert(item, doc));
  } else if (kind == YamlNode::Kind::kMap) {
    for (const auto& kv : n)
      d->items.emplace_back(Convert(kv.first, doc), Convert(kv.second, doc));
  }
  return YamlNode(d);
}

}  // namespace

Result<YamlDocument> LoadYamlWithYamlCpp(std::string_view text,
                                         YamlMark* error_mark) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    YamlDocument doc;
    doc.set_root(Convert(root, doc));
    return doc;
  } catch (const YAML::Exception& e) {
    if (error_mark != nullptr)
      *error_mark = YamlMark{e.mark.line, e.mark.column};
    return Status::ParseError(e.msg);
  }
}

Result<YamlDocument> LoadYaml(std::string_view text, YamlMark* error_mark) {
  Result<YamlDocument> fast = ParseYamlSubset(text);
  if (fast.ok()) return fast;
  return LoadYamlWithYamlCpp(text, error_mark);
}

}  // namespace torchcost::rules
