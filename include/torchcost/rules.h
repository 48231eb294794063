// Operator rules: the per-op knowledge (schema, shapes, FLOPs, aliasing) read
// from the YAML files under rules/. rules/README.md specifies the format.
#ifndef TORCHCOST_RULES_H_
#define TORCHCOST_RULES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/status.h"

namespace torchcost {

namespace rules {
struct OpRule;  // A parsed rule; defined in src/rules.
}

// A set of operator rules, looked up by op name and overload.
//
// Loading is not thread-safe; a loaded RuleSet may be shared read-only between
// threads. Copying is disabled; move it.
class RuleSet {
 public:
  RuleSet();
  ~RuleSet();
  RuleSet(RuleSet&&) noexcept;
  RuleSet& operator=(RuleSet&&) noexcept;
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  // Returns the rules compiled into the binary (the files under rules/ at build time).
  static Result<RuleSet> Builtin();

  // Adds the rules of one YAML document; `file` names it in errors ("file:line:col: message").
  // A rule for an op already defined by an earlier Add* call of a *different* file
  // overrides it; two rules for one op in the same file are an error.
  Status AddText(std::string_view text, const std::string& file);
  // Adds every *.yaml file under `dir`, recursively, in sorted path order.
  Status AddDirectory(const std::string& dir);

  // Returns the rule for `op` ("aten::add") with `overload` ("Tensor"); an
  // overload-specific rule ("aten::add.Tensor") wins over the op-wide one. nullptr if none.
  const rules::OpRule* Find(std::string_view op, std::string_view overload = "") const;
  // Returns true if `op` is listed as costing nothing and needing no shape rule.
  bool IsIgnored(std::string_view op) const;
  // Returns the number of op names covered.
  size_t size() const;
  // Returns every op name covered, sorted.
  std::vector<std::string> OpNames() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchcost

#endif  // TORCHCOST_RULES_H_
