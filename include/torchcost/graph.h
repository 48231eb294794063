// The frontend-neutral IR: a dataflow graph of operator nodes and values,
// with the module hierarchy and the tables of parameters and buffers.
//
// Frontends (TorchScript, JSON, the builder API) produce a Graph; passes read
// it and never change it. Nodes are in a valid execution order.
#ifndef TORCHCOST_GRAPH_H_
#define TORCHCOST_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "torchcost/arg_names.h"
#include "torchcost/dtype.h"
#include "torchcost/inline_ints.h"
#include "torchcost/key_index.h"

namespace torchcost::ir {

// What a value holds.
enum class ValueKind : uint8_t {
  kTensor,
  // int, SymInt, ScalarType, Layout, MemoryFormat (TorchScript passes these as
  // ints)
  kInt,
  kFloat,
  kBool,
  kString,
  kNone,
  kList,  // elem_kind says of what
  kDevice,
  kOther,  // anything else (tuples, objects): carried, never interpreted
};

// A compile-time constant payload (TorchScript prim::Constant, JSON literals).
using Constant =
    std::variant<std::monostate,  // None
                 int64_t, double, bool, std::string, std::vector<int64_t>,
                 std::vector<double>, std::vector<bool>>;

// Where a value comes from.
enum class ValueRole : uint8_t {
  kIntermediate,
  kInput,
  kParam,
  kBuffer,
  kConstant
};

// An SSA value: a node output, a graph input, a parameter, a buffer or a
// constant. NB: the one-byte fields sit together (120 bytes, not 136: a 1M-node
// graph holds a million values).
struct Value {
  // Debug name ("x.17") or qualified tensor name ("layer1.0.conv1.weight").
  std::string name;
  ValueKind kind = ValueKind::kOther;
  ValueKind elem_kind = ValueKind::kOther;  // For kList: the element kind.
  ValueRole role = ValueRole::kIntermediate;
  bool has_constant = false;
  // True if the frontend recorded a concrete shape.
  bool has_traced_shape = false;
  DType dtype = DType::kUnknown;  // Tensors: dtype if known.
  int producer = -1;              // Index of the producing node; -1 if none.
  // kParam / kBuffer: index into Graph::params / buffers; kInput: input
  // position.
  int table_index = -1;
  Constant constant;  // Valid iff has_constant.
  std::vector<int64_t> traced_shape;
};

// Value ids in a node: up to four in place (most nodes read one to four values
// and make one).
using ValueIds = InlineInts<4>;

// One operator application.
struct Node {
  // Qualified op name: "aten::_convolution", "prim::ListConstruct".
  std::string op;
  // Overload name ("Tensor", "int") if known, else empty.
  std::string overload;
  ValueIds inputs;
  // Argument names from the op's schema, parallel to `inputs`; empty if unknown
  // (the rule's schema then binds them by position). Shared by copies.
  ArgNames input_names;
  ValueIds outputs;
  // Name for diagnostics, typically the first output's ("%x.17").
  std::string debug_name;
  int scope = 0;  // Index into Graph::scopes; 0 is the root module.
  // The frontend's own id for the node, for Graph::infer_shapes; -1 for nodes
  // a rewrite made (autocast casts, adapters). Copied with the node.
  int origin = -1;
};

// A concrete example of one value, exchanged with a frontend's shape inference.
struct ExampleValue {
  ValueKind kind = ValueKind::kOther;  // kOther: not known.
  std::vector<int64_t> shape;          // kTensor.
  DType dtype = DType::kUnknown;       // kTensor.
  int64_t i = 0;                       // kInt.
  double f = 0;                        // kFloat.
  bool b = false;                      // kBool.
  std::vector<int64_t> ints;           // kList of ints.
};

// Runs the frontend's own shape inference for the node whose origin is
// `origin`, with its inputs' examples from `example_of(value index)`: fills
// `outputs` (one per node output) and returns true (`why` may then say how),
// or explains in `why` and returns false.
// NB: TorchScript graphs get one from LibTorch (the op run on meta tensors);
// it never allocates tensor data.
using ShapeInference = std::function<bool(
    int origin, const std::function<ExampleValue(int)>& example_of,
    std::vector<ExampleValue>* outputs, std::string* why)>;

// One module in the hierarchy (nn.Module instance).
struct Scope {
  // Dotted path from the root: "" for the root, "layer1.0.conv1".
  std::string path;
  // Last path component ("conv1"); the root's is the model's type name.
  std::string name;
  // Class name without qualification ("Conv2d", "BasicBlock").
  std::string type;
  int parent = -1;            // -1 for the root.
  int depth = 0;              // 0 for the root.
  std::vector<int> children;  // In registration order.
  // A mixture's experts (a ModuleList): each token runs routed_top_k of its
  // children; 0 if the module is no routed list.
  int64_t routed_top_k = 0;
};

// The scopes' index by path.
using ScopeIndex = KeyIndex<Scope, &Scope::path>;

// A parameter or buffer tensor.
struct TensorEntry {
  // Qualified name ("layer1.0.bn1.running_mean").
  std::string name;
  // Further names of the same storage (tied weights).
  std::vector<std::string> aliases;
  std::vector<int64_t> shape;
  DType dtype = DType::kFloat32;
  bool requires_grad = true;  // Parameters only.
  // The Value that reads it in the graph; -1 if unused.
  int value = -1;
  // The elements it adds to parameter counts (CountedElements); -1: its own.
  // NB: a quantized weight's packed codes count the weight they store (out x
  // in) and its scales 0, as peft counts bitsandbytes' Params4bit (numel x 2;
  // its quantization state is no parameter); the bytes are the stored ones.
  int64_t counted_elements = -1;
};

// A run of nodes that repeats an earlier run op for op, as GraphBuilder::Replay
// appends a model's repeated layer: a hint that lets a pass reuse what it
// found for the earlier run. NB: not part of the graph's meaning; a pass
// checks that the run still repeats its source (the same ops on the images of
// the same values) before it trusts one, so an edit of the graph that breaks a
// hint costs only time.
struct RepeatSpan {
  int source_node = 0;  // The earlier run: nodes [source_node, + nodes).
  int node = 0;         // This run: nodes [node, + nodes).
  int nodes = 0;
  // The values the earlier run made (its nodes' outputs and its constants):
  // [source_value, + values); each is value + value_shift in this run.
  int source_value = 0;
  int values = 0;
  int value_shift = 0;
};

// A whole model graph.
struct Graph {
  std::string source;  // The file it came from, for diagnostics.
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<Scope> scopes;  // scopes[0] is the root.
  // Values of the model's forward arguments (tensors), in order.
  std::vector<int> inputs;
  std::vector<int> outputs;         // Values the model returns.
  std::vector<TensorEntry> params;  // Deduplicated by storage.
  std::vector<TensorEntry> buffers;
  // The frontend's shape inference for nodes no rule covers; empty if none.
  ShapeInference infer_shapes;
  // What a training step runs that the trace left out and the frontend could
  // not put back (an eval-mode trace drops StochasticDepth); one sentence each,
  // reported as warnings by a training analysis.
  std::vector<std::string> train_gaps;
  // Runs of nodes that repeat earlier runs, ordered by node; hints only.
  std::vector<RepeatSpan> repeats;

  // Appends a value and returns its index.
  int AddValue(Value v);
  // Appends a node, sets its outputs' producer, and returns its index.
  int AddNode(Node n);
  // Returns the scope with `path`, creating it (and its ancestors) with `type`
  // if absent.
  int GetOrAddScope(const std::string& path, const std::string& type);
  // GetOrAddScope(path, type) where `path` is likely scope `parent`'s child
  // (its path, a dot and a name without dots), found without looking the
  // parent up.
  int GetOrAddChildScope(int parent, std::string path, const std::string& type);
  // Returns the text for diagnostics: "node %x.17 (aten::foo, module
  // layer1.0)".
  std::string NodeLocation(int node) const;

  // Scope index by path, kept by GetOrAddScope (rebuilt there when it no
  // longer matches `scopes`); not part of the graph's meaning.
  ScopeIndex scope_index_;
};

// Returns the number of elements of a tensor of `shape` (1 for a scalar).
int64_t Numel(const std::vector<int64_t>& shape);

// Returns true if scope `scope` of `g` is `root` or inside it.
bool InSubtree(const Graph& g, int scope, int root);

// Returns the elements `entry` adds to parameter counts: its counted_elements,
// or its numel.
int64_t CountedElements(const TensorEntry& entry);

}  // namespace torchcost::ir

#endif  // TORCHCOST_GRAPH_H_
