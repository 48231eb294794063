// A short list of ints that keeps its first few in place: a node's input and
// output value ids, and the per-node lists of the passes and of a step's
// simulation, almost all of which hold a handful of ints.
#ifndef TORCHCOST_INLINE_INTS_H_
#define TORCHCOST_INLINE_INTS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace torchcost::ir {

// A list of ints, in place up to kInline of them, else on the heap; read and
// appended to as a std::vector<int>.
// NB: 8 + 4 * kInline bytes (kInline even), against a std::vector's 24 plus a
// heap block (32 bytes or more with malloc's header): a 1M-node graph holds
// millions of these lists, and copying one in place allocates nothing.
template <uint32_t kInline>
class InlineInts {
  static_assert(kInline >= 2 && kInline % 2 == 0,
                "the in-place ints fill the pointer's 8-byte slots");

 public:
  using value_type = int;
  using size_type = size_t;
  using iterator = int*;
  using const_iterator = const int*;

  InlineInts() = default;
  InlineInts(std::initializer_list<int> values)
      : InlineInts(values.begin(), values.end()) {}
  // The ints of [first, last).
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  InlineInts(It first, It last) {
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(*first);
  }
  // NB: implicit, as from the std::vector<int> lists it replaced.
  InlineInts(const std::vector<int>& values)  // NOLINT(runtime/explicit)
      : InlineInts(values.begin(), values.end()) {}
  InlineInts(const InlineInts& other) { CopyFrom(other); }
  InlineInts(InlineInts&& other) noexcept { Steal(&other); }
  InlineInts& operator=(const InlineInts& other) {
    if (this != &other) CopyFrom(other);
    return *this;
  }
  InlineInts& operator=(InlineInts&& other) noexcept {
    if (this != &other) {
      Release();
      Steal(&other);
    }
    return *this;
  }
  ~InlineInts() { Release(); }

  // Appends `v`.
  void push_back(int v) {
    // Doubling: amortized O(1) appends.
    if (size_ == capacity()) Grow(capacity() * 2);
    data()[size_++] = v;
  }
  // Makes room for `n` ints without further allocation.
  void reserve(size_t n) {
    if (n > capacity()) Grow(static_cast<uint32_t>(n));
  }
  // Makes the list `n` copies of `value`.
  void assign(size_t n, int value) {
    size_ = 0;
    // One allocation, not one per doubling.
    reserve(n);
    std::fill_n(data(), n, value);
    size_ = static_cast<uint32_t>(n);
  }
  // Keeps the first `n` ints, or appends copies of `value` up to `n`.
  void resize(size_t n, int value = 0) {
    reserve(n);
    if (n > size_) std::fill_n(data() + size_, n - size_, value);
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
  int& front() { return data()[0]; }
  int front() const { return data()[0]; }
  int& back() { return data()[size_ - 1]; }
  int back() const { return data()[size_ - 1]; }
  int* begin() { return data(); }
  int* end() { return data() + size_; }
  const int* begin() const { return data(); }
  const int* end() const { return data() + size_; }
  int* data() { return on_heap() ? u_.heap : u_.inline_values; }
  const int* data() const { return on_heap() ? u_.heap : u_.inline_values; }

  // Returns true if both hold the same ints in the same order.
  friend bool operator==(const InlineInts& a, const InlineInts& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const InlineInts& a, const InlineInts& b) {
    return !(a == b);
  }

 private:
  bool on_heap() const { return heap_capacity_ != 0; }
  uint32_t capacity() const { return on_heap() ? heap_capacity_ : kInline; }

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
  // NB: keeps this list's heap block when it is large enough.
  void CopyFrom(const InlineInts& other) {
    size_ = 0;
    reserve(other.size_);
    std::memcpy(data(), other.data(), other.size_ * sizeof(int));
    size_ = other.size_;
  }
  void Steal(InlineInts* other) {
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

#endif  // TORCHCOST_INLINE_INTS_H_
