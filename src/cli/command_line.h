// The torchcost command line, parsed with CLI11.
#ifndef TORCHCOST_SRC_CLI_COMMAND_LINE_H_
#define TORCHCOST_SRC_CLI_COMMAND_LINE_H_

#include <optional>
#include <string>
#include <vector>

#include "cli/outcome.h"

namespace torchcost::cli {

// The options of one torchcost invocation, as typed.
struct CommandLine {
  std::string model;  // MODEL.pt (optional with --model)
  // --model NAME: a family or preset, built instead of read
  std::string builder_model;
  // --config KEY=VAL,...: overrides of the family's config
  std::string builder_config;
  std::vector<std::string> inputs;   // --input SHAPE, one per model input.
  std::string dtype = "float32";     // --dtype: default element type of inputs.
  int depth = -1;                    // --depth: module tree depth; -1 = all.
  int top_k = 3;                     // --top
  int top_depth = -1;                // --top-depth; -1 = the deepest.
  bool json = false;                 // --json
  std::vector<std::string> sets;     // --set SYM=VAL
  std::string rules_dir;             // --rules DIR
  bool strict = false;               // --strict
  std::string mode = "train";        // --mode train|infer|generate
  std::string cache_dtype;           // --cache-dtype (generate)
  std::string weight_quant;          // --weight-quant (generate)
  std::string optimizer = "adamw";   // --optimizer
  std::vector<std::string> freeze;   // --freeze REGEX (parameter names)
  bool inputs_require_grad = false;  // --inputs-require-grad
  std::string timeline_svg;          // --timeline FILE.svg
  std::string device = "cuda";       // --device cuda|cpu
  std::string param_dtype;           // --param-dtype DTYPE
  std::string autocast;              // --autocast fp16|bf16
  std::string attention_backend = "auto";  // --attention-backend
  std::string torch_version = "2";         // --torch-version
  // --loss LOSS; empty: the built model's default, else sum
  std::string loss;
  int accumulate = 1;              // --accumulate N (micro-batches per step)
  std::string checkpoint;          // --checkpoint REGEX|blocks|selective
  int checkpoint_group = 1;        // --checkpoint-group K
  std::string zero_grad = "none";  // --zero-grad none|zeros
  // --lora r=8,alpha=16,dropout=0.05,targets=REGEX
  std::string lora;
  std::string optimizer_impl = "auto";  // --optimizer-impl auto|single|...
  // --galore r=128,gap=200,scale=0.25,targets=REGEX,per_layer=true
  std::string galore;
  std::string shard = "none";  // --shard none|ddp|zero1|zero2|zero3|fsdp
  int world = 1;               // --world N (data-parallel ranks)
  double ddp_bucket_mib = 25;  // --ddp-bucket MiB
  // --ddp-bucket-view (gradient_as_bucket_view)
  bool ddp_bucket_view = false;
  std::string fsdp_unit = "blocks";  // --fsdp-unit REGEX|blocks
  bool no_prefetch = false;          // --no-prefetch
  std::string offload;               // --offload optimizer|params
  std::string deepspeed;             // --deepspeed FILE (ds_config.json)
  double reduce_bucket = 5e8;        // --reduce-bucket ELEMENTS
  std::string fsdp_sharding = "full_shard";  // --fsdp-sharding
  int shard_group = 0;                       // --shard-group N
  double zero3_prefetch_bucket = 5e7;        // --zero3-prefetch-bucket ELEMENTS
  double zero3_max_live = 1e9;               // --zero3-max-live ELEMENTS
  double zero3_max_reuse = 1e9;              // --zero3-max-reuse ELEMENTS
  double zero3_persistence = 1e5;            // --zero3-persistence ELEMENTS
  bool overlap_comm = false;                 // --overlap-comm
  bool no_contiguous_gradients = false;      // --no-contiguous-gradients
  bool master_weights = false;               // --master-weights
  std::string state_dtype;  // --state-dtype DTYPE (optimizer states)
  // --paged (bitsandbytes' paged optimizer states)
  bool paged = false;
  std::string gpu;  // --gpu NAME (the roofline time on it)
  // --gpu-file FILE.json (a calibration's fit)
  std::string gpu_file;
  double network_gbs = 0;            // --network GB/s (between nodes, per GPU)
  int node_gpus = 8;                 // --node-gpus N
  std::string allocator = "none";    // --allocator none|cuda
  int64_t max_split_size_mb = 0;     // --max-split-size-mb N (0: none)
  bool expandable_segments = false;  // --expandable-segments
  // --cuda-context 400MiB (empty: the default)
  std::string cuda_context;
  std::vector<std::string> sweeps;  // --sweep SYM=START:STOP:STEP
  // --arch-symbol NAME=LO:HI[:STEP]: a symbol of --config
  std::vector<std::string> arch_symbols;
  // --peft METHOD[:SETTINGS] (lora, dora, qlora, galore, full)
  std::string peft;
  // `torchcost compare`: the configurations (after MODEL.pt unless --model).
  bool compare = false;
  std::vector<std::string> compare_args;
  std::string budget;     // --budget 24GiB
  std::string chart_svg;  // --chart FILE.svg
  // --batch-symbol: searched for the largest batch that fits
  std::string batch_symbol = "B";
  // --batch-symbol of the main command: searched against --budget (empty: B).
  std::string budget_symbol;
};

// Parses argv into `out`. Returns nullopt to go on; otherwise the run ends with
// the returned outcome (help or version printed: ok; bad usage: kExitUsage).
std::optional<Outcome> ParseCommandLine(int argc, char** argv,
                                        CommandLine& out);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_COMMAND_LINE_H_
