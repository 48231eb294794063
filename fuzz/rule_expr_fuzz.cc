// Fuzzes the rule-expression language (rules/rule_expr.h): any text parses or
// throws RuleError; what parses evaluates, against arguments of every kind,
// to a value or a RuleError / sym::Error, never anything else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_expr.h"
#include "rules/value.h"
#include "torchcost/sym.h"

namespace {

using torchcost::rules::RValue;

// The arguments in scope: a tensor, an int, an int list, a float, a string,
// None, a bool, a tensor list, and a mixed list.
const char* const kNames[] = {"x",    "n",    "dims", "p",    "s",
                              "none", "flag", "xs",   "items"};

std::vector<RValue> Arguments(torchcost::sym::Context& ctx) {
  using torchcost::DType;
  using torchcost::sym::Expr;
  const Expr b = ctx.Symbol("B"), s = ctx.Symbol("S");
  torchcost::rules::TensorType x{{b, 3, s, 224}, DType::kFloat32};
  torchcost::rules::TensorType y{{b, s}, DType::kInt64};
  RValue items;
  items.kind = RValue::Kind::kList;
  items.items = {RValue::Float(1.5), RValue::Bool(true), RValue::Int(b)};
  return {
      RValue::Tensor(x),   RValue::Int(7),          RValue::IntList({1, -1}),
      RValue::Float(0.5),  RValue::Str("mean"),     RValue::None(),
      RValue::Bool(false), RValue::Tensors({x, y}), items};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sym::Context ctx;
  const std::vector<RValue> args = Arguments(ctx);
  std::vector<const RValue*> slots;
  for (const RValue& a : args) slots.push_back(&a);
  rules::ExprPool pool;
  int root = -1;
  try {
    root = rules::ParseRuleExpr(
        text,
        [](std::string_view name) {
          for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
            if (name == kNames[i]) return i;
          return -1;
        },
        &pool);
  } catch (const rules::RuleError&) {
    return 0;
  }
  std::vector<std::string> assumptions;
  rules::Evaluator eval(pool, slots, ctx, &assumptions);
  try {
    (void)eval.Eval(root);
  } catch (const rules::RuleError&) {
  } catch (const sym::Error&) {
  }
  try {
    (void)eval.EvalTruth(root);
  } catch (const rules::RuleError&) {
  } catch (const sym::Error&) {
  }
  return 0;
}
