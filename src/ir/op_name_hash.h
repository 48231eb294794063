// A hash of op names for the passes' per-op tables: a few instructions a
// name, where std::hash of a string_view (murmur over every byte) is ~60.
#ifndef TORCHCOST_SRC_IR_OP_NAME_HASH_H_
#define TORCHCOST_SRC_IR_OP_NAME_HASH_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace torchcost::ir {

// Hashes an op name by its length and its last eight bytes (or fewer).
// NB: op names share their namespace prefix ("aten::"), and few ops share a
// length and a tail; a table's equality still compares the whole name.
struct OpNameHash {
  size_t operator()(std::string_view name) const {
    uint64_t tail = 0;
    const size_t k = std::min<size_t>(name.size(), sizeof(tail));
    std::memcpy(&tail, name.data() + name.size() - k, k);
    // Fibonacci hashing: the odd multiplier spreads the bytes over the word.
    return static_cast<size_t>((tail ^ name.size()) * 0x9E3779B97F4A7C15ull);
  }
};

}  // namespace torchcost::ir

#endif  // TORCHCOST_SRC_IR_OP_NAME_HASH_H_
