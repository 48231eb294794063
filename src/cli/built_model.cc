#include "cli/built_model.h"

#include "cli/flag_names.h"
#include "torchcost/dtype.h"
#include "torchcost/families.h"
#include "torchcost/step.h"

namespace torchcost::cli {

Outcome CheckModelSource(const CommandLine& cl) {
  const bool built = !cl.builder_model.empty();
  if (built && !cl.model.empty())
    return Outcome::Usage("give a MODEL file or --model " + cl.builder_model +
                          ", not both (got '" + cl.model + "')");
  if (!built && cl.model.empty())
    return Outcome::Usage("a MODEL file (or --model NAME) is required");
  if (!built && !cl.builder_config.empty())
    return Outcome::Usage("--config needs --model NAME");
  return Outcome::Ok();
}

Outcome BuildNamed(const CommandLine& cl,
                   std::optional<builder::BuiltModel>& model) {
  if (cl.builder_model.empty()) return Outcome::Ok();
  // --param-dtype with --model sets the family's compute dtype (config key
  // dtype): the family builds params, buffers, floating inputs and
  // activations in it, with the reference code's float32 islands. A dtype
  // no family computes in (float64) retypes the built params instead (Prepare).
  std::string config = cl.builder_config;
  if (!cl.param_dtype.empty()) {
    Result<DType> d = ParseDType(cl.param_dtype);
    if (d.ok() && (*d == DType::kFloat32 || *d == DType::kBFloat16 ||
                   *d == DType::kFloat16)) {
      // A dtype= in --config must agree (the later key would silently win).
      size_t start = 0;
      while (start <= config.size()) {
        size_t comma = config.find(',', start);
        if (comma == std::string::npos) comma = config.size();
        const std::string item = config.substr(start, comma - start);
        start = comma + 1;
        if (item.rfind("dtype=", 0) != 0) continue;
        Result<DType> given = ParseDType(item.substr(6));
        if (!given.ok() || *given != *d)
          return Outcome::Usage("--param-dtype " + cl.param_dtype +
                                " and --config " + item + " disagree");
      }
      config +=
          (config.empty() ? "dtype=" : ",dtype=") + std::string(DTypeName(*d));
    }
  }
  Result<builder::BuiltModel> built =
      builder::BuildNamedModel(cl.builder_model, config);
  if (!built.ok())
    return Outcome::Usage(WithFlagNames(built.status().message()));
  model = std::move(built).value();
  return Outcome::Ok();
}

void DeclaredInputs(const builder::BuiltModel& model,
                    std::vector<std::string>& inputs,
                    std::vector<std::pair<std::string, int64_t>>& bounds) {
  StepConfig declared = StepConfigFor(model);
  inputs = std::move(declared.inputs);
  bounds = std::move(declared.symbol_bounds);
}

}  // namespace torchcost::cli
