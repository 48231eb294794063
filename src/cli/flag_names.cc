#include "cli/flag_names.h"

#include <algorithm>
#include <string_view>

namespace torchcost::cli {
namespace {

// StepConfig's fields and the flags that set them (src/cli/command_line.cc).
// NB: some flags set a field to one value: --zero-grad zeros is
// set_to_none=false.
constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
    {"StepConfig.input_dtype", "--dtype"},
    {"StepConfig.inputs", "--input"},
    {"StepConfig.inputs_require_grad", "--inputs-require-grad"},
    {"StepConfig.bindings", "--set"},
    {"StepConfig.mode", "--mode"},
    {"StepConfig.optimizer", "--optimizer"},
    {"StepConfig.optimizer_impl", "--optimizer-impl"},
    {"StepConfig.state_dtype", "--state-dtype"},
    {"StepConfig.paged", "--paged"},
    {"StepConfig.master_weights", "--master-weights"},
    {"StepConfig.accumulate", "--accumulate"},
    {"StepConfig.set_to_none=false", "--zero-grad zeros"},
    {"StepConfig.set_to_none", "--zero-grad"},
    {"StepConfig.freeze", "--freeze"},
    {"StepConfig.checkpoint", "--checkpoint"},
    {"StepConfig.checkpoint_group", "--checkpoint-group"},
    {"StepConfig.shard", "--shard"},
    {"StepConfig.world", "--world"},
    {"StepConfig.ddp_bucket_mib", "--ddp-bucket"},
    {"StepConfig.ddp_bucket_view", "--ddp-bucket-view"},
    {"StepConfig.fsdp_unit", "--fsdp-unit"},
    {"StepConfig.fsdp_sharding", "--fsdp-sharding"},
    {"StepConfig.shard_group", "--shard-group"},
    {"StepConfig.prefetch", "--no-prefetch"},
    {"StepConfig.offload", "--offload"},
    {"StepConfig.reduce_bucket", "--reduce-bucket"},
    {"StepConfig.zero3_prefetch_bucket", "--zero3-prefetch-bucket"},
    {"StepConfig.zero3_max_live", "--zero3-max-live"},
    {"StepConfig.zero3_max_reuse", "--zero3-max-reuse"},
    {"StepConfig.zero3_persistence", "--zero3-persistence"},
    {"StepConfig.deepspeed", "--deepspeed"},
    {"StepConfig.overlap_comm", "--overlap-comm"},
    {"StepConfig.contiguous_gradients=false", "--no-contiguous-gradients"},
    {"StepConfig.device", "--device"},
    {"StepConfig.attention_backend", "--attention-backend"},
    {"StepConfig.torch_version", "--torch-version"},
    {"StepConfig.strict", "--strict"},
    {"StepConfig.param_dtype", "--param-dtype"},
    {"StepConfig.weight_quant", "--weight-quant"},
    {"StepConfig.cache_dtype", "--cache-dtype"},
    {"StepConfig.method", "--peft"},
    {"StepConfig.galore", "--galore"},
    {"StepConfig.autocast", "--autocast"},
    {"StepConfig.loss", "--loss"},
    {"StepConfig.gpu_file", "--gpu-file"},
    {"StepConfig.gpu", "--gpu"},
    {"StepConfig.network_gbs", "--network"},
    {"StepConfig.node_gpus", "--node-gpus"},
    {"StepConfig.allocator", "--allocator"},
    {"StepConfig.max_split_size_mb", "--max-split-size-mb"},
    {"StepConfig.expandable_segments", "--expandable-segments"},
    {"StepConfig.cuda_context_bytes", "--cuda-context"},
    {"StepConfig.budget_bytes", "--budget"},
    {"StepConfig.budget_symbol", "--batch-symbol"},
    {"StepConfig.arch_symbols", "--arch-symbol"},
    // Not StepConfig's: the sweep's spec (report.h) and the built model's name
    // and config (families.h).
    {"SweepSpec", "--sweep"},
    {"BuildNamedModel.config", "--config"},
    {"BuildNamedModel.name", "--model"},
};

// What every name above starts with.
constexpr std::string_view kPrefixes[] = {"StepConfig.", "SweepSpec",
                                          "BuildNamedModel."};

// Returns the first position at or after `from` where a name may start, or
// npos.
size_t NextName(const std::string& message, size_t from) {
  size_t best = std::string::npos;
  for (std::string_view p : kPrefixes)
    best = std::min(best, message.find(p, from));
  return best;
}

}  // namespace

std::string WithFlagNames(const std::string& message,
                          const FlagOverrides& overrides) {
  if (NextName(message, 0) == std::string::npos) return message;
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const size_t at = NextName(message, i);
    if (at == std::string::npos) break;
    out.append(message, i, at - i);
    const std::string_view rest = std::string_view(message).substr(at);
    // The longest name matching here; among equals, the override.
    size_t best = 0;
    std::string_view flag;
    for (const auto& [name, to] : overrides) {
      if (name.size() > best && rest.substr(0, name.size()) == name) {
        best = name.size();
        flag = to;
      }
    }
    for (const auto& [name, to] : kFlags) {
      if (name.size() > best && rest.substr(0, name.size()) == name) {
        best = name.size();
        flag = to;
      }
    }
    if (best == 0) {  // Not a name: keep the text.
      out.push_back(message[at]);
      i = at + 1;
      continue;
    }
    out.append(flag);
    i = at + best;
  }
  out.append(message, i, std::string::npos);
  return out;
}

}  // namespace torchcost::cli
