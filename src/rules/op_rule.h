// OpRule: a rule file entry compiled for fast application (names resolved to
// slots, expressions parsed once at load time).
#ifndef TORCHCOST_SRC_RULES_OP_RULE_H_
#define TORCHCOST_SRC_RULES_OP_RULE_H_

#include <string>
#include <vector>

#include "rules/builtin.h"
#include "rules/rule_expr.h"
#include "rules/schema.h"
#include "torchcost/collective.h"
#include "torchcost/dtype.h"
#include "torchcost/op_class.h"

namespace torchcost::rules {

// An expression with where it came from.
struct SourceExpr {
  int root = -1;  // -1: absent.
  int line = 0;   // 1-based, in the rule file.
  int col = 0;    // 1-based column of the expression's first character.
  std::string text;
  bool present() const { return root >= 0; }
};

// One item of a shape pattern ("N", "*B", "_", "2*C", "*D" with D bound).
struct PatternItem {
  enum class Kind { kBindDim, kBindRun, kWildcard, kCheckDim, kCheckRun };
  Kind kind = Kind::kWildcard;
  int slot = -1;    // kBindDim / kBindRun: the slot bound.
  SourceExpr expr;  // kCheckDim / kCheckRun: the expected value.
};

// The shape pattern of one tensor argument.
struct TensorPattern {
  int arg = -1;  // Schema argument index (= its slot).
  std::vector<PatternItem> items;
  std::string text;
  int line = 0, col = 0;
};

// How an output's dtype is chosen.
struct DTypeSpec {
  enum class Kind { kDefault, kFixed, kSameAs, kArg, kAcc };
  Kind kind = Kind::kDefault;
  DType fixed = DType::kUnknown;
  int slot = -1;
  int slot2 = -1;  // kAcc: the optional second tensor (`acc(input, weight)`).
};

// The shape and dtype of one output.
struct OutputSpec {
  bool given = false;
  SourceExpr shape;  // A list expression; absent if same_as is used.
  // Slot of a tensor argument whose type the output copies.
  int same_as = -1;
  DTypeSpec dtype;
};

// A cost per input gradient.
struct GradCost {
  int arg = -1;
  SourceExpr expr;
};

// A collective of a rule (`collectives:`): in forward (arg -1) or while
// computing an input's gradient.
struct CollectiveSpec {
  int arg = -1;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  SourceExpr payload;  // The whole tensor's bytes (CollectiveCall).
};

// A tensor kept for backward.
struct SavedSpec {
  int slot = -1;                // Argument, output or temporary slot.
  std::vector<int> needed_for;  // Argument indices whose gradients read it.
};

// A new tensor allocated for backward (mean/rstd, masks, indices).
struct TemporarySpec {
  std::string name;
  int slot = -1;
  SourceExpr shape;
  DTypeSpec dtype;
};

// What torch.autocast does to an op's floating-point tensor arguments.
enum class AutocastPolicy {
  kNone,  // Runs in whatever dtypes its inputs have.
  // Casts them to the autocast dtype (float16 / bfloat16): matmul, linear,
  // conv.
  kLower,
  kFp32,  // Casts them to float32: softmax, layer_norm, losses on CUDA.
  // Casts them to the widest floating dtype among them: addcmul, cat on CPU.
  kPromote,
};

// An op's autocast policy per device (`autocast:` in a rule file).
struct AutocastSpec {
  AutocastPolicy cuda = AutocastPolicy::kNone;
  AutocastPolicy cpu = AutocastPolicy::kNone;
  // Op names of the rule the policy applies to; empty: all of them.
  std::vector<std::string> only;
};

// One fully merged alternative of a rule (a case, or the rule itself).
struct Variant {
  SourceExpr when;
  std::vector<std::pair<int, SourceExpr>> binds;
  std::vector<TensorPattern> matches;
  std::vector<SourceExpr> requires_;
  std::vector<std::pair<int, SourceExpr>> lets;
  ImplFn impl = nullptr;
  std::string impl_name;
  std::vector<int> output_slots;  // One per return.
  std::vector<OutputSpec> outputs;
  SourceExpr macs, flops_fwd, trans_fwd;
  // Transient bytes during the node's forward.
  SourceExpr workspace_fwd;
  // Transient bytes while computing each input's gradient (arg -1: always).
  std::vector<GradCost> workspace_bwd;
  // True (`bwd_phases`): the needed gradients are made in argument order and
  // each entry is its phase's scratch beyond the gradients made so far.
  bool workspace_bwd_phased = false;
  std::vector<GradCost> flops_bwd, trans_bwd;
  // `bytes:` bytes the kernels read and write, where the default (inputs and
  // outputs; in backward, the output gradients, the saved tensors and the
  // input gradients) is wrong: fused or re-reading kernels. Absent: the
  // default.
  SourceExpr bytes_fwd;
  std::vector<GradCost> bytes_bwd;
  // `collectives:` what the node runs among `collective_group` ranks, in
  // forward (arg -1) and per input gradient. Empty: none.
  SourceExpr collective_group;
  std::vector<CollectiveSpec> collectives;
  int op_class = -1;  // `class:` an OpClass; -1: from the rule's file
                      // (docs/calibration.md).
  std::vector<SavedSpec> saved;
  std::vector<TemporarySpec> temporaries;
  int alias_output = -1, alias_arg = -1;  // `alias: {out: self}`.
  bool inplace = false;                   // `inplace:` instead of `alias:`.
  // `grad_into: {input: arg}`: (input, arg) pairs whose input's gradient the
  // backward writes into arg's storage (allocating nothing).
  std::vector<std::pair<int, int>> grad_into;
  // `differentiable: false`: outputs never require gradients.
  bool differentiable = true;
  AutocastSpec autocast;  // `autocast:`; none by default.
  // `differentiable: [args]`: only these tensor arguments get gradients; empty:
  // every one.
  std::vector<int> differentiable_args;
  std::vector<std::string> slot_names;
  ExprPool pool;
};

// A rule: the schema plus one or more variants.
struct OpRule {
  std::vector<std::string> ops;
  Schema schema;
  std::string file;
  int line = 0;
  std::vector<Variant> variants;
};

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_OP_RULE_H_
