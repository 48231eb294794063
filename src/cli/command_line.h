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
  std::string model;                // MODEL.pt (optional with --model)
  std::string builder_model;        // --model NAME: a family or preset, built instead of read
  std::string builder_config;       // --config KEY=VAL,...: overrides of the family's config
  std::vector<std::string> inputs;  // --input SHAPE, one per model input.
  std::string dtype = "float32";    // --dtype: default element type of inputs.
  int depth = -1;                   // --depth: module tree depth; -1 = all.
  int top_k = 3;                    // --top
  int top_depth = -1;               // --top-depth; -1 = the deepest.
  bool json = false;                // --json
  std::vector<std::string> sets;    // --set SYM=VAL
  std::string rules_dir;            // --rules DIR
  bool strict = false;              // --strict
  std::string mode = "train";       // --mode train|infer|generate
  std::string cache_dtype;          // --cache-dtype (generate)
  std::string weight_quant;         // --weight-quant (generate)
  std::string optimizer = "adamw";  // --optimizer
  std::vector<std::string> freeze;  // --freeze REGEX (parameter names)
  bool inputs_require_grad = false; // --inputs-require-grad
  std::string timeline_svg;         // --timeline FILE.svg
  std::string device = "cuda";      // --device cuda|cpu
  std::string param_dtype;          // --param-dtype DTYPE
  std::string autocast;             // --autocast fp16|bf16
  std::string attention_backend = "auto";  // --attention-backend
  std::string loss;                 // --loss LOSS; empty: the built model's default, else sum
  int accumulate = 1;               // --accumulate N (micro-batches per step)
  std::string checkpoint;           // --checkpoint REGEX|blocks|selective
  int checkpoint_group = 1;         // --checkpoint-group K
  std::string zero_grad = "none";   // --zero-grad none|zeros
  std::string lora;                 // --lora r=8,alpha=16,dropout=0.05,targets=REGEX
  std::string optimizer_impl = "single";  // --optimizer-impl single|foreach
  std::string galore;               // --galore r=128,gap=200,scale=0.25,targets=REGEX,per_layer=true
  std::string shard = "none";       // --shard none|ddp|zero1|zero2|zero3|fsdp
  int world = 1;                    // --world N (data-parallel ranks)
  double ddp_bucket_mib = 25;       // --ddp-bucket MiB
  bool ddp_bucket_view = false;     // --ddp-bucket-view (gradient_as_bucket_view)
  std::string fsdp_unit = "blocks"; // --fsdp-unit REGEX|blocks
  bool no_prefetch = false;         // --no-prefetch
  bool master_weights = false;      // --master-weights
  std::string state_dtype;          // --state-dtype DTYPE (optimizer states)
  bool paged = false;               // --paged (bitsandbytes' paged optimizer states)
  std::string gpu;                  // --gpu NAME (the roofline time on it)
  std::string gpu_file;             // --gpu-file FILE.json (a calibration's fit)
  std::string allocator = "none";   // --allocator none|cuda
  int64_t max_split_size_mb = 0;    // --max-split-size-mb N (0: none)
  bool expandable_segments = false; // --expandable-segments
  std::string cuda_context;         // --cuda-context 400MiB (empty: the default)
  std::vector<std::string> sweeps;  // --sweep SYM=START:STOP:STEP
  std::vector<std::string> arch_symbols;  // --arch-symbol NAME=LO:HI[:STEP]: a symbol of --config
  std::string peft;                 // --peft METHOD[:SETTINGS] (lora, dora, qlora, galore, full)
  // `torchcost compare`: the configurations (after MODEL.pt unless --model).
  bool compare = false;
  std::vector<std::string> compare_args;
  std::string budget;               // --budget 24GiB
  std::string chart_svg;            // --chart FILE.svg
  std::string batch_symbol = "B";   // --batch-symbol: searched for the largest batch that fits
};

// Parses argv into `out`. Returns nullopt to go on; otherwise the run ends with
// the returned outcome (help or version printed: ok; bad usage: kExitUsage).
std::optional<Outcome> ParseCommandLine(int argc, char** argv,
                                        CommandLine& out);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_COMMAND_LINE_H_
