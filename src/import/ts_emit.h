// Appends values and nodes to a compiled TorchScript program (ts_program.h),
// and emits calls of builtin operators as TorchScript's compiler resolves them:
// the first of the operator's overloads (ts_schema.h) that takes the arguments
// as they are, else the first that takes them with implicit conversions,
// defaults inserted and scalars repeated into fixed-size lists.
#ifndef TORCHCOST_SRC_IMPORT_TS_EMIT_H_
#define TORCHCOST_SRC_IMPORT_TS_EMIT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "import/ts_program.h"
#include "import/ts_schema.h"
#include "import/ts_source.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost::import::ts {

// Writes values and nodes into a Program, each node in the inlined calls being
// compiled.
class Emitter {
 public:
  // Writes into `prog`; `calls` are the inlined calls being compiled,
  // outermost first, read at each write (both outlive the emitter).
  Emitter(Program* prog, const std::vector<int>* calls)
      : prog_(prog), calls_(calls) {}

  // Appends `v`; returns its index.
  int AddVal(Val v);
  // Appends constant `c` of TorchScript type `type`; returns its index.
  int Const(ir::Constant c, const std::string& type);
  // Appends node `n` with one new output of each of `out_types`; returns the
  // node's index.
  int AddNode(Nd n, const std::vector<std::string>& out_types);
  // Returns a constant of a literal (a schema default or an expression), a
  // list's elements typed by `hint` ("List[int]", "Optional[List[float]]").
  Result<int> Literal(const Expr& e, const std::string& hint);
  // Emits a call of builtin `op` ("aten::add", "prim::NumToTensor") on
  // positional `args` and keyword `kwargs`; returns its result, or a pending
  // tuple of its results (Val::Src::kPending) when it has several. Declines a
  // call without a matching overload, of an op without a schema, of an alias
  // LibTorch renames, or one a generic overload (over type variables) may
  // take.
  Result<int> Builtin(const std::string& op, const std::vector<int>& args,
                      const std::vector<std::pair<std::string, int>>& kwargs);
  // Returns the outermost call being compiled (a constant's pool group), -1
  // in forward itself.
  int group() const { return calls_->empty() ? -1 : (*calls_)[0]; }

 private:
  // Tries one schema; nullopt if it does not match (nothing is emitted then).
  Result<std::optional<int>> TryMatch(
      const Schema& s, const std::vector<int>& args,
      const std::vector<std::pair<std::string, int>>& kwargs, bool conversions);

  Program* prog_;
  const std::vector<int>* calls_;
};

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_EMIT_H_
