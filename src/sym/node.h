// Private representation of sym::Expr nodes, shared by the files of src/sym.
//
// The canonical form (see include/torchcost/sym.h):
//   Sum     = constant + sum_i coeff_i * term_i   (ops = [(term, coeff)])
//   Product = prod_j atom_j ^ exponent_j          (ops = [(atom, exponent)])
//   Atom    = Symbol | FloorDiv(lhs, rhs) | Min(lhs, rhs) | Max(lhs, rhs)
// A term is an atom node or a Product node. Invariants (checked by Verify):
//   - a Sum has no zero coefficient, no nested Sum, its terms sorted by
//     CompareTerms, and is never "1 * term + 0" (that is the term itself);
//   - a Product has exponents > 0, atoms sorted by CompareAtoms, and is never
//     "atom ^ 1" (that is the atom itself).
#ifndef TORCHCOST_SRC_SYM_NODE_H_
#define TORCHCOST_SRC_SYM_NODE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::sym {

// One operand of a Sum (term, coefficient) or a Product (atom, exponent).
struct Operand {
  const Node* node;
  int64_t k;
};

// One interned node; immutable once interned except for the memo fields.
struct Node {
  Kind kind;
  uint32_t num_ops = 0;
  Context* ctx = nullptr;
  size_t hash = 0;
  size_t ops_hash = 0;   // kSum / kProduct: the hash of ops alone (HashOps).
  int64_t constant = 0;  // kSum: the constant.
  int64_t degree = 1;  // As a term: 1 for atoms, sum of exponents for products.
  const Operand* ops = nullptr;  // kSum / kProduct, num_ops entries.
  Expr lhs, rhs;                 // kFloorDiv / kMin / kMax.
  std::string_view name;    // kSymbol; the bytes live in the context's arena.
  mutable Interval range;   // kSymbol.
  mutable Interval bounds;  // Memo of Context::Bounds.
  mutable uint64_t bounds_epoch =
      0;  // 0 = no memo; else the epoch it was computed in.
  // NB: a memo of the last sum AddScaled merged with this node as its left
  // operand: b's node address (| 1 for a - b; 0 = none) and a +- b. About
  // half of a training analysis's sums repeat, mostly with the same running
  // total as a, so one entry per node catches them without a table. A sum's
  // canonical form depends on its operands alone (never on the symbols'
  // ranges), so the entry stays valid for the context's life.
  mutable uintptr_t sum_operand = 0;
  mutable Expr sum_result;

  // Returns true for the kinds that may appear as factors of a Product.
  bool IsAtom() const {
    return kind == Kind::kSymbol || kind == Kind::kFloorDiv ||
           kind == Kind::kMin || kind == Kind::kMax;
  }
};

static_assert(std::is_trivially_destructible<Node>::value,
              "nodes live in an arena that never runs destructors");

// A vector with inline storage for trivially copyable T; heap only past N.
template <typename T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable<T>::value, "SmallVec holds PODs");

 public:
  SmallVec() = default;
  SmallVec(const SmallVec&) = delete;
  SmallVec& operator=(const SmallVec&) = delete;
  ~SmallVec() {
    if (data_ != inline_) delete[] data_;
  }
  void push_back(const T& v) {
    if (size_ == cap_) Grow();
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  void resize(size_t n) {
    while (cap_ < n) Grow();
    size_ = n;
  }

 private:
  void Grow() {
    size_t cap = cap_ * 2;
    T* d = new T[cap];
    std::memcpy(static_cast<void*>(d), data_, size_ * sizeof(T));
    if (data_ != inline_) delete[] data_;
    data_ = d;
    cap_ = cap;
  }
  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

using OperandVec = SmallVec<Operand, 8>;

// A view of any Expr as constant + sum of coeff * term (no copy).
struct LinView {
  int64_t constant = 0;
  const Operand* terms = nullptr;
  size_t num_terms = 0;
  Operand single{nullptr, 1};  // Storage when the Expr is a single term.
};
// Fills `v` with the linear view of `e`.
void ViewLinear(const Expr& e, LinView* v);

// A view of a term node as a product of (atom, exponent).
struct TermView {
  const Operand* factors = nullptr;
  size_t num_factors = 0;
  Operand single{nullptr, 1};
};
// Fills `v` with the factors of `term` (an atom is atom^1).
void ViewTerm(const Node* term, TermView* v);

// Structural three-way comparisons (never by address, except to shortcut
// identity). Terms: higher total degree first, then factors in order.
int CompareAtoms(const Node* a, const Node* b);
int CompareTerms(const Node* a, const Node* b);
// Non-constants before constants; otherwise as sums, term by term.
int CompareExprs(const Expr& a, const Expr& b);

// Checked int64 arithmetic; `what` names the operation in the error.
inline int64_t CheckedAdd(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    throw Error(std::string("integer overflow in ") + what);
  }
  return r;
}
inline int64_t CheckedSub(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    throw Error(std::string("integer overflow in ") + what);
  }
  return r;
}
inline int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw Error(std::string("integer overflow in ") + what);
  }
  return r;
}

// Returns floor(a / b) for b != 0 (C++ `/` truncates toward zero).
// NB: the caller guarantees b != 0 and not (a == INT64_MIN && b == -1).
template <typename T>
inline T FloorDivInt(T a, T b) {
  T q = a / b;
  // Truncation rounded up when the signs differ and the division is inexact.
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Returns gcd(|a|, |b|) as uint64 (so |INT64_MIN| = 2^63 is representable).
inline uint64_t GcdU(uint64_t a, uint64_t b) {
  while (b != 0) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}
inline uint64_t AbsU(int64_t v) {
  // 0 - (uint64)v is |v| modulo 2^64, exact for INT64_MIN.
  return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// The state behind a Context: the arena, the intern table and the symbols.
struct Context::Impl {
  explicit Impl(Context* owner) : ctx(owner) {}

  Context* ctx;
  // Bump arena: blocks of 64 KiB (bigger requests get their own block).
  std::vector<std::unique_ptr<char[]>> blocks;
  char* cur = nullptr;
  size_t left = 0;
  // Returns `bytes` of arena memory aligned to `align` (a power of two).
  void* Allocate(size_t bytes, size_t align) {
    const size_t pad =
        (align - (reinterpret_cast<uintptr_t>(cur) & (align - 1))) &
        (align - 1);
    if (cur == nullptr || pad + bytes > left) {
      return AllocateBlock(bytes, align);
    }
    char* p = cur + pad;
    cur = p + bytes;
    left -= pad + bytes;
    return p;
  }
  // As Allocate, from a new block.
  void* AllocateBlock(size_t bytes, size_t align);

  // Open-addressing intern table (linear probing, power-of-two capacity).
  std::vector<const Node*> table;
  size_t count = 0;

  // One remembered Scale(e, k) of a non-constant e; e == nullptr when empty.
  struct ScaleMemo {
    const Node* e = nullptr;
    int64_t k = 0;
    Expr result;
  };
  // NB: a direct-mapped cache of Scale (a collision overwrites): an analysis
  // scales a few dozen expressions (a tensor's numel by its element size)
  // thousands of times. As for sums, the result depends on the operands
  // alone. Allocated at the first Scale of a non-constant.
  static constexpr int kScaleMemoBits = 8;
  std::vector<ScaleMemo> scale_memo;
  // Returns the slot for Scale(e, k): a hit when its e and k match.
  ScaleMemo& ScaleSlot(const Node* e, int64_t k) {
    if (scale_memo.empty()) scale_memo.resize(size_t{1} << kScaleMemoBits);
    // The address and the factor folded by multiplies (odd constants); the
    // top bits index.
    const uint64_t x = (reinterpret_cast<uintptr_t>(e) ^
                        (static_cast<uint64_t>(k) * 0x9e3779b97f4a7c15ULL)) *
                       0xbf58476d1ce4e5b9ULL;
    return scale_memo[x >> (64 - kScaleMemoBits)];
  }

  std::unordered_map<std::string_view, const Node*> symbols;
  std::unordered_map<std::string, uint64_t> fresh_counters;  // Per prefix.
  // NB: bumped by SetRange so every memoized bound is recomputed.
  uint64_t epoch = 1;

  // Interns a node equal to `key` (ops are copied into the arena if new).
  // NB: a Sum's or Product's key.ops_hash must be HashOps of its ops.
  const Node* Intern(const Node& key);
  // Grows the intern table if one more node would fill it past half.
  void ReserveOne() {
    if ((count + 1) * 2 > table.size()) GrowTable();
  }
  // Doubles the table and reinserts every node.
  void GrowTable();
  // Returns the table slot of the node hashed `h` that `same` accepts, or the
  // empty slot where it would go (call ReserveOne first).
  template <typename Same>
  size_t Probe(size_t h, const Same& same) const;
  // Returns a new node in the arena, of `kind` with hash `h` and a copy of
  // `ops`, stored in empty table `slot`; the caller sets its other fields.
  Node* NewNode(size_t slot, size_t h, Kind kind, const Operand* ops,
                uint32_t num_ops);
  // Builds the canonical Sum `constant + terms` (terms sorted, no zero coeffs).
  Expr MakeSum(int64_t constant, const Operand* terms, size_t n);
  // As MakeSum, with `ops_hash` = HashOps(terms, n) already known.
  Expr MakeSumHashed(int64_t constant, const Operand* terms, size_t n,
                     size_t ops_hash);
  // Builds the canonical Product of `factors` (sorted, exponents > 0).
  const Node* MakeProduct(const Operand* factors, size_t n);
  // Interns an opaque FloorDiv / Min / Max node as is (no simplification).
  const Node* MakeOpaque(Kind kind, const Expr& lhs, const Expr& rhs);

  Interval Bounds(const Expr& e);
  Interval NodeBounds(const Node* n);
};

// Returns the hash of an operand list, as stored in Node::ops_hash.
size_t HashOps(const Operand* ops, size_t n);

// Returns the context of `a` or `b` (throws if they belong to two contexts).
Context* CommonContext(const Expr& a, const Expr& b);
// Returns `e` times the constant k (checked).
Expr Scale(const Expr& e, int64_t k);
// Returns the quotient term t / d if every factor of d divides t; d may be
// nullptr (= 1). Returns false if not divisible; *out is nullptr when the
// quotient is 1.
bool DivideTerm(Context::Impl* impl, const Node* t, const Node* d,
                const Node** out);

// Interval arithmetic (±inf aware, saturating).
Interval AddIntervals(const Interval& a, const Interval& b);
Interval ScaleInterval(const Interval& a, int64_t k);
Interval MulIntervals(const Interval& a, const Interval& b);
Interval PowInterval(const Interval& a, int64_t exponent);
Interval FloorDivIntervals(const Interval& a, const Interval& b);

// Checks the invariants of the canonical form; aborts with a message if broken.
void Verify(const Expr& e);

}  // namespace torchcost::sym

#endif  // TORCHCOST_SRC_SYM_NODE_H_
