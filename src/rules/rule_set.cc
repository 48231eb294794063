#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "rules/builtin_rules_data.h"
#include "rules/rule_parser.h"
#include "torchcost/rules.h"

namespace torchcost {

struct RuleSet::Impl {
  std::vector<std::unique_ptr<rules::OpRule>> owned;
  std::unordered_map<std::string, const rules::OpRule*> by_name;
  std::unordered_set<std::string> ignored;
};

RuleSet::RuleSet() : impl_(std::make_unique<Impl>()) {}
RuleSet::~RuleSet() = default;
RuleSet::RuleSet(RuleSet&&) noexcept = default;
RuleSet& RuleSet::operator=(RuleSet&&) noexcept = default;

Result<RuleSet> RuleSet::Builtin() {
  RuleSet set;
  for (const auto& f : rules::BuiltinRuleFiles()) {
    TORCHCOST_RETURN_IF_ERROR(set.AddText(f.text, f.path));
  }
  return set;
}

Status RuleSet::AddText(std::string_view text, const std::string& file) {
  TORCHCOST_ASSIGN_OR_RETURN(rules::RuleFile parsed, rules::ParseRuleFile(text, file));
  std::unordered_map<std::string, int> seen_here;
  for (auto& rule : parsed.rules) {
    for (const auto& name : rule->ops) {
      auto it = seen_here.find(name);
      if (it != seen_here.end()) {
        return Status::ParseError(file + ":" + std::to_string(rule->line) + ":1: duplicate rule for '" + name +
                                  "' (first defined at " + file + ":" + std::to_string(it->second) + ")");
      }
      seen_here[name] = rule->line;
      impl_->by_name[name] = rule.get();  // NB: a later file overrides an earlier one.
    }
    impl_->owned.push_back(std::move(rule));
  }
  for (const auto& op : parsed.ignored) impl_->ignored.insert(op);
  return Status::Ok();
}

Status RuleSet::AddDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".yaml") files.push_back(it->path());
  }
  if (ec) return Status::NotFound(dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) return Status::NotFound(f.string() + ": cannot read");
    std::stringstream ss;
    ss << in.rdbuf();
    TORCHCOST_RETURN_IF_ERROR(AddText(ss.str(), f.string()));
  }
  return Status::Ok();
}

const rules::OpRule* RuleSet::Find(std::string_view op, std::string_view overload) const {
  if (!overload.empty()) {
    std::string full;
    full.reserve(op.size() + overload.size() + 1);
    full.append(op).append(".").append(overload);
    auto it = impl_->by_name.find(full);
    if (it != impl_->by_name.end()) return it->second;
  }
  auto it = impl_->by_name.find(std::string(op));
  return it == impl_->by_name.end() ? nullptr : it->second;
}

bool RuleSet::IsIgnored(std::string_view op) const { return impl_->ignored.count(std::string(op)) > 0; }

size_t RuleSet::size() const { return impl_->by_name.size(); }

std::vector<std::string> RuleSet::OpNames() const {
  std::vector<std::string> names;
  for (const auto& kv : impl_->by_name) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace torchcost
