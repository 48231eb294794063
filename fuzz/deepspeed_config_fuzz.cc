// Fuzzes a DeepSpeed JSON config (ApplyDeepSpeedConfigText) over a StepConfig
// with a hidden size, then the options it yields (step::ParseOptions). Every
// input is a set of fields or a one-line error, in bounded time and memory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "step/step_config.h"
#include "torchcost/deepspeed_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  torchcost::StepConfig config;
  config.hidden_size = 4096;
  if (torchcost::ApplyDeepSpeedConfigText(text, "fuzz.json", &config).ok())
    (void)torchcost::step::ParseOptions(config);
  return 0;
}
