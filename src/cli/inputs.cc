#include "cli/inputs.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/flag_names.h"

namespace torchcost::cli {
namespace {

Outcome ReadSidecar(const std::string& model, std::vector<std::string>& out) {
  const std::string path = SidecarPath(model);
  std::ifstream file(path);
  if (!file) {
    return Outcome::Usage(
        "no input shapes: give --input SHAPE for each model input (e.g. "
        "--input 1,3,224,224) or write " +
        path);
  }
  nlohmann::json meta =
      nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded()) return Outcome::Usage(path + ": not valid JSON");
  const auto bad = Outcome::Usage(
      path + ": \"input_shapes\" must be a list of lists of integers");
  if (!meta.is_object() || !meta.contains("input_shapes") ||
      !meta["input_shapes"].is_array()) {
    return bad;
  }
  const nlohmann::json& shapes = meta["input_shapes"];
  const nlohmann::json dtypes =
      meta.value("input_dtypes", nlohmann::json::array());
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!shapes[i].is_array()) return bad;
    std::string text;
    for (const nlohmann::json& d : shapes[i]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return bad;
      text += (text.empty() ? "" : ",") + std::to_string(d.get<int64_t>());
    }
    if (dtypes.is_array() && i < dtypes.size() && dtypes[i].is_string()) {
      Result<DType> dtype = ParseDType(dtypes[i].get<std::string>());
      if (!dtype.ok())
        return Outcome::Usage(path + ": " + dtype.status().message());
      text += ":" + std::string(DTypeName(*dtype));
    }
    out.push_back(std::move(text));
  }
  return Outcome::Ok();
}

}  // namespace

std::string SidecarPath(const std::string& model) {
  const std::string suffix = ".pt";
  std::string stem = model;
  if (stem.size() > suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
    stem.resize(stem.size() - suffix.size());
  }
  return stem + ".meta.json";
}

Outcome InputTexts(const std::vector<std::string>& texts,
                   const std::string& model, std::vector<std::string>& out) {
  if (texts.empty()) return ReadSidecar(model, out);
  out = texts;
  return Outcome::Ok();
}

Outcome ParseSets(const std::vector<std::string>& given,
                  std::vector<SymbolValue>& out) {
  // NB: one --set may carry several values: --set B=8,S=1024.
  std::vector<std::string> texts;
  for (const std::string& g : given) {
    std::stringstream in(g);
    std::string item;
    while (std::getline(in, item, ',')) texts.push_back(item);
    if (g.empty() || g.back() == ',') texts.push_back("");
  }
  for (const std::string& text : texts) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Outcome::Usage("--set " + text +
                            ": expected SYM=VAL (e.g. --set B=8)");
    }
    SymbolValue sv;
    sv.text = text;
    sv.name = text.substr(0, eq);
    const std::string value = text.substr(eq + 1);
    const char* begin = value.data();
    const char* end = begin + value.size();
    auto [ptr, ec] = std::from_chars(begin, end, sv.value);
    if (value.empty() || ec != std::errc() || ptr != end) {
      return Outcome::Usage("--set " + text + ": value '" + value +
                            "' is not an integer");
    }
    out.push_back(std::move(sv));
  }
  return Outcome::Ok();
}

std::vector<std::string> InputSymbols(const std::vector<InputSpec>& inputs) {
  std::set<std::string> names;
  for (const InputSpec& in : inputs) {
    for (const sym::Expr& d : in.shape) {
      for (const std::string& s : sym::FreeSymbols(d)) names.insert(s);
    }
  }
  return {names.begin(), names.end()};
}

Outcome ParseGenerationSweeps(const std::vector<std::string>& texts,
                              std::vector<SweepSpec>& out) {
  for (const std::string& text : texts) {
    Result<SweepSpec> spec = ParseSweep(text);
    if (!spec.ok())
      return Outcome::Usage(WithFlagNames(spec.status().message()));
    if (spec->symbol != "B" && spec->symbol != "S" && spec->symbol != "T") {
      return Outcome::Usage("--sweep " + text + ": unknown symbol '" +
                            spec->symbol + "'; --mode generate sweeps B, S, T");
    }
    out.push_back(std::move(spec).value());
  }
  return Outcome::Ok();
}

}  // namespace torchcost::cli
