// Fuzzes the command line's spec strings. An input "FLAG TEXT" gives TEXT to
// the parser kParsers names FLAG (fuzz/seeds/cli_spec.txt); any other input
// picks the parser by its first byte and gives it the rest. Every text is a
// value or an error, never a crash, a hang or an exception escaping the parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cli/inputs.h"
#include "step/step_config.h"
#include "torchcost/analysis.h"
#include "torchcost/compare.h"
#include "torchcost/dtype.h"
#include "torchcost/families.h"
#include "torchcost/galore.h"
#include "torchcost/loss.h"
#include "torchcost/method.h"
#include "torchcost/peft.h"
#include "torchcost/report.h"
#include "torchcost/sharding.h"
#include "torchcost/step.h"
#include "torchcost/training.h"
#include "training/checkpoint.h"

namespace {

using namespace torchcost;

// A two-block GPT-2 for the flags that match module paths (--checkpoint).
const ir::Graph& SmallGraph() {
  static const builder::BuiltModel* m = new builder::BuiltModel(
      std::move(builder::BuildNamedModel(
                    "gpt2", "layers=2,hidden=32,heads=2,vocab=64,context=16"))
          .value());
  return m->graph;
}

// Parses the options of a StepConfig with one field set to `t` (what the CLI
// and the Python module hand the library), then its inputs.
void Step(std::string StepConfig::*field, std::string_view t) {
  StepConfig config;
  config.*field = std::string(t);
  (void)step::ParseOptions(config);
}

void Input(std::string_view t) {
  sym::Context ctx;
  (void)ParseInputSpec(ctx, t);
  StepConfig config;
  config.inputs = {std::string(t)};
  config.symbol_bounds = {{"S", 1024}};
  config.bindings = {{"B", 8}};
  std::vector<InputSpec> inputs;
  sym::Bindings bindings;
  sym::Context step_ctx;
  (void)step::ParseInputs(config, step_ctx, &inputs, &bindings);
}
void Set(std::string_view t) {
  std::vector<cli::SymbolValue> out;
  (void)cli::ParseSets({std::string(t)}, out);
}
void Peft(std::string_view t) {
  (void)ParseMethodSpec(t);
  Step(&StepConfig::method, t);
}
void Lora(std::string_view t) { (void)ParseLoraConfig(t); }
void Qlora(std::string_view t) { (void)ParseQloraConfig(t); }
void Galore(std::string_view t) {
  (void)ParseGaloreConfig(t);
  Step(&StepConfig::galore, t);
}
void Loss(std::string_view t) { Step(&StepConfig::loss, t); }
void Sweep(std::string_view t) { (void)ParseSweep(t); }
void Budget(std::string_view t) {
  (void)ParseMemorySize(t);
  // The text as a number (NaN, infinities, fractions): reduce_bucket's checks.
  StepConfig config;
  config.shard = "zero3";
  config.reduce_bucket = std::strtod(std::string(t).c_str(), nullptr);
  (void)step::ParseOptions(config);
}
void Names(std::string_view t) {
  (void)ParseDType(t);
  (void)ParseShardStrategy(t);
  (void)ParseOptimizer(t);
  (void)ParseStepMode(t);
  Step(&StepConfig::autocast, t);
  Step(&StepConfig::offload, t);
  Step(&StepConfig::budget_symbol, t);
}
void Checkpoint(std::string_view t) {
  Step(&StepConfig::checkpoint, t);
  TrainingOptions options;
  options.checkpoint = std::string(t);
  (void)training::FindCheckpointSegments(SmallGraph(), options);
}
void Regex(std::string_view t) {
  StepConfig config;
  config.freeze = {std::string(t)};
  (void)step::ParseOptions(config);
  Step(&StepConfig::fsdp_unit, t);
}

struct Parser {
  std::string_view flag;
  void (*parse)(std::string_view);
};
constexpr Parser kParsers[] = {{"input", Input},
                               {"set", Set},
                               {"peft", Peft},
                               {"lora", Lora},
                               {"qlora", Qlora},
                               {"galore", Galore},
                               {"loss", Loss},
                               {"sweep", Sweep},
                               {"budget", Budget},
                               {"names", Names},
                               {"checkpoint", Checkpoint},
                               {"freeze", Regex}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t space = input.find(' ');
  for (const Parser& p : kParsers) {
    if (space != std::string_view::npos && input.substr(0, space) == p.flag) {
      p.parse(input.substr(space + 1));
      return 0;
    }
  }
  kParsers[data[0] % std::size(kParsers)].parse(input.substr(1));
  return 0;
}
