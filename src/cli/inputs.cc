#include "cli/inputs.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace torchcost::cli {
namespace {

// Returns true if `dim` may be a dim of --input: an integer, a symbol name, or
// an expression over them (digits, letters, '_', '+', '-', '*', parentheses,
// spaces).
bool PlausibleDim(const std::string& dim) {
  bool has_alnum = false;
  for (char c : dim) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      has_alnum = true;
    } else if (c != '_' && c != '+' && c != '-' && c != '*' && c != '(' &&
               c != ')' && c != ' ') {
      return false;
    }
  }
  return has_alnum;
}

// Checks every comma-separated dim of a --input shape before the full parse, so
// "B,x?,3" gets a message naming the bad dim.
Outcome CheckShapeText(const std::string& text) {
  const std::string shape = text.substr(0, text.find(':'));
  std::stringstream in(shape);
  std::string dim;
  int index = 0;
  if (shape.empty())
    return Outcome::Usage("--input '" + text + "': empty shape");
  while (std::getline(in, dim, ',')) {
    if (!PlausibleDim(dim)) {
      return Outcome::Usage("--input '" + text + "': dim " +
                            std::to_string(index) + " '" + dim +
                            "' is not an integer or a symbol name");
    }
    ++index;
  }
  if (shape.back() == ',')
    return Outcome::Usage("--input '" + text + "': empty dim at the end");
  return Outcome::Ok();
}

Outcome ReadSidecar(const std::string& model, DType default_dtype,
                    std::vector<InputSpec>& out) {
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
    InputSpec spec;
    spec.dtype = default_dtype;
    for (const nlohmann::json& d : shapes[i]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return bad;
      spec.shape.push_back(sym::Expr(d.get<int64_t>()));
    }
    if (dtypes.is_array() && i < dtypes.size() && dtypes[i].is_string()) {
      Result<DType> dtype = ParseDType(dtypes[i].get<std::string>());
      if (!dtype.ok())
        return Outcome::Usage(path + ": " + dtype.status().message());
      spec.dtype = *dtype;
    }
    out.push_back(std::move(spec));
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

Outcome BuildInputs(sym::Context& ctx, const std::vector<std::string>& texts,
                    const std::string& model, DType default_dtype,
                    std::vector<InputSpec>& out) {
  if (texts.empty()) return ReadSidecar(model, default_dtype, out);
  for (const std::string& text : texts) {
    Outcome check = CheckShapeText(text);
    if (!check.ok()) return check;
    Result<InputSpec> spec = ParseInputSpec(ctx, text, default_dtype);
    if (!spec.ok()) {
      // ParseInputSpec's message may already quote the text; say it once.
      const std::string& m = spec.status().message();
      return Outcome::Usage(m.find(text) != std::string::npos
                                ? "--input: " + m
                                : "--input '" + text + "': " + m);
    }
    out.push_back(std::move(spec).value());
  }
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

Outcome BindSymbols(sym::Context& ctx, const std::vector<SymbolValue>& sets,
                    const std::vector<std::string>& symbols,
                    sym::Bindings& bindings) {
  const std::set<std::string> known(symbols.begin(), symbols.end());
  for (const SymbolValue& sv : sets) {
    if (!known.count(sv.name)) {
      std::string list;
      for (const std::string& s : symbols)
        list += (list.empty() ? "" : ", ") + s;
      return Outcome::Usage("--set " + sv.text + ": unknown symbol '" +
                            sv.name +
                            "'; symbols: " + (list.empty() ? "none" : list));
    }
    if (std::optional<sym::Expr> s = ctx.FindSymbol(sv.name)) {
      const sym::Interval range = ctx.SymbolRange(*s);
      if (!range.Contains(sv.value)) {
        auto end = [](int64_t v) {
          return v == sym::kNegInf   ? std::string("-inf")
                 : v == sym::kPosInf ? std::string("inf")
                                     : std::to_string(v);
        };
        return Outcome::Usage("--set " + sv.text +
                              ": value out of the range of " + sv.name + ", [" +
                              end(range.lo) + ", " + end(range.hi) + "]");
      }
    }
    bindings[sv.name] = sv.value;
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

}  // namespace torchcost::cli
