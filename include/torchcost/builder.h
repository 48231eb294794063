// A C++ API that writes ir::Graphs without a model file: layer calls that emit
// aten nodes with named arguments exactly as torch.jit.trace records them on
// torch 1.13, inside module scopes, over declared parameters and buffers.
//
// Symbolic sizes follow the traces: a dim is read with Size() (aten::size) and
// carried as an int value into prim::ListConstruct (IntList), so a graph built
// for inputs [B, S] stays symbolic in B and S.
#ifndef TORCHCOST_BUILDER_H_
#define TORCHCOST_BUILDER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/graph.h"
#include "torchcost/sym.h"

namespace torchcost::builder {

// The `end` a trace records for an open slice (x[..., h:]).
inline constexpr int64_t kSliceToEnd = std::numeric_limits<int64_t>::max();

// A value of the graph being built (an index into ir::Graph::values).
struct Ref {
  int id = -1;
};

// One dim of a model input: a positive integer or a symbol name ("B", "S").
class Dim {
 public:
  Dim(int64_t size) : size_(size) {}            // NOLINT: implicit by design.
  Dim(int size) : size_(size) {}                // NOLINT: implicit by design.
  Dim(const char* symbol) : symbol_(symbol) {}  // NOLINT: implicit by design.
  Dim(std::string symbol)
      : symbol_(std::move(symbol)) {}  // NOLINT: implicit by design.
  // Returns true if the dim is a symbol.
  bool is_symbol() const { return !symbol_.empty(); }
  // Returns the integer size (meaningful if !is_symbol()).
  int64_t size() const { return size_; }
  // Returns the symbol name (meaningful if is_symbol()).
  const std::string& symbol() const { return symbol_; }

 private:
  int64_t size_ = 0;
  std::string symbol_;
};

// A model input as declared: the shape given to the analysis, and its dtype.
struct InputDecl {
  std::string name;
  std::vector<Dim> shape;
  DType dtype = DType::kFloat32;
};

// A built model: the graph and the inputs the analysis should be given.
struct BuiltModel {
  ir::Graph graph;
  std::vector<InputDecl> inputs;
  // Upper bounds of input symbols the architecture implies (S <= n_ctx for
  // learned positions), as (symbol, bound).
  std::vector<std::pair<std::string, int64_t>> symbol_bounds;
  // What the family did that its config does not say (a padded vocabulary),
  // one sentence each, for the report's notes.
  std::vector<std::string> notes;
  // The hidden size of its config (d_model; 0 where it has none), from which
  // DeepSpeed's "auto" sizes derive.
  int64_t hidden_size = 0;
  // The loss its task trains with by default, as ParseLossSpec reads it
  // ("causal_lm", "cross_entropy"); empty: out.sum().
  std::string default_loss;
  // A generation phase's sliding window per cache output (keys and values of
  // each layer, in output order after the logits), which caps it; 0: none.
  std::vector<int64_t> cache_windows;
  // A generation phase's first graph input and first graph output that are the
  // KV cache (the rest up to the end are too); -1: none (the prefill has no
  // cache input).
  int cache_inputs_from = -1, cache_outputs_from = -1;
};

// Returns an input's shape as symbolic dims, creating its symbols in `ctx`
// (range [1, bound] where `model` bounds them, else [1, inf)).
std::vector<sym::Expr> ResolveShape(const BuiltModel& model,
                                    const InputDecl& input, sym::Context& ctx);

// One item of an int list argument: a constant or an int value of the graph.
class IntItem {
 public:
  IntItem(int64_t v) : constant_(v) {}  // NOLINT: implicit by design.
  IntItem(int v) : constant_(v) {}      // NOLINT: implicit by design.
  IntItem(Ref v) : value_(v) {}         // NOLINT: implicit by design.
  // Returns true if the item is a graph value.
  bool is_value() const { return value_.id >= 0; }
  // Returns the constant (meaningful if !is_value()).
  int64_t constant() const { return constant_; }
  // Returns the graph value (meaningful if is_value()).
  Ref value() const { return value_; }

 private:
  int64_t constant_ = 0;
  Ref value_;
};

// One argument of an op: a graph value, or a constant made on the fly.
class Arg {
 public:
  enum class Kind {
    kValue,
    kInt,
    kFloat,
    kBool,
    kString,
    kNone,
    kDevice,
    kInts
  };
  Arg(Ref v) : kind_(Kind::kValue), value_(v) {}  // NOLINT: implicit by design.
  Arg(int v) : kind_(Kind::kInt), i_(v) {}        // NOLINT: implicit by design.
  Arg(int64_t v) : kind_(Kind::kInt), i_(v) {}    // NOLINT: implicit by design.
  Arg(double v) : kind_(Kind::kFloat), f_(v) {}   // NOLINT: implicit by design.
  Arg(bool v) : kind_(Kind::kBool), b_(v) {}      // NOLINT: implicit by design.
  Arg(const char* s)
      : kind_(Kind::kString), s_(s) {}  // NOLINT: implicit by design.
  Arg(std::vector<int64_t> l)
      : kind_(Kind::kInts),
        ints_(std::move(l)) {}  // NOLINT: implicit by design.
  // Returns a None argument.
  static Arg None() { return Arg(Kind::kNone); }
  // Returns a Device argument ("cpu").
  static Arg Device(std::string name) {
    Arg a(Kind::kDevice);
    a.s_ = std::move(name);
    return a;
  }
  // Returns a ScalarType argument (an int, as TorchScript passes them).
  static Arg ScalarType(DType d) { return Arg(static_cast<int64_t>(d)); }

  Kind kind() const { return kind_; }
  Ref value() const { return value_; }
  int64_t i() const { return i_; }
  double f() const { return f_; }
  bool b() const { return b_; }
  const std::string& s() const { return s_; }
  const std::vector<int64_t>& ints() const { return ints_; }

 private:
  explicit Arg(Kind k) : kind_(k) {}
  Kind kind_;
  Ref value_;
  int64_t i_ = 0;
  double f_ = 0;
  bool b_ = false;
  std::string s_;
  std::vector<int64_t> ints_;
};

// An argument with its schema name.
struct NamedArg {
  std::string name;
  Arg arg;
};

// Builds an ir::Graph layer call by layer call.
class GraphBuilder {
 public:
  // Starts a graph whose root module has class name `model_type`; `source`
  // names it in diagnostics.
  explicit GraphBuilder(const std::string& model_type,
                        const std::string& source = "<builder>");
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // --- Tables and inputs ---
  // Adds a model input; its shape is what the analysis will be given.
  Ref Input(const std::string& name, std::vector<Dim> shape,
            DType dtype = DType::kFloat32);
  // Adds a parameter named by its qualified path ("h.0.ln_1.weight").
  Ref Param(std::string name, std::vector<int64_t> shape,
            DType dtype = DType::kFloat32, bool requires_grad = true);
  // Adds a buffer named by its qualified path ("layer1.0.bn1.running_mean").
  Ref Buffer(std::string name, std::vector<int64_t> shape,
             DType dtype = DType::kFloat32);
  // Makes `alias` a further name of the parameter `param` reads (tied weights).
  void Alias(Ref param, const std::string& alias);
  // Bounds an input symbol from above (positions of a learned table).
  void BoundSymbol(const std::string& symbol, int64_t bound);

  // --- Module scopes ---
  // Enters the child module `name` of the current one, with class name `type`.
  void Push(const std::string& name, const std::string& type);
  // Leaves the current module.
  void Pop();
  // Marks the current module as a mixture's experts, each token running
  // `top_k` of its children (ir::Scope::routed_top_k).
  void RouteTokens(int64_t top_k);
  // Returns the dotted path of the current module ("" at the root).
  const std::string& path() const;
  // Returns `name` qualified by the current module's path.
  std::string Qualify(const std::string& name) const;

  // --- Constants ---
  // Returns a constant int value.
  Ref Int(int64_t v);
  // Returns a 0-dim tensor constant, as a trace bakes Python numbers into one.
  Ref ScalarTensor(double v, DType dtype = DType::kFloat64);
  // Returns a 0-dim integer tensor constant.
  Ref ScalarTensorInt(int64_t v);

  // --- Nodes ---
  // Adds a node `op` (with its overload, possibly empty) on named arguments;
  // returns its outputs, of kind `out_kind`.
  std::vector<Ref> Op(const std::string& op, const std::string& overload,
                      std::vector<NamedArg> args, int num_outputs = 1,
                      ir::ValueKind out_kind = ir::ValueKind::kTensor);
  // Adds a one-output tensor node.
  Ref Op1(const std::string& op, const std::string& overload,
          std::vector<NamedArg> args);
  // Marks `v` as a model output.
  void Output(Ref v);
  // Declares the loss the model's task trains with by default
  // (BuiltModel::default_loss).
  void DefaultLoss(const std::string& spec) { model_.default_loss = spec; }
  // Declares the config's hidden size (BuiltModel::hidden_size).
  void HiddenSize(int64_t hidden) { model_.hidden_size = hidden; }
  // Returns the model; the builder is left empty.
  BuiltModel Finish();

  // --- Shape arithmetic, as traces record it ---
  // Returns dim `dim` of `x` as an int value (aten::size.int).
  Ref Size(Ref x, int64_t dim);
  // Returns an int list (prim::ListConstruct) of constants and int values.
  Ref IntList(std::vector<IntItem> items);
  // Returns a tensor list (prim::ListConstruct).
  Ref TensorList(std::vector<Ref> items);
  // Returns the elements of a list (prim::ListUnpack).
  std::vector<Ref> Unpack(Ref list, int n);
  // Returns a 0-dim int64 tensor holding an int (prim::NumToTensor).
  Ref NumToTensor(Ref i);
  // Returns the int a 0-dim tensor holds (aten::Int).
  Ref IntOf(Ref t);
  // Returns the Scalar a 0-dim tensor holds (aten::ScalarImplicit).
  Ref ScalarOf(Ref t);

  // --- Layers and tensor ops (arguments named as aten's schemas) ---
  Ref Linear(Ref input, Ref weight, Arg bias = Arg::None());
  Ref Addmm(Ref self, Ref mat1, Ref mat2);
  Ref Embedding(Ref weight, Ref indices);
  Ref LayerNorm(Ref input, Ref normalized_shape, Ref weight, Ref bias,
                double eps);
  Ref Matmul(Ref self, Ref other);
  Ref Bmm(Ref self, Ref mat2);
  Ref Softmax(Ref self, int64_t dim, Arg dtype = Arg::None());
  Ref MaskedFill(Ref self, Ref mask, Arg value);
  Ref Where(Ref condition, Ref self, Ref other);
  Ref Gelu(Ref self, const char* approximate = "none");
  Ref Silu(Ref self);
  Ref Relu(Ref self);
  Ref Relu_(Ref self);
  Ref Neg(Ref self);
  Ref Rsqrt(Ref self);
  Ref Cos(Ref self);
  Ref Sin(Ref self);
  Ref Reciprocal(Ref self);
  Ref Detach(Ref self);
  Ref Mul(Ref self, Ref other);
  Ref Div(Ref self, Ref other);
  Ref DivMode(Ref self, Ref other, Arg rounding_mode);
  Ref FloorDivide(Ref self, Ref other);
  Ref Add(Ref self, Ref other, Arg alpha = 1);
  Ref Add_(Ref self, Ref other, Arg alpha = 1);
  Ref PowScalar(Ref self, Arg exponent);
  Ref PowTensor(Ref self, Ref exponent);
  Ref MeanDim(Ref self, Ref dim, bool keepdim, Arg dtype = Arg::None());
  Ref Outer(Ref self, Ref vec2);
  Ref Triu(Ref self, int64_t diagonal);
  Ref RepeatInterleave(Ref self, int64_t repeats, int64_t dim);
  Ref View(Ref self, Ref size);
  Ref Reshape(Ref self, Ref shape);
  Ref Transpose(Ref self, int64_t dim0, int64_t dim1);
  Ref Permute(Ref self, Ref dims);
  Ref Contiguous(Ref self);
  Ref Unsqueeze(Ref self, int64_t dim);
  Ref Flatten(Ref self, int64_t start_dim, int64_t end_dim);
  Ref Expand(Ref self, Ref size);
  Ref Slice(Ref self, int64_t dim, IntItem start, IntItem end,
            int64_t step = 1);
  Ref Select(Ref self, int64_t dim, int64_t index);
  Ref Cat(Ref tensors, int64_t dim);
  std::vector<Ref> Split(Ref self, int64_t split_size, int64_t dim, int n);
  std::vector<Ref> Chunk(Ref self, int64_t chunks, int64_t dim);
  Ref ToDtype(Ref self, DType dtype);
  Ref ToDevice(Ref self, const std::string& device, DType dtype);
  Ref Full(Ref size, Arg fill_value, Arg dtype = Arg::None());
  // aten::arange(end, ...); aten::arange.start(start, end, ...);
  // aten::arange.start_step(start, end, step, ...), all on "cpu".
  Ref Arange(Arg end, Arg dtype);
  Ref ArangeStart(Arg start, Arg end, Arg dtype);
  Ref ArangeStartStep(Arg start, Arg end, Arg step, Arg dtype);
  Ref Dropout(Ref input, double p, bool train = false);
  Ref Convolution(Ref input, Ref weight, Arg bias, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, std::vector<int64_t> dilation,
                  int64_t groups);
  Ref BatchNorm(Ref input, Ref weight, Ref bias, Ref running_mean,
                Ref running_var, double momentum, double eps);
  Ref MaxPool2d(Ref self, std::vector<int64_t> kernel_size,
                std::vector<int64_t> stride, std::vector<int64_t> padding,
                std::vector<int64_t> dilation, bool ceil_mode = false);
  Ref AdaptiveAvgPool2d(Ref self, std::vector<int64_t> output_size);

  // Returns the graph built so far.
  const ir::Graph& graph() const { return g_; }

  // --- Repeated blocks ---
  // What the builder added between StartRecording and StopRecording: nodes,
  // their constants and outputs, and the modules entered, to be appended again
  // by Replay (a model's repeated decoder layer, built once).
  struct Recording {
    int first_value = 0, end_value = 0;  // The values added, [first, end).
    int first_node = 0, end_node = 0;    // The nodes added, [first, end).
    // The current module when recording started.
    int base_scope = 0;
    // The modules entered, in order: the scope, and its path below the base
    // module's.
    std::vector<std::pair<int, std::string>> scopes;
  };
  // Starts recording what the builder adds; inputs, parameters, buffers and
  // outputs may not be added until StopRecording.
  void StartRecording();
  // Ends the recording and returns it.
  Recording StopRecording();
  // Appends a copy of `r`'s nodes under the current module, as they were added
  // under the base module: an input outside `r` that `inputs` maps (a value id
  // to a value id) reads its image, other inputs outside `r` are shared; names
  // and debug names are those the builder would have given. The copy is
  // recorded on the graph as a repeat of r's nodes (ir::RepeatSpan), a hint
  // passes may use. Returns the id each of r's values got (index: id -
  // r.first_value).
  std::vector<int> Replay(const Recording& r,
                          const std::vector<std::pair<int, int>>& inputs);
  // Reserves room for `values` more values and `nodes` more nodes (a hint
  // before replaying a recording several times).
  void Reserve(int values, int nodes);

 private:
  int Constant(ir::ValueKind kind, ir::Constant c,
               ir::ValueKind elem_kind = ir::ValueKind::kOther);
  int Resolve(const Arg& a);
  // Returns an int list of constants, as traces build them
  // (prim::ListConstruct).
  Ref ConstList(const std::vector<int64_t>& l);

  BuiltModel model_;
  ir::Graph& g_ = model_.graph;
  std::vector<int> scope_stack_;
  Recording* recording_ = nullptr;
  Recording pending_;
  // The nodes' argument-name lists, one per distinct sequence.
  ir::ArgNamesPool names_;
};

// RAII for GraphBuilder::Push / Pop.
class ScopeGuard {
 public:
  // Enters module `name` of class `type`.
  ScopeGuard(GraphBuilder& b, const std::string& name, const std::string& type)
      : b_(b) {
    b_.Push(name, type);
  }
  ~ScopeGuard() { b_.Pop(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  GraphBuilder& b_;
};

}  // namespace torchcost::builder

#endif  // TORCHCOST_BUILDER_H_
