// Weight-only quantization for inference (include/torchcost/weight_quant.h).
// Formats and their scale layouts:
// - int8: bitsandbytes Linear8bitLt / Int8Params
//   (bitsandbytes-foundation/bitsandbytes, bitsandbytes/nn/modules.py at
//   f0e6ca31b32c4744a9cee4e31610b25796cbf778, release 0.49.2,
//   Int8Params._quantize): CB int8 [out, in], SCB float32 [out] (each row's
//   absmax);
// - int4: AutoAWQ's WQLinear_GEMM (casper-hansen/AutoAWQ,
//   awq/modules/linear/gemm.py at d9dc8e564fed1527be2a9d8d5c74daf3823c3203),
//   w_bit 4, group_size 128: qweight int32 [in, out / 8], qzeros int32
//   [in / 128, out / 8], scales float16 [in / 128, out];
// - nf4: bitsandbytes' Params4bit as QLoRA stores it (QuantizeNf4: blocks of
//   64, double-quantized absmax);
// - fp8: transformers' FbgemmFp8Linear
//   (src/transformers/integrations/fbgemm_fp8.py at
//   b282e23b453c142800d1a37a0912fcd4ec321d04): weight float8_e4m3fn [out, in],
//   weight_scale float32 [out, 1].
#include "torchcost/weight_quant.h"

#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/int_math.h"
#include "passes/graph_edit.h"
#include "torchcost/peft.h"

namespace torchcost {
namespace {

using ir::CeilDiv;
using passes::GraphEditor;

constexpr int64_t kAwqGroup = 128;

// The scale tensors of a non-NF4 format, as (shape, dtype).
std::vector<std::pair<std::vector<int64_t>, DType>> Scales(int64_t out,
                                                           int64_t in,
                                                           WeightQuant f) {
  switch (f) {
    case WeightQuant::kInt8:
      return {{{out}, DType::kFloat32}};  // SCB
    case WeightQuant::kInt4: {
      const int64_t groups = CeilDiv(in, kAwqGroup);
      // qzeros: 8 packed 4-bit zeros per int32, as bytes; scales float16.
      return {{{groups * CeilDiv(out, 8) * 4}, DType::kUInt8},
              {{groups, out}, DType::kFloat16}};
    }
    case WeightQuant::kFp8:
      return {{{out, 1}, DType::kFloat32}};  // weight_scale
    case WeightQuant::kNf4:
      break;
  }
  return {};
}

// Bytes of the codes: int8 and fp8 one per weight; int4 8 per int32 of qweight.
int64_t CodeBytes(int64_t out, int64_t in, WeightQuant f) {
  return f == WeightQuant::kInt4 ? in * CeilDiv(out, 8) * 4 : out * in;
}

// Each format and its name, as ParseWeightQuant reads it and the rule's
// `format` argument.
constexpr std::pair<WeightQuant, std::string_view> kFormatNames[] = {
    {WeightQuant::kInt8, "int8"},
    {WeightQuant::kInt4, "int4"},
    {WeightQuant::kNf4, "nf4"},
    {WeightQuant::kFp8, "fp8"}};

std::string FormatName(WeightQuant f) {
  for (const auto& [format, name] : kFormatNames) {
    if (format == f) return std::string(name);
  }
  return "";
}

}  // namespace

Result<WeightQuant> ParseWeightQuant(std::string_view text) {
  for (const auto& [format, name] : kFormatNames) {
    if (name == text) return format;
  }
  return Status::InvalidArgument("unknown weight quantization '" +
                                 std::string(text) +
                                 "'; expected int8, int4, nf4 or fp8");
}

int64_t QuantizedWeightBytes(int64_t out, int64_t in, WeightQuant f) {
  if (f == WeightQuant::kNf4) return Nf4WeightBytes(out * in, QloraConfig{});
  int64_t bytes = CodeBytes(out, in, f);
  for (const auto& [shape, dtype] : Scales(out, in, f)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    bytes += n * ElementSize(dtype);
  }
  return bytes;
}

Result<ir::Graph> QuantizeWeights(const ir::Graph& graph, WeightQuant format) {
  DType compute = DType::kFloat32;
  for (const auto& p : graph.params) {
    if (IsFloatingPoint(p.dtype)) {
      compute = p.dtype;
      break;
    }
  }
  if (format == WeightQuant::kNf4) {
    QloraConfig c;
    c.compute_dtype = compute;  // NB: QuantizeNf4 converts float parameters to
                                // it: the model's own dtype here.
    c.inference = true;
    return QuantizeNf4(graph, c);
  }
  ir::Graph g = graph;
  for (auto& p : g.params) p.requires_grad = false;
  // As QuantizeNf4: a weight only Linear layers read, never the last Linear's
  // (the head).
  std::unordered_map<int, int> other_uses;
  int last_linear = -1;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& n = g.nodes[ni];
    const int w = n.op == "aten::linear" ? passes::NodeArg(n, "weight", 1) : -1;
    for (int in : n.inputs) {
      if (g.values[in].role == ir::ValueRole::kParam && in != w)
        other_uses[in]++;
    }
    if (w >= 0 && g.values[w].role == ir::ValueRole::kParam)
      last_linear = static_cast<int>(ni);
  }
  GraphEditor ed(g);
  std::unordered_map<int, std::vector<int>> scales_of;
  int quantized = 0;
  const size_t original_nodes = g.nodes.size();
  for (size_t ni = 0; ni < original_nodes; ++ni) {
    if (g.nodes[ni].op == "torchcost::sp_linear") {
      return Status::InvalidArgument(
          "weight_quant: '" + g.scopes[g.nodes[ni].scope].path +
          "' is a sequence-parallel linear (sp=true): quantized weights on it "
          "are not modelled");
    }
    if (g.nodes[ni].op != "aten::linear" || static_cast<int>(ni) == last_linear)
      continue;
    const int w = passes::NodeArg(g.nodes[ni], "weight", 1);
    if (w < 0 || g.values[w].role != ir::ValueRole::kParam ||
        other_uses.count(w))
      continue;
    ir::TensorEntry& entry = g.params[g.values[w].table_index];
    if (entry.shape.size() != 2) continue;
    const int64_t out = entry.shape[0], in = entry.shape[1];
    if (!scales_of.count(w)) {
      // NB: the codes replace the weight in place as bytes (uint8 [bytes, 1];
      // fp8 has no torch 1.13 dtype).
      entry.shape = {CodeBytes(out, in, format), 1};
      entry.dtype = DType::kUInt8;
      entry.counted_elements = out * in;
      g.values[w].dtype = DType::kUInt8;
      g.values[w].traced_shape = entry.shape;
      const std::string name =
          entry.name;  // NB: a copy: adding parameters moves the table.
      std::vector<int> s;
      int k = 0;
      for (const auto& [shape, dtype] : Scales(out, in, format)) {
        s.push_back(
            ed.QuantState(name + ".scale" + std::to_string(k++), shape, dtype));
      }
      scales_of[w] = s;
    }
    ir::Node& node = g.nodes[ni];
    const int x = passes::NodeArg(node, "input", 0),
              bias = passes::NodeArg(node, "bias", 2);
    node.op = "torchcost::weight_only_linear";
    node.overload.clear();
    node.inputs = {x,
                   w,
                   scales_of[w].back(),
                   ed.Ints({out, in}),
                   bias >= 0 ? bias : ed.None(),
                   ed.Str(FormatName(format))};
    node.input_names = {"input",        "weight", "scales",
                        "weight_shape", "bias",   "format"};
    ++quantized;
  }
  if (quantized == 0)
    return Status::InvalidArgument("weight_quant: no Linear layer to quantize");
  return g;
}

}  // namespace torchcost
