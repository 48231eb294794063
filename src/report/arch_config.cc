// The closed forms of a config with architecture symbols, as text and JSON.
#include "torchcost/arch_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace torchcost {
namespace {

// The value of `e` if `bindings` bind every symbol in it.
std::optional<int64_t> ValueOf(const sym::Expr& e,
                               const sym::Bindings& bindings) {
  for (const std::string& s : sym::FreeSymbols(e)) {
    if (!bindings.count(s)) return std::nullopt;
  }
  Result<int64_t> v = sym::Evaluate(e, bindings);
  if (!v.ok()) return std::nullopt;
  return *v;
}

// The peak under `bindings`: the largest candidate, if every one evaluates.
std::optional<int64_t> PeakOf(const ArchConfigAnalysis& a) {
  std::optional<int64_t> peak;
  for (const sym::Expr& c : a.costs.costs.peak_candidates) {
    std::optional<int64_t> v = ValueOf(c, a.bindings);
    if (!v) return std::nullopt;
    peak = peak ? std::max(*peak, *v) : *v;
  }
  return peak;
}

// The totals, in the order both reports give them.
std::vector<std::pair<const char*, const sym::Expr*>> Totals(
    const ArchConfigAnalysis& a) {
  const SymbolicCosts& c = a.costs.costs;
  return {{"params", &c.params},
          {"trainable_params", &c.trainable_params},
          {"flops_forward", &c.flops_forward},
          {"flops_backward", &c.flops_backward}};
}

constexpr char kNotAvailable[] =
    "Not available with architecture symbols: the per-module tree and the "
    "memory timeline (closed-form totals only).";

}  // namespace

std::string RenderArchConfigText(const ArchConfigAnalysis& a) {
  std::string out = "Model: " + a.model + " (config " + a.model_config +
                    ")\nArchitecture symbols:";
  for (size_t i = 0; i < a.symbols.size(); ++i) {
    const ArchSymbol& s = a.symbols[i];
    out += (i ? ", " : " ") + s.name + " = " + std::to_string(s.lo) + ".." +
           std::to_string(s.hi) + " step " + std::to_string(s.step);
    if (i < a.costs.degrees.size())
      out += " (degree " + std::to_string(a.costs.degrees[i]) + ")";
  }
  out +=
      "; closed forms from " + std::to_string(a.costs.analyses) + " analyses\n";
  const char* const labels[] = {"Params", "Trainable params", "FLOPs forward",
                                "FLOPs backward"};
  int i = 0;
  for (const auto& [key, e] : Totals(a)) {
    out += std::string(labels[i++]) + ": " + e->ToString();
    if (std::optional<int64_t> v = ValueOf(*e, a.bindings))
      out += " = " + std::to_string(*v);
    out += "\n";
  }
  const std::vector<sym::Expr>& peaks = a.costs.costs.peak_candidates;
  // NB: bound, the peak is one number; unbound, the max of the candidates.
  out += "Peak memory (bytes): ";
  if (std::optional<int64_t> v = PeakOf(a)) {
    out += std::to_string(*v) + " (the largest of " +
           std::to_string(peaks.size()) + " closed forms)";
  } else if (peaks.size() == 1) {
    out += peaks[0].ToString();
  } else {
    out += "max(";
    for (size_t p = 0; p < peaks.size(); ++p)
      out += (p ? ", " : "") + peaks[p].ToString();
    out += ")";
  }
  out += "\n" + std::string(kNotAvailable) + "\n";
  return out;
}

std::string RenderArchConfigJson(const ArchConfigAnalysis& a) {
  auto value = [&](std::optional<int64_t> v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json j;
  j["schema"] = "torchcost.arch_config";
  j["version"] = 1;
  j["model"] = a.model;
  j["config"] = a.model_config;
  nlohmann::ordered_json symbols = nlohmann::ordered_json::array();
  for (size_t i = 0; i < a.symbols.size(); ++i) {
    const ArchSymbol& s = a.symbols[i];
    symbols.push_back(
        {{"name", s.name},
         {"lo", s.lo},
         {"hi", s.hi},
         {"step", s.step},
         {"degree", i < a.costs.degrees.size() ? a.costs.degrees[i] : -1}});
  }
  j["arch_symbols"] = std::move(symbols);
  j["symbols"] = a.costs.symbols;
  j["analyses"] = a.costs.analyses;
  nlohmann::ordered_json bindings = nlohmann::ordered_json::object();
  for (const std::string& s : a.costs.symbols) {
    if (a.bindings.count(s)) bindings[s] = a.bindings.at(s);
  }
  j["bindings"] = std::move(bindings);
  nlohmann::ordered_json totals;
  for (const auto& [key, e] : Totals(a))
    totals[key] = {{"expr", e->ToString()},
                   {"value", value(ValueOf(*e, a.bindings))}};
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const sym::Expr& c : a.costs.costs.peak_candidates)
    candidates.push_back(c.ToString());
  totals["peak_bytes"] = {{"candidates", std::move(candidates)},
                          {"value", value(PeakOf(a))}};
  j["totals"] = std::move(totals);
  j["not_available"] = {"modules", "timeline"};
  return j.dump(2) + "\n";
}

}  // namespace torchcost
