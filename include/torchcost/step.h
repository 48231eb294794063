// The pipeline of one analysis as a single call: a step configuration in
// plain C++ types, an owning result out. AnalyzeStep applies the stages in one
// fixed order (docs/api.md):
//
//   1. options   CheckStepConfig: every option and every combination of them;
//   2. inputs    the input shapes parsed into the result's own sym::Context;
//   3. dtypes    param_dtype converts the floating-point parameters and
//   buffers;
//   4. method    the PEFT rewrite (LoRA, DoRA, QLoRA) or GaLore's settings;
//   5. loss      the loss's ops appended to the graph (cross_entropy, mse,
//   causal_lm);
//   6. autocast  the casts torch.autocast makes inserted as ops;
//   7. analysis  shapes, autograd, checkpointing, the memory simulation, FLOPs,
//                then data-parallel sharding (one rank's memory);
//   8. time      with a GPU, the roofline time of the step (Report::time);
//   9. strict    ops without rules become StepAnalysis::strict, not an error.
//
// NB: the loss comes before autocast, as in a training loop that computes the
// loss inside the autocast region (Hugging Face's models do, in forward): its
// ops get autocast's casts too.
//
// Errors name options by their library names ("StepConfig.galore wraps
// StepConfig.optimizer adamw ..."); a front end swaps in its own (the CLI's
// flag names, src/cli/flag_names.cc).
#ifndef TORCHCOST_STEP_H_
#define TORCHCOST_STEP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/builder.h"
#include "torchcost/graph.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost {

// Everything one analysis is asked, as plain values (strings in the grammar of
// the matching parser, so a binding passes them through unchanged).
struct StepConfig {
  // "train" (forward, loss, backward, optimizer step), "infer" (a no_grad
  // forward) or "generate" (prefill and decode with a KV cache:
  // AnalyzeGeneration, include/torchcost/generation.h; AnalyzeStep declines
  // it).
  std::string mode = "train";
  // One shape per tensor input of the graph, as ParseInputSpec reads it
  // ("B,3,224,224", "B,S:int64"); dims are integers or symbol names. Empty:
  // the shapes the graph recorded (a traced model).
  std::vector<std::string> inputs;
  // The dtype of an input whose text names none.
  std::string input_dtype = "float32";
  // Upper bounds of input symbols, as (symbol, bound): the symbol's range is
  // [1, bound] (S <= n_ctx for learned positions). Others range over [1, inf).
  std::vector<std::pair<std::string, int64_t>> symbol_bounds;
  // Values of symbols, checked against the inputs' symbols and their ranges
  // and kept in StepAnalysis::bindings for evaluating the results.
  std::vector<std::pair<std::string, int64_t>> bindings;
  // If set ("bf16", "float16", ...), floating-point parameters and buffers
  // take this dtype (`model.to(dtype)`) before the PEFT rewrite; empty keeps
  // them.
  std::string param_dtype;
  // The fine-tuning method, as ParseMethodSpec reads it: "full", "lora:r=8",
  // "dora", "qlora:r=16", "galore:r=128"; empty: the graph as given (full).
  std::string method;
  // GaLore's settings around the optimizer ("r=128,gap=200", as
  // ParseGaloreConfig reads them); empty: no GaLore. NB: a method
  // "galore:..." sets it too, and wins.
  std::string galore;
  // Mixed precision: "fp16" or "bf16" runs the forward under torch.autocast
  // (float32 master weights; fp16 adds a GradScaler); empty: none.
  std::string autocast;
  // The loss, as ParseLossSpec reads it: "sum" (out.sum()), "none" (the first
  // output is the loss), "cross_entropy", "mse", "causal_lm[:...]".
  std::string loss = "sum";
  // The optimizer, as ParseOptimizer reads it ("adamw", "sgd", "adam8bit",
  // ...).
  std::string optimizer = "adamw";
  // The optimizer's step: "single" (torch.optim's per-parameter loop),
  // "foreach" (its _multi_tensor_* step: whole-list temporaries), "fused"
  // (torch 2.x fused=True, DeepSpeed's FusedAdam: no temporaries) or "auto":
  // torch's own default (torch.optim's _default_to_fused_or_foreach), foreach
  // for torch 2.x's optimizers that have one on CUDA, single otherwise. NB:
  // where foreach is not modelled (sharding, master weights, a state dtype)
  // auto is single, and the report notes it.
  std::string optimizer_impl = "auto";
  // The dtype of the optimizer's param-sized states; empty: torch's (the
  // parameter's).
  std::string state_dtype;
  // bitsandbytes' paged optimizer states (on the host, not in the peak).
  bool paged = false;
  // Float32 master weights (and states) for half-precision trainable
  // parameters.
  bool master_weights = false;
  // Micro-batches per optimizer step (gradient accumulation), at least 1.
  int accumulate = 1;
  // zero_grad(set_to_none=...): false keeps the gradients allocated between
  // steps.
  bool set_to_none = true;
  // ECMAScript regular expressions on parameter names: matching parameters are
  // frozen.
  std::vector<std::string> freeze;
  // If true, the model's floating-point inputs require gradients too.
  bool inputs_require_grad = false;
  // Activation checkpointing: a regular expression on module paths, "blocks"
  // or "selective" (TrainingOptions::checkpoint); empty: none.
  std::string checkpoint;
  // Consecutive matched module calls per checkpoint segment, at least 1.
  int checkpoint_group = 1;
  // Data-parallel sharding: "none", "ddp", "zero1", "zero2", "zero3", "fsdp".
  std::string shard = "none";
  // Data-parallel ranks; more than 1 needs a sharding strategy.
  int world = 1;
  // The network between nodes, per GPU and direction, in GB/s (1e9 bytes
  // per second; 400 Gb/s InfiniBand is 50): what collectives spanning more
  // than node_gpus ranks run at, with a GPU; 0: not given (they are then not
  // timed).
  double network_gbs = 0;
  // GPUs per node: consecutive ranks this many to a node, which collectives
  // reach over the GPU's link (GpuSpec::interconnect), at least 1.
  int node_gpus = Interconnect().node_gpus;
  // DDP's bucket_cap_mb, in MiB.
  double ddp_bucket_mib = 25;
  // DDP's gradient_as_bucket_view.
  bool ddp_bucket_view = false;
  // A DeepSpeed JSON config whose fields apply over these: its path, or its
  // text (starting with '{') (ApplyDeepSpeedConfig,
  // include/torchcost/deepspeed_config.h); empty: none.
  std::string deepspeed;
  // The model's hidden size where known (StepConfigFor sets it): DeepSpeed's
  // "auto" reduce_bucket_size is its square. 0: unknown.
  int64_t hidden_size = 0;
  // DeepSpeed's reduce_bucket_size for shard zero1|zero2|zero3, in elements.
  double reduce_bucket = 5e8;
  // DeepSpeed's contiguous_gradients (ShardingOptions::contiguous_gradients);
  // false: the ZeRO paper's accounting, without DeepSpeed's flat buffers.
  bool contiguous_gradients = true;
  // DeepSpeed's overlap_comm: two bucket buffers at zero1|zero2.
  bool overlap_comm = false;
  // FSDP / ZeRO-3 wrapping unit: "blocks" or a regular expression on module
  // paths.
  std::string fsdp_unit = "blocks";
  // FSDP's backward prefetch (BACKWARD_PRE) / ZeRO-3's prefetch.
  bool prefetch = true;
  // FSDP's sharding_strategy for shard fsdp: "full_shard", "shard_grad_op",
  // "hybrid_shard" or "hybrid_shard_zero2" (ShardingOptions::
  // reshard_after_forward, shard_group).
  std::string fsdp_sharding = "full_shard";
  // The hybrid strategies' shard group (ranks per node), dividing world.
  int shard_group = 0;
  // DeepSpeed ZeRO-3's fetch schedule for shard zero3, in elements
  // (ShardingOptions): stage3_prefetch_bucket_size,
  // stage3_max_live_parameters, stage3_max_reuse_distance and
  // stage3_param_persistence_threshold.
  double zero3_prefetch_bucket = 5e7;
  double zero3_max_live = 1e9;
  double zero3_max_reuse = 1e9;
  double zero3_persistence = 1e5;
  // "optimizer": ZeRO-Offload, the optimizer states, masters and the gradient
  // shard on the host (ShardingOptions::offload_optimizer; with shard zero2 or
  // zero3); "params": the parameter shards too (ShardingOptions::
  // offload_params; with shard zero3 or fsdp); "none" or empty: none.
  std::string offload;
  // The device whose kernels are modelled: "cuda" or "cpu".
  std::string device = "cuda";
  // scaled_dot_product_attention's kernel: "auto", "math", "flash",
  // "efficient".
  std::string attention_backend = "auto";
  // The PyTorch the step runs on, where versions differ: "2" (any 2.x) or
  // "1.13".
  std::string torch_version = "2";
  // If true, ops without rules fail the step: StepAnalysis::strict says so.
  bool strict = false;
  // A GPU of the built-in table (FindGpu: "A100-80GB-SXM", "h100"): the
  // step's roofline time on it goes to Report::time (every symbol must be
  // bound); empty: no time.
  std::string gpu;
  // A calibration file (python3 -m torchcost.calibrate's FILE.json with a
  // fit): its device's figures and fitted efficiencies in place of `gpu`'s
  // (docs/calibration.md); empty: none.
  std::string gpu_file;
  // If false, a GPU (gpu or gpu_file) prepares the report for timing (the
  // bytes each node moves) without timing it at `bindings`: for callers that
  // time it at bindings of their own (EstimateTime, EstimateGenerationTime),
  // as `torchcost compare` does per row.
  bool evaluate_time = true;
  // Weight-only quantization for inference (mode generate): "int8"
  // (bitsandbytes' LLM.int8 Linear8bitLt), "int4" (AWQ's WQLinear_GEMM, group
  // 128), "nf4" (bitsandbytes' Params4bit as QLoRA stores it), "fp8" (row-wise
  // scales); empty: none. The Linear weights but the output head's
  // (docs/generation.md).
  std::string weight_quant;
  // The KV cache's dtype for generation (mode generate): "fp32", "bf16",
  // "fp16" or "fp8" (one byte, no scale); empty: the model's dtype.
  std::string cache_dtype;
  // Generation phases (AnalyzeGeneration sets them): graph inputs from this
  // position on are the KV cache handed in, freed after their last use (as
  // Hugging Face's DynamicCache drops the tensors it replaces); -1: none.
  int cache_inputs_from = -1;
  // Graph outputs from this position on are the KV cache kept; -1: none.
  int cache_outputs_from = -1;
  // "cuda" replays the step's allocations through the CUDA caching allocator
  // model (docs/allocator.md): the peak is then the allocated blocks' and a
  // reserved peak is reported; "none" or empty: exact tensor bytes.
  std::string allocator;
  // The allocator's max_split_size_mb (more than 20), 0 for none.
  int64_t max_split_size_mb = 0;
  // The allocator's expandable_segments.
  bool expandable_segments = false;
  // Bytes of the CUDA context and library workspaces; -1: the default
  // (DefaultCudaContextBytes).
  int64_t cuda_context_bytes = -1;
  // The device memory the step may use: the reports then say whether it fits
  // and the largest B that does (torchcost/budget.h); 0: none.
  int64_t budget_bytes = 0;
  // The symbol whose largest value that fits budget_bytes the reports search
  // (S: the longest sequence); empty: B, where the inputs have it.
  std::string budget_symbol;
  // Architecture symbols of a built model's config with their sample ranges,
  // "NAME=LO:HI[:STEP]" ("H=64:8192:64"): the config's values may then be
  // expressions in them, and AnalyzeArchConfig
  // (include/torchcost/arch_config.h) returns closed forms; AnalyzeStep
  // declines them. Empty: none.
  std::vector<std::string> arch_symbols;
};

// The stages of AnalyzeStep, in the order they run.
enum class StepStage {
  kOptions,
  kInputs,
  kDtypes,
  kMethod,
  kLoss,
  kAutocast,
  kAnalysis
};

// Returns "options", "inputs", "dtypes", "method", "loss", "autocast",
// "analysis".
std::string_view StepStageName(StepStage stage);

// One analysed step, owning everything its parts refer to, so a caller may
// keep it alone. Movable, not copyable.
struct StepAnalysis {
  // The symbols and interned expressions of `report` (and of `options.inputs`).
  std::unique_ptr<sym::Context> context;
  // The graph analysed: the input graph after the dtypes, the method, the loss
  // and autocast.
  ir::Graph graph;
  // The analysis of `graph`: its arrays are parallel to graph's values, nodes
  // and scopes.
  Report report;
  // The options the analysis ran with: parsed from the StepConfig, the
  // inputs including the loss's targets.
  AnalysisOptions options;
  // StepConfig::bindings, checked against the inputs' symbols and their ranges.
  sym::Bindings bindings;
  // Not ok if StepConfig::strict and some op has no rule (Unimplemented,
  // naming them); the report is still complete, as a lenient analysis finds it.
  Status strict;
  // The GPU the config names (StepConfig::gpu, or gpu_file's device with its
  // fitted efficiencies), whether or not the report was timed at `bindings`
  // (StepConfig::evaluate_time): what EstimateTime takes to time it at other
  // bindings. nullopt: no GPU named.
  std::optional<TimedOn> timed_on;
};

// Returns a StepConfig (defaults otherwise) with the inputs, their symbols'
// bounds and the loss that a built model declares, to analyse `model.graph`.
StepConfig StepConfigFor(const builder::BuiltModel& model);

// Returns an error if an option of `config` is malformed or a combination of
// options is not modelled (GaLore with SGD, a world size without a strategy,
// ...), naming the options as StepConfig's fields. Needs no graph.
Status CheckStepConfig(const StepConfig& config);

// Returns the GPU `config` names (StepConfig::gpu, or gpu_file's device with
// its fitted efficiencies) and its source's name, nullopt if none. Errors:
// CheckStepConfig's.
Result<std::optional<TimedOn>> StepTiming(const StepConfig& config);

// Analyses the training step (or inference forward) `config` describes on
// `graph` under `rules`, in the order above. Errors: bad options
// (CheckStepConfig), inputs that do not fit, a rewrite that cannot apply, a
// node whose shapes fail; if `failed` is given, it is set to the stage that
// failed. `rules` must outlive nothing: the result does not refer to it.
Result<StepAnalysis> AnalyzeStep(const ir::Graph& graph, const RuleSet& rules,
                                 const StepConfig& config,
                                 StepStage* failed = nullptr);
// As above, taking `graph` over: the result's graph is it (or its rewrite), not
// a copy.
Result<StepAnalysis> AnalyzeStep(ir::Graph&& graph, const RuleSet& rules,
                                 const StepConfig& config,
                                 StepStage* failed = nullptr);

}  // namespace torchcost

#endif  // TORCHCOST_STEP_H_
