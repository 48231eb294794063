// Evaluating a symbolic result in a test, a failed evaluation failing the test.
#ifndef TORCHCOST_TESTS_TESTING_EVAL_OR_FAIL_H_
#define TORCHCOST_TESTS_TESTING_EVAL_OR_FAIL_H_

#include <gtest/gtest.h>

#include <cstdint>

#include "torchcost/sym.h"

namespace torchcost::testing {

// Returns `e` under `b`; where it does not evaluate, fails the test and
// returns -1.
inline int64_t EvalOrFail(const sym::Expr& e, const sym::Bindings& b) {
  Result<int64_t> v = sym::Evaluate(e, b);
  EXPECT_TRUE(v.ok()) << e.ToString();
  return v.ok() ? *v : -1;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_EVAL_OR_FAIL_H_
