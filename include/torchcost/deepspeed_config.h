// A DeepSpeed JSON config (what deepspeed.initialize and Hugging Face's
// Trainer read) as StepConfig fields: what it says about one rank's memory.
#ifndef TORCHCOST_DEEPSPEED_CONFIG_H_
#define TORCHCOST_DEEPSPEED_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "torchcost/status.h"
#include "torchcost/step.h"

namespace torchcost {

// Sets the fields of `config` that the DeepSpeed config `text` (read from
// `file`, named in errors) determines:
//   zero_optimization.stage 0 | 1 | 2 | 3       shard none | zero1-3
//   zero_optimization.reduce_bucket_size        reduce_bucket ("auto":
//       hidden_size^2, as Hugging Face's Trainer fills it)
//   zero_optimization.overlap_comm              overlap_comm
//   zero_optimization.contiguous_gradients      contiguous_gradients
//   zero_optimization.stage3_prefetch_bucket_size  zero3_prefetch_bucket
//       ("auto": 0.9 hidden_size^2, rounded down)
//   zero_optimization.stage3_param_persistence_threshold  zero3_persistence
//       ("auto": 10 hidden_size)
//   zero_optimization.stage3_max_live_parameters  zero3_max_live
//   zero_optimization.stage3_max_reuse_distance   zero3_max_reuse
//       (the stage3_* keys at stage 3 only, as DeepSpeed reads them)
//   zero_optimization.offload_optimizer.device  cpu | nvme: offload optimizer
//   zero_optimization.offload_param.device      cpu | nvme: offload params
//   bf16.enabled, fp16.enabled true             param_dtype bf16 | fp16 and
//       master_weights (DeepSpeed keeps float32 masters)
//   optimizer.type Adam | AdamW | SGD           optimizer (Adam and AdamW:
//       fused, DeepSpeed's FusedAdam, unless params.torch_adam)
//   gradient_accumulation_steps                 accumulate
// NB: "auto" leaves a field as `config` has it, but for the keys above whose
// "auto" Hugging Face's Trainer fills from the hidden size.
// A field `config` sets to other than its default that the file contradicts
// is an error naming both; so are malformed JSON, a key of the wrong type or
// value, and such an "auto" with config->hidden_size 0. Returns one note
// naming the keys read that the analysis does not model (empty: none).
Result<std::vector<std::string>> ApplyDeepSpeedConfigText(
    std::string_view text, const std::string& file, StepConfig* config);

// ApplyDeepSpeedConfigText on the file at `path`, or, where `path` starts with
// '{', on the JSON text itself (named "<inline DeepSpeed config>").
Result<std::vector<std::string>> ApplyDeepSpeedConfig(const std::string& path,
                                                      StepConfig* config);

}  // namespace torchcost

#endif  // TORCHCOST_DEEPSPEED_CONFIG_H_
