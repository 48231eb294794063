#include "import/ts_schema.h"

#include <mutex>
#include <string_view>
#include <unordered_map>

namespace torchcost::import::ts {
namespace {

// One line per schema: name|overload|args|returns (see
// tools/gen_torchscript_schemas.py).
constexpr const char kSchemas[] =
#include "import/ts_schemas.inc"
    ;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos
                                      ? std::string_view::npos
                                      : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

// NB: a default is JSON text and may hold ';' only inside a string
// ("fillchar:str=\";\"" does not occur in aten's schemas that matter here);
// such arguments are split wrongly and never match.
Schema ParseLine(std::string_view line) {
  const std::vector<std::string_view> parts = Split(line, '|');
  Schema s;
  s.name = std::string(parts[0]);
  s.overload = std::string(parts[1]);
  for (std::string_view a : Split(parts[2], ';')) {
    SchemaArg arg;
    if (!a.empty() && a[0] == '*') {
      arg.kwarg_only = true;
      a.remove_prefix(1);
    }
    const size_t colon = a.find(':');
    arg.name = std::string(a.substr(0, colon));
    std::string_view rest = a.substr(colon + 1);
    const size_t eq = rest.find('=');
    if (eq != std::string_view::npos) {
      arg.has_default = true;
      arg.default_text = std::string(rest.substr(eq + 1));
      rest = rest.substr(0, eq);
    }
    const size_t hash = rest.find('#');
    if (hash != std::string_view::npos) {
      arg.n = std::stoi(std::string(rest.substr(hash + 1)));
      rest = rest.substr(0, hash);
    }
    arg.type = std::string(rest);
    s.args.push_back(std::move(arg));
  }
  for (std::string_view r : Split(parts[3], ';')) s.returns.emplace_back(r);
  return s;
}

struct Index {
  // By operator name.
  std::unordered_map<std::string_view, std::vector<std::string_view>> lines;
  std::unordered_map<std::string, std::vector<Schema>> parsed;
  std::mutex mu;
};

Index& TheIndex() {
  static Index* index = [] {
    auto* idx = new Index;
    std::string_view all(kSchemas, sizeof(kSchemas) - 1);
    for (std::string_view line : Split(all, '\n')) {
      if (line.empty()) continue;
      idx->lines[line.substr(0, line.find('|'))].push_back(line);
    }
    return idx;
  }();
  return *index;
}

}  // namespace

const std::vector<Schema>& SchemasFor(const std::string& name) {
  Index& idx = TheIndex();
  std::lock_guard<std::mutex> lock(idx.mu);
  auto it = idx.parsed.find(name);
  if (it != idx.parsed.end()) return it->second;
  std::vector<Schema> out;
  auto lines = idx.lines.find(name);
  if (lines != idx.lines.end()) {
    for (std::string_view line : lines->second) out.push_back(ParseLine(line));
  }
  return idx.parsed.emplace(name, std::move(out)).first->second;
}

}  // namespace torchcost::import::ts
