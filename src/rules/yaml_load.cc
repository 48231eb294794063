#include "rules/yaml_load.h"

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>

#include "rules/yaml_subset.h"

namespace torchcost::rules {
namespace {

// Deepest nesting and most nodes a document converts to: rule files nest a few
// levels; an alias inside its own anchor nests forever, and aliases of aliases
// multiply ("billion laughs").
constexpr int kMaxYamlDepth = 64;
constexpr int64_t kMaxYamlNodes = 1000000;

// Converts yaml-cpp's tree; past the limits, fails with the node's mark.
class Converter {
 public:
  explicit Converter(YamlDocument& doc) : doc_(doc) {}

  Status status() const { return status_; }
  const YamlMark& error_mark() const { return error_mark_; }

  YamlNode Convert(const YAML::Node& n, int depth) {
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
    const YamlMark mark{n.Mark().line, n.Mark().column};
    if (status_.ok() && (depth > kMaxYamlDepth || ++nodes_ > kMaxYamlNodes)) {
      error_mark_ = mark;
      status_ = Status::ParseError(
          depth > kMaxYamlDepth
              ? "nested deeper than " + std::to_string(kMaxYamlDepth) +
                    " levels (or an alias inside its own anchor)"
              : "more than " + std::to_string(kMaxYamlNodes) +
                    " nodes once its aliases are expanded");
    }
    YamlNode::Data* d = doc_.NewNode(kind, mark);
    if (!status_.ok()) return YamlNode(d);
    if (kind == YamlNode::Kind::kScalar) {
      d->scalar = n.Scalar();
      d->quoted = n.Tag() == "!";
    } else if (kind == YamlNode::Kind::kSequence) {
      for (const auto& item : n) {
        d->items.emplace_back(Convert(item, depth + 1));
        if (!status_.ok()) break;
      }
    } else if (kind == YamlNode::Kind::kMap) {
      for (const auto& kv : n) {
        YamlNode key = Convert(kv.first, depth + 1);
        d->items.emplace_back(key, Convert(kv.second, depth + 1));
        if (!status_.ok()) break;
      }
    }
    return YamlNode(d);
  }

 private:
  YamlDocument& doc_;
  Status status_;
  YamlMark error_mark_;
  int64_t nodes_ = 0;
};

}  // namespace

Result<YamlDocument> LoadYamlWithYamlCpp(std::string_view text,
                                         YamlMark* error_mark) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    YamlDocument doc;
    Converter converter(doc);
    doc.set_root(converter.Convert(root, 0));
    if (!converter.status().ok()) {
      if (error_mark != nullptr) *error_mark = converter.error_mark();
      return converter.status();
    }
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
