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
// threads (a rule compiled on first lookup is compiled once, whichever thread
// asks first). Copying is disabled; move it.
class RuleSet {
 public:
  RuleSet();
  ~RuleSet();
  RuleSet(RuleSet&&) noexcept;
  RuleSet& operator=(RuleSet&&) noexcept;
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  // Returns the rules compiled into the binary (the files under rules/ at build
  // time). NB: each rule is compiled the first time its op is looked up (a
  // process that analyses a resnet compiles a dozen of them, not all);
  // CompileAll checks them all.
  static Result<RuleSet> Builtin();

  // Adds the rules of one YAML document; `file` names it in errors
  // ("file:line:col: message"). A rule for an op already defined by an earlier
  // Add* call of a *different* file overrides it; two rules for one op in the
  // same file are an error.
  Status AddText(std::string_view text, const std::string& file);
  // Adds the rules of one YAML document as AddText does, but compiles each rule
  // the first time its op is looked up (or by CompileAll), which then reports
  // its errors; keeps a copy of `text`.
  Status AddTextLazy(std::string_view text, const std::string& file);
  // Adds every *.yaml file under `dir`, recursively, in sorted path order.
  Status AddDirectory(const std::string& dir);
  // Compiles every rule not compiled yet; returns the first error,
  // "file:line:col: message (rule OP)".
  Status CompileAll() const;

  // Returns the rule for `op` ("aten::add") with `overload` ("Tensor"); an
  // overload-specific rule ("aten::add.Tensor") wins over the op-wide one.
  // nullptr if none or if the rule does not compile (Lookup says why).
  const rules::OpRule* Find(std::string_view op,
                            std::string_view overload = "") const;
  // Returns the rule Find returns, or the error compiling it ("file:line:col:
  // message (rule OP)").
  Result<const rules::OpRule*> Lookup(std::string_view op,
                                      std::string_view overload = "") const;
  // Returns true if `op` is listed as costing nothing and needing no shape
  // rule.
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
