// Context, interning, structural order and the canonical +, -, *, Pow.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

constexpr size_t kBlockBytes = 64 * 1024;

inline size_t Mix(size_t h, uint64_t v) {
  // splitmix64-style finaliser folded into a running hash.
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<size_t>(x);
}

inline uint64_t ExprBits(const Expr& e) {
  return e.node() ? reinterpret_cast<uintptr_t>(e.node())
                  : static_cast<uint64_t>(*e.AsConstant()) * 0x100000001b3ULL;
}

// Returns the intern hash of the Sum `constant + ops` of n ops hashed
// `ops_hash`. NB: the constant is mixed in last, so a Sum that differs from
// another only in its constant reuses that one's ops_hash.
inline size_t SumHash(size_t n, size_t ops_hash, int64_t constant) {
  // The kind and the op count fold in by a multiply (an odd constant); one
  // finalising Mix spreads them with the constant.
  return Mix(ops_hash ^ ((n << 3 | static_cast<size_t>(Kind::kSum)) *
                         0xd6e8feb86659fd93ULL),
             static_cast<uint64_t>(constant));
}

// NB: hashing by child addresses is fine here: the intern table's order is
// never observed, and children are themselves interned.
size_t HashKey(const Node& n) {
  if (n.kind == Kind::kSum) return SumHash(n.num_ops, n.ops_hash, n.constant);
  size_t h = Mix(static_cast<size_t>(n.kind), n.num_ops);
  switch (n.kind) {
    case Kind::kProduct:
      return Mix(h ^ n.ops_hash, 0);
    case Kind::kFloorDiv:
    case Kind::kMin:
    case Kind::kMax:
      h = Mix(h, ExprBits(n.lhs));
      h = Mix(h, ExprBits(n.rhs));
      break;
    default:
      break;
  }
  return h;
}

bool SameKey(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.num_ops != b.num_ops) return false;
  switch (a.kind) {
    case Kind::kSum:
      if (a.constant != b.constant) return false;
      [[fallthrough]];
    case Kind::kProduct:
      for (uint32_t i = 0; i < a.num_ops; ++i) {
        if (a.ops[i].node != b.ops[i].node || a.ops[i].k != b.ops[i].k) {
          return false;
        }
      }
      return true;
    case Kind::kFloorDiv:
    case Kind::kMin:
    case Kind::kMax:
      return a.lhs == b.lhs && a.rhs == b.rhs;
    default:
      return false;
  }
}

int KindRank(Kind k) {
  switch (k) {
    case Kind::kSymbol:
      return 0;
    case Kind::kFloorDiv:
      return 1;
    case Kind::kMin:
      return 2;
    case Kind::kMax:
      return 3;
    default:
      return 4;
  }
}

// Returns the constant of a + kb * b.
// NB: checked after the terms, so an overflow in both reports the terms'.
inline int64_t MergeConstants(const LinView& a, const LinView& b, int64_t kb) {
  return CheckedAdd(a.constant, CheckedMul(b.constant, kb, "constant product"),
                    "constant sum");
}

// Merges the sorted term lists of a and kb * b into `out`; returns the
// constant.
int64_t MergeLinear(const LinView& a, const LinView& b, int64_t kb,
                    OperandVec* out) {
  // NB: written through a pointer into room for both lists (the most a merge
  // can keep), then trimmed: no capacity check per term.
  out->resize(a.num_terms + b.num_terms);
  Operand* o = out->data();
  if (b.num_terms == 1) {
    // Fast path: a + k * t where t is already a term of a (a running total
    // gaining more of a like term, most sums of an analysis), found by
    // address: a's terms in order, t's coefficient changed or dropped if 0.
    const Operand& t = b.terms[0];
    for (size_t p = 0; p < a.num_terms; ++p) {
      if (a.terms[p].node != t.node) continue;
      const int64_t k =
          CheckedAdd(a.terms[p].k, CheckedMul(t.k, kb, "coefficient product"),
                     "coefficient sum");
      for (size_t i = 0; i < p; ++i) *o++ = a.terms[i];
      if (k != 0) *o++ = {t.node, k};
      for (size_t i = p + 1; i < a.num_terms; ++i) *o++ = a.terms[i];
      out->resize(static_cast<size_t>(o - out->data()));
      return MergeConstants(a, b, kb);
    }
  }
  const Operand* ai = a.terms;
  const Operand* const a_end = ai + a.num_terms;
  const Operand* bj = b.terms;
  const Operand* const b_end = bj + b.num_terms;
  while (ai != a_end && bj != b_end) {
    // Like terms, the common case, are found without a call.
    const int c = ai->node == bj->node ? 0 : CompareTerms(ai->node, bj->node);
    if (c < 0) {
      *o++ = *ai++;
    } else if (c > 0) {
      *o++ = {bj->node, CheckedMul(bj->k, kb, "coefficient product")};
      ++bj;
    } else {
      // Like terms: coefficient = ka + kb * kb'.
      const int64_t k =
          CheckedAdd(ai->k, CheckedMul(bj->k, kb, "coefficient product"),
                     "coefficient sum");
      if (k != 0) *o++ = {ai->node, k};
      ++ai;
      ++bj;
    }
  }
  while (ai != a_end) *o++ = *ai++;
  for (; bj != b_end; ++bj) {
    *o++ = {bj->node, CheckedMul(bj->k, kb, "coefficient product")};
  }
  out->resize(static_cast<size_t>(o - out->data()));
  return MergeConstants(a, b, kb);
}

// Returns a + kb * b.
Expr AddScaled(const Expr& a, const Expr& b, int64_t kb) {
  if (a.IsConstant() && b.IsConstant()) {
    return CheckedAdd(*a.AsConstant(),
                      CheckedMul(*b.AsConstant(), kb, "constant product"),
                      "constant sum");
  }
  Context* ctx = CommonContext(a, b);
  if (kb == 0 || b == Expr(0)) return a;
  if (a == Expr(0)) return Scale(b, kb);
  LinView va, vb;
  ViewLinear(a, &va);
  ViewLinear(b, &vb);
  if (vb.num_terms == 0) {
    // a + constant: a's terms as they are, so a Sum's ops_hash is reused.
    const int64_t c =
        CheckedAdd(va.constant, CheckedMul(vb.constant, kb, "constant product"),
                   "constant sum");
    const Node* n = a.node();
    return ctx->impl()->MakeSumHashed(
        c, va.terms, va.num_terms,
        n->kind == Kind::kSum ? n->ops_hash : HashOps(va.terms, 1));
  }
  Context::Impl* impl = ctx->impl();
  if (va.num_terms == 0 || (kb != 1 && kb != -1)) {
    OperandVec out;
    int64_t c = MergeLinear(va, vb, kb, &out);
    return impl->MakeSum(c, out.data(), out.size());
  }
  // Both are non-constant here; a repeated a +- b is found in the memo.
  const uintptr_t b_and_sub =
      reinterpret_cast<uintptr_t>(b.node()) | (kb == -1 ? 1 : 0);
  const Node* an = a.node();
  if (an->sum_operand == b_and_sub) return an->sum_result;
  OperandVec out;
  int64_t c = MergeLinear(va, vb, kb, &out);
  Expr sum = impl->MakeSum(c, out.data(), out.size());
  an->sum_operand = b_and_sub;
  an->sum_result = sum;
  return sum;
}

// Returns the product of two terms (nullptr stands for the term 1).
const Node* MulTerms(Context::Impl* impl, const Node* a, const Node* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  TermView va, vb;
  ViewTerm(a, &va);
  ViewTerm(b, &vb);
  OperandVec out;
  size_t i = 0, j = 0;
  while (i < va.num_factors || j < vb.num_factors) {
    int c;
    if (i == va.num_factors) {
      c = 1;
    } else if (j == vb.num_factors) {
      c = -1;
    } else {
      c = CompareAtoms(va.factors[i].node, vb.factors[j].node);
    }
    if (c < 0) {
      out.push_back(va.factors[i++]);
    } else if (c > 0) {
      out.push_back(vb.factors[j++]);
    } else {
      // x^p * x^q = x^(p+q).
      out.push_back(
          {va.factors[i].node,
           CheckedAdd(va.factors[i].k, vb.factors[j].k, "exponent sum")});
      ++i;
      ++j;
    }
  }
  return impl->MakeProduct(out.data(), out.size());
}

}  // namespace

// ---------------------------------------------------------------------------
// Views and order.

void ViewLinear(const Expr& e, LinView* v) {
  const Node* n = e.node();
  if (n == nullptr) {
    v->constant = *e.AsConstant();
    v->terms = nullptr;
    v->num_terms = 0;
  } else if (n->kind == Kind::kSum) {
    v->constant = n->constant;
    v->terms = n->ops;
    v->num_terms = n->num_ops;
  } else {
    v->constant = 0;
    v->single = {n, 1};
    v->terms = &v->single;
    v->num_terms = 1;
  }
}

void ViewTerm(const Node* term, TermView* v) {
  if (term->kind == Kind::kProduct) {
    v->factors = term->ops;
    v->num_factors = term->num_ops;
  } else {
    v->single = {term, 1};
    v->factors = &v->single;
    v->num_factors = 1;
  }
}

int CompareAtoms(const Node* a, const Node* b) {
  if (a == b) return 0;
  int ra = KindRank(a->kind), rb = KindRank(b->kind);
  if (ra != rb) return ra < rb ? -1 : 1;
  if (a->kind == Kind::kSymbol) {
    int c = a->name.compare(b->name);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  int c = CompareExprs(a->lhs, b->lhs);
  if (c != 0) return c;
  return CompareExprs(a->rhs, b->rhs);
}

int CompareTerms(const Node* a, const Node* b) {
  if (a == b) return 0;
  // NB: higher total degree sorts first, so sums print leading terms first.
  if (a->degree != b->degree) return a->degree > b->degree ? -1 : 1;
  TermView va, vb;
  ViewTerm(a, &va);
  ViewTerm(b, &vb);
  size_t n = std::min(va.num_factors, vb.num_factors);
  for (size_t i = 0; i < n; ++i) {
    int c = CompareAtoms(va.factors[i].node, vb.factors[i].node);
    if (c != 0) return c;
    if (va.factors[i].k != vb.factors[i].k) {
      return va.factors[i].k > vb.factors[i].k ? -1 : 1;  // B^2*S before B*S^2.
    }
  }
  if (va.num_factors != vb.num_factors) {
    return va.num_factors < vb.num_factors ? -1 : 1;
  }
  return 0;
}

int CompareExprs(const Expr& a, const Expr& b) {
  if (a == b) return 0;
  // NB: constants sort after everything else, so min(B, 4) prints B first.
  if (a.IsConstant() != b.IsConstant()) return a.IsConstant() ? 1 : -1;
  if (a.IsConstant()) return *a.AsConstant() < *b.AsConstant() ? -1 : 1;
  LinView va, vb;
  ViewLinear(a, &va);
  ViewLinear(b, &vb);
  size_t n = std::min(va.num_terms, vb.num_terms);
  for (size_t i = 0; i < n; ++i) {
    int c = CompareTerms(va.terms[i].node, vb.terms[i].node);
    if (c != 0) return c;
    if (va.terms[i].k != vb.terms[i].k) {
      return va.terms[i].k < vb.terms[i].k ? -1 : 1;
    }
  }
  if (va.num_terms != vb.num_terms) {
    return va.num_terms < vb.num_terms ? -1 : 1;
  }
  if (va.constant != vb.constant) return va.constant < vb.constant ? -1 : 1;
  return 0;
}

// ---------------------------------------------------------------------------
// Context::Impl: arena and interning.

void* Context::Impl::AllocateBlock(size_t bytes, size_t align) {
  size_t size = std::max(kBlockBytes, bytes + align);
  blocks.emplace_back(new char[size]);
  cur = blocks.back().get();
  left = size;
  size_t pad =
      (align - (reinterpret_cast<uintptr_t>(cur) & (align - 1))) & (align - 1);
  char* p = cur + pad;
  cur = p + bytes;
  left -= pad + bytes;
  return p;
}

size_t HashOps(const Operand* ops, size_t n) {
  // One rotate, xor and multiply per operand (FxHash's step) of its node's
  // address and its coefficient, combined (k times an odd constant spreads
  // small coefficients over the high bits).
  // NB: not finalised here: HashKey mixes ops_hash in with Mix, which is.
  uint64_t h = n;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t w =
        reinterpret_cast<uintptr_t>(ops[i].node) ^
        (static_cast<uint64_t>(ops[i].k) * 0x9e3779b97f4a7c15ULL);
    h = (((h << 5) | (h >> 59)) ^ w) * 0x9e3779b97f4a7c15ULL;
  }
  return static_cast<size_t>(h);
}

void Context::Impl::GrowTable() {
  // Twice the slots, to keep the load factor at most 1/2.
  std::vector<const Node*> old;
  old.swap(table);
  table.assign(old.empty() ? 1024 : old.size() * 2, nullptr);
  size_t mask = table.size() - 1;
  for (const Node* n : old) {
    if (n == nullptr) continue;
    size_t i = n->hash & mask;
    while (table[i] != nullptr) i = (i + 1) & mask;
    table[i] = n;
  }
}

template <typename Same>
size_t Context::Impl::Probe(size_t h, const Same& same) const {
  size_t mask = table.size() - 1;
  size_t i = h & mask;
  while (const Node* n = table[i]) {
    if (n->hash == h && same(*n)) return i;
    i = (i + 1) & mask;
  }
  return i;
}

Node* Context::Impl::NewNode(size_t slot, size_t h, Kind kind,
                             const Operand* ops, uint32_t num_ops) {
  // NB: the node and its ops in one arena block: ops follow the node (both
  // 8-byte aligned).
  static_assert(sizeof(Node) % alignof(Operand) == 0, "ops follow the node");
  char* bytes = static_cast<char*>(
      Allocate(sizeof(Node) + sizeof(Operand) * num_ops, alignof(Node)));
  Node* n = new (bytes) Node;
  n->kind = kind;
  n->num_ops = num_ops;
  n->ctx = ctx;
  n->hash = h;
  if (num_ops > 0) {
    auto* copy = reinterpret_cast<Operand*>(bytes + sizeof(Node));
    for (uint32_t i = 0; i < num_ops; ++i) copy[i] = ops[i];
    n->ops = copy;
  }
  table[slot] = n;
  ++count;
  return n;
}

const Node* Context::Impl::Intern(const Node& key) {
  const size_t h = HashKey(key);
  ReserveOne();
  const size_t i = Probe(h, [&key](const Node& n) { return SameKey(n, key); });
  if (table[i] != nullptr) return table[i];
  Node* n = NewNode(i, h, key.kind, key.ops, key.num_ops);
  n->ops_hash = key.ops_hash;
  n->constant = key.constant;
  n->degree = key.degree;
  n->lhs = key.lhs;
  n->rhs = key.rhs;
  return n;
}

Expr Context::Impl::MakeSum(int64_t constant, const Operand* terms, size_t n) {
  if (n == 0) return Expr(constant);
  return MakeSumHashed(constant, terms, n, HashOps(terms, n));
}

Expr Context::Impl::MakeSumHashed(int64_t constant, const Operand* terms,
                                  size_t n, size_t ops_hash) {
  if (n == 0) return Expr(constant);
  // NB: "1 * term + 0" is the term node itself, so B + 0 == B.
  if (n == 1 && terms[0].k == 1 && constant == 0)
    return Expr::FromNode(terms[0].node);
  // NB: looked up by comparing with `terms` directly, with no key Node.
  const size_t h = SumHash(n, ops_hash, constant);
  ReserveOne();
  const size_t slot = Probe(h, [&](const Node& node) {
    if (node.kind != Kind::kSum || node.num_ops != n ||
        node.constant != constant) {
      return false;
    }
    for (size_t i = 0; i < n; ++i) {
      if (node.ops[i].node != terms[i].node || node.ops[i].k != terms[i].k) {
        return false;
      }
    }
    return true;
  });
  if (table[slot] != nullptr) return Expr::FromNode(table[slot]);
  Node* sum = NewNode(slot, h, Kind::kSum, terms, static_cast<uint32_t>(n));
  sum->constant = constant;
  sum->ops_hash = ops_hash;
  sum->degree =
      terms[0].node->degree;  // Terms are sorted by degree, highest first.
  return Expr::FromNode(sum);
}

const Node* Context::Impl::MakeProduct(const Operand* factors, size_t n) {
  if (n == 0) return nullptr;
  if (n == 1 && factors[0].k == 1) return factors[0].node;  // x^1 = x.
  Node key{};
  key.kind = Kind::kProduct;
  key.num_ops = static_cast<uint32_t>(n);
  key.ops = factors;
  key.ops_hash = HashOps(factors, n);
  int64_t degree = 0;
  for (size_t i = 0; i < n; ++i)
    degree = CheckedAdd(degree, factors[i].k, "degree");
  key.degree = degree;  // Total degree = sum of the exponents.
  return Intern(key);
}

const Node* Context::Impl::MakeOpaque(Kind kind, const Expr& lhs,
                                      const Expr& rhs) {
  Node key{};
  key.kind = kind;
  key.lhs = lhs;
  key.rhs = rhs;
  key.degree = 1;
  return Intern(key);
}

// ---------------------------------------------------------------------------
// Context.

Context::Context() : impl_(new Impl(this)) {}
Context::~Context() = default;

Expr Context::Symbol(std::string_view name, Interval range) {
  auto it = impl_->symbols.find(name);
  if (it != impl_->symbols.end()) return Expr::FromNode(it->second);
  if (name.empty()) throw Error("a symbol needs a non-empty name");
  if (range.lo > range.hi) {
    throw Error("empty range for symbol '" + std::string(name) + "'");
  }
  char* bytes = static_cast<char*>(impl_->Allocate(name.size(), 1));
  std::memcpy(bytes, name.data(), name.size());
  Node* n = new (impl_->Allocate(sizeof(Node), alignof(Node))) Node();
  n->kind = Kind::kSymbol;
  n->ctx = this;
  n->name = std::string_view(bytes, name.size());
  n->range = range;
  n->degree = 1;
  n->hash = std::hash<std::string_view>()(n->name);
  impl_->symbols.emplace(n->name, n);
  return Expr::FromNode(n);
}

Expr Context::FreshSymbol(std::string_view prefix, Interval range) {
  uint64_t& counter = impl_->fresh_counters[std::string(prefix)];
  std::string name;
  do {
    name = std::string(prefix) + std::to_string(counter++);
  } while (impl_->symbols.count(name) != 0);
  return Symbol(name, range);
}

std::optional<Expr> Context::FindSymbol(std::string_view name) const {
  auto it = impl_->symbols.find(name);
  if (it == impl_->symbols.end()) return std::nullopt;
  return Expr::FromNode(it->second);
}

Status Context::SetRange(std::string_view name, Interval range) {
  auto it = impl_->symbols.find(name);
  if (it == impl_->symbols.end()) {
    return Status::NotFound("unknown symbol '" + std::string(name) + "'");
  }
  const Node* n = it->second;
  // NB: ranges only narrow (intersection), so earlier simplifications stay
  // sound.
  Interval r{std::max(n->range.lo, range.lo), std::min(n->range.hi, range.hi)};
  if (range.lo > range.hi || r.lo > r.hi) {
    return Status::InvalidArgument("empty range for symbol '" +
                                   std::string(name) + "'");
  }
  n->range = r;
  ++impl_->epoch;
  return Status::Ok();
}

Interval Context::SymbolRange(const Expr& symbol) const {
  if (symbol.IsConstant()) return {*symbol.AsConstant(), *symbol.AsConstant()};
  if (symbol.kind() == Kind::kSymbol) return symbol.node()->range;
  return Interval{};
}

size_t Context::NodeCount() const {
  return impl_->count + impl_->symbols.size();
}

// ---------------------------------------------------------------------------
// Expr and arithmetic.

Kind Expr::kind() const { return node_ ? node_->kind : Kind::kConstant; }
Context* Expr::context() const { return node_ ? node_->ctx : nullptr; }

Context* CommonContext(const Expr& a, const Expr& b) {
  Context* ca = a.context();
  Context* cb = b.context();
  if (ca != nullptr && cb != nullptr && ca != cb) {
    throw Error("expressions from two different sym::Contexts were combined");
  }
  return ca ? ca : cb;
}

Expr Scale(const Expr& e, int64_t k) {
  if (k == 1) return e;
  if (k == 0) return 0;
  if (e.IsConstant()) return CheckedMul(*e.AsConstant(), k, "constant product");
  Context::Impl* impl = e.context()->impl();
  {
    const Context::Impl::ScaleMemo& memo = impl->ScaleSlot(e.node(), k);
    if (memo.e == e.node() && memo.k == k) return memo.result;
  }
  LinView v;
  ViewLinear(e, &v);
  OperandVec out;
  for (size_t i = 0; i < v.num_terms; ++i) {
    out.push_back(
        {v.terms[i].node, CheckedMul(v.terms[i].k, k, "coefficient product")});
  }
  int64_t c = CheckedMul(v.constant, k, "constant product");
  const Expr scaled = impl->MakeSum(c, out.data(), out.size());
  impl->ScaleSlot(e.node(), k) = {e.node(), k, scaled};
  return scaled;
}

bool DivideTerm(Context::Impl* impl, const Node* t, const Node* d,
                const Node** out) {
  if (d == nullptr) {
    *out = t;
    return true;
  }
  TermView vt, vd;
  ViewTerm(t, &vt);
  ViewTerm(d, &vd);
  OperandVec q;
  size_t j = 0;
  for (size_t i = 0; i < vt.num_factors; ++i) {
    const Operand& f = vt.factors[i];
    if (j < vd.num_factors && vd.factors[j].node == f.node) {
      // x^p / x^q = x^(p-q), needs p >= q.
      if (f.k < vd.factors[j].k) return false;
      if (f.k > vd.factors[j].k) q.push_back({f.node, f.k - vd.factors[j].k});
      ++j;
    } else {
      q.push_back(f);
    }
  }
  if (j != vd.num_factors) return false;  // A factor of d is missing from t.
  *out = impl->MakeProduct(q.data(), q.size());
  return true;
}

Expr operator+(const Expr& a, const Expr& b) { return AddScaled(a, b, 1); }
Expr operator-(const Expr& a, const Expr& b) { return AddScaled(a, b, -1); }
Expr operator-(const Expr& a) { return Scale(a, -1); }

Expr operator*(const Expr& a, const Expr& b) {
  if (a.IsConstant()) return Scale(b, *a.AsConstant());
  if (b.IsConstant()) return Scale(a, *b.AsConstant());
  Context* ctx = CommonContext(a, b);
  Context::Impl* impl = ctx->impl();
  LinView va, vb;
  ViewLinear(a, &va);
  ViewLinear(b, &vb);
  if (va.constant == 0 && vb.constant == 0 && va.num_terms == 1 &&
      vb.num_terms == 1) {
    // Monomial * monomial: (ka*ta) * (kb*tb) = (ka*kb) * (ta*tb).
    Operand t{MulTerms(impl, va.terms[0].node, vb.terms[0].node),
              CheckedMul(va.terms[0].k, vb.terms[0].k, "coefficient product")};
    return impl->MakeSum(0, &t, 1);
  }
  // (ca + sum ka_i ta_i) * (cb + sum kb_j tb_j), expanded term by term.
  // NB: a documented limit: expanding costs (terms of a + 1) * (terms of b + 1)
  // products, so repeated products of sums ("(B + S + 1)^4999") grow
  // exponentially; past kMaxExpansion pairs the product is an error, not a
  // hang.
  constexpr uint64_t kMaxExpansion = uint64_t{1} << 18;
  if ((uint64_t{va.num_terms} + 1) * (uint64_t{vb.num_terms} + 1) >
      kMaxExpansion) {
    throw Error("expression too large: a product of sums of " +
                std::to_string(va.num_terms + 1) + " and " +
                std::to_string(vb.num_terms + 1) + " terms");
  }
  OperandVec prods;
  int64_t constant = CheckedMul(va.constant, vb.constant, "constant product");
  for (size_t i = 0; i <= va.num_terms; ++i) {
    const Node* ti = i < va.num_terms ? va.terms[i].node : nullptr;
    int64_t ki = i < va.num_terms ? va.terms[i].k : va.constant;
    if (ki == 0) continue;
    for (size_t j = 0; j <= vb.num_terms; ++j) {
      if (ti == nullptr && j == vb.num_terms) continue;  // ca * cb done above.
      const Node* tj = j < vb.num_terms ? vb.terms[j].node : nullptr;
      int64_t kj = j < vb.num_terms ? vb.terms[j].k : vb.constant;
      if (kj == 0) continue;
      prods.push_back(
          {MulTerms(impl, ti, tj), CheckedMul(ki, kj, "coefficient product")});
    }
  }
  std::sort(prods.begin(), prods.end(), [](const Operand& x, const Operand& y) {
    return CompareTerms(x.node, y.node) < 0;
  });
  OperandVec out;
  for (const Operand& p : prods) {
    if (!out.empty() && out.back().node == p.node) {
      out.back().k = CheckedAdd(out.back().k, p.k, "coefficient sum");
      if (out.back().k == 0) out.pop_back();
    } else {
      out.push_back(p);
    }
  }
  return impl->MakeSum(constant, out.data(), out.size());
}

Expr Pow(const Expr& a, int64_t exponent) {
  if (exponent < 0) {
    throw Error("Pow: negative exponent " + std::to_string(exponent));
  }
  // Square and multiply: a^e = prod over set bits i of a^(2^i).
  Expr result = 1;
  Expr base = a;
  while (exponent > 0) {
    if (exponent & 1) result = result * base;
    exponent >>= 1;
    if (exponent > 0) base = base * base;
  }
  return result;
}

// ---------------------------------------------------------------------------
// Verify.

namespace {
[[noreturn]] void VerifyFail(const char* what) {
  std::fprintf(stderr, "sym::Verify failed: %s\n", what);
  std::abort();
}
}  // namespace

void Verify(const Expr& e) {
  const Node* n = e.node();
  if (n == nullptr) return;
  switch (n->kind) {
    case Kind::kSymbol:
      return;
    case Kind::kSum:
      if (n->num_ops == 0) VerifyFail("empty sum");
      if (n->num_ops == 1 && n->ops[0].k == 1 && n->constant == 0) {
        VerifyFail("sum of a single unit term");
      }
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        if (n->ops[i].k == 0) VerifyFail("zero coefficient");
        if (n->ops[i].node->kind == Kind::kSum) VerifyFail("nested sum");
        if (i > 0 && CompareTerms(n->ops[i - 1].node, n->ops[i].node) >= 0) {
          VerifyFail("sum terms out of order");
        }
        Verify(Expr::FromNode(n->ops[i].node));
      }
      return;
    case Kind::kProduct:
      if (n->num_ops == 0) VerifyFail("empty product");
      if (n->num_ops == 1 && n->ops[0].k == 1) VerifyFail("product x^1");
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        if (n->ops[i].k <= 0) VerifyFail("non-positive exponent");
        if (!n->ops[i].node->IsAtom()) VerifyFail("product of a non-atom");
        if (i > 0 && CompareAtoms(n->ops[i - 1].node, n->ops[i].node) >= 0) {
          VerifyFail("product factors out of order");
        }
        Verify(Expr::FromNode(n->ops[i].node));
      }
      return;
    case Kind::kMin:
    case Kind::kMax:
      if (CompareExprs(n->lhs, n->rhs) >= 0)
        VerifyFail("min/max args out of order");
      [[fallthrough]];
    case Kind::kFloorDiv:
      Verify(n->lhs);
      Verify(n->rhs);
      return;
    default:
      VerifyFail("bad kind");
  }
}

int64_t LinearTerms(const Expr& e, std::vector<LinearTerm>* terms) {
  LinView v;
  ViewLinear(e, &v);
  // NB: resized, then written in place: a reused vector keeps its storage.
  terms->resize(v.num_terms);
  LinearTerm* out = terms->data();
  for (size_t i = 0; i < v.num_terms; ++i) {
    out[i] = {Expr::FromNode(v.terms[i].node), v.terms[i].k};
  }
  return v.constant;
}

}  // namespace torchcost::sym
