// Weight-only quantization for inference: the Linear weights of a graph stored
// in 8, 4 or NF4 bits with their scales, each read by a node that models the
// kernel its library dispatches, fused or dequantizing (rules/quantized.yaml).
#ifndef TORCHCOST_WEIGHT_QUANT_H_
#define TORCHCOST_WEIGHT_QUANT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost {

// A weight-only format and the layout of its scales.
enum class WeightQuant { kInt8, kInt4, kNf4, kFp8 };

// Parses "int8", "int4", "nf4" or "fp8".
Result<WeightQuant> ParseWeightQuant(std::string_view text);

// Bytes one [out, in] weight takes in `format`, scales included:
// - int8: bitsandbytes Int8Params: int8 codes out x in, a float32 SCB per row
//   (out);
// - int4: AWQ WQLinear_GEMM, group 128 along in: qweight out x in / 2, qzeros
//   (4-bit, packed) out x ceil(in/128) / 2, float16 scales out x ceil(in/128);
// - nf4: bitsandbytes Params4bit with QLoRA's double quantization
//   (Nf4WeightBytes);
// - fp8: float8 codes out x in, a float32 scale per row (FBGEMM's row-wise
//   fp8).
int64_t QuantizedWeightBytes(int64_t out, int64_t in, WeightQuant format);

// Returns `graph` with the weights of its Linear layers (those only Linear
// layers read; never the graph's last Linear, the output head, as transformers
// keeps lm_head dense) in `format`: nf4 as QuantizeNf4 rewrites them
// (bnb::matmul_4bit), the others as torchcost::weight_only_linear nodes. Float
// parameters keep their dtype; all parameters are frozen.
Result<ir::Graph> QuantizeWeights(const ir::Graph& graph, WeightQuant format);

}  // namespace torchcost

#endif  // TORCHCOST_WEIGHT_QUANT_H_
