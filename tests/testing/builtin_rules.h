// The built-in rules, loaded once for every test in a binary.
#ifndef TORCHCOST_TESTS_TESTING_BUILTIN_RULES_H_
#define TORCHCOST_TESTS_TESTING_BUILTIN_RULES_H_

#include <utility>

#include "torchcost/rules.h"

namespace torchcost::testing {

// Returns the built-in rules, loaded once.
inline const RuleSet& BuiltinRules() {
  static const RuleSet* rules =
      new RuleSet(std::move(RuleSet::Builtin()).value());
  return *rules;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_BUILTIN_RULES_H_
