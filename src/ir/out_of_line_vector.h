// A list that keeps nothing in place but a pointer: for per-node lists that
// are almost always empty (rules::Applied's backward transcendentals,
// temporaries, backward workspace and byte overrides).
#ifndef TORCHCOST_SRC_IR_OUT_OF_LINE_VECTOR_H_
#define TORCHCOST_SRC_IR_OUT_OF_LINE_VECTOR_H_

#include <memory>
#include <utility>
#include <vector>

namespace torchcost::ir {

// A std::vector<T> on the heap, made on the first append.
// NB: 8 bytes when empty, against a std::vector's 24; a non-empty one costs a
// heap block more. A 1M-node graph's analysis holds one per list per node.
template <typename T>
class OutOfLineVector {
 public:
  OutOfLineVector() = default;
  OutOfLineVector(const OutOfLineVector& o)
      : v_(o.v_ ? std::make_unique<std::vector<T>>(*o.v_) : nullptr) {}
  OutOfLineVector(OutOfLineVector&&) noexcept = default;
  OutOfLineVector& operator=(const OutOfLineVector& o) {
    if (this != &o)
      v_ = o.v_ ? std::make_unique<std::vector<T>>(*o.v_) : nullptr;
    return *this;
  }
  OutOfLineVector& operator=(OutOfLineVector&&) noexcept = default;

  // Returns the number of elements.
  size_t size() const { return v_ ? v_->size() : 0; }
  // Returns true if there are none.
  bool empty() const { return size() == 0; }
  // Returns element `i` (i < size()).
  const T& operator[](size_t i) const { return (*v_)[i]; }
  T& operator[](size_t i) { return (*v_)[i]; }
  const T* begin() const { return v_ ? v_->data() : nullptr; }
  const T* end() const { return v_ ? v_->data() + v_->size() : nullptr; }
  T* begin() { return v_ ? v_->data() : nullptr; }
  T* end() { return v_ ? v_->data() + v_->size() : nullptr; }

  // Appends `x`.
  void push_back(T x) {
    if (!v_) v_ = std::make_unique<std::vector<T>>();
    v_->push_back(std::move(x));
  }
  // Removes every element (and the heap block).
  void clear() { v_.reset(); }

  // Returns true if both hold equal elements.
  bool operator==(const OutOfLineVector& o) const {
    return size() == o.size() && (empty() || *v_ == *o.v_);
  }
  bool operator!=(const OutOfLineVector& o) const { return !(*this == o); }

 private:
  std::unique_ptr<std::vector<T>> v_;
};

}  // namespace torchcost::ir

#endif  // TORCHCOST_SRC_IR_OUT_OF_LINE_VECTOR_H_
