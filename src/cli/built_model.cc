#include "cli/built_model.h"

#include "torchcost/families.h"

namespace torchcost::cli {

Outcome CheckModelSource(const CommandLine& cl) {
  const bool built = !cl.builder_model.empty();
  if (built && !cl.model.empty())
    return Outcome::Usage("give a MODEL file or --model " + cl.builder_model + ", not both (got '" + cl.model + "')");
  if (!built && cl.model.empty()) return Outcome::Usage("a MODEL file (or --model NAME) is required");
  if (!built && !cl.builder_config.empty()) return Outcome::Usage("--config needs --model NAME");
  return Outcome::Ok();
}

Outcome BuildNamed(const CommandLine& cl, std::optional<build::BuiltModel>& model) {
  if (cl.builder_model.empty()) return Outcome::Ok();
  Result<build::BuiltModel> built = build::BuildNamedModel(cl.builder_model, cl.builder_config);
  if (!built.ok()) return Outcome::Usage(built.status().message());
  model = std::move(built).value();
  return Outcome::Ok();
}

void DeclaredInputs(const build::BuiltModel& model, sym::Context& ctx, std::vector<InputSpec>& inputs) {
  for (const build::InputDecl& decl : model.inputs) {
    InputSpec spec;
    spec.shape = build::ResolveShape(model, decl, ctx);
    spec.dtype = decl.dtype;
    inputs.push_back(std::move(spec));
  }
}

}  // namespace torchcost::cli
