// A tensor's bytes once per distinct shape and dtype: a model repeats its
// layers, so most of a step's tensors share a few shapes (a 32-layer Llama's
// ~2,000 tensors have ~50), and each symbolic product would be built again.
#ifndef TORCHCOST_SRC_MEMORY_BYTES_CACHE_H_
#define TORCHCOST_SRC_MEMORY_BYTES_CACHE_H_

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "rules/value.h"
#include "torchcost/sym.h"

namespace torchcost::memory {

// BytesOf, remembered by shape and dtype.
// NB: holds pointers to the shapes it was given, which must outlive it.
class BytesCache {
 public:
  // Returns BytesOf(t).
  sym::Expr Of(const rules::TensorType& t);
  // Returns how many distinct shapes and dtypes it holds.
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    const sym::Shape* shape;
    DType dtype;
    sym::Expr bytes;
    int next;  // The next entry of the same hash, or -1.
  };
  std::unordered_map<size_t, int> head_;  // Hash -> its latest entry.
  std::vector<Entry> entries_;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_BYTES_CACHE_H_
