// Tests of sym::Shape (InlineList<Expr, 4>): every vector-like call leaves the
// same sequence as the same call on a std::vector<sym::Expr>, in place and
// past four dims on the heap, through copies, moves, inserts and erases.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

std::vector<Expr> Items(const Shape& s) { return {s.begin(), s.end()}; }

TEST(ShapeTest, FourDimsInPlaceInSeventyTwoBytes) {
  // NB: two 4-byte counts and four 16-byte Exprs.
  EXPECT_EQ(sizeof(Shape), 72u);
  Context ctx;
  const Expr b = ctx.Symbol("B"), s = ctx.Symbol("S");
  Shape x = {b, 32, s, 128};
  EXPECT_EQ(x.size(), 4u);
  EXPECT_EQ(x[0], b);
  EXPECT_EQ(x.back(), Expr(128));
  const Shape copy = x;
  x[2] = 1;
  EXPECT_EQ(copy[2], s);  // A copy owns its dims.
  EXPECT_NE(copy, x);
  EXPECT_EQ(Shape(std::vector<Expr>{b, 32, s, 128}), copy);
  EXPECT_EQ(copy.ToVector(), (std::vector<Expr>{b, 32, s, 128}));
}

TEST(ShapeTest, InsertEraseAndResizeAsAVector) {
  Context ctx;
  const Expr h = ctx.Symbol("H");
  Shape x = {2, 3};
  std::vector<Expr> ref = {2, 3};
  x.insert(x.begin(), 3, Expr(1));
  ref.insert(ref.begin(), 3, Expr(1));
  EXPECT_EQ(Items(x), ref);  // Five dims: on the heap now.
  x.insert(x.begin() + 2, h);
  ref.insert(ref.begin() + 2, h);
  EXPECT_EQ(Items(x), ref);
  const std::vector<Expr> more = {7, h, 9};
  x.insert(x.end() - 1, more.begin(), more.end());
  ref.insert(ref.end() - 1, more.begin(), more.end());
  EXPECT_EQ(Items(x), ref);
  x.erase(x.begin() + 1, x.begin() + 4);
  ref.erase(ref.begin() + 1, ref.begin() + 4);
  EXPECT_EQ(Items(x), ref);
  x.erase(x.begin());
  ref.erase(ref.begin());
  EXPECT_EQ(Items(x), ref);
  x.resize(9, h);
  ref.resize(9, h);
  EXPECT_EQ(Items(x), ref);
  x.resize(2);
  ref.resize(2);
  EXPECT_EQ(Items(x), ref);
  x.pop_back();
  ref.pop_back();
  EXPECT_EQ(Items(x), ref);
}

TEST(ShapeTest, PushBackOfItsOwnDimWhileGrowing) {
  // NB: the dim pushed is read before the elements move to the heap.
  Context ctx;
  Shape x = {ctx.Symbol("A"), 2, 3, 4};
  x.push_back(x[0]);
  EXPECT_EQ(x[4], x[0]);
  x.assign(6, x[1]);
  EXPECT_EQ(Items(x), std::vector<Expr>(6, Expr(2)));
}

TEST(ShapeTest, RandomCallsMatchAVector) {
  // 2000 random calls from a fixed seed, each checked against the vector.
  std::mt19937 rng(12345);
  Context ctx;
  const Expr syms[] = {ctx.Symbol("B"), ctx.Symbol("S"), ctx.Symbol("T")};
  auto any = [&]() -> Expr {
    const int k = static_cast<int>(rng() % 6);
    return k < 3 ? syms[k] : Expr(static_cast<int64_t>(k));
  };
  Shape x;
  std::vector<Expr> ref;
  for (int step = 0; step < 2000; ++step) {
    const size_t n = ref.size();
    switch (rng() % 8) {
      case 0: {
        const Expr e = any();
        x.push_back(e);
        ref.push_back(e);
        break;
      }
      case 1:
        if (n > 0) {
          x.pop_back();
          ref.pop_back();
        }
        break;
      case 2: {
        const size_t at = rng() % (n + 1);
        const Expr e = any();
        x.insert(x.begin() + at, e);
        ref.insert(ref.begin() + at, e);
        break;
      }
      case 3:
        if (n > 0) {
          const size_t at = rng() % n;
          x.erase(x.begin() + at);
          ref.erase(ref.begin() + at);
        }
        break;
      case 4: {
        const size_t to = rng() % 9;
        const Expr e = any();
        x.resize(to, e);
        ref.resize(to, e);
        break;
      }
      case 5: {
        Shape copy = x;  // Copy, then move back.
        x = std::move(copy);
        break;
      }
      case 6: {
        const Shape copy(ref.begin(), ref.end());
        x = copy;
        break;
      }
      default:
        if (n > 8) {
          x.clear();
          ref.clear();
        }
        break;
    }
    ASSERT_EQ(Items(x), ref) << "after step " << step;
  }
}

}  // namespace
}  // namespace torchcost::sym
