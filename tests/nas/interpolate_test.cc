#include "nas/interpolate.h"

#include <gtest/gtest.h>

#include <vector>

namespace torchcost::nas {
namespace {

// p(x) = 3x^2 - 5x + 7 at x = 2, 5, 6: the monomial coefficients come back.
TEST(InterpolateTest, OneAxisRecoversCoefficients) {
  const std::vector<int64_t> x = {2, 5, 6};
  std::vector<__int128> f;
  for (int64_t v : x) f.push_back(3 * v * v - 5 * v + 7);
  ASSERT_TRUE(DividedDifferences(x.data(), 3, f.data(), 1).ok());
  ASSERT_TRUE(NewtonToMonomial(x.data(), 3, f.data(), 1).ok());
  EXPECT_EQ(static_cast<int64_t>(f[0]), 7);
  EXPECT_EQ(static_cast<int64_t>(f[1]), -5);
  EXPECT_EQ(static_cast<int64_t>(f[2]), 3);
}

// q(x, y) = 4 x^2 y + x y - 9 and r(x, y) = y on a 3 x 2 grid, both at once.
TEST(InterpolateTest, GridRecoversTwoQuantities) {
  const std::vector<std::vector<int64_t>> nodes = {{1, 2, 4}, {3, 7}};
  std::vector<__int128> values;
  for (int64_t y : nodes[1]) {
    for (int64_t x : nodes[0]) {
      values.push_back(4 * x * x * y + x * y - 9);
      values.push_back(y);
    }
  }
  ASSERT_TRUE(InterpolateGrid(nodes, 2, &values).ok());
  // Coefficient of x^i y^j at grid index (i + 3 j), quantity 0 / 1.
  auto q = [&](int i, int j) {
    return static_cast<int64_t>(values[(i + 3 * j) * 2]);
  };
  auto r = [&](int i, int j) {
    return static_cast<int64_t>(values[(i + 3 * j) * 2 + 1]);
  };
  EXPECT_EQ(q(0, 0), -9);
  EXPECT_EQ(q(1, 1), 1);
  EXPECT_EQ(q(2, 1), 4);
  EXPECT_EQ(q(1, 0), 0);
  EXPECT_EQ(q(2, 0), 0);
  EXPECT_EQ(q(0, 1), 0);
  EXPECT_EQ(r(0, 1), 1);
  EXPECT_EQ(r(0, 0), 0);
  EXPECT_EQ(r(2, 1), 0);
}

// x^3 sampled at three points is no polynomial of degree < 3 with integer
// divided differences... but it is one of degree 2 over the rationals only if
// a difference is fractional: x = 0, 1, 3 gives f[0,1,3] = 4 (integer), so use
// floor(x / 2), which no integer polynomial interpolates at 0, 1, 2.
TEST(InterpolateTest, NonPolynomialDataIsAnError) {
  const std::vector<int64_t> x = {0, 1, 2};
  std::vector<__int128> f = {0, 0, 1};  // floor(x / 2): f[0,1,2] = 1/2.
  EXPECT_FALSE(DividedDifferences(x.data(), 3, f.data(), 1).ok());
}

}  // namespace
}  // namespace torchcost::nas
