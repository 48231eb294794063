// The argument names of a node's inputs (from the op's schema), one list
// shared by the copies of a node.
#ifndef TORCHCOST_ARG_NAMES_H_
#define TORCHCOST_ARG_NAMES_H_

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace torchcost::ir {

// An immutable list of names once shared: copying one copies a pointer; an
// append to a shared list first copies it for this one (copy on write).
// NB: a decoder layer's nodes are copied once per layer (the builder's
// Replay); sharing their name lists saves an allocation per node and list.
// The count of owners is atomic, so copies may live on several threads.
class ArgNames {
 public:
  using value_type = std::string;
  using size_type = size_t;
  using const_iterator = const std::string*;
  using iterator = const_iterator;

  ArgNames() = default;
  ArgNames(std::vector<std::string> names)  // NOLINT: implicit, as a vector.
      : names_(names.empty() ? nullptr
                             : std::make_shared<std::vector<std::string>>(
                                   std::move(names))) {}
  ArgNames(std::initializer_list<std::string> names)
      : ArgNames(std::vector<std::string>(names)) {}

  // Returns the number of names.
  size_t size() const { return names_ ? names_->size() : 0; }
  // Returns true if there are none (the names are unknown).
  bool empty() const { return size() == 0; }
  // Returns name `i` (i < size()).
  const std::string& operator[](size_t i) const { return (*names_)[i]; }
  // Returns the last name (non-empty lists only).
  const std::string& back() const { return names_->back(); }
  const std::string* begin() const { return names_ ? names_->data() : nullptr; }
  const std::string* end() const {
    return names_ ? names_->data() + names_->size() : nullptr;
  }

  // Makes room for `n` names.
  void reserve(size_t n) { Own().reserve(n); }
  // Appends `name`.
  void push_back(std::string name) { Own().push_back(std::move(name)); }

  // Returns true if both hold the same names in the same order.
  friend bool operator==(const ArgNames& a, const ArgNames& b) {
    return a.names_ == b.names_ ||
           (a.size() == b.size() && (a.empty() || *a.names_ == *b.names_));
  }
  friend bool operator!=(const ArgNames& a, const ArgNames& b) {
    return !(a == b);
  }

 private:
  // Returns this list's names to change, copied first if shared.
  // NB: use_count() == 1 means no other ArgNames holds them, on any thread.
  std::vector<std::string>& Own() {
    if (!names_) {
      names_ = std::make_shared<std::vector<std::string>>();
    } else if (names_.use_count() != 1) {
      names_ = std::make_shared<std::vector<std::string>>(*names_);
    }
    return *names_;
  }

  std::shared_ptr<std::vector<std::string>> names_;  // Null: no names.
};

// Hands out one shared ArgNames per distinct sequence of names, so the nodes
// of a graph that name their arguments alike hold one list between them.
class ArgNamesPool {
 public:
  // Returns the list of the names `name_of(item)` of `items` (each a string or
  // string_view without '\0'), the same list for equal sequences; empty for
  // no items.
  template <typename Items, typename NameOf>
  ArgNames Intern(const Items& items, NameOf name_of) {
    if (items.empty()) return {};
    // NB: names hold no '\0', so the joined key tells sequences apart.
    key_.clear();
    for (const auto& item : items) key_.append(name_of(item)).push_back('\0');
    auto [it, added] = lists_.try_emplace(key_);
    if (added) {
      std::vector<std::string> names;
      names.reserve(items.size());
      for (const auto& item : items) names.emplace_back(name_of(item));
      it->second = ArgNames(std::move(names));
    }
    return it->second;
  }

 private:
  std::unordered_map<std::string, ArgNames> lists_;  // By the joined names.
  std::string key_;  // The key being built (kept to reuse its buffer).
};

}  // namespace torchcost::ir

#endif  // TORCHCOST_ARG_NAMES_H_
