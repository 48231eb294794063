// The step tests' smallest configuration.
#ifndef TORCHCOST_TESTS_TESTING_TOY_STEP_CONFIG_H_
#define TORCHCOST_TESTS_TESTING_TOY_STEP_CONFIG_H_

#include "torchcost/step.h"

namespace torchcost::testing {

// Returns a StepConfig whose one input is [B, 16], everything else default.
inline StepConfig ToyStepConfig() {
  StepConfig c;
  c.inputs = {"B,16"};
  return c;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TOY_STEP_CONFIG_H_
