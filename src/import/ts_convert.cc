#include "import/ts_convert.h"

#include <cstdint>
#include <cstring>
#include <sstream>
#include <utility>
#include <variant>

#include "import/table_value.h"
#include "import/ts_types.h"
#include "torchcost/dtype.h"

namespace torchcost::import::ts {
namespace {

// One conversion: the IR value of each program value, made on first use.
class Converter {
 public:
  Converter(const Program& prog,
            std::unordered_map<std::string, TensorSlot>* slots,
            ir::Graph* graph)
      : prog_(prog), slots_(slots), graph_(graph) {}

  // Converts the program (ConvertProgram).
  Status Convert(const std::vector<int>& inputs,
                 const std::function<Result<int>(const Nd&)>& scope_of) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Val& val = prog_.vals[inputs[i]];
      ir::Value v;
      v.name = val.name;
      SetTypeInfo(val.type, &v);
      v.role = ir::ValueRole::kInput;
      v.table_index = static_cast<int>(i);
      const int index = graph_->AddValue(std::move(v));
      ir_of_[inputs[i]] = index;
      graph_->inputs.push_back(index);
    }
    for (const Nd& nd : prog_.nodes) {
      if (nd.dead) continue;
      // NB: LibTorch's reader evaluates a packed sequence's lengths from the
      // trace's constants for the rules.
      if (nd.op == "aten::_pack_padded_sequence")
        return Decline("a packed sequence");
      ir::Node n;
      n.op = nd.op;
      n.overload = nd.overload;
      TORCHCOST_ASSIGN_OR_RETURN(n.scope, scope_of(nd));
      for (int in : nd.inputs) {
        TORCHCOST_ASSIGN_OR_RETURN(int v, IrValue(in));
        n.inputs.push_back(v);
      }
      n.input_names = nd.input_names;
      for (int out : nd.outputs) {
        ir::Value v;
        v.name = prog_.vals[out].name;
        SetTypeInfo(prog_.vals[out].type, &v);
        const int index = graph_->AddValue(std::move(v));
        ir_of_[out] = index;
        n.outputs.push_back(index);
      }
      n.origin = static_cast<int>(graph_->nodes.size());
      graph_->AddNode(std::move(n));
    }
    return AddOutput(prog_.output);
  }

 private:
  int TensorAttrValue(const std::string& path, const PickleValue& t) {
    auto slot_it = slots_->find(path);
    if (slot_it == slots_->end()) {
      ir::TensorEntry entry;
      entry.name = path;
      entry.shape = t.tensor.sizes;
      entry.dtype = DTypeFromScalarTypeCode(t.tensor.scalar_type);
      entry.requires_grad = false;
      graph_->buffers.push_back(std::move(entry));
      slot_it =
          slots_
              ->emplace(path, std::make_pair(
                                  false,
                                  static_cast<int>(graph_->buffers.size()) - 1))
              .first;
    }
    const auto [is_param, index] = slot_it->second;
    return TableValue(graph_, is_param, index);
  }

  Result<int> IrValue(int id) {
    auto it = ir_of_.find(id);
    if (it != ir_of_.end()) return it->second;
    const Val& val = prog_.vals[id];
    int index = -1;
    switch (val.src) {
      case Val::Src::kModule:
        return Decline("a module used as a value");
      case Val::Src::kPending:
        return Decline("the several results of an op used as a tuple");
      case Val::Src::kTensorAttr:
        index = TensorAttrValue(val.path, *val.object);
        break;
      case Val::Src::kConst: {
        // NB: LibTorch pools equal constants within each method it inlines (its
        // preoptimizeGraph ends with ConstantPooling), so within each call from
        // forward, and among forward's own constants.
        TORCHCOST_ASSIGN_OR_RETURN(std::string key, PoolKey(val));
        auto pooled = pool_.find(key);
        if (pooled != pool_.end()) {
          index = pooled->second;
          break;
        }
        ir::Value v;
        v.name = val.name;
        v.role = ir::ValueRole::kConstant;
        if (val.is_tensor_constant) {
          v.kind = ir::ValueKind::kTensor;
          v.has_traced_shape = true;
          v.traced_shape = val.tensor_shape;
          v.dtype = DTypeFromScalarTypeCode(val.tensor_scalar_type);
        } else {
          SetTypeInfo(val.type, &v);
        }
        if (val.has_constant) {
          v.has_constant = true;
          v.constant = val.constant;
          if (std::holds_alternative<std::monostate>(val.constant))
            v.kind = ir::ValueKind::kNone;
        }
        index = graph_->AddValue(std::move(v));
        pool_[key] = index;
        break;
      }
      default:
        return Decline("a value defined nowhere");
    }
    ir_of_[id] = index;
    return index;
  }

  // Equal constants of one pooling group share a key.
  Result<std::string> PoolKey(const Val& val) {
    std::ostringstream key;
    key << val.group << "|" << val.type << "|";
    if (val.is_tensor_constant) {
      key << val.tensor_scalar_type << "|";
      for (int64_t d : val.tensor_shape) key << d << ",";
      if (!val.tensor_shape.empty()) {
        // NB: LibTorch pools tensors of equal contents, which are not read
        // here: tensors of one shape and dtype in one group must then be the
        // same storage.
        const std::string shape_key = key.str();
        auto [it, added] = tensor_shapes_.emplace(shape_key, val.storage);
        if (!added && it->second != val.storage)
          return Decline("two tensor constants of one shape");
        key << "@" << val.storage;
        return key.str();
      }
    }
    if (!val.has_constant) return Decline("a constant without a value");
    key.precision(17);
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            key << "None";
          } else if constexpr (std::is_same_v<T, double>) {
            uint64_t bits;
            std::memcpy(&bits, &x, sizeof bits);
            key << "f" << bits;
          } else if constexpr (std::is_same_v<T, std::string>) {
            key << "s" << x;
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                               std::is_same_v<T, std::vector<bool>>) {
            key << "[";
            for (auto e : x) key << e << ",";
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            key << "[";
            for (double e : x) {
              uint64_t bits;
              std::memcpy(&bits, &e, sizeof bits);
              key << bits << ",";
            }
          } else {
            key << x;
          }
        },
        val.constant);
    return key.str();
  }

  Status AddOutput(int id) {
    const Val& v = prog_.vals[id];
    if (v.src == Val::Src::kNode) {
      const Nd& producer = prog_.nodes[v.producer];
      if (producer.op == "prim::TupleConstruct" ||
          producer.op == "prim::ListConstruct") {
        for (int in : producer.inputs) TORCHCOST_RETURN_IF_ERROR(AddOutput(in));
        return Status::Ok();
      }
    }
    TORCHCOST_ASSIGN_OR_RETURN(int index, IrValue(id));
    graph_->outputs.push_back(index);
    return Status::Ok();
  }

  const Program& prog_;
  std::unordered_map<std::string, TensorSlot>* slots_;
  ir::Graph* graph_;
  std::unordered_map<int, int> ir_of_;  // Val id -> ir value index.
  // Constant key -> ir value index.
  std::unordered_map<std::string, int> pool_;
  // Tensor constant shape key -> storage.
  std::unordered_map<std::string, std::string> tensor_shapes_;
};

}  // namespace

Status ConvertProgram(const Program& prog, const std::vector<int>& inputs,
                      const std::function<Result<int>(const Nd&)>& scope_of,
                      std::unordered_map<std::string, TensorSlot>* slots,
                      ir::Graph* graph) {
  return Converter(prog, slots, graph).Convert(inputs, scope_of);
}

}  // namespace torchcost::import::ts
