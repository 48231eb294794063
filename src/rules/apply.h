// Applies a compiled rule to the bound arguments of one node: matches shape
// patterns, checks requirements, and computes output types and costs.
#ifndef TORCHCOST_SRC_RULES_APPLY_H_
#define TORCHCOST_SRC_RULES_APPLY_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/out_of_line_vector.h"
#include "rules/op_rule.h"
#include "rules/rule_expr.h"
#include "rules/value.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {

// The rule's `collectives:` applied.
struct AppliedCollectives {
  sym::Expr group;  // Ranks that run them.
  // (argument index, or -1 in forward; the call).
  std::vector<std::pair<int, CollectiveCall>> calls;
};

// What one application of a rule produced.
struct Applied {
  const Variant* variant = nullptr;
  std::vector<RValue> outputs;  // One per return of the schema.
  sym::Expr macs, flops, transcendentals;
  // (argument index, FLOPs of its gradient).
  std::vector<std::pair<int, sym::Expr>> bwd_flops;
  // NB: the lists below are empty for almost every node, so they keep only a
  // pointer in place (a 1M-node graph holds one Applied per node).
  ir::OutOfLineVector<std::pair<int, sym::Expr>> bwd_transcendentals;
  // Parallel to variant->temporaries.
  ir::OutOfLineVector<TensorType> temporaries;
  // Transient bytes during the forward.
  sym::Expr workspace_fwd;
  // (argument index or -1, transient bytes in backward).
  ir::OutOfLineVector<std::pair<int, sym::Expr>> workspace_bwd;
  // The rule's `bytes:` override: forward bytes if has_bytes_fwd; per input
  // gradient (argument index, bytes) if has_bytes_bwd.
  bool has_bytes_fwd = false, has_bytes_bwd = false;
  // True if the rule evaluated attention_backend().
  bool read_attention_backend = false;
  sym::Expr bytes_fwd;
  ir::OutOfLineVector<std::pair<int, sym::Expr>> bytes_bwd;
  // The rule's `collectives:`: one entry, or none where the node runs none.
  ir::OutOfLineVector<AppliedCollectives> collectives;
  // Requirements that could not be proven.
  ir::OutOfLineVector<std::string> assumptions;
};

// Applies `rule` to `args` (parallel to rule.schema.args; nullptr = not given,
// so the schema default applies) under `settings` (what device(),
// attention_backend() and torch_version() return in rules). Errors are one
// line and name the rule.
Status ApplyRule(const OpRule& rule, const std::vector<const RValue*>& args,
                 sym::Context& ctx, Applied* out, RuleSettings settings = {});

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_APPLY_H_
