// QLoRA's base model: Linear weights in 4-bit NormalFloat (bitsandbytes'
// Linear4bit with quant_type="nf4"), everything else in the compute dtype.
#include <regex>
#include <unordered_map>

#include "ir/int_math.h"
#include "passes/graph_edit.h"
#include "passes/user_regex.h"
#include "torchcost/peft.h"

namespace torchcost {
namespace {

using ir::CeilDiv;
using passes::GraphEditor;

}  // namespace

int64_t Nf4WeightBytes(int64_t n, const QloraConfig& c) {
  const int64_t blocks = CeilDiv(n, c.block_size);
  const int64_t packed = CeilDiv(n, 2);  // two 4-bit codes per byte
  // float32 absmax per block, NF4 code table
  if (!c.double_quant) return packed + 4 * blocks + 16 * 4;
  // uint8 absmax per block; float32 absmax2 per double_quant_block absmax;
  // float32 offset; code table.
  return packed + blocks + 4 * CeilDiv(blocks, c.double_quant_block) + 4 +
         16 * 4;
}

Result<ir::Graph> QuantizeNf4(const ir::Graph& graph, const QloraConfig& c) {
  std::regex skip;
  if (!c.skip.empty()) {
    try {
      skip = passes::UserRegex(c.skip);
    } catch (const std::regex_error&) {
      return Status::InvalidArgument("qlora: skip '" + c.skip +
                                     "': not a valid regular expression");
    }
  }
  ir::Graph g = graph;
  for (auto* table : {&g.params, &g.buffers}) {
    for (auto& e : *table) {
      if (IsFloatingPoint(e.dtype)) e.dtype = c.compute_dtype;
    }
  }
  for (auto& p : g.params) p.requires_grad = false;
  // A weight is quantized if Linear layers are its only readers (an embedding
  // tied to the head stays dense) and its module is not skipped.
  std::unordered_map<int, int> linear_uses, other_uses;
  int last_linear = -1;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& n = g.nodes[ni];
    const int w = n.op == "aten::linear" ? passes::NodeArg(n, "weight", 1) : -1;
    for (int in : n.inputs) {
      if (g.values[in].role != ir::ValueRole::kParam) continue;
      (in == w ? linear_uses : other_uses)[in]++;
    }
    if (w >= 0 && g.values[w].role == ir::ValueRole::kParam)
      last_linear = static_cast<int>(ni);
  }
  GraphEditor ed(g);
  // Weight value -> its packed parameter's value.
  std::unordered_map<int, int> packed_of;
  std::unordered_map<int, std::vector<int>> constants_of;
  int quantized = 0;
  const size_t original_nodes = g.nodes.size();
  for (size_t ni = 0; ni < original_nodes; ++ni) {
    ir::Node& n = g.nodes[ni];
    if (n.op == "torchcost::sp_linear") {
      return Status::InvalidArgument(
          "qlora: '" + g.scopes[n.scope].path +
          "' is a sequence-parallel linear (sp=true): 4-bit weights on it are "
          "not modelled");
    }
    if (n.op != "aten::linear" || static_cast<int>(ni) == last_linear) continue;
    const int w = passes::NodeArg(n, "weight", 1);
    if (w < 0 || g.values[w].role != ir::ValueRole::kParam ||
        other_uses.count(w))
      continue;
    const std::string& path = g.scopes[n.scope].path;
    if (!c.skip.empty() && std::regex_match(passes::LeafName(path), skip))
      continue;
    ir::TensorEntry& entry = g.params[g.values[w].table_index];
    if (entry.shape.size() != 2) continue;
    const int64_t out = entry.shape[0], in = entry.shape[1], numel = out * in;
    if (!packed_of.count(w)) {
      // The packed codes replace the weight in place: uint8 [ceil(n/2), 1], as
      // Params4bit stores them.
      entry.shape = {CeilDiv(numel, 2), 1};
      entry.dtype = DType::kUInt8;
      entry.counted_elements = numel;
      g.values[w].dtype = DType::kUInt8;
      g.values[w].traced_shape = entry.shape;
      const int64_t blocks = CeilDiv(numel, c.block_size);
      // NB: a copy: adding parameters moves the table.
      const std::string name = entry.name;
      std::vector<int> k;
      k.push_back(
          ed.QuantState(name + ".absmax", {blocks},
                        c.double_quant ? DType::kUInt8 : DType::kFloat32));
      if (c.double_quant) {
        k.push_back(ed.QuantState(name + ".absmax2",
                                  {CeilDiv(blocks, c.double_quant_block)},
                                  DType::kFloat32));
        ed.QuantState(name + ".quant_offset", {}, DType::kFloat32);
      } else {
        k.push_back(ed.None());
      }
      ed.QuantState(name + ".quant_code", {16}, DType::kFloat32);
      packed_of[w] = w;
      constants_of[w] = k;
    }
    // NB: parameters added above are never read by a node but held all step
    // (PARAM).
    ir::Node& node = g.nodes[ni];
    const int x = passes::NodeArg(node, "input", 0),
              bias = passes::NodeArg(node, "bias", 2);
    node.op = "bnb::matmul_4bit";
    node.overload.clear();
    node.inputs = {x,
                   w,
                   constants_of[w][0],
                   constants_of[w][1],
                   ed.Ints({out, in}),
                   bias >= 0 ? bias : ed.None(),
                   ed.Bool(c.inference)};
    node.input_names = {"input",        "weight", "absmax",   "absmax2",
                        "weight_shape", "bias",   "inference"};
    ++quantized;
  }
  if (quantized == 0)
    return Status::InvalidArgument("qlora: no Linear layer to quantize");
  return g;
}

Result<ir::Graph> ApplyQlora(const ir::Graph& graph,
                             const QloraConfig& config) {
  Result<ir::Graph> base = QuantizeNf4(graph, config);
  if (!base.ok()) return base.status();
  return ApplyLora(*base, config.lora);
}

}  // namespace torchcost
