// AnalyzeArchConfig: a StepConfig with architecture symbols turned into an
// ArchSpace, its options checked where every StepConfig's are (ParseOptions).
#include "torchcost/arch_config.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "step/step_config.h"
#include "torchcost/families.h"

namespace torchcost {
namespace {

Status Bad(const std::string& message) {
  return Status::InvalidArgument(message);
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Returns true if `value` has the identifier `name` as a whole word.
bool HasIdentifier(const std::string& value, const std::string& name) {
  for (size_t at = value.find(name); at != std::string::npos;
       at = value.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at == 0 || !IsIdentChar(value[at - 1])) &&
        (end == value.size() || !IsIdentChar(value[end])))
      return true;
  }
  return false;
}

// Returns "NAME=LO:HI:STEP".
std::string Describe(const ArchSymbol& s) {
  return s.name + "=" + std::to_string(s.lo) + ":" + std::to_string(s.hi) +
         ":" + std::to_string(s.step);
}

// Builds the model at the first two samples of each symbol (the others at
// their first), so a range whose samples break the config (hidden not
// divisible by heads) is named by its symbol before any analysis.
Status CheckSamples(const ArchSpace& space) {
  const size_t k = space.symbols.size();
  for (size_t a = 0; a < k; ++a) {
    std::vector<int64_t> values(k);
    for (size_t b = 0; b < k; ++b) values[b] = space.symbols[b].lo;
    for (int j = 0; j < 2; ++j) {
      values[a] = space.symbols[a].lo + j * space.symbols[a].step;
      Result<std::string> config = ConfigAt(space, values);
      if (!config.ok())
        return Bad("StepConfig.arch_symbols: " + config.status().message());
      Result<builder::BuiltModel> built =
          builder::BuildNamedModel(space.model, *config);
      if (!built.ok()) {
        return Bad("StepConfig.arch_symbols " + Describe(space.symbols[a]) +
                   ": the sample " + space.symbols[a].name + "=" +
                   std::to_string(values[a]) + " (" + *config +
                   ") does not build: " + built.status().message());
      }
    }
  }
  return Status::Ok();
}

// Parses `config`'s options. NB: an empty loss is the model's own; ParseOptions
// checks a named one.
Result<step::ParsedStep> ParseArchOptions(const StepConfig& config) {
  if (!config.loss.empty()) return step::ParseOptions(config);
  StepConfig checked = config;
  checked.loss = "sum";
  return step::ParseOptions(checked);
}

}  // namespace

bool NamesArchSymbol(const std::string& model_config,
                     const StepConfig& config) {
  Result<step::ParsedStep> parsed = ParseArchOptions(config);
  if (!parsed.ok()) return false;
  for (const ArchSymbol& s : parsed->arch_symbols) {
    size_t start = 0;
    while (start < model_config.size()) {
      size_t comma = model_config.find(',', start);
      if (comma == std::string::npos) comma = model_config.size();
      const std::string item = model_config.substr(start, comma - start);
      start = comma + 1;
      const size_t eq = item.find('=');
      if (eq != std::string::npos && HasIdentifier(item.substr(eq + 1), s.name))
        return true;
    }
  }
  return false;
}

Result<ArchConfigAnalysis> AnalyzeArchConfig(const std::string& model,
                                             const std::string& model_config,
                                             const RuleSet& rules,
                                             const StepConfig& config) {
  Result<step::ParsedStep> parsed = ParseArchOptions(config);
  if (!parsed.ok()) return parsed.status();
  if (parsed->arch_symbols.empty())
    return Bad("StepConfig.arch_symbols: none given");
  if (!NamesArchSymbol(model_config, config)) {
    std::string names;
    for (const ArchSymbol& s : parsed->arch_symbols)
      names += (names.empty() ? "" : ", ") + s.name;
    return Bad("StepConfig.arch_symbols " + names +
               ": no value of the config '" + model_config + "' names them");
  }
  ArchConfigAnalysis out;
  out.model = model;
  out.model_config = model_config;
  out.symbols = parsed->arch_symbols;
  out.context = std::make_unique<sym::Context>();
  ArchSpace space;
  space.model = model;
  space.config = model_config;
  space.symbols = parsed->arch_symbols;
  space.options = std::move(parsed->options);
  space.loss = config.loss;
  TORCHCOST_RETURN_IF_ERROR(CheckSamples(space));
  Result<ArchCosts> costs = AnalyzeArchSpace(space, rules, *out.context);
  if (!costs.ok()) return costs.status();
  out.costs = std::move(costs).value();
  // The bindings: architecture symbols on their sample grids (the closed form
  // is the model's there), input symbols among the closed forms' symbols.
  for (const auto& binding : config.bindings) {
    // NB: named copies, as C++17 lambdas cannot capture structured bindings.
    const std::string& name = binding.first;
    const int64_t value = binding.second;
    const std::string text =
        "StepConfig.bindings " + name + "=" + std::to_string(value);
    auto arch =
        std::find_if(out.symbols.begin(), out.symbols.end(),
                     [&](const ArchSymbol& s) { return s.name == name; });
    if (arch != out.symbols.end()) {
      if (value < arch->lo || value > arch->hi ||
          (value - arch->lo) % arch->step != 0) {
        return Bad(text + ": off the samples of " + Describe(*arch) +
                   " (LO + k * STEP up to HI)");
      }
    } else if (std::find(out.costs.symbols.begin(), out.costs.symbols.end(),
                         name) == out.costs.symbols.end()) {
      std::string list;
      for (const std::string& s : out.costs.symbols)
        list += (list.empty() ? "" : ", ") + s;
      return Bad(text + ": unknown symbol '" + name + "'; symbols: " + list);
    } else if (value < 1) {
      return Bad(text + ": must be at least 1");
    }
    out.bindings[name] = value;
  }
  return out;
}

}  // namespace torchcost
