// ATen schema strings: "conv2d(Tensor input, Tensor weight, Tensor? bias=None,
// int[2] stride=1, ...) -> Tensor", parsed into argument names, types and
// defaults.
#ifndef TORCHCOST_SRC_RULES_SCHEMA_H_
#define TORCHCOST_SRC_RULES_SCHEMA_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/value.h"
#include "torchcost/status.h"

namespace torchcost::rules {

// The type of one schema argument or return, reduced to what the rules need.
struct ArgType {
  enum class Base {
    kTensor,
    kInt,
    kFloat,
    kBool,
    kString,
    kScalar,
    kScalarType,
    kOther
  };
  Base base = Base::kOther;
  bool optional = false;  // "T?"
  bool is_list = false;   // "T[]" or "T[N]"
  int list_size = -1;     // N of "T[N]"; -1 if unsized.
};

// One argument of a schema.
struct SchemaArg {
  std::string name;
  ArgType type;
  bool has_default = false;
  // Parsed default (None, ints, lists, bools, floats, strings).
  RValue default_value;
  bool kwarg_only = false;
};

// A parsed schema.
struct Schema {
  std::string name;      // "conv2d" (namespace, if given, stripped)
  std::string overload;  // "Tensor" for "add.Tensor", else empty.
  std::vector<SchemaArg> args;
  std::vector<SchemaArg> returns;  // Names may be empty.
  // Returns the index of the argument `name`, or -1.
  int FindArg(std::string_view name) const;
};

// Parses a schema string; errors carry the column (1-based) of the problem.
Result<Schema> ParseSchema(std::string_view text);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_SCHEMA_H_
