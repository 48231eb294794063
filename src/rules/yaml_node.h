// A read-only YAML tree with source positions: what the rule compiler reads a
// rule file as. Its accessors follow yaml-cpp's YAML::Node (the names, and what
// a missing key, a scalar's size or a collection's Scalar() give), so that a
// tree is the same whichever parser built it (rules/yaml_load.h).
#ifndef TORCHCOST_SRC_RULES_YAML_NODE_H_
#define TORCHCOST_SRC_RULES_YAML_NODE_H_

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace torchcost::rules {

// A position in the text parsed, 0-based; -1 for a node that has none.
struct YamlMark {
  int line = -1;
  int column = -1;
};

struct YamlItem;

// A handle to a node of a YamlDocument (valid while the document lives); a
// default-constructed one is undefined, as a missing key's is.
class YamlNode {
 public:
  enum class Kind { kNull, kScalar, kSequence, kMap };

  // The data of a node, owned by its document.
  struct Data {
    Kind kind = Kind::kNull;
    bool quoted = false;          // A quoted scalar ('...' or "...").
    std::string scalar;           // The scalar's value, escapes resolved.
    YamlMark mark;                // Where the node starts.
    std::vector<YamlItem> items;  // Sequence items, or map entries in order.
  };

  YamlNode() = default;
  explicit YamlNode(const Data* data) : data_(data) {}

  bool IsDefined() const { return data_ != nullptr; }
  explicit operator bool() const { return IsDefined(); }
  bool IsNull() const { return data_ != nullptr && data_->kind == Kind::kNull; }
  bool IsScalar() const {
    return data_ != nullptr && data_->kind == Kind::kScalar;
  }
  bool IsSequence() const {
    return data_ != nullptr && data_->kind == Kind::kSequence;
  }
  bool IsMap() const { return data_ != nullptr && data_->kind == Kind::kMap; }

  // The scalar's text; empty for any other node (as yaml-cpp).
  const std::string& Scalar() const;
  // "!" for a quoted scalar, "?" for any other defined node, "" if undefined
  // (yaml-cpp's tags).
  std::string Tag() const;
  // Where the node starts; -1s if undefined.
  YamlMark Mark() const { return data_ != nullptr ? data_->mark : YamlMark{}; }
  // Items of a sequence or entries of a map; 0 for anything else.
  size_t size() const;

  // The value of the first entry whose key is the scalar `key`; undefined if
  // there is none or this is not a map.
  YamlNode operator[](std::string_view key) const;
  YamlNode operator[](const char* key) const {
    return (*this)[std::string_view(key)];
  }
  // The sequence's item `i`; undefined if out of range or not a sequence.
  YamlNode operator[](size_t i) const;
  YamlNode operator[](int i) const {
    return i < 0 ? YamlNode() : (*this)[static_cast<size_t>(i)];
  }

  // Iterates a sequence's items (each a node) or a map's entries (`first`,
  // `second`).
  const YamlItem* begin() const;
  const YamlItem* end() const;

  // The node's data (its identity); nullptr if undefined.
  const Data* data() const { return data_; }

 private:
  const Data* data_ = nullptr;
};

// One element of a collection: a sequence item is the node itself; a map entry
// has its key in `first` and value in `second` (the node itself is undefined).
struct YamlItem : YamlNode {
  YamlItem() = default;
  explicit YamlItem(YamlNode item) : YamlNode(item) {}
  YamlItem(YamlNode key, YamlNode value) : first(key), second(value) {}
  YamlNode first, second;
};

// A parsed document: owns every node of the tree under `root`.
class YamlDocument {
 public:
  YamlDocument() = default;
  YamlDocument(YamlDocument&&) = default;
  YamlDocument& operator=(YamlDocument&&) = default;

  YamlNode root() const { return root_; }
  void set_root(YamlNode root) { root_ = root; }
  // A new node, owned by this document.
  YamlNode::Data* NewNode(YamlNode::Kind kind, YamlMark mark);

 private:
  std::deque<YamlNode::Data>
      nodes_;  // NB: a deque: nodes keep their addresses as it grows.
  YamlNode root_;
};

// True if `a` and `b` are the same tree: kinds, scalars, quoting, marks and
// children, recursively (for tests of one parser against another).
bool SameYamlTree(YamlNode a, YamlNode b, std::string* difference = nullptr);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_YAML_NODE_H_
