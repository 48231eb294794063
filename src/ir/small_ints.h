// A short list of ints that keeps up to two in place: the per-node lists of
// the passes and of a step's simulation (argument values, gradient inputs,
// storages), almost all of which hold zero, one or two ints.
#ifndef TORCHCOST_SRC_IR_SMALL_INTS_H_
#define TORCHCOST_SRC_IR_SMALL_INTS_H_

#include <cstdint>
#include <cstring>
#include <utility>

namespace torchcost::ir {

// A list of ints, in place up to kInline of them, else on the heap.
// NB: 16 bytes, against a std::vector's 24 plus a heap block (32 bytes with
// malloc's header) for its first element: a 1M-node graph's analysis holds
// several million of these lists.
class SmallInts {
 public:
  static constexpr uint32_t kInline = 2;

  SmallInts() = default;
  SmallInts(const SmallInts& other) { CopyFrom(other); }
  SmallInts(SmallInts&& other) noexcept { Steal(&other); }
  SmallInts& operator=(const SmallInts& other) {
    if (this != &other) {
      Release();
      CopyFrom(other);
    }
    return *this;
  }
  SmallInts& operator=(SmallInts&& other) noexcept {
    if (this != &other) {
      Release();
      Steal(&other);
    }
    return *this;
  }
  ~SmallInts() { Release(); }

  // Appends `v`.
  void push_back(int v) {
    // Doubling: amortized O(1) appends.
    if (size_ == capacity()) Grow(capacity() * 2);
    data()[size_++] = v;
  }
  // Makes the list `n` copies of `value`.
  void assign(size_t n, int value) {
    size_ = 0;
    // One allocation, not one per doubling.
    if (n > capacity()) Grow(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i) data()[i] = value;
    size_ = static_cast<uint32_t>(n);
  }
  // Removes every element (keeps the heap block, if any).
  void clear() { size_ = 0; }
  // Returns the number of elements.
  size_t size() const { return size_; }
  // Returns true if there are none.
  bool empty() const { return size_ == 0; }
  int& operator[](size_t i) { return data()[i]; }
  const int& operator[](size_t i) const { return data()[i]; }
  int* begin() { return data(); }
  int* end() { return data() + size_; }
  const int* begin() const { return data(); }
  const int* end() const { return data() + size_; }

 private:
  bool on_heap() const { return heap_capacity_ != 0; }
  uint32_t capacity() const { return on_heap() ? heap_capacity_ : kInline; }
  int* data() { return on_heap() ? u_.heap : u_.inline_values; }
  const int* data() const { return on_heap() ? u_.heap : u_.inline_values; }

  // Moves the elements to a heap block of `capacity` (more than they need).
  void Grow(uint32_t capacity) {
    int* heap = new int[capacity];
    std::memcpy(heap, data(), size_ * sizeof(int));
    Release();
    u_.heap = heap;
    heap_capacity_ = capacity;
  }
  void Release() {
    if (on_heap()) delete[] u_.heap;
    heap_capacity_ = 0;
  }
  void CopyFrom(const SmallInts& other) {
    size_ = 0;
    if (other.size_ > capacity()) Grow(other.size_);
    std::memcpy(data(), other.data(), other.size_ * sizeof(int));
    size_ = other.size_;
  }
  void Steal(SmallInts* other) {
    size_ = other->size_;
    heap_capacity_ = other->heap_capacity_;
    u_ = other->u_;
    other->size_ = 0;
    other->heap_capacity_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t heap_capacity_ = 0;  // 0: the elements are in place.
  union {
    int inline_values[kInline];
    int* heap;
  } u_{};
};

}  // namespace torchcost::ir

#endif  // TORCHCOST_SRC_IR_SMALL_INTS_H_
