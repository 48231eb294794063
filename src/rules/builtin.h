// Shape functions written in C++ for what the rule language cannot say
// (reshape with -1, permute, cat, squeeze, ...), selected by `impl: NAME`.
#ifndef TORCHCOST_SRC_RULES_BUILTIN_H_
#define TORCHCOST_SRC_RULES_BUILTIN_H_

#include <string>
#include <string_view>
#include <vector>

#include "rules/value.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {

// What an impl function sees: the bound arguments by schema name, and a way
// to record requirements.
class ImplContext {
 public:
  virtual ~ImplContext() = default;
  // Returns the bound argument `name` (after schema defaults); kUnknown if the
  // schema has no such argument.
  virtual const RValue& Arg(std::string_view name) const = 0;
  // Returns the symbolic context.
  virtual sym::Context& ctx() const = 0;
  // Records that `a == b` must hold: returns an error if disproven; records an
  // assumption if unknown.
  virtual Status RequireEq(const sym::Expr& a, const sym::Expr& b,
                           std::string_view what) = 0;
  // Records that `a <= b` must hold, like RequireEq.
  virtual Status RequireLe(const sym::Expr& a, const sym::Expr& b,
                           std::string_view what) = 0;
};

// An impl computes the output types, one per schema return (a kTensor, or a
// kTensorList for `Tensor[]` returns, or kInt / kIntList for int returns).
using ImplFn = Status (*)(ImplContext& c, std::vector<RValue>* outputs);

// Returns the impl registered under `name`, or nullptr.
ImplFn FindImpl(std::string_view name);
// Returns the names of all registered impls, sorted (for error messages).
std::vector<std::string> ImplNames();

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_BUILTIN_H_
