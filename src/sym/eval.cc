// Evaluate, Evaluate128, Substitute, FreeSymbols and the compiled Program.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

// Evaluates nodes in T (int64_t or __int128) with checked arithmetic.
// NB: it walks terms, factors and arguments in printed order, so the first
// unbound symbol it meets is the leftmost one in ToString.
template <typename T>
class Evaluator {
 public:
  explicit Evaluator(const Bindings& bindings) : bindings_(bindings) {}

  bool Eval(const Expr& e, T* out) {
    if (e.IsConstant()) {
      *out = static_cast<T>(*e.AsConstant());
      return true;
    }
    return EvalNode(e.node(), out);
  }

  const std::string& error() const { return error_; }

 private:
  bool Overflow() {
    error_ = "integer overflow";
    return false;
  }

  bool EvalNode(const Node* n, T* out) {
    switch (n->kind) {
      case Kind::kSymbol: {
        // NB: a sum names its few symbols over and over; each is looked up
        // in the bindings (a string built and hashed) once.
        if (Recall(symbols_, n, out)) return true;
        auto it = bindings_.find(std::string(n->name));
        if (it == bindings_.end()) {
          error_ = "unbound symbol '" + std::string(n->name) + "'";
          return false;
        }
        *out = static_cast<T>(it->second);
        if (symbols_.size() < kScan) symbols_.push_back({n, *out});
        return true;
      }
      case Kind::kSum: {
        // constant + sum_i k_i * term_i.
        T acc = static_cast<T>(n->constant);
        for (uint32_t i = 0; i < n->num_ops; ++i) {
          T v;
          if (!EvalNode(n->ops[i].node, &v)) return false;
          if (__builtin_mul_overflow(v, static_cast<T>(n->ops[i].k), &v) ||
              __builtin_add_overflow(acc, v, &acc)) {
            return Overflow();
          }
        }
        *out = acc;
        return true;
      }
      case Kind::kProduct: {
        // prod_j atom_j ^ e_j.
        T acc = 1;
        for (uint32_t i = 0; i < n->num_ops; ++i) {
          T base;
          if (!EvalNode(n->ops[i].node, &base)) return false;
          // base^e by square and multiply; a square is computed only when a
          // higher bit of e needs it, so it overflows only if the power does.
          for (int64_t k = n->ops[i].k; k > 0; k >>= 1) {
            if ((k & 1) && __builtin_mul_overflow(acc, base, &acc))
              return Overflow();
            if (k > 1 && __builtin_mul_overflow(base, base, &base))
              return Overflow();
          }
        }
        *out = acc;
        return true;
      }
      case Kind::kFloorDiv:
      case Kind::kMin:
      case Kind::kMax: {
        if (Recall(opaque_, n, out)) return true;
        if (!memo_.empty()) {
          auto it = memo_.find(n);
          if (it != memo_.end()) {
            *out = it->second;
            return true;
          }
        }
        T a, b;
        if (!Eval(n->lhs, &a) || !Eval(n->rhs, &b)) return false;
        T r;
        if (n->kind == Kind::kFloorDiv) {
          if (b == 0) {
            error_ =
                "division by zero in '" + Expr::FromNode(n).ToString() + "'";
            return false;
          }
          if (b ==
              -1) {  // floor(a / -1) = -a, which overflows for the minimum.
            if (__builtin_sub_overflow(static_cast<T>(0), a, &r))
              return Overflow();
          } else {
            r = FloorDivInt<T>(a, b);
          }
        } else if (n->kind == Kind::kMin) {
          r = a < b ? a : b;
        } else {
          r = a < b ? b : a;
        }
        if (opaque_.size() < kScan) {
          opaque_.push_back({n, r});
        } else {
          memo_.emplace(n, r);
        }
        *out = r;
        return true;
      }
      default:
        error_ = "bad expression node";
        return false;
    }
  }

  // A node's value, remembered.
  struct Known {
    const Node* node;
    T value;
  };
  // NB: up to kScan values are found by a scan (no allocation: most
  // expressions have a few symbols and opaque atoms, such as a sliding
  // window's min(S, W)); further opaque atoms go to the hash map, so DAGs
  // stay linear.
  static constexpr size_t kScan = 16;
  using KnownVec = SmallVec<Known, kScan>;

  // Sets *out to the value of `n` if `known` holds it.
  static bool Recall(const KnownVec& known, const Node* n, T* out) {
    for (const Known& k : known) {
      if (k.node == n) {
        *out = k.value;
        return true;
      }
    }
    return false;
  }

  const Bindings& bindings_;
  KnownVec symbols_;  // Bound symbols met so far (the first kScan).
  KnownVec opaque_;   // FloorDiv, Min and Max atoms: the first kScan.
  std::unordered_map<const Node*, T> memo_;  // The opaque atoms after those.
  std::string error_;
};

template <typename T>
Result<T> EvaluateIn(const Expr& e, const Bindings& bindings) {
  try {
    Evaluator<T> ev(bindings);
    T v;
    if (ev.Eval(e, &v)) return v;
    if (ev.error() == "integer overflow") {
      return Status::OutOfRange(std::string("integer overflow evaluating '") +
                                e.ToString() + "'");
    }
    return Status::InvalidArgument(ev.error());
  } catch (const Error& err) {
    return Status::InvalidArgument(err.what());
  }
}

Expr SubstituteRec(const Expr& e, const Bindings& bindings,
                   std::unordered_map<const Node*, Expr>* memo) {
  const Node* n = e.node();
  if (n == nullptr) return e;
  auto it = memo->find(n);
  if (it != memo->end()) return it->second;
  Expr r;
  switch (n->kind) {
    case Kind::kSymbol: {
      auto b = bindings.find(std::string(n->name));
      r = b == bindings.end() ? e : Expr(b->second);
      break;
    }
    case Kind::kSum: {
      r = n->constant;
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        r = r + SubstituteRec(Expr::FromNode(n->ops[i].node), bindings, memo) *
                    n->ops[i].k;
      }
      break;
    }
    case Kind::kProduct: {
      r = 1;
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        r = r *
            Pow(SubstituteRec(Expr::FromNode(n->ops[i].node), bindings, memo),
                n->ops[i].k);
      }
      break;
    }
    case Kind::kFloorDiv:
      r = FloorDiv(SubstituteRec(n->lhs, bindings, memo),
                   SubstituteRec(n->rhs, bindings, memo));
      break;
    case Kind::kMin:
      r = Min(SubstituteRec(n->lhs, bindings, memo),
              SubstituteRec(n->rhs, bindings, memo));
      break;
    case Kind::kMax:
      r = Max(SubstituteRec(n->lhs, bindings, memo),
              SubstituteRec(n->rhs, bindings, memo));
      break;
    default:
      r = e;
  }
  memo->emplace(n, r);
  return r;
}

void CollectSymbols(const Expr& e, std::unordered_set<const Node*>* seen,
                    std::vector<std::string>* out) {
  const Node* n = e.node();
  if (n == nullptr || !seen->insert(n).second) return;
  switch (n->kind) {
    case Kind::kSymbol:
      out->emplace_back(n->name);
      return;
    case Kind::kSum:
    case Kind::kProduct:
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        CollectSymbols(Expr::FromNode(n->ops[i].node), seen, out);
      }
      return;
    default:
      CollectSymbols(n->lhs, seen, out);
      CollectSymbols(n->rhs, seen, out);
  }
}

// Lowers expressions to Program::Instr, one register per instruction.
class Compiler {
 public:
  using Instr = Program::Instr;

  explicit Compiler(const std::vector<std::string>& symbols) {
    for (size_t i = 0; i < symbols.size(); ++i) {
      symbol_index_.emplace(symbols[i], static_cast<int32_t>(i));
    }
  }

  // Returns the register holding `e`, or -1 with error() set.
  int32_t Lower(const Expr& e) {
    if (e.IsConstant()) return Const(*e.AsConstant());
    const Node* n = e.node();
    auto it = memo_.find(n);
    if (it != memo_.end()) return it->second;  // Common subexpression.
    int32_t r = -1;
    switch (n->kind) {
      case Kind::kSymbol: {
        auto s = symbol_index_.find(std::string(n->name));
        if (s == symbol_index_.end()) {
          error_ = "symbol '" + std::string(n->name) +
                   "' is not in the program's symbol list";
          return -1;
        }
        r = Emit(Instr::kSym, s->second, 0);
        break;
      }
      case Kind::kSum: {
        // acc = k_0*t_0 + k_1*t_1 + ... + constant.
        for (uint32_t i = 0; i < n->num_ops; ++i) {
          int32_t t = Lower(Expr::FromNode(n->ops[i].node));
          if (t < 0) return -1;
          if (n->ops[i].k != 1) t = Emit(Instr::kMul, t, Const(n->ops[i].k));
          r = r < 0 ? t : Emit(Instr::kAdd, r, t);
        }
        if (n->constant != 0) r = Emit(Instr::kAdd, r, Const(n->constant));
        break;
      }
      case Kind::kProduct: {
        for (uint32_t i = 0; i < n->num_ops; ++i) {
          int32_t base = Lower(Expr::FromNode(n->ops[i].node));
          if (base < 0) return -1;
          // base^e by square and multiply.
          int32_t p = -1;
          for (int64_t k = n->ops[i].k; k > 0; k >>= 1) {
            if (k & 1) p = p < 0 ? base : Emit(Instr::kMul, p, base);
            if (k > 1) base = Emit(Instr::kMul, base, base);
          }
          r = r < 0 ? p : Emit(Instr::kMul, r, p);
        }
        break;
      }
      case Kind::kFloorDiv:
      case Kind::kMin:
      case Kind::kMax: {
        int32_t a = Lower(n->lhs);
        if (a < 0) return -1;
        int32_t b = Lower(n->rhs);
        if (b < 0) return -1;
        Instr::Op op = n->kind == Kind::kFloorDiv ? Instr::kFloorDiv
                       : n->kind == Kind::kMin    ? Instr::kMin
                                                  : Instr::kMax;
        r = Emit(op, a, b);
        break;
      }
      default:
        error_ = "bad expression node";
        return -1;
    }
    memo_.emplace(n, r);
    return r;
  }

  std::vector<Instr> TakeCode() { return std::move(code_); }
  const std::string& error() const { return error_; }

 private:
  int32_t Emit(Instr::Op op, int32_t a, int32_t b) {
    Instr in{};
    in.op = op;
    in.a = a;
    in.b = b;
    code_.push_back(in);
    return static_cast<int32_t>(code_.size() - 1);
  }

  int32_t Const(int64_t v) {
    auto it = consts_.find(v);
    if (it != consts_.end()) return it->second;
    Instr in{};
    in.op = Instr::kConst;
    in.imm = v;
    code_.push_back(in);
    int32_t r = static_cast<int32_t>(code_.size() - 1);
    consts_.emplace(v, r);
    return r;
  }

  std::unordered_map<std::string, int32_t> symbol_index_;
  std::unordered_map<const Node*, int32_t> memo_;
  std::unordered_map<int64_t, int32_t> consts_;
  std::vector<Instr> code_;
  std::string error_;
};

}  // namespace

std::vector<std::string> FreeSymbols(const Expr& e) {
  std::unordered_set<const Node*> seen;
  std::vector<std::string> out;
  CollectSymbols(e, &seen, &out);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> FreeSymbols(const std::vector<Expr>& exprs) {
  std::unordered_set<const Node*> seen;
  std::vector<std::string> out;
  for (const Expr& e : exprs) CollectSymbols(e, &seen, &out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Expr Substitute(const Expr& e, const Bindings& bindings) {
  if (e.IsConstant() || bindings.empty()) return e;
  std::unordered_map<const Node*, Expr> memo;
  return SubstituteRec(e, bindings, &memo);
}

Result<int64_t> Evaluate(const Expr& e, const Bindings& bindings) {
  // NB: evaluated exactly in 128 bits, then checked to fit int64, so an
  // intermediate sum such as 2^62 + 2^62 - 2^62 is not a spurious overflow.
  Result<__int128> v = EvaluateIn<__int128>(e, bindings);
  if (!v.ok()) return v.status();
  if (*v > kPosInf || *v < kNegInf) {
    return Status::OutOfRange("integer overflow evaluating '" + e.ToString() +
                              "': " + Int128ToString(*v) +
                              " does not fit in int64");
  }
  return static_cast<int64_t>(*v);
}

Result<__int128> Evaluate128(const Expr& e, const Bindings& bindings) {
  return EvaluateIn<__int128>(e, bindings);
}

Result<Program> Program::Compile(const std::vector<Expr>& exprs,
                                 const std::vector<std::string>& symbols) {
  Compiler compiler(symbols);
  Program p;
  for (const Expr& e : exprs) {
    int32_t r = compiler.Lower(e);
    if (r < 0) return Status::InvalidArgument(compiler.error());
    p.outputs_.push_back(r);
  }
  p.code_ = compiler.TakeCode();
  return p;
}

Status Program::Run(const int64_t* values, __int128* out) const {
  // NB: registers live on the stack for programs up to 256 instructions and in
  // a per-thread buffer beyond, so a warm Run never allocates.
  constexpr size_t kStackRegs = 256;
  __int128 stack_regs[kStackRegs];
  __int128* regs = stack_regs;
  if (code_.size() > kStackRegs) {
    thread_local std::vector<__int128> heap_regs;
    if (heap_regs.size() < code_.size()) heap_regs.resize(code_.size());
    regs = heap_regs.data();
  }
  const size_t n = code_.size();
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = code_[i];
    switch (in.op) {
      case Instr::kConst:
        regs[i] = in.imm;
        break;
      case Instr::kSym:
        regs[i] = values[in.a];
        break;
      case Instr::kAdd:
        if (__builtin_add_overflow(regs[in.a], regs[in.b], &regs[i])) {
          return Status::OutOfRange("integer overflow in 128-bit evaluation");
        }
        break;
      case Instr::kMul:
        if (__builtin_mul_overflow(regs[in.a], regs[in.b], &regs[i])) {
          return Status::OutOfRange("integer overflow in 128-bit evaluation");
        }
        break;
      case Instr::kFloorDiv: {
        __int128 a = regs[in.a], b = regs[in.b];
        if (b == 0) return Status::InvalidArgument("division by zero");
        if (b == -1) {  // floor(a / -1) = -a.
          if (__builtin_sub_overflow(static_cast<__int128>(0), a, &regs[i])) {
            return Status::OutOfRange("integer overflow in 128-bit evaluation");
          }
        } else {
          regs[i] = FloorDivInt<__int128>(a, b);
        }
        break;
      }
      case Instr::kMin:
        regs[i] = regs[in.a] < regs[in.b] ? regs[in.a] : regs[in.b];
        break;
      case Instr::kMax:
        regs[i] = regs[in.a] < regs[in.b] ? regs[in.b] : regs[in.a];
        break;
    }
  }
  for (size_t j = 0; j < outputs_.size(); ++j) out[j] = regs[outputs_[j]];
  return Status::Ok();
}

bool Program::Run64(const int64_t* values, int64_t* out) const {
  constexpr size_t kStackRegs = 512;
  int64_t stack_regs[kStackRegs];
  int64_t* regs = stack_regs;
  if (code_.size() > kStackRegs) {
    thread_local std::vector<int64_t> heap_regs;
    if (heap_regs.size() < code_.size()) heap_regs.resize(code_.size());
    regs = heap_regs.data();
  }
  const size_t n = code_.size();
  bool overflow = false;
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = code_[i];
    switch (in.op) {
      case Instr::kConst:
        // NB: constants come from int64 expressions, so they fit.
        regs[i] = static_cast<int64_t>(in.imm);
        break;
      case Instr::kSym:
        regs[i] = values[in.a];
        break;
      case Instr::kAdd:
        overflow |= __builtin_add_overflow(regs[in.a], regs[in.b], &regs[i]);
        break;
      case Instr::kMul:
        overflow |= __builtin_mul_overflow(regs[in.a], regs[in.b], &regs[i]);
        break;
      case Instr::kFloorDiv: {
        const int64_t a = regs[in.a], b = regs[in.b];
        if (b == 0 || (b == -1 && a == kNegInf)) return false;
        regs[i] = FloorDivInt<int64_t>(a, b);
        break;
      }
      case Instr::kMin:
        regs[i] = regs[in.a] < regs[in.b] ? regs[in.a] : regs[in.b];
        break;
      case Instr::kMax:
        regs[i] = regs[in.a] < regs[in.b] ? regs[in.b] : regs[in.a];
        break;
    }
  }
  if (overflow) return false;
  for (size_t j = 0; j < outputs_.size(); ++j) out[j] = regs[outputs_[j]];
  return true;
}

std::string Int128ToString(__int128 v) {
  // |v| as unsigned, exact for the minimum (0 - v modulo 2^128).
  unsigned __int128 mag = v < 0 ? 0 - static_cast<unsigned __int128>(v)
                                : static_cast<unsigned __int128>(v);
  char buf[48];
  int pos = sizeof(buf);
  buf[--pos] = '\0';
  do {
    buf[--pos] = static_cast<char>('0' + static_cast<int>(mag % 10));
    mag /= 10;
  } while (mag != 0);
  if (v < 0) buf[--pos] = '-';
  return std::string(buf + pos);
}

}  // namespace torchcost::sym
