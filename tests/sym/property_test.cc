// Property tests over random expression trees (fixed seed).
//
// A random tree over symbols with small ranges (some negative) is built two
// ways: as a canonical sym::Expr, and kept as a plain tree that a naive
// reference evaluator walks with floor semantics in 128 bits. For random
// bindings inside the ranges, the canonical value must equal the reference,
// lie inside Bounds(e), and equal the compiled Program's value; printing and
// parsing must give back the same interned node, and building the same tree
// twice must give the same node (interning).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sym/linear_pieces.h"
#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

struct SymSpec {
  const char* name;
  Interval range;
};

// x, y, z may be negative or zero; p, q are provably positive (divisors).
const SymSpec kSyms[] = {
    {"x", {-5, 5}}, {"y", {-3, 7}}, {"z", {0, 4}}, {"p", {1, 6}}, {"q", {2, 9}},
};
constexpr int kNumSyms = 5;
constexpr int kP = 3, kQ = 4;

struct Tree {
  enum Op {
    kConst,
    kSym,
    kAdd,
    kSub,
    kMul,
    kNeg,
    kFloorDiv,
    kCeilDiv,
    kMod,
    kMin,
    kMax,
    kPow
  };
  Op op = kConst;
  int64_t value = 0;  // kConst value, kSym index, kPow exponent.
  std::unique_ptr<Tree> a, b;
};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  std::unique_ptr<Tree> Leaf() {
    auto t = std::make_unique<Tree>();
    if (Uniform(0, 1) == 0) {
      t->op = Tree::kConst;
      t->value = Uniform(-6, 6);
    } else {
      t->op = Tree::kSym;
      t->value = Uniform(0, kNumSyms - 1);
    }
    return t;
  }

  std::unique_ptr<Tree> Node2(Tree::Op op, std::unique_ptr<Tree> a,
                              std::unique_ptr<Tree> b) {
    auto t = std::make_unique<Tree>();
    t->op = op;
    t->a = std::move(a);
    t->b = std::move(b);
    return t;
  }

  std::unique_ptr<Tree> Sym(int i) {
    auto t = std::make_unique<Tree>();
    t->op = Tree::kSym;
    t->value = i;
    return t;
  }

  std::unique_ptr<Tree> Const(int64_t v) {
    auto t = std::make_unique<Tree>();
    t->value = v;
    return t;
  }

  // A divisor that is provably positive from the ranges alone.
  std::unique_ptr<Tree> Divisor() {
    switch (Uniform(0, 7)) {
      case 0:
      case 1:
        return Const(Uniform(1, 6));
      case 2:
        return Sym(kP);
      case 3:
        return Sym(kQ);
      case 4:
        return Node2(Tree::kMul, Sym(kP), Sym(kQ));
      case 5:
        return Node2(Tree::kAdd, Sym(kP), Const(Uniform(0, 3)));
      case 6:
        return Node2(Tree::kMin, Sym(kP), Sym(kQ));
      default:
        return Node2(Tree::kFloorDiv, Sym(kQ), Const(2));  // [1, 4].
    }
  }

  std::unique_ptr<Tree> Random(int depth) {
    if (depth == 0 || Uniform(0, 4) == 0) return Leaf();
    Tree::Op op = static_cast<Tree::Op>(Uniform(Tree::kAdd, Tree::kPow));
    auto t = std::make_unique<Tree>();
    t->op = op;
    t->a = Random(depth - 1);
    switch (op) {
      case Tree::kNeg:
        break;
      case Tree::kFloorDiv:
      case Tree::kCeilDiv:
      case Tree::kMod:
        t->b = Divisor();
        break;
      case Tree::kPow:
        t->value = Uniform(0, 3);
        break;
      default:
        t->b = Random(depth - 1);
    }
    return t;
  }

 private:
  std::mt19937_64 rng_;
};

Expr Build(Context& ctx, const Tree& t) {
  switch (t.op) {
    case Tree::kConst:
      return t.value;
    case Tree::kSym:
      return ctx.Symbol(kSyms[t.value].name, kSyms[t.value].range);
    case Tree::kAdd:
      return Build(ctx, *t.a) + Build(ctx, *t.b);
    case Tree::kSub:
      return Build(ctx, *t.a) - Build(ctx, *t.b);
    case Tree::kMul:
      return Build(ctx, *t.a) * Build(ctx, *t.b);
    case Tree::kNeg:
      return -Build(ctx, *t.a);
    case Tree::kFloorDiv:
      return FloorDiv(Build(ctx, *t.a), Build(ctx, *t.b));
    case Tree::kCeilDiv:
      return CeilDiv(Build(ctx, *t.a), Build(ctx, *t.b));
    case Tree::kMod:
      return Mod(Build(ctx, *t.a), Build(ctx, *t.b));
    case Tree::kMin:
      return Min(Build(ctx, *t.a), Build(ctx, *t.b));
    case Tree::kMax:
      return Max(Build(ctx, *t.a), Build(ctx, *t.b));
    case Tree::kPow:
      return Pow(Build(ctx, *t.a), t.value);
  }
  return 0;
}

// floor(a / b) for b > 0, written independently of the library's helper.
__int128 RefFloorDiv(__int128 a, __int128 b) {
  __int128 q = a / b, r = a % b;
  return (r != 0 && r < 0) ? q - 1 : q;
}

// Naive tree evaluation; sets *too_big when a value leaves +-2^40.
__int128 RefEval(const Tree& t, const int64_t* vals, bool* too_big) {
  __int128 r = 0;
  switch (t.op) {
    case Tree::kConst:
      r = t.value;
      break;
    case Tree::kSym:
      r = vals[t.value];
      break;
    case Tree::kAdd:
      r = RefEval(*t.a, vals, too_big) + RefEval(*t.b, vals, too_big);
      break;
    case Tree::kSub:
      r = RefEval(*t.a, vals, too_big) - RefEval(*t.b, vals, too_big);
      break;
    case Tree::kMul:
      r = RefEval(*t.a, vals, too_big) * RefEval(*t.b, vals, too_big);
      break;
    case Tree::kNeg:
      r = -RefEval(*t.a, vals, too_big);
      break;
    case Tree::kFloorDiv:
      r = RefFloorDiv(RefEval(*t.a, vals, too_big),
                      RefEval(*t.b, vals, too_big));
      break;
    case Tree::kCeilDiv: {
      __int128 a = RefEval(*t.a, vals, too_big),
               b = RefEval(*t.b, vals, too_big);
      r = -RefFloorDiv(-a, b);  // ceil(a/b) = -floor(-a/b).
      break;
    }
    case Tree::kMod: {
      __int128 a = RefEval(*t.a, vals, too_big),
               b = RefEval(*t.b, vals, too_big);
      r = a - b * RefFloorDiv(a, b);
      break;
    }
    case Tree::kMin: {
      __int128 a = RefEval(*t.a, vals, too_big),
               b = RefEval(*t.b, vals, too_big);
      r = a < b ? a : b;
      break;
    }
    case Tree::kMax: {
      __int128 a = RefEval(*t.a, vals, too_big),
               b = RefEval(*t.b, vals, too_big);
      r = a < b ? b : a;
      break;
    }
    case Tree::kPow: {
      __int128 a = RefEval(*t.a, vals, too_big);
      r = 1;
      for (int64_t i = 0; i < t.value; ++i) r *= a;
      break;
    }
  }
  constexpr __int128 kLimit = static_cast<__int128>(1) << 40;
  if (r > kLimit || r < -kLimit) *too_big = true;
  return r;
}

TEST(PropertyTest, RandomTreesAgreeWithReference) {
  constexpr int kTrees = 3000;
  constexpr int kSamples = 8;
  Gen gen(301);
  Context ctx;
  std::vector<std::string> names;
  for (const SymSpec& s : kSyms) {
    ctx.Symbol(s.name, s.range);
    names.push_back(s.name);
  }
  int checked = 0, skipped = 0, opaque = 0;
  for (int i = 0; i < kTrees; ++i) {
    std::unique_ptr<Tree> tree = gen.Random(4);
    Expr e;
    try {
      e = Build(ctx, *tree);
    } catch (const Error& err) {
      ADD_FAILURE() << "tree " << i << " failed to build: " << err.what();
      continue;
    }
    Verify(e);
    // Interning: the same tree builds the same node.
    ASSERT_EQ(Build(ctx, *tree), e) << "tree " << i;
    // Parse(ToString(e)) is the identical interned node.
    std::string text = e.ToString();
    Result<Expr> parsed = Parse(ctx, text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().message();
    ASSERT_EQ(parsed->node(), e.node())
        << text << " reparsed as " << parsed->ToString();
    ASSERT_EQ(*parsed, e) << text;
    if (e.kind() == Kind::kFloorDiv || e.kind() == Kind::kMin ||
        e.kind() == Kind::kMax) {
      ++opaque;
    }

    Interval bounds = ctx.Bounds(e);
    Result<Program> prog = Program::Compile({e}, names);
    ASSERT_TRUE(prog.ok()) << prog.status().message();
    for (int s = 0; s < kSamples; ++s) {
      int64_t vals[kNumSyms];
      Bindings bindings;
      for (int k = 0; k < kNumSyms; ++k) {
        vals[k] = gen.Uniform(kSyms[k].range.lo, kSyms[k].range.hi);
        bindings[kSyms[k].name] = vals[k];
      }
      bool too_big = false;
      __int128 want = RefEval(*tree, vals, &too_big);
      if (too_big) {
        ++skipped;
        continue;
      }
      Result<int64_t> got = Evaluate(e, bindings);
      ASSERT_TRUE(got.ok()) << text << ": " << got.status().message();
      ASSERT_EQ(static_cast<__int128>(*got), want)
          << "tree " << i << ": " << text << " at x=" << vals[0]
          << " y=" << vals[1] << " z=" << vals[2] << " p=" << vals[3]
          << " q=" << vals[4];
      ASSERT_TRUE(bounds.Contains(*got))
          << text << " = " << *got << " outside [" << bounds.lo << ", "
          << bounds.hi << "]";
      __int128 run;
      ASSERT_TRUE(prog->Run(vals, &run).ok());
      ASSERT_EQ(run, want) << text;
      ++checked;
    }
  }
  // The generator must exercise the interesting cases, not only skip them.
  EXPECT_GT(checked, kTrees * kSamples * 9 / 10);
  EXPECT_LT(skipped, kTrees * kSamples / 10);
  EXPECT_GT(opaque, kTrees / 50);
}

// SumOver over x's range equals the plain sum of Evaluate, for random trees
// (min, max, floordiv, mod, products and powers of x among them) with the
// other symbols bound at random.
TEST(PropertyTest, SumOverAgreesWithThePlainSum) {
  constexpr int kTrees = 2000;
  Gen gen(907);
  Context ctx;
  for (const SymSpec& s : kSyms) ctx.Symbol(s.name, s.range);
  for (int i = 0; i < kTrees; ++i) {
    std::unique_ptr<Tree> tree = gen.Random(4);
    const Expr e = Build(ctx, *tree);
    Bindings others;
    for (int k = 1; k < kNumSyms; ++k)
      others[kSyms[k].name] = gen.Uniform(kSyms[k].range.lo, kSyms[k].range.hi);
    const int64_t lo = gen.Uniform(-5, 5), hi = gen.Uniform(lo, 5);
    __int128 want = 0;
    Bindings at = others;
    for (int64_t x = lo; x <= hi; ++x) {
      at["x"] = x;
      Result<__int128> v = Evaluate128(e, at);
      ASSERT_TRUE(v.ok()) << e.ToString() << ": " << v.status().message();
      want += *v;
    }
    Result<__int128> got = SumOver(e, others, "x", lo, hi);
    ASSERT_TRUE(got.ok()) << e.ToString() << ": " << got.status().message();
    ASSERT_TRUE(*got == want) << "tree " << i << ": " << e.ToString()
                              << " over x = " << lo << ".." << hi;
  }
}

TEST(PropertyTest, SubstituteAgreesWithEvaluate) {
  Gen gen(7);
  Context ctx;
  for (const SymSpec& s : kSyms) ctx.Symbol(s.name, s.range);
  for (int i = 0; i < 500; ++i) {
    std::unique_ptr<Tree> tree = gen.Random(3);
    Expr e = Build(ctx, *tree);
    Bindings all, part;
    for (int k = 0; k < kNumSyms; ++k) {
      int64_t v = gen.Uniform(kSyms[k].range.lo, kSyms[k].range.hi);
      all[kSyms[k].name] = v;
      if (k % 2 == 0) part[kSyms[k].name] = v;  // Bind x, z, q only.
    }
    Result<int64_t> want = Evaluate(e, all);
    ASSERT_TRUE(want.ok()) << e.ToString();
    Expr partial = Substitute(e, part);
    Verify(partial);
    Result<int64_t> got = Evaluate(partial, all);
    ASSERT_TRUE(got.ok()) << partial.ToString();
    EXPECT_EQ(*got, *want) << e.ToString() << " -> " << partial.ToString();
    EXPECT_EQ(Substitute(e, all), Expr(*want)) << e.ToString();
  }
}

}  // namespace
}  // namespace torchcost::sym
