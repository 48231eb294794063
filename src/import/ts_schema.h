// The aten operator schemas of torch 1.13 (generated into ts_schemas.inc by
// tools/gen_torchscript_schemas.py), for reading TorchScript without LibTorch:
// overloads in LibTorch's registration order, argument names, types and
// defaults, return types.
#ifndef TORCHCOST_SRC_IMPORT_TS_SCHEMA_H_
#define TORCHCOST_SRC_IMPORT_TS_SCHEMA_H_

#include <string>
#include <vector>

namespace torchcost::import::ts {

// One argument of an operator schema.
struct SchemaArg {
  std::string name;
  // TorchScript's spelling: "Tensor", "int", "List[int]", "Optional[float]",
  // "number".
  std::string type;
  int n = 0;  // The fixed size of a list argument (int[2] -> 2), else 0.
  bool kwarg_only = false;
  bool has_default = false;
  // Python literal: "None", "1", "[0, 0]", "\"none\"", "False".
  std::string default_text;
};

// One operator overload.
struct Schema {
  std::string name;      // "aten::add".
  std::string overload;  // "Tensor"; empty for the default overload.
  std::vector<SchemaArg> args;
  std::vector<std::string> returns;  // Types.
};

// Returns the overloads of operator `name` ("aten::add"), in registration
// order; empty if unknown.
const std::vector<Schema>& SchemasFor(const std::string& name);

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_SCHEMA_H_
