// An index of the objects of a vector by a string each holds (a scope's path,
// a value's name), storing no copy of the strings.
#ifndef TORCHCOST_KEY_INDEX_H_
#define TORCHCOST_KEY_INDEX_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchcost {

// Indexes the objects of a std::vector<Object> by their string member `Key`:
// open addressing over (hash, position) slots that compare a key with the
// objects' own strings, so indexing copies no string and allocates only when
// the table doubles. The vector is passed to each call (it may have moved).
// NB: a std::unordered_map<std::string, int> holds a node, a copy of the key
// and a bucket per object: for a million values, most of an import's memory.
template <typename Object, std::string Object::*Key>
class KeyIndex {
 public:
  // Returns the position in `objects` of the indexed object whose key is
  // `key`, or -1.
  int Find(const std::vector<Object>& objects, std::string_view key) const {
    if (slots_.empty()) return -1;
    return slots_[Probe(objects, key, Hash(key))].index;
  }
  // Indexes objects[i] under its key and returns true; returns false, indexing
  // nothing, if an object with that key is indexed (the first one wins).
  bool Insert(const std::vector<Object>& objects, int i) {
    if (2 * (size_ + 1) > slots_.size())
      Rehash(std::max<size_t>(16, 2 * slots_.size()));
    const std::string_view key = objects[i].*Key;
    const uint32_t h = Hash(key);
    Slot& s = slots_[Probe(objects, key, h)];
    if (s.index >= 0) return false;
    s = Slot{h, i};
    ++size_;
    return true;
  }
  // Makes room for `n` objects in all.
  void Reserve(size_t n) {
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    if (capacity > slots_.size()) Rehash(capacity);
  }
  // Forgets every object.
  void Clear() {
    slots_.clear();
    size_ = 0;
  }
  // Returns the number of objects indexed.
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t hash = 0;
    int index = -1;  // -1: empty.
  };

  static uint32_t Hash(std::string_view key) {
    return static_cast<uint32_t>(std::hash<std::string_view>()(key));
  }
  // Returns the slot of `key` (hash `h`): its object's, or the empty one where
  // it would go. NB: linear probing; the table is at most half full.
  size_t Probe(const std::vector<Object>& objects, std::string_view key,
               uint32_t h) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.index < 0 || (s.hash == h && objects[s.index].*Key == key))
        return i;
    }
  }
  // Moves the slots to a table of `capacity` (a power of two).
  void Rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    const size_t mask = capacity - 1;
    for (const Slot& s : old) {
      if (s.index < 0) continue;
      size_t j = s.hash & mask;
      while (slots_[j].index >= 0) j = (j + 1) & mask;
      slots_[j] = s;
    }
  }

  std::vector<Slot> slots_;  // A power of two in size, at most half full.
  size_t size_ = 0;
};

}  // namespace torchcost

#endif  // TORCHCOST_KEY_INDEX_H_
