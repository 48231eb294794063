// Appending constants, parameters and operator nodes to a graph being
// rewritten (the PEFT transforms).
#ifndef TORCHCOST_SRC_TRAINING_GRAPH_EDIT_H_
#define TORCHCOST_SRC_TRAINING_GRAPH_EDIT_H_

#include <string>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::passes {

// Adds values and nodes to `graph`; nodes are appended in execution order.
class GraphEditor {
 public:
  explicit GraphEditor(ir::Graph& graph) : g_(graph) {}

  // Constant values.
  int Int(int64_t i);
  int Float(double f);
  int Bool(bool b);
  int Str(std::string s);
  int None();
  int Ints(std::vector<int64_t> l);
  // A ScalarType argument (TorchScript passes dtypes as their c10 code).
  int ScalarType(DType d) { return Int(static_cast<int64_t>(d)); }

  // A Python number an eager op wraps into a 0-dim tensor (float64 for a
  // float), as a trace records it: autograd saves it where it saves the
  // operand.
  int WrappedNumber(DType dtype);

  // Adds a parameter `name` and returns the value that reads it.
  int Param(const std::string& name, std::vector<int64_t> shape, DType dtype,
            bool requires_grad);

  // Adds a frozen parameter that holds a quantized weight's state (scales,
  // codebook): held all step, counted in no parameter count.
  int QuantState(const std::string& name, std::vector<int64_t> shape,
                 DType dtype);

  // Appends `op` with named inputs in module `scope`; returns its one tensor
  // output.
  int Op(const std::string& op, const std::string& overload,
         std::vector<int> inputs, std::vector<std::string> names, int scope);

  // Appends a node that reads `values` and computes nothing: they live at
  // least until it runs (Python locals held until a function returns).
  void KeepAlive(std::vector<int> values, int scope);

  ir::Graph& graph() { return g_; }

 private:
  int Constant(ir::ValueKind kind, ir::Constant c);
  ir::Graph& g_;
};

// Returns the value bound to argument `name` of `node` (by name when the
// frontend named its inputs, else at `position`), or -1.
int NodeArg(const ir::Node& node, const std::string& name, size_t position);

// Returns the last component of a dotted module path ("q_proj" of
// "h.0.attn.q_proj").
std::string LeafName(const std::string& path);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_TRAINING_GRAPH_EDIT_H_
