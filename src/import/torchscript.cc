// The TorchScript frontend: reads a torch.jit.save archive with LibTorch and
// converts its forward graph into an ir::Graph.
//
// This is the only translation unit that includes LibTorch headers: it is the
// plugin libtorchcost_torchscript.so, which ImportTorchScript
// (torchscript_loader.cc) loads on first use. Every LibTorch exception is
// caught here and becomes a one-line Status.
//
// What the archive gives us, for both torch.jit.trace and torch.jit.script
// modules: `forward` is a graph that calls submodules' methods through
// prim::CallMethod on prim::GetAttr chains rooted at `self`. (After a
// save/load round trip, a traced module looks like a scripted one: the trace's
// scope names are gone, and each submodule has its own forward.) We copy that
// graph and run torch::jit::Inline, which records on every inlined node an
// InlinedCallStack whose entries carry ModuleInstanceInfo (the attribute name
// the callee module was read from, and its class). Joining those instance
// names from the outermost call inwards rebuilds the module path
// ("layer1" -> "0" -> "conv1" gives "layer1.0.conv1"), for traced and scripted
// modules alike.
//
// NB: the loaded graph carries no traced shapes. After torch.jit.save/load the
// forward graph's inputs and intermediates are plain `Tensor` (the shapes the
// tracer saw are not serialized), so only parameters, buffers and tensor
// constants get has_traced_shape; input shapes must come from elsewhere (the
// fixtures' .meta.json, or the user).
//
// Before conversion the copied graph is simplified so that control flow that
// depends only on module state disappears (scripted BatchNorm's
// `if self.training`, `if self.momentum is None`, input checks that raise):
// non-tensor attributes read with prim::GetAttr become constants, `x is None`
// on a value whose type cannot be None is folded, a prim::If one of whose
// branches only raises is replaced by the other branch, and then LibTorch's
// ConstantPropagationImmutableTypes (which folds prim::If on constant
// conditions) and EliminateDeadCode run. Anything left (prim::If on a runtime
// condition, prim::Loop) becomes an ordinary node, reported as an unknown op.
//
// For the nodes no rule covers, the graph keeps a shape inference
// (ir::Graph::infer_shapes) that runs the node's own LibTorch operator on meta
// tensors of the example shapes the analysis hands it: shapes and dtypes come
// from PyTorch's kernels (their meta implementations), and no tensor data is
// ever allocated (device arguments are forced to meta, tensor constants are
// replaced by meta tensors of their shape).
//
// An eval-mode trace leaves out what only runs in training. Where the archive
// says what (the module attributes tools/export/module_attrs.py records as an
// extra file, or a scripted module's own attributes), the importer puts it
// back so that a training analysis counts it (RestoreAttentionDropout); where
// it cannot, ir::Graph::train_gaps says what is missing.
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/script.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/eval_mode_gaps.h"
#include "import/module_attrs.h"
#include "import/module_scopes.h"
#include "import/table_value.h"
#include "import/torchscript_plugin.h"
#include "import/value_names.h"
#include "torchcost/import.h"

namespace torchcost {
namespace {

namespace jit = ::torch::jit;
using import::JoinModulePath;
using import::ModuleFacts;
using import::NoteStochasticDepth;
using import::NoteUnknownAttentionDropout;
using import::ResolveChildScope;
using import::TableValue;

// Returns the first line of a (possibly multi-line) LibTorch message, without
// the "(Could this error message be improved? ...)" plea TORCH_CHECK appends.
std::string FirstLine(const std::string& text) {
  const size_t end = text.find_first_of("\r\n");
  std::string line = end == std::string::npos ? text : text.substr(0, end);
  const size_t plea = line.find("(Could this error message be improved?");
  if (plea != std::string::npos) line.erase(plea);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  return line.empty() ? "unknown error" : line;
}

// Returns a class name without qualification or mangling:
// "__torch__.torchvision.models.resnet.___torch_mangle_12.BasicBlock" ->
// "BasicBlock".
std::string ShortClassName(const c10::ClassTypePtr& type) {
  if (!type || !type->name()) return "";
  const std::string& qualified = type->name()->qualifiedName();
  const size_t dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

DType DTypeOf(c10::ScalarType type) {
  return DTypeFromScalarTypeCode(static_cast<int64_t>(type));
}

// The ir kind of a JIT type; Optional[T] takes T's kind (a None constant is
// given kNone from its payload instead).
ir::ValueKind KindOf(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      return ir::ValueKind::kTensor;
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return ir::ValueKind::kInt;
    case c10::TypeKind::FloatType:
      return ir::ValueKind::kFloat;
    case c10::TypeKind::BoolType:
      return ir::ValueKind::kBool;
    case c10::TypeKind::StringType:
      return ir::ValueKind::kString;
    case c10::TypeKind::NoneType:
      return ir::ValueKind::kNone;
    case c10::TypeKind::ListType:
      return ir::ValueKind::kList;
    case c10::TypeKind::DeviceObjType:
      return ir::ValueKind::kDevice;
    case c10::TypeKind::OptionalType:
      return KindOf(type->expectRef<c10::OptionalType>().getElementType());
    default:
      return ir::ValueKind::kOther;
  }
}

// Fills kind, elem_kind, and for complete tensor types the shape and dtype.
void SetTypeInfo(const c10::TypePtr& type, ir::Value* v) {
  v->kind = KindOf(type);
  c10::TypePtr t = type;
  if (t->kind() == c10::TypeKind::OptionalType) {
    t = t->expectRef<c10::OptionalType>().getElementType();
  }
  if (t->kind() == c10::TypeKind::ListType) {
    v->elem_kind = KindOf(t->expectRef<c10::ListType>().getElementType());
  }
  if (auto tensor = t->cast<c10::TensorType>()) {
    if (auto st = tensor->scalarType()) v->dtype = DTypeOf(*st);
    if (auto sizes = tensor->sizes().concrete_sizes()) {
      v->has_traced_shape = true;
      v->traced_shape = *sizes;
    }
  }
}

void SetTensorInfo(const at::Tensor& t, ir::Value* v) {
  v->kind = ir::ValueKind::kTensor;
  v->has_traced_shape = true;
  v->traced_shape = t.sizes().vec();
  v->dtype = DTypeOf(t.scalar_type());
}

// Sets the payload of a constant value from its IValue; returns false for
// payloads the IR cannot carry (tuples, objects), which stay kOther.
bool SetConstant(const c10::IValue& iv, ir::Value* v) {
  if (iv.isNone()) {
    v->kind = ir::ValueKind::kNone;
    v->constant = std::monostate();
  } else if (iv.isBool()) {
    v->kind = ir::ValueKind::kBool;
    v->constant = iv.toBool();
  } else if (iv.isInt()) {
    v->kind = ir::ValueKind::kInt;
    v->constant = static_cast<int64_t>(iv.toInt());
  } else if (iv.isDouble()) {
    v->kind = ir::ValueKind::kFloat;
    v->constant = iv.toDouble();
  } else if (iv.isString()) {
    v->kind = ir::ValueKind::kString;
    v->constant = iv.toStringRef();
  } else if (iv.isDevice()) {
    v->kind = ir::ValueKind::kDevice;
    v->constant = iv.toDevice().str();
  } else if (iv.isIntList()) {
    v->kind = ir::ValueKind::kList;
    v->elem_kind = ir::ValueKind::kInt;
    v->constant = iv.toIntVector();
  } else if (iv.isDoubleList()) {
    v->kind = ir::ValueKind::kList;
    v->elem_kind = ir::ValueKind::kFloat;
    v->constant = iv.toDoubleVector();
  } else if (iv.isBoolList()) {
    v->kind = ir::ValueKind::kList;
    v->elem_kind = ir::ValueKind::kBool;
    std::vector<bool> bools;
    for (bool b : iv.toBoolList()) bools.push_back(b);
    v->constant = std::move(bools);
  } else if (iv.isTensor()) {
    const at::Tensor& t = iv.toTensor();
    SetTensorInfo(t, v);
    // NB: tracing bakes Python numbers used in shape arithmetic into 0-dim
    // constant tensors (`embed_dim // num_heads`); keep their value so that
    // arithmetic stays symbolic.
    if (t.dim() != 0 || t.is_complex()) return false;
    if (t.is_floating_point()) {
      v->constant = t.item<double>();
    } else {
      v->constant = static_cast<int64_t>(t.item<int64_t>());
    }
  } else {
    return false;
  }
  v->has_constant = true;
  return true;
}

// The attribute path of a module or tensor read through prim::GetAttr from
// `self`.
struct AttrRef {
  c10::IValue value;  // The module object or the tensor.
  std::string path;   // "layer1.0.conv1" or "layer1.0.conv1.weight".
};

// Which table a named tensor lives in.
struct TableSlot {
  bool is_param = false;
  int index = -1;
};

// Runs single nodes of a converted graph on meta tensors (see the file
// comment).
class MetaInference {
 public:
  explicit MetaInference(std::shared_ptr<jit::Graph> graph)
      : graph_(std::move(graph)) {}

  // Registers a converted node; returns its origin id.
  int Add(jit::Node* node) {
    nodes_.push_back(node);
    return static_cast<int>(nodes_.size()) - 1;
  }
  // Records the ir index of a JIT value.
  void MapValue(jit::Value* v, int index) { value_index_[v] = index; }

  // NB: an op without a meta kernel in LibTorch 1.13 (aten::roll) is run on
  // CPU tensors filled with zeros and again with ones, when its tensor inputs
  // are at most kCpuBytes; the shapes are taken only if both runs agree (a
  // shape that depends on the data, as nonzero's, is not inferred).
  static constexpr int64_t kCpuBytes = int64_t{64} << 20;

  bool Infer(int origin, const std::function<ir::ExampleValue(int)>& example_of,
             std::vector<ir::ExampleValue>* outputs, std::string* why) const {
    if (origin < 0 || origin >= static_cast<int>(nodes_.size())) {
      *why = "it is not a node of the archive";
      return false;
    }
    jit::Node* node = nodes_[origin];
    if (node->maybeOperator() == nullptr || node->maybeSchema() == nullptr ||
        node->maybeSchema()->arguments().size() != node->inputs().size()) {
      *why = "LibTorch has no operator for it";
      return false;
    }
    std::string meta_why;
    if (Run(node, Fill::kMeta, example_of, outputs, &meta_why)) return true;
    std::vector<ir::ExampleValue> zeros, ones;
    std::string cpu_why;
    if (Run(node, Fill::kZeros, example_of, &zeros, &cpu_why) &&
        Run(node, Fill::kOnes, example_of, &ones, &cpu_why)) {
      bool same = zeros.size() == ones.size();
      for (size_t i = 0; same && i < zeros.size(); ++i) {
        // NB: scalars must agree too (aten::Bool of a tensor reads its data).
        same = zeros[i].kind == ones[i].kind &&
               zeros[i].shape == ones[i].shape &&
               zeros[i].dtype == ones[i].dtype && zeros[i].i == ones[i].i &&
               zeros[i].f == ones[i].f && zeros[i].b == ones[i].b;
      }
      if (same) {
        *outputs = std::move(zeros);
        *why = "run on CPU tensors: LibTorch has no meta kernel for it";
        return true;
      }
      cpu_why = "its output shapes depend on the data";
    }
    *why = cpu_why.empty() || cpu_why == meta_why ? meta_why
                                                  : meta_why + "; " + cpu_why;
    return false;
  }

 private:
  enum class Fill { kMeta, kZeros, kOnes };

  // Runs the node's operator once on example tensors made as `fill` says.
  bool Run(jit::Node* node, Fill fill,
           const std::function<ir::ExampleValue(int)>& example_of,
           std::vector<ir::ExampleValue>* outputs, std::string* why) const {
    try {
      const auto& args = node->maybeSchema()->arguments();
      jit::Stack stack;
      int64_t bytes = 0;
      for (size_t i = 0; i < node->inputs().size(); ++i) {
        c10::IValue iv;
        if (!Example(node->input(i), args[i].type(), fill, example_of, &iv,
                     &bytes, why))
          return false;
        stack.push_back(std::move(iv));
      }
      node->getOperation()(stack);
      if (stack.size() != node->outputs().size()) {
        *why = "LibTorch returned " + std::to_string(stack.size()) +
               " values for " + std::to_string(node->outputs().size()) +
               " outputs";
        return false;
      }
      outputs->clear();
      for (const c10::IValue& iv : stack) {
        ir::ExampleValue out;
        if (iv.isTensor()) {
          out.kind = ir::ValueKind::kTensor;
          out.shape = iv.toTensor().sizes().vec();
          out.dtype = DTypeOf(iv.toTensor().scalar_type());
        } else if (iv.isInt()) {
          out.kind = ir::ValueKind::kInt;
          out.i = iv.toInt();
        } else if (iv.isDouble()) {
          out.kind = ir::ValueKind::kFloat;
          out.f = iv.toDouble();
        } else if (iv.isBool()) {
          out.kind = ir::ValueKind::kBool;
          out.b = iv.toBool();
        } else if (iv.isNone()) {
          out.kind = ir::ValueKind::kNone;
        }
        outputs->push_back(std::move(out));
      }
      return true;
    } catch (const c10::Error& e) {
      *why = "LibTorch: " + FirstLine(e.what_without_backtrace());
    } catch (const std::exception& e) {
      *why = "LibTorch: " + FirstLine(e.what());
    } catch (...) {
      *why = "LibTorch: unknown error";
    }
    // NB: LibTorch's "Could not run 'aten::roll' with arguments from the 'Meta'
    // backend. This could be ..." is cut after its first sentence.
    const size_t cut = why->find(" backend. ");
    if (cut != std::string::npos) why->resize(cut + 8);
    return false;
  }

  static bool IsDeviceType(const c10::TypePtr& type) {
    c10::TypePtr t = type;
    if (t->kind() == c10::TypeKind::OptionalType)
      t = t->expectRef<c10::OptionalType>().getElementType();
    return t->kind() == c10::TypeKind::DeviceObjType;
  }

  // The c10 scalar type of a dtype (float32 if it has none).
  static c10::ScalarType ScalarTypeOf(DType dtype) {
    if (dtype == DType::kUnknown) return c10::kFloat;
    for (int code = 0; code < static_cast<int>(c10::ScalarType::NumOptions);
         ++code) {
      if (DTypeOf(static_cast<c10::ScalarType>(code)) == dtype)
        return static_cast<c10::ScalarType>(code);
    }
    return c10::kFloat;
  }

  // Returns an example tensor; false if a CPU one would pass kCpuBytes in all.
  static bool MakeTensor(const std::vector<int64_t>& shape,
                         c10::ScalarType type, Fill fill, int64_t* bytes,
                         at::Tensor* out, std::string* why) {
    if (fill == Fill::kMeta) {
      *out =
          at::empty(shape, at::TensorOptions().dtype(type).device(c10::kMeta));
      return true;
    }
    int64_t n = static_cast<int64_t>(c10::elementSize(type));
    for (int64_t d : shape) {
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) n = kCpuBytes + 1;
    }
    *bytes += n;
    if (*bytes > kCpuBytes) {
      *why = "its inputs are too large to run on CPU";
      return false;
    }
    const at::TensorOptions options = at::TensorOptions().dtype(type);
    *out = fill == Fill::kZeros ? at::zeros(shape, options)
                                : at::ones(shape, options);
    return true;
  }

  // The example IValue of `v`, read as `type`: constants from the graph (tensor
  // constants as meta tensors), list constructions element by element, and
  // everything else from the analysis.
  bool Example(jit::Value* v, const c10::TypePtr& type, Fill fill,
               const std::function<ir::ExampleValue(int)>& example_of,
               c10::IValue* out, int64_t* bytes, std::string* why) const {
    // NB: devices are forced to meta (CPU when run there), so that factories
    // never allocate.
    if (IsDeviceType(type)) {
      *out = c10::Device(fill == Fill::kMeta ? c10::kMeta : c10::kCPU);
      return true;
    }
    if (c10::optional<c10::IValue> iv = jit::toIValue(v)) {
      if (iv->isTensor() && fill == Fill::kMeta) {
        const at::Tensor& t = iv->toTensor();
        *out = at::empty(
            t.sizes(),
            at::TensorOptions().dtype(t.scalar_type()).device(c10::kMeta));
      } else {
        *out = *iv;
      }
      return true;
    }
    if (v->node()->kind() == c10::prim::ListConstruct) {
      const c10::TypePtr elem =
          v->type()->expectRef<c10::ListType>().getElementType();
      std::vector<c10::IValue> items;
      for (jit::Value* e : v->node()->inputs()) {
        c10::IValue item;
        if (!Example(e, elem, fill, example_of, &item, bytes, why))
          return false;
        items.push_back(std::move(item));
      }
      if (elem->kind() == c10::TypeKind::IntType) {
        c10::List<int64_t> list;
        for (const auto& item : items) list.push_back(item.toInt());
        *out = list;
      } else if (elem->kind() == c10::TypeKind::TensorType) {
        c10::List<at::Tensor> list;
        for (const auto& item : items) list.push_back(item.toTensor());
        *out = list;
      } else if (elem->kind() == c10::TypeKind::OptionalType &&
                 elem->expectRef<c10::OptionalType>()
                         .getElementType()
                         ->kind() == c10::TypeKind::TensorType) {
        c10::List<c10::optional<at::Tensor>> list;
        for (const auto& item : items) {
          list.push_back(item.isNone()
                             ? c10::optional<at::Tensor>()
                             : c10::optional<at::Tensor>(item.toTensor()));
        }
        *out = list;
      } else if (elem->kind() == c10::TypeKind::FloatType) {
        c10::List<double> list;
        for (const auto& item : items) list.push_back(item.toDouble());
        *out = list;
      } else if (elem->kind() == c10::TypeKind::BoolType) {
        c10::List<bool> list;
        for (const auto& item : items) list.push_back(item.toBool());
        *out = list;
      } else {
        *why = "its list input %" + v->debugName() + " holds " + elem->str();
        return false;
      }
      return true;
    }
    auto it = value_index_.find(v);
    const ir::ExampleValue ex =
        it == value_index_.end() ? ir::ExampleValue() : example_of(it->second);
    switch (ex.kind) {
      case ir::ValueKind::kTensor: {
        at::Tensor t;
        if (!MakeTensor(ex.shape, ScalarTypeOf(ex.dtype), fill, bytes, &t, why))
          return false;
        *out = std::move(t);
        return true;
      }
      case ir::ValueKind::kInt:
        *out = ex.i;
        return true;
      case ir::ValueKind::kFloat:
        *out = ex.f;
        return true;
      case ir::ValueKind::kBool:
        *out = ex.b;
        return true;
      case ir::ValueKind::kNone:
        *out = c10::IValue();
        return true;
      case ir::ValueKind::kList:
        *out = c10::List<int64_t>(ex.ints);
        return true;
      default:
        *why = "its input %" + v->debugName() + " is not known";
        return false;
    }
  }

  std::shared_ptr<jit::Graph> graph_;  // Owns the nodes.
  std::vector<jit::Node*> nodes_;      // By origin id.
  std::unordered_map<jit::Value*, int> value_index_;
};

class Importer {
 public:
  Importer(std::string path, jit::Module module,
           import::ModuleAttrsMap recorded)
      : path_(std::move(path)),
        module_(std::move(module)),
        recorded_(std::move(recorded)) {}

  Result<ir::Graph> Run() {
    graph_.source = path_;
    BuildScopes();
    BuildTables();
    jit::Method forward = module_.get_method("forward");
    std::shared_ptr<jit::Graph> g = forward.graph()->copy();
    inference_ = std::make_shared<MetaInference>(g);
    jit::Inline(*g);
    Simplify(g);
    RestoreAttentionDropout(*g);
    NoteStochasticDepth(Facts(), &graph_);
    ResolveAttrs(g->block());
    ConvertInputs(*g);
    ConvertBlock(g->block());
    ConvertOutputs(*g);
    // NB: LibTorch's debug names carry numbers from its passes; both readers
    // name values alike (value_names.h).
    import::CanonicalizeValueNames(&graph_);
    for (const auto& [v, index] : value_map_) inference_->MapValue(v, index);
    std::shared_ptr<const MetaInference> inference = std::move(inference_);
    graph_.infer_shapes =
        [inference](int origin,
                    const std::function<ir::ExampleValue(int)>& example_of,
                    std::vector<ir::ExampleValue>* outputs, std::string* why) {
          return inference->Infer(origin, example_of, outputs, why);
        };
    return std::move(graph_);
  }

 private:
  // Module hierarchy from named_modules(): root first, registration order.
  void BuildScopes() {
    for (const auto& m : module_.named_modules()) {
      const std::string type = ShortClassName(m.value.type());
      const int index = graph_.GetOrAddScope(m.name, type);
      if (m.name.empty()) {
        graph_.scopes[index].name = type;
        graph_.scopes[index].type = type;
      }
      scope_index_[m.name] = index;
      modules_.emplace(m.name, m.value);
    }
  }

  // Returns the number attribute `name` of the module at `path`: the recorded
  // one (extra file), else the archive's own (scripted modules keep theirs).
  std::optional<double> ModuleNumber(const std::string& path,
                                     const std::string& name) const {
    auto rec = recorded_.find(path);
    if (rec != recorded_.end()) {
      auto it = rec->second.numbers.find(name);
      if (it != rec->second.numbers.end()) return it->second;
    }
    auto m = modules_.find(path);
    if (m != modules_.end() && m->second.hasattr(name)) {
      const c10::IValue v = m->second.attr(name);
      if (v.isDouble()) return v.toDouble();
    }
    return std::nullopt;
  }

  // True if the module at `path` was in eval mode when traced or scripted.
  bool TracedInEval(const std::string& path) const {
    auto m = modules_.find(path);
    return m != modules_.end() && !m->second.is_training();
  }

  // NB: an eval-mode nn.MultiheadAttention passes dropout_p = 0 to its math
  // path (torch 1.13 F.multi_head_attention_forward: `if not training:
  // dropout_p = 0.0`; then `if dropout_p > 0.0: dropout(weights)`), so its
  // trace has no dropout between the softmax and the A V bmm. With the
  // module's `dropout` known and > 0, this puts aten::dropout(weights, p,
  // train=False) back: an alias in inference, and what a training step runs
  // (shape propagation sets `train` from the analysis mode), as in a
  // train-mode trace. Unknown: a train gap.
  void RestoreAttentionDropout(jit::Graph& g) {
    for (jit::Node* node : g.nodes()) {
      if (node->kind() != c10::aten::softmax) continue;
      const ir::Scope& scope = graph_.scopes[ScopeOf(node)];
      if (scope.type != "MultiheadAttention" || !TracedInEval(scope.path))
        continue;
      jit::Value* weights = node->output();
      bool to_bmm = false;
      bool dropped = false;
      for (const jit::Use& use : weights->uses()) {
        const c10::Symbol k = use.user->kind();
        to_bmm |= k == c10::aten::bmm;
        dropped |= k == c10::aten::dropout || k == c10::aten::dropout_;
      }
      if (!to_bmm || dropped) continue;
      const std::optional<double> p = ModuleNumber(scope.path, "dropout");
      if (!p) {
        NoteUnknownAttentionDropout(scope.path, &graph_);
        continue;
      }
      if (*p <= 0) continue;
      jit::WithInsertPoint guard(node->next());
      jit::Value* out = g.insert(c10::aten::dropout, {weights, *p, false});
      if (node->callstack()) out->node()->setCallStack(*node->callstack());
      weights->replaceAllUsesAfterNodeWith(out->node(), out);
    }
  }

  // What the module tree says, for the train gaps of an eval-mode trace.
  ModuleFacts Facts() const {
    return {[this](const std::string& path) { return TracedInEval(path); },
            [this](const std::string& path, const std::string& name) {
              return ModuleNumber(path, name);
            }};
  }

  // Parameters and buffers, deduplicated by storage: a tensor whose storage
  // (data pointer, offset, sizes) was seen under another name becomes an alias.
  void BuildTables() {
    using Key = std::tuple<const void*, int64_t, std::vector<int64_t>>;
    std::map<Key, TableSlot> seen;
    auto add = [&](const std::string& name, const at::Tensor& t,
                   bool is_param) {
      const void* data = t.has_storage() ? t.storage().data() : nullptr;
      Key key{data, t.has_storage() ? t.storage_offset() : 0, t.sizes().vec()};
      // NB: empty tensors have no data pointer and are never merged.
      if (data != nullptr) {
        auto it = seen.find(key);
        if (it != seen.end()) {
          std::vector<ir::TensorEntry>& table =
              it->second.is_param ? graph_.params : graph_.buffers;
          table[it->second.index].aliases.push_back(name);
          tensor_slot_[name] = it->second;
          return;
        }
      }
      ir::TensorEntry entry;
      entry.name = name;
      entry.shape = t.sizes().vec();
      entry.dtype = DTypeOf(t.scalar_type());
      entry.requires_grad = is_param && t.requires_grad();
      std::vector<ir::TensorEntry>& table =
          is_param ? graph_.params : graph_.buffers;
      table.push_back(std::move(entry));
      TableSlot slot{is_param, static_cast<int>(table.size()) - 1};
      if (data != nullptr) seen.emplace(std::move(key), slot);
      tensor_slot_[name] = slot;
    };
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      add(p.name, p.value, /*is_param=*/true);
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
      add(b.name, b.value, /*is_param=*/false);
    }
  }

  // Simplifies control flow that depends only on module state (see the file
  // comment).
  void Simplify(std::shared_ptr<jit::Graph>& g) {
    ConstantizeAttrs(g->block(),
                     g->inputs().empty() ? nullptr : g->inputs()[0]);
    for (int round = 0; round < 8; ++round) {
      bool changed = FoldIsNone(g->block());
      changed |= FoldRaisingIfs(g->block());
      changed |= jit::ConstantPropagationImmutableTypes(g);
      jit::EliminateDeadCode(g);
      if (!changed) break;
    }
  }

  // Replaces prim::GetAttr of non-tensor, non-object attributes by constants.
  void ConstantizeAttrs(jit::Block* block, jit::Value* self) {
    if (self == nullptr || !self->type()->cast<c10::ClassType>()) return;
    std::unordered_map<jit::Value*, c10::IValue> objects;
    objects[self] = module_._ivalue();
    ConstantizeAttrsIn(block, &objects);
  }

  void ConstantizeAttrsIn(
      jit::Block* block,
      std::unordered_map<jit::Value*, c10::IValue>* objects) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      jit::Node* node = *it;
      ++it;  // The node may be destroyed below.
      for (jit::Block* sub : node->blocks()) ConstantizeAttrsIn(sub, objects);
      if (node->kind() != c10::prim::GetAttr) continue;
      auto obj = objects->find(node->input(0));
      if (obj == objects->end() || !obj->second.isObject()) continue;
      const c10::IValue attr =
          obj->second.toObjectRef().getAttr(node->s(c10::attr::name));
      if (attr.isObject()) {
        (*objects)[node->output()] = attr;
        continue;
      }
      if (attr.isTensor()) continue;
      jit::WithInsertPoint guard(node);
      c10::optional<jit::Value*> constant =
          jit::tryInsertConstant(*node->owningGraph(), attr);
      if (!constant) continue;
      (*constant)->setType(node->output()->type());
      node->output()->replaceAllUsesWith(*constant);
      node->destroy();
    }
  }

  // Folds `x is None` / `x is not None` when x's type cannot hold None.
  static bool FoldIsNone(jit::Block* block) {
    bool changed = false;
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      jit::Node* node = *it;
      ++it;
      for (jit::Block* sub : node->blocks()) changed |= FoldIsNone(sub);
      const bool is = node->kind() == c10::aten::__is__;
      if ((!is && node->kind() != c10::aten::__isnot__) ||
          node->inputs().size() != 2) {
        continue;
      }
      auto is_none = [](jit::Value* v) {
        return v->type()->kind() == c10::TypeKind::NoneType;
      };
      auto cannot_be_none = [](jit::Value* v) {
        const c10::TypeKind k = v->type()->kind();
        return k != c10::TypeKind::NoneType &&
               k != c10::TypeKind::OptionalType &&
               k != c10::TypeKind::AnyType && k != c10::TypeKind::UnionType;
      };
      jit::Value* a = node->input(0);
      jit::Value* b = node->input(1);
      c10::optional<bool> result;
      if (is_none(a) && is_none(b)) {
        result = is;
      } else if ((is_none(a) && cannot_be_none(b)) ||
                 (is_none(b) && cannot_be_none(a))) {
        result = !is;
      }
      if (!result) continue;
      jit::WithInsertPoint guard(node);
      jit::Value* constant = node->owningGraph()->insertConstant(*result);
      node->output()->replaceAllUsesWith(constant);
      node->destroy();
      changed = true;
    }
    return changed;
  }

  // Returns true if the block raises unconditionally (a top-level
  // prim::RaiseException).
  static bool Raises(jit::Block* block) {
    for (jit::Node* n : block->nodes()) {
      if (n->kind() == c10::prim::RaiseException) return true;
    }
    return false;
  }

  // Replaces `if c: raise` style prim::If nodes by their non-raising branch.
  // NB: this assumes the model runs without error, which is what we cost.
  static bool FoldRaisingIfs(jit::Block* block) {
    bool changed = false;
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      jit::Node* node = *it;
      ++it;
      for (jit::Block* sub : node->blocks()) changed |= FoldRaisingIfs(sub);
      if (node->kind() != c10::prim::If || node->blocks().size() != 2) continue;
      const bool then_raises = Raises(node->blocks()[0]);
      const bool else_raises = Raises(node->blocks()[1]);
      if (then_raises == else_raises) continue;
      jit::Block* keep = then_raises ? node->blocks()[1] : node->blocks()[0];
      // Move the surviving branch's nodes before the If, then wire its outputs.
      for (auto inner = keep->nodes().begin(); inner != keep->nodes().end();) {
        jit::Node* moving = *inner;
        ++inner;
        moving->moveBefore(node);
      }
      for (size_t i = 0; i < node->outputs().size(); ++i) {
        node->output(i)->replaceAllUsesWith(keep->outputs()[i]);
      }
      node->destroy();
      changed = true;
    }
    return changed;
  }

  // Records, for every prim::GetAttr chain from `self`, the object or tensor it
  // reads.
  void ResolveAttrs(jit::Block* block) {
    jit::Graph* g = block->owningGraph();
    if (!g->inputs().empty() &&
        g->inputs()[0]->type()->cast<c10::ClassType>()) {
      attrs_[g->inputs()[0]] = AttrRef{module_._ivalue(), ""};
    }
    ResolveAttrsIn(block);
  }

  void ResolveAttrsIn(jit::Block* block) {
    for (jit::Node* node : block->nodes()) {
      if (node->kind() == c10::prim::GetAttr) {
        auto parent = attrs_.find(node->input(0));
        if (parent != attrs_.end() && parent->second.value.isObject()) {
          const std::string& name = node->s(c10::attr::name);
          attrs_[node->output()] =
              AttrRef{parent->second.value.toObjectRef().getAttr(name),
                      JoinModulePath(parent->second.path, name)};
        }
      }
      for (jit::Block* sub : node->blocks()) ResolveAttrsIn(sub);
    }
  }

  // Returns the ir value for a tensor attribute, creating one per table entry.
  int TensorAttrValue(const AttrRef& ref) {
    auto slot_it = tensor_slot_.find(ref.path);
    if (slot_it == tensor_slot_.end()) {
      // NB: a tensor attribute that is neither a parameter nor a registered
      // buffer (a plain tensor attribute of a scripted module) is listed as a
      // buffer.
      ir::TensorEntry entry;
      const at::Tensor& t = ref.value.toTensor();
      entry.name = ref.path;
      entry.shape = t.sizes().vec();
      entry.dtype = DTypeOf(t.scalar_type());
      entry.requires_grad = false;
      graph_.buffers.push_back(std::move(entry));
      slot_it =
          tensor_slot_
              .emplace(
                  ref.path,
                  TableSlot{false, static_cast<int>(graph_.buffers.size()) - 1})
              .first;
    }
    const TableSlot slot = slot_it->second;
    return TableValue(&graph_, slot.is_param, slot.index);
  }

  void ConvertInputs(jit::Graph& g) {
    int position = 0;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      jit::Value* in = g.inputs()[i];
      if (i == 0 && in->type()->cast<c10::ClassType>()) continue;  // `self`.
      ir::Value v;
      v.name = in->debugName();
      SetTypeInfo(in->type(), &v);
      v.role = ir::ValueRole::kInput;
      v.table_index = position++;
      const int index = graph_.AddValue(std::move(v));
      value_map_[in] = index;
      graph_.inputs.push_back(index);
    }
  }

  // Returns the ir index of a JIT value, creating an opaque one if it was never
  // defined.
  int ValueOf(jit::Value* v) {
    auto it = value_map_.find(v);
    if (it != value_map_.end()) return it->second;
    ir::Value out;
    out.name = v->debugName();
    SetTypeInfo(v->type(), &out);
    const int index = graph_.AddValue(std::move(out));
    value_map_[v] = index;
    return index;
  }

  // Returns the scope index of a node from its inlined call stack.
  int ScopeOf(jit::Node* node) {
    c10::optional<jit::InlinedCallStackPtr> cs = node->callstack();
    if (!cs) return 0;
    std::string path;
    c10::ClassTypePtr innermost;
    for (const jit::InlinedCallStackEntry& entry : (*cs)->vec()) {
      const c10::optional<jit::ModuleInstanceInfo>& info = std::get<2>(entry);
      if (!info) continue;  // A free function call: same module.
      const std::string& name = info->instance_name();
      // NB: "SELF" marks a method called on the same module
      // (self._forward_impl).
      if (name.empty() || name == "SELF" || name == "INSTANCE_NAME_UNKNOWN")
        continue;
      path = ResolveChildScope(graph_, scope_index_, path, name);
      innermost = info->class_type();
    }
    auto it = scope_index_.find(path);
    if (it != scope_index_.end()) return it->second;
    const int index = graph_.GetOrAddScope(path, ShortClassName(innermost));
    scope_index_[path] = index;
    return index;
  }

  void ConvertBlock(jit::Block* block) {
    for (jit::Node* node : block->nodes()) {
      if (node->kind() == c10::prim::Constant) {
        ConvertConstant(node);
        continue;
      }
      if (node->kind() == c10::prim::GetAttr && ConvertGetAttr(node)) continue;
      ConvertNode(node);
    }
  }

  void ConvertConstant(jit::Node* node) {
    jit::Value* out = node->output();
    ir::Value v;
    v.name = out->debugName();
    v.role = ir::ValueRole::kConstant;
    SetTypeInfo(out->type(), &v);
    if (c10::optional<c10::IValue> iv = jit::toIValue(out))
      SetConstant(*iv, &v);
    value_map_[out] = graph_.AddValue(std::move(v));
  }

  // Converts a prim::GetAttr read from `self`; returns false if it is not one.
  bool ConvertGetAttr(jit::Node* node) {
    auto it = attrs_.find(node->output());
    if (it == attrs_.end()) return false;
    const AttrRef& ref = it->second;
    if (ref.value.isObject()) return true;  // A submodule: no node, no value.
    if (ref.value.isTensor()) {
      value_map_[node->output()] = TensorAttrValue(ref);
      return true;
    }
    // An attribute ConstantizeAttrs could not turn into a prim::Constant.
    ir::Value v;
    v.name = ref.path;
    v.role = ir::ValueRole::kConstant;
    SetTypeInfo(node->output()->type(), &v);
    SetConstant(ref.value, &v);
    value_map_[node->output()] = graph_.AddValue(std::move(v));
    return true;
  }

  // Returns the position of the argument whose values a rule reads (a packed
  // sequence's lengths or batch sizes), or -1.
  static int PackedSizesArg(jit::Node* node) {
    const c10::Symbol k = node->kind();
    if (k == c10::aten::_pack_padded_sequence ||
        k == c10::aten::_pad_packed_sequence)
      return 1;
    const bool rnn = k == c10::aten::lstm || k == c10::aten::gru ||
                     k == c10::aten::rnn_tanh || k == c10::aten::rnn_relu;
    const c10::FunctionSchema* schema = rnn ? node->maybeSchema() : nullptr;
    return schema != nullptr && schema->overload_name() == "data" ? 1 : -1;
  }

  // Returns the value `v` has in every run if the graph computes it from
  // constants alone (LibTorch runs the ops, which must not mutate), else
  // nullopt. A packed sequence's batch sizes (the second output of
  // _pack_padded_sequence) follow from its lengths alone.
  std::optional<c10::IValue> ConstantValue(jit::Value* v, int depth = 0) {
    if (c10::optional<c10::IValue> iv = jit::toIValue(v)) return *iv;
    auto memo = evaluated_.find(v);
    if (memo != evaluated_.end()) return memo->second;
    jit::Node* node = v->node();
    if (depth > 32 || !node->blocks().empty()) return std::nullopt;
    if (node->kind() == c10::aten::_pack_padded_sequence &&
        v == node->output(1)) {
      std::optional<std::vector<int64_t>> lengths =
          SmallInts(ConstantValue(node->input(1), depth + 1));
      if (!lengths || lengths->empty()) return std::nullopt;
      // batch_sizes[t] = the number of sequences longer than t.
      const int64_t steps = *std::max_element(lengths->begin(), lengths->end());
      if (steps <= 0 || steps > (int64_t{1} << 20)) return std::nullopt;
      std::vector<int64_t> sizes(steps, 0);
      for (int64_t l : *lengths) {
        for (int64_t t = 0; t < l; ++t) ++sizes[t];
      }
      return evaluated_[v] = at::tensor(sizes, at::kLong);
    }
    const c10::FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr || schema->is_mutable()) return std::nullopt;
    jit::Stack stack;
    for (jit::Value* in : node->inputs()) {
      std::optional<c10::IValue> x = ConstantValue(in, depth + 1);
      if (!x) return std::nullopt;
      stack.push_back(std::move(*x));
    }
    try {
      node->getOperation()(stack);
    } catch (...) {
      return std::nullopt;
    }
    if (stack.size() != node->outputs().size()) return std::nullopt;
    for (size_t i = 0; i < stack.size(); ++i)
      evaluated_[node->output(i)] = stack[i];
    return evaluated_[v];
  }

  // The values of a 1-D integer CPU tensor of at most 2^20 elements, else
  // nullopt.
  static std::optional<std::vector<int64_t>> SmallInts(
      const std::optional<c10::IValue>& iv) {
    if (!iv || !iv->isTensor()) return std::nullopt;
    const at::Tensor& t = iv->toTensor();
    if (t.dim() != 1 || !t.device().is_cpu() || t.is_floating_point() ||
        t.is_complex() || t.numel() > (int64_t{1} << 20)) {
      return std::nullopt;
    }
    const at::Tensor l = t.to(at::kLong).contiguous();
    return std::vector<int64_t>(l.data_ptr<int64_t>(),
                                l.data_ptr<int64_t>() + l.numel());
  }

  // NB: a packed sequence's lengths and batch sizes decide its shapes and
  // what a packed RNN saves; a trace computes them from the constants it was
  // given (rules/rnn.yaml), so they reach the rules as int lists when they
  // can be evaluated here, and stay tensors otherwise.
  int PackedSizesValue(jit::Value* v) {
    std::optional<std::vector<int64_t>> ints = SmallInts(ConstantValue(v));
    if (!ints) return ValueOf(v);
    ir::Value out;
    out.name = v->debugName() + ".values";
    out.role = ir::ValueRole::kConstant;
    out.kind = ir::ValueKind::kList;
    out.elem_kind = ir::ValueKind::kInt;
    out.has_constant = true;
    out.constant = std::move(*ints);
    return graph_.AddValue(std::move(out));
  }

  void ConvertNode(jit::Node* node) {
    ir::Node n;
    n.op = node->kind().toQualString();
    n.scope = ScopeOf(node);
    const int sizes_arg = PackedSizesArg(node);
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      jit::Value* in = node->input(i);
      n.inputs.push_back(static_cast<int>(i) == sizes_arg ? PackedSizesValue(in)
                                                          : ValueOf(in));
    }
    if (const c10::FunctionSchema* schema = node->maybeSchema()) {
      n.overload = schema->overload_name();
      const auto& args = schema->arguments();
      if (args.size() == node->inputs().size()) {
        for (const c10::Argument& arg : args)
          n.input_names.push_back(arg.name());
      }
    }
    for (jit::Value* out : node->outputs()) {
      ir::Value v;
      v.name = out->debugName();
      SetTypeInfo(out->type(), &v);
      const int index = graph_.AddValue(std::move(v));
      value_map_[out] = index;
      n.outputs.push_back(index);
    }
    n.origin = inference_->Add(node);
    n.debug_name = node->outputs().empty()
                       ? "%" + std::to_string(graph_.nodes.size())
                       : "%" + node->output(0)->debugName();
    graph_.AddNode(std::move(n));
  }

  // NB: Graph::outputs lists the returned tensors: a returned tuple or list
  // built by prim::TupleConstruct / prim::ListConstruct stays a node, and its
  // elements (recursively) are the outputs; a returned dict's values are.
  void ConvertOutputs(jit::Graph& g) {
    for (jit::Value* out : g.return_node()->inputs()) AddOutput(out);
  }

  void AddOutput(jit::Value* out) {
    const c10::Symbol kind = out->node()->kind();
    if (kind == c10::prim::TupleConstruct || kind == c10::prim::ListConstruct) {
      for (jit::Value* elem : out->node()->inputs()) AddOutput(elem);
      return;
    }
    // key, value, key, value, ...: the values (segmentation's {"out": ...})
    if (kind == c10::prim::DictConstruct) {
      for (size_t i = 1; i < out->node()->inputs().size(); i += 2)
        AddOutput(out->node()->input(i));
      return;
    }
    graph_.outputs.push_back(ValueOf(out));
  }

  std::string path_;
  jit::Module module_;
  import::ModuleAttrsMap recorded_;
  std::unordered_map<std::string, jit::Module> modules_;  // By path.
  ir::Graph graph_;
  std::unordered_map<std::string, int> scope_index_;
  std::unordered_map<std::string, TableSlot> tensor_slot_;
  std::unordered_map<jit::Value*, AttrRef> attrs_;
  std::unordered_map<jit::Value*, int> value_map_;
  // ConstantValue's results.
  std::unordered_map<jit::Value*, c10::IValue> evaluated_;
  std::shared_ptr<MetaInference> inference_;
};

}  // namespace

namespace import {

Result<ir::Graph> ReadTorchScript(const std::string& path) {
  const std::string prefix = path + ": cannot read TorchScript archive: ";
  // LibTorch's own messages for these say "errno 2 on fopen: ," or "failed
  // finding central directory"; ours are plainer.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound(prefix + "no such file");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(prefix + "is a directory");
  }
  jit::Module module;
  jit::ExtraFilesMap extra{{import::kModuleAttrsFile, ""}};
  try {
    module = jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& e) {
    return Status::InvalidArgument(prefix +
                                   FirstLine(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(prefix + FirstLine(e.what()));
  } catch (...) {
    return Status::InvalidArgument(prefix + "unknown error");
  }
  try {
    if (!module.find_method("forward")) {
      return Status::InvalidArgument(
          path + ": TorchScript module has no forward method");
    }
    import::ModuleAttrsMap recorded;
    const std::string& attrs_text = extra[import::kModuleAttrsFile];
    if (!attrs_text.empty()) {
      TORCHCOST_ASSIGN_OR_RETURN(
          recorded, import::ParseModuleAttrs(
                        attrs_text, path + ": " + import::kModuleAttrsFile));
    }
    Importer importer(path, std::move(module), std::move(recorded));
    return importer.Run();
  } catch (const c10::Error& e) {
    return Status::Internal(path + ": cannot convert TorchScript graph: " +
                            FirstLine(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return Status::Internal(
        path + ": cannot convert TorchScript graph: " + FirstLine(e.what()));
  } catch (...) {
    return Status::Internal(
        path + ": cannot convert TorchScript graph: unknown error");
  }
}

}  // namespace import
}  // namespace torchcost

// The plugin's entry points (src/import/torchscript_plugin.h).
extern "C" __attribute__((visibility("default"))) const char*
torchcost_torchscript_abi() {
  return TORCHCOST_PLUGIN_ABI;
}

extern "C" __attribute__((visibility("default"))) void
torchcost_torchscript_read(const std::string* path,
                           torchcost::Result<torchcost::ir::Graph>* out) {
  try {
    *out = torchcost::import::ReadTorchScript(*path);
  } catch (...) {
    *out = torchcost::Status::Internal(
        *path + ": cannot convert TorchScript graph: unknown error");
  }
}
