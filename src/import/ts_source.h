// A parser for the TorchScript source that torch.jit.save writes under
// code/__torch__/ (Python syntax): the subset traced modules use. Class
// definitions with attribute declarations and methods whose bodies are
// straight-line assignments, tuple unpacking and a return; expressions are
// names, int/float/str/bool/None literals, lists, tuples, attribute reads,
// calls with keyword arguments and subscripts. Anything else (if, for, while,
// with, lambda, operators) is an error, so that a caller can decline the file.
#ifndef TORCHCOST_SRC_IMPORT_TS_SOURCE_H_
#define TORCHCOST_SRC_IMPORT_TS_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchcost/status.h"

namespace torchcost::import::ts {

// One expression.
struct Expr {
  enum class Kind {
    kName,
    kInt,
    kFloat,
    kString,
    kNone,
    kBool,
    kList,
    kTuple,
    kAttr,
    kCall,
    kSubscript
  };
  Kind kind = Kind::kName;
  std::string text;  // kName, kAttr (the attribute), kString (unquoted).
  int64_t i = 0;     // kInt.
  double f = 0;      // kFloat.
  bool b = false;    // kBool.
  // kAttr, kCall (the callee), kSubscript (the subscripted).
  std::shared_ptr<Expr> base;
  // kList, kTuple, kCall (positional), kSubscript (the index).
  std::vector<std::shared_ptr<Expr>> items;
  std::vector<std::pair<std::string, std::shared_ptr<Expr>>> kwargs;  // kCall.

  // Returns the dotted text of a name or attribute chain
  // ("torch.nn.functional"), or "" if it is not one.
  std::string Dotted() const;
};
using ExprPtr = std::shared_ptr<Expr>;

// One statement of a method body.
struct Stmt {
  enum class Kind { kAssign, kReturn, kExpr };
  Kind kind = Kind::kExpr;
  // kAssign: one name, or several for `a, b, = ...`.
  std::vector<std::string> targets;
  // kAssign: the targets were written as a tuple.
  bool unpack = false;
  ExprPtr value;
  int line = 0;
};

// One method: `def forward(self: T, x: Tensor) -> Tensor:`.
struct Method {
  std::string name;
  // Name and annotation text, `self` first.
  std::vector<std::pair<std::string, std::string>> params;
  std::string returns;  // Annotation text.
  std::vector<Stmt> body;
};

// One class: `class Conv2d(Module):` with its declarations.
struct ClassDef {
  std::string name;  // Qualified: "__torch__.torch.nn.modules.conv.Conv2d".
  std::string base;  // "Module".
  // __parameters__, __buffers__.
  std::vector<std::string> parameters, buffers;
  // Declared attributes and their type text, in order.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<Method> methods;
  bool has_constants = false;  // A __constants__ declaration was seen.

  // Returns the method `name`, or null.
  const Method* FindMethod(const std::string& name) const;
};

// Parses one source file of module `module` ("__torch__.torch.nn.modules.conv")
// into its classes. Errors name the line: "line 12: unsupported statement
// 'if'".
Result<std::vector<ClassDef>> ParseSource(std::string_view text,
                                          const std::string& module);

// Parses one expression (the annotation of a type, a test's input).
Result<ExprPtr> ParseExpr(std::string_view text);

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_SOURCE_H_
