#include "rules/yaml_node.h"

namespace torchcost::rules {

const std::string& YamlNode::Scalar() const {
  static const std::string* const kEmpty = new std::string();
  return IsScalar() ? data_->scalar : *kEmpty;
}

std::string YamlNode::Tag() const {
  if (data_ == nullptr) return "";
  return IsScalar() && data_->quoted ? "!" : "?";
}

size_t YamlNode::size() const {
  return IsSequence() || IsMap() ? data_->items.size() : 0;
}

YamlNode YamlNode::operator[](std::string_view key) const {
  if (!IsMap()) return YamlNode();
  for (const YamlItem& e : data_->items) {
    if (e.first.IsScalar() && e.first.Scalar() == key) return e.second;
  }
  return YamlNode();
}

YamlNode YamlNode::operator[](size_t i) const {
  if (!IsSequence() || i >= data_->items.size()) return YamlNode();
  return data_->items[i];
}

const YamlItem* YamlNode::begin() const {
  return IsSequence() || IsMap() ? data_->items.data() : nullptr;
}

const YamlItem* YamlNode::end() const {
  return IsSequence() || IsMap() ? data_->items.data() + data_->items.size()
                                 : nullptr;
}

YamlNode::Data* YamlDocument::NewNode(YamlNode::Kind kind, YamlMark mark) {
  YamlNode::Data& d = nodes_.emplace_back();
  d.kind = kind;
  d.mark = mark;
  return &d;
}

bool SameYamlTree(YamlNode a, YamlNode b, std::string* difference) {
  auto differ = [&](const std::string& what) {
    if (difference != nullptr) {
      *difference = what + " at " + std::to_string(a.Mark().line) + ":" +
                    std::to_string(a.Mark().column) + " vs " +
                    std::to_string(b.Mark().line) + ":" +
                    std::to_string(b.Mark().column);
    }
    return false;
  };
  if (a.IsDefined() != b.IsDefined()) return differ("defined");
  if (!a.IsDefined()) return true;
  const YamlNode::Data& x = *a.data();
  const YamlNode::Data& y = *b.data();
  if (x.kind != y.kind) return differ("kind");
  if (x.mark.line != y.mark.line || x.mark.column != y.mark.column)
    return differ("mark");
  if (x.kind == YamlNode::Kind::kScalar &&
      (x.scalar != y.scalar || x.quoted != y.quoted)) {
    return differ("scalar '" + x.scalar + "' vs '" + y.scalar + "'");
  }
  if (x.items.size() != y.items.size()) return differ("size");
  for (size_t i = 0; i < x.items.size(); ++i) {
    const YamlItem& p = x.items[i];
    const YamlItem& q = y.items[i];
    if (!SameYamlTree(p, q, difference) ||
        !SameYamlTree(p.first, q.first, difference) ||
        !SameYamlTree(p.second, q.second, difference)) {
      return false;
    }
  }
  return true;
}

}  // namespace torchcost::rules
