// The rule expression language: parsing to an AST with names resolved to
// slots at load time, and evaluation over RValues at analysis time.
#ifndef TORCHCOST_SRC_RULES_RULE_EXPR_H_
#define TORCHCOST_SRC_RULES_RULE_EXPR_H_

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rules/value.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {

// Built-in functions of the expression language.
enum class Fn : uint8_t {
  kFloorDiv,
  kCeilDiv,
  kMod,
  kMin,
  kMax,
  kExactDiv,
  kProd,
  kSum,
  kLen,
  kOnes,
  kBroadcast,
  kShape,
  kRank,
  kNumel,
  kHas,
  kIsList,
  kIf,
  kNormDim,
  kDevice,
  kInd,
  kAttentionBackend,
  kTorchVersion,
  kEinsumSizes,
  kDType,
  kItemSize,
};

// One node of a parsed expression; nodes live in an ExprPool and refer to each
// other by index.
struct AstNode {
  enum class Op : uint8_t {
    kInt,
    kFloat,
    kString,
    kTrue,
    kFalse,
    kName,
    kList,
    kIndex,
    kSlice,
    kCall,
    kAdd,
    kSub,
    kMul,
    kPow,
    kNeg,
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kAnd,
    kOr,
    kNot,
  };
  Op op = Op::kInt;
  Fn fn = Fn::kProd;  // kCall
  int64_t ival = 0;   // kInt
  double fval = 0;    // kFloat
  int slot = -1;      // kName
  int col = 0;        // 0-based column in the source text, for errors.
  std::string sval;   // kString; kName keeps the name for messages.
  // Operands; kSlice: base, start (-1 if none), end (-1 if none).
  std::vector<int> kids;
  std::vector<bool> splat;  // kList: which items are "*list".
};

// The nodes of every expression of one rule.
struct ExprPool {
  std::vector<AstNode> nodes;
  std::vector<std::string> texts;  // Source text per root, for messages.
};

// Thrown by parsing and evaluation inside the rules engine; never escapes it.
class RuleError : public std::runtime_error {
 public:
  RuleError(const std::string& msg, int col = -1)
      : std::runtime_error(msg), col(col) {}
  int col;  // 0-based column in the expression text, or -1.
};

// Resolves a name to its slot, or -1 if it is not in scope.
using NameResolver = std::function<int(std::string_view)>;

// Parses `text` into `pool`; returns the root index. Throws RuleError with the
// column.
int ParseRuleExpr(std::string_view text, const NameResolver& resolve,
                  ExprPool* pool);

// What a run fixes for every rule: the values of device(), attention_backend()
// and torch_version().
struct RuleSettings {
  // "cpu" or "cuda".
  std::string_view device = "cuda";
  // "auto", "math", "flash" or "efficient".
  std::string_view attention_backend = "auto";
  // "1.13" or "2": the PyTorch whose autograd formulas the rules follow.
  std::string_view torch_version = "2";
};

// Evaluates expressions of one pool against slot values.
class Evaluator {
 public:
  // `assumptions`, if given, receives the equalities that could not be proven
  // (broadcast, exact_div); `settings` are what device(), attention_backend()
  // and torch_version() return; `read_attention_backend`, if given, is set to
  // true when an expression calls attention_backend().
  Evaluator(const ExprPool& pool, const std::vector<const RValue*>& slots,
            sym::Context& ctx, std::vector<std::string>* assumptions = nullptr,
            RuleSettings settings = {}, bool* read_attention_backend = nullptr)
      : pool_(pool),
        slots_(slots),
        ctx_(ctx),
        assumptions_(assumptions),
        settings_(settings),
        read_attention_backend_(read_attention_backend) {}
  // Returns the value of the expression rooted at `node`. Throws RuleError.
  RValue Eval(int node) const;
  // Returns the value of a condition: kTrue, kFalse or kUnknown. Throws
  // RuleError.
  sym::Truth EvalTruth(int node) const;

 private:
  const RValue& EvalRef(int node, RValue& tmp) const;
  RValue EvalCall(const AstNode& n) const;
  sym::Expr Indicator(int node) const;
  RValue Arith(AstNode::Op op, const RValue& a, const RValue& b, int col) const;
  sym::Truth Compare(AstNode::Op op, const RValue& a, const RValue& b,
                     int col) const;
  sym::Expr AsInt(const RValue& v, int col, const char* what) const;

  const ExprPool& pool_;
  const std::vector<const RValue*>& slots_;
  sym::Context& ctx_;
  std::vector<std::string>* assumptions_;
  RuleSettings settings_;
  bool* read_attention_backend_;
};

// Returns a short description of a value for messages ("[B, 3, 224, 224]", "2",
// "None").
std::string DescribeValue(const RValue& v);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_RULE_EXPR_H_
