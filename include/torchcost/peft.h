// Parameter-efficient fine-tuning as graph rewrites, applied to any graph
// before the analysis: LoRA, DoRA and QLoRA's 4-bit base.
#ifndef TORCHCOST_PEFT_H_
#define TORCHCOST_PEFT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "torchcost/dtype.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost {

// LoRA (Hu et al. 2021) as huggingface peft applies it to a Linear:
// y = W x + b + (B (A dropout(x))) * alpha / r, with W and b frozen; with
// use_dora, DoRA (Liu et al. 2024) as peft's DoraLinearLayer computes it.
struct LoraConfig {
  int64_t rank = 8;
  int64_t alpha = 8;
  double dropout = 0.0;  // peft uses an identity when 0.
  // ECMAScript regex matched against the last component of a Linear module's
  // path ("q_proj|v_proj"), or the whole path when it contains a dot; or
  // "all-linear" (peft's): every Linear layer but the output layer.
  std::string targets = "q_proj|v_proj";
  // DoRA: a trainable magnitude vector m [out] and the output rescaled by
  // m / ||W + s B A||_row, the norm recomputed each forward and detached.
  bool use_dora = false;
  // NB: peft keeps adapters in float32 on fp16/bf16 bases
  // (autocast_adapter_dtype) and casts the adapter's input to it; the sum is
  // cast back to the base's dtype.
  DType adapter_dtype = DType::kFloat32;
};

// Parses
// "r=8,alpha=16,dropout=0.05,targets=q_proj|v_proj,dora=true,dtype=float32"
// (keys optional).
Result<LoraConfig> ParseLoraConfig(std::string_view text);

// Returns `graph` with adapters on every aten::linear (or 4-bit linear, or
// transformers' Conv1D: addmm(b, x, W) with W [in, out], its module named after
// W, as peft's fan_in_fan_out=True) whose module matches `config.targets`:
// parameters `<path>.lora_A.weight` [r, in] and
// `<path>.lora_B.weight` [out, r] (and `<path>.lora_magnitude_vector.weight`
// [out] with DoRA), trainable; every other parameter frozen; modules
// `<path>.lora_dropout`, `.lora_A`, `.lora_B` (and `.lora_magnitude_vector`);
// the adapter ops follow peft's forward. Errors if no module matches.
Result<ir::Graph> ApplyLora(const ir::Graph& graph, const LoraConfig& config);

// QLoRA (Dettmers et al. 2023): Linear weights stored as 4-bit NormalFloat with
// double-quantized block constants (bitsandbytes' Linear4bit), everything else
// in the compute dtype, and LoRA adapters on the targets.
struct QloraConfig {
  LoraConfig lora;
  DType compute_dtype = DType::kBFloat16;
  int64_t block_size = 64;  // Weights per absmax constant.
  // absmax quantized to uint8 in blocks of 256, with float32 constants.
  bool double_quant = true;
  int64_t double_quant_block = 256;  // absmax constants per float32 constant.
  // Linear modules kept unquantized (regex as for targets); the graph's last
  // Linear (the output head) is always kept, as transformers does.
  std::string skip;
  // If true, the quantized Linears serve inference only, under no_grad (the
  // weight-only quantization for generation): bitsandbytes' gemv_4bit kernel
  // then reads the codes for a single row, with no dequantized temporary
  // (rules/quantized.yaml). Not a key of ParseQloraConfig.
  bool inference = false;
};

// Parses LoRA's keys plus "compute=bf16,block=64,double_quant=true,skip=REGEX".
Result<QloraConfig> ParseQloraConfig(std::string_view text);

// Bytes bitsandbytes keeps for one NF4 weight of `n` elements: packed codes
// ceil(n/2), absmax (uint8 with double quant, else float32) per block, and with
// double quant one float32 per 256 absmax plus the float32 offset; plus the
// 16-entry float32 NF4 code table.
int64_t Nf4WeightBytes(int64_t n, const QloraConfig& config);

// Returns `graph` with its float parameters in the compute dtype and the
// weights of its Linear layers (those only Linear layers read) in NF4, each
// read by a bnb::matmul_4bit node (rules/quantized.yaml); all frozen.
Result<ir::Graph> QuantizeNf4(const ir::Graph& graph,
                              const QloraConfig& config);

// QuantizeNf4, then ApplyLora.
Result<ir::Graph> ApplyQlora(const ir::Graph& graph, const QloraConfig& config);

}  // namespace torchcost

#endif  // TORCHCOST_PEFT_H_
