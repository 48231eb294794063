// A short list that keeps its first few elements in place: a node's input and
// output value ids, the per-node lists of the passes and of a step's
// simulation, and tensor shapes, almost all of which hold a handful of items.
#ifndef TORCHCOST_INLINE_LIST_H_
#define TORCHCOST_INLINE_LIST_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace torchcost {

// A list of trivially copyable `T`, in place up to kInline of them, else on
// the heap; read and written as a std::vector<T>.
// NB: 8 + max(sizeof(T) * kInline, 8) bytes, against a std::vector's 24 plus a
// heap block (32 bytes or more with malloc's header): a graph holds millions of
// these lists, and copying one in place allocates nothing.
template <typename T, uint32_t kInline>
class InlineList {
  static_assert(std::is_trivially_copyable_v<T>,
                "elements are copied and moved as bytes");
  static_assert(kInline >= 1, "at least one element in place");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;

  InlineList() = default;
  InlineList(std::initializer_list<T> values)
      : InlineList(values.begin(), values.end()) {}
  // `n` default elements.
  explicit InlineList(size_t n) { resize(n); }
  // `n` copies of `value`.
  InlineList(size_t n, const T& value) { assign(n, value); }
  // The elements of [first, last).
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  InlineList(It first, It last) {
    assign(first, last);
  }
  // NB: implicit, as from the std::vector lists it replaced.
  InlineList(const std::vector<T>& values)  // NOLINT(runtime/explicit)
      : InlineList(values.begin(), values.end()) {}
  InlineList(const InlineList& other) { CopyFrom(other); }
  InlineList(InlineList&& other) noexcept { Steal(&other); }
  InlineList& operator=(const InlineList& other) {
    if (this != &other) CopyFrom(other);
    return *this;
  }
  InlineList& operator=(InlineList&& other) noexcept {
    if (this != &other) {
      Release();
      Steal(&other);
    }
    return *this;
  }
  InlineList& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~InlineList() { Release(); }

  // Appends `v`.
  void push_back(const T& v) {
    // Doubling: amortized O(1) appends. NB: `v` may be an element of this
    // list, so it is copied before the elements move.
    if (size_ == capacity()) {
      const T copy = v;
      Grow(capacity() * 2);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  // Appends a `T` made of `args`.
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  // Removes the last element.
  void pop_back() { --size_; }
  // Makes room for `n` elements without further allocation.
  void reserve(size_t n) {
    if (n > capacity()) Grow(static_cast<uint32_t>(n));
  }
  // Makes the list `n` copies of `value`.
  void assign(size_t n, const T& value) {
    const T copy = value;
    size_ = 0;
    // One allocation, not one per doubling.
    reserve(n);
    std::fill_n(data(), n, copy);
    size_ = static_cast<uint32_t>(n);
  }
  // Makes the list the elements of [first, last).
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  void assign(It first, It last) {
    size_ = 0;
    if constexpr (std::is_base_of_v<
                      std::forward_iterator_tag,
                      typename std::iterator_traits<It>::iterator_category>) {
      reserve(static_cast<size_t>(std::distance(first, last)));
    }
    for (; first != last; ++first) push_back(T(*first));
  }
  // Keeps the first `n` elements, or appends copies of `value` up to `n`.
  void resize(size_t n, const T& value = T()) {
    const T copy = value;
    reserve(n);
    if (n > size_) std::fill_n(data() + size_, n - size_, copy);
    size_ = static_cast<uint32_t>(n);
  }
  // Inserts `value` before `pos`; returns where it is.
  iterator insert(const_iterator pos, const T& value) {
    const size_t at = static_cast<size_t>(pos - begin());
    push_back(value);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  // Inserts `n` copies of `value` before `pos`; returns where the first is.
  iterator insert(const_iterator pos, size_t n, const T& value) {
    const size_t at = static_cast<size_t>(pos - begin());
    const size_t old = size_;
    resize(old + n, value);
    std::rotate(begin() + at, begin() + old, end());
    return begin() + at;
  }
  // Inserts the elements of [first, last) before `pos`; returns where the
  // first is.
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    const size_t old = size_;
    for (; first != last; ++first) push_back(T(*first));
    std::rotate(begin() + at, begin() + old, end());
    return begin() + at;
  }
  // Removes the element at `pos`; returns the position after it.
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  // Removes [first, last); returns the position after them.
  iterator erase(const_iterator first, const_iterator last) {
    T* f = begin() + (first - begin());
    T* l = begin() + (last - begin());
    std::copy(l, end(), f);
    size_ -= static_cast<uint32_t>(l - f);
    return f;
  }
  // Removes every element (keeps the heap block, if any).
  void clear() { size_ = 0; }
  // Returns the number of elements.
  size_t size() const { return size_; }
  // Returns true if there are none.
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::reverse_iterator<T*> rbegin() {
    return std::reverse_iterator<T*>(end());
  }
  std::reverse_iterator<T*> rend() {
    return std::reverse_iterator<T*>(begin());
  }
  std::reverse_iterator<const T*> rbegin() const {
    return std::reverse_iterator<const T*>(end());
  }
  std::reverse_iterator<const T*> rend() const {
    return std::reverse_iterator<const T*>(begin());
  }
  T* data() { return on_heap() ? u_.heap : u_.inline_values; }
  const T* data() const { return on_heap() ? u_.heap : u_.inline_values; }
  // Returns the elements as a std::vector.
  std::vector<T> ToVector() const { return std::vector<T>(begin(), end()); }

  // Returns true if both hold equal elements in the same order.
  friend bool operator==(const InlineList& a, const InlineList& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const InlineList& a, const InlineList& b) {
    return !(a == b);
  }

 private:
  bool on_heap() const { return heap_capacity_ != 0; }
  uint32_t capacity() const { return on_heap() ? heap_capacity_ : kInline; }

  // Moves the elements to a heap block of `capacity` (more than they need).
  void Grow(uint32_t capacity) {
    T* heap = static_cast<T*>(::operator new(capacity * sizeof(T)));
    std::memcpy(static_cast<void*>(heap), data(), size_ * sizeof(T));
    Release();
    u_.heap = heap;
    heap_capacity_ = capacity;
  }
  void Release() {
    if (on_heap()) ::operator delete(u_.heap);
    heap_capacity_ = 0;
  }
  // NB: keeps this list's heap block when it is large enough.
  void CopyFrom(const InlineList& other) {
    size_ = 0;
    reserve(other.size_);
    std::memcpy(static_cast<void*>(data()), other.data(),
                other.size_ * sizeof(T));
    size_ = other.size_;
  }
  void Steal(InlineList* other) {
    size_ = other->size_;
    heap_capacity_ = other->heap_capacity_;
    std::memcpy(static_cast<void*>(&u_), &other->u_, sizeof(u_));
    other->size_ = 0;
    other->heap_capacity_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t heap_capacity_ = 0;  // 0: the elements are in place.
  // NB: its own constructor, as T may have default member initializers; zeroed
  // so that a copy of it never reads unset bytes.
  union Storage {
    Storage() { std::memset(static_cast<void*>(this), 0, sizeof(*this)); }
    T inline_values[kInline];
    T* heap;
  } u_;
};

}  // namespace torchcost

#endif  // TORCHCOST_INLINE_LIST_H_
