#include "step/step_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "passes/user_regex.h"
#include "step/gpu_file.h"
#include "torchcost/cuda_allocator.h"
#include "torchcost/deepspeed_config.h"
#include "torchcost/galore.h"
#include "torchcost/loss.h"
#include "torchcost/sharding.h"
#include "torchcost/training.h"
#include "torchcost/weight_quant.h"

namespace torchcost::step {
namespace {

Status Bad(const std::string& message) {
  return Status::InvalidArgument(message);
}

// Returns an error naming `option` if `pattern` is not an ECMAScript regular
// expression; `what` ends the message ("not a valid regular expression").
Status CheckRegex(const std::string& option, const std::string& pattern,
                  const std::string& what) {
  try {
    (void)passes::UserRegex(pattern);
  } catch (const std::regex_error& e) {
    return Bad(option + " '" + pattern + "': " + what + " (" + e.what() + ")");
  }
  return Status::Ok();
}

// Parses GaLore's settings `spec` into `training.galore`; `option` names
// where they came from ("StepConfig.galore", "StepConfig.method galore:r=8").
Status SetGalore(const std::string& option, const std::string& spec,
                 TrainingOptions& training) {
  Result<GaloreConfig> galore = ParseGaloreConfig(spec);
  if (!galore.ok()) return Bad(option + ": " + galore.status().message());
  if (training.optimizer != OptimizerKind::kAdamW &&
      training.optimizer != OptimizerKind::kAdam8bit) {
    return Bad(option +
               " wraps StepConfig.optimizer adamw (GaLoreAdamW) or adam8bit "
               "(GaLoreAdamW8bit); got '" +
               std::string(OptimizerName(training.optimizer)) + "'");
  }
  galore->eight_bit = training.optimizer == OptimizerKind::kAdam8bit;
  if (training.foreach)
    return Bad(option +
               " runs per parameter: no StepConfig.optimizer_impl foreach");
  if (training.sharding.strategy != ShardStrategy::kNone ||
      training.master_weights) {
    return Bad(
        option +
        " with StepConfig.shard or StepConfig.master_weights is not modelled");
  }
  if (galore->per_layer && (training.accumulate > 1 || !training.set_to_none)) {
    return Bad(option +
               " per_layer=true frees each gradient in backward: no "
               "StepConfig.accumulate or "
               "StepConfig.set_to_none=false");
  }
  training.galore = *galore;
  return Status::Ok();
}

// DeepSpeed's gradient buckets (ZeRO only): their size, contiguous_gradients
// and overlap_comm.
Status SetReduceBuckets(const StepConfig& c, ShardingOptions& s) {
  const bool zero = IsZero(s.strategy);
  // NB: 2^50 elements (8 PiB of bf16) keeps every sum of bytes with the
  // buffers far inside int64.
  if (!(c.reduce_bucket >= 1) || c.reduce_bucket > 0x1p50 ||
      c.reduce_bucket != std::floor(c.reduce_bucket)) {
    return Bad(
        "StepConfig.reduce_bucket: must be a whole number of elements "
        "from 1 to 2^50");
  }
  const char* set =
      c.reduce_bucket != StepConfig().reduce_bucket ? "StepConfig.reduce_bucket"
      : c.overlap_comm                              ? "StepConfig.overlap_comm"
      : !c.contiguous_gradients ? "StepConfig.contiguous_gradients=false"
                                : nullptr;
  if (set != nullptr && !zero) {
    return Bad(std::string(set) +
               " is DeepSpeed's: it needs StepConfig.shard zero1|zero2|zero3");
  }
  s.reduce_bucket_elements = static_cast<int64_t>(c.reduce_bucket);
  s.contiguous_gradients = c.contiguous_gradients;
  s.overlap_comm = c.overlap_comm;
  return Status::Ok();
}

// FSDP's sharding strategy (fsdp only) and the hybrid ones' shard group.
Status SetFsdpSharding(const StepConfig& c, ShardingOptions& s) {
  const std::string& f = c.fsdp_sharding;
  const bool hybrid = f == "hybrid_shard" || f == "hybrid_shard_zero2";
  if (f != "full_shard" && f != "shard_grad_op" && !hybrid) {
    return Bad("StepConfig.fsdp_sharding '" + f +
               "': expected full_shard, shard_grad_op, hybrid_shard or "
               "hybrid_shard_zero2");
  }
  if (f != "full_shard" && s.strategy != ShardStrategy::kFsdp)
    return Bad("StepConfig.fsdp_sharding " + f +
               " needs StepConfig.shard fsdp");
  if (hybrid != (c.shard_group != 0)) {
    return Bad(hybrid ? "StepConfig.fsdp_sharding " + f +
                            " needs StepConfig.shard_group (ranks per group)"
                      : std::string("StepConfig.shard_group needs "
                                    "StepConfig.fsdp_sharding hybrid_shard or "
                                    "hybrid_shard_zero2"));
  }
  if (hybrid && (c.shard_group < 1 || s.world % c.shard_group != 0)) {
    return Bad("StepConfig.shard_group " + std::to_string(c.shard_group) +
               ": must divide StepConfig.world " + std::to_string(s.world));
  }
  // NB: torch's _HYBRID_SHARD_ZERO2 is SHARD_GRAD_OP within each group.
  s.reshard_after_forward = f == "full_shard" || f == "hybrid_shard";
  s.shard_group = hybrid ? c.shard_group : 0;
  return Status::Ok();
}

// DeepSpeed ZeRO-3's fetch schedule (zero3 only): each a whole number of
// elements from 0 to 2^50.
Status SetZero3Schedule(const StepConfig& c, ShardingOptions& s) {
  const StepConfig defaults;
  struct Field {
    const char* name;
    double value, default_value;
    int64_t* out;
  };
  const Field fields[] = {
      {"zero3_prefetch_bucket", c.zero3_prefetch_bucket,
       defaults.zero3_prefetch_bucket, &s.prefetch_bucket_elements},
      {"zero3_max_live", c.zero3_max_live, defaults.zero3_max_live,
       &s.max_live_elements},
      {"zero3_max_reuse", c.zero3_max_reuse, defaults.zero3_max_reuse,
       &s.max_reuse_elements},
      {"zero3_persistence", c.zero3_persistence, defaults.zero3_persistence,
       &s.persistence_threshold},
  };
  for (const Field& f : fields) {
    const std::string option = std::string("StepConfig.") + f.name;
    if (!(f.value >= 0) || f.value > 0x1p50 || f.value != std::floor(f.value))
      return Bad(option +
                 ": must be a whole number of elements from 0 to 2^50");
    if (f.value != f.default_value && s.strategy != ShardStrategy::kZero3) {
      return Bad(option +
                 " is DeepSpeed ZeRO-3's: it needs StepConfig.shard zero3");
    }
    *f.out = static_cast<int64_t>(f.value);
  }
  return Status::Ok();
}

// The sharding options; a world size needs a strategy, a strategy a training
// step.
Status SetSharding(const StepConfig& c, TrainingOptions& training) {
  Result<ShardStrategy> strategy = ParseShardStrategy(c.shard);
  if (!strategy.ok())
    return Bad("StepConfig.shard: " + strategy.status().message());
  ShardingOptions& s = training.sharding;
  s.strategy = *strategy;
  s.world = c.world;
  // MiB to bytes: 1 MiB = 2^20 bytes.
  s.ddp_bucket_bytes = static_cast<int64_t>(c.ddp_bucket_mib * (1 << 20));
  s.gradient_as_bucket_view = c.ddp_bucket_view;
  s.fsdp_unit = c.fsdp_unit;
  s.prefetch = c.prefetch;
  TORCHCOST_RETURN_IF_ERROR(SetFsdpSharding(c, s));
  training.master_weights = c.master_weights;
  if (s.world < 1)
    return Bad("StepConfig.world " + std::to_string(s.world) +
               ": must be at least 1");
  if (s.strategy == ShardStrategy::kNone && s.world > 1) {
    return Bad("StepConfig.world " + std::to_string(s.world) +
               " needs StepConfig.shard ddp|zero1|zero2|zero3|fsdp");
  }
  if (s.strategy != ShardStrategy::kNone && training.mode != StepMode::kTrain) {
    return Bad(
        "StepConfig.shard " + c.shard +
        " models a training step; it does not go with StepConfig.mode infer");
  }
  if (!(c.ddp_bucket_mib > 0) || s.ddp_bucket_bytes < 1)
    return Bad("StepConfig.ddp_bucket_mib: must be positive");
  TORCHCOST_RETURN_IF_ERROR(SetReduceBuckets(c, s));
  TORCHCOST_RETURN_IF_ERROR(SetZero3Schedule(c, s));
  if (c.offload != "" && c.offload != "none" && c.offload != "optimizer" &&
      c.offload != "params") {
    return Bad("StepConfig.offload '" + c.offload +
               "': expected none, optimizer or params");
  }
  if (c.offload == "params") {
    // NB: FSDP's CPUOffload(offload_params=True) moves gradients and the
    // optimizer step to the host as well; DeepSpeed's offload_param goes with
    // ZeRO-3 only.
    if (s.strategy != ShardStrategy::kZero3 &&
        s.strategy != ShardStrategy::kFsdp) {
      return Bad(
          "StepConfig.offload params needs StepConfig.shard zero3 or fsdp");
    }
    if (c.paged) {
      return Bad(
          "StepConfig.offload params and StepConfig.paged both place the "
          "optimizer states on the host: give one");
    }
    s.offload_params = true;
    s.offload_optimizer = true;
  }
  if (c.offload == "optimizer") {
    // NB: ZeRO-Offload moves the states ZeRO-2 partitions (Ren et al. 2021,
    // Sec. 4); FSDP's CPUOffload moves the parameters as well, not modelled.
    if (s.strategy != ShardStrategy::kZero2 &&
        s.strategy != ShardStrategy::kZero3) {
      return Bad(
          "StepConfig.offload optimizer (ZeRO-Offload) needs "
          "StepConfig.shard zero2 or zero3");
    }
    if (c.paged) {
      return Bad(
          "StepConfig.offload optimizer and StepConfig.paged both "
          "place the optimizer states on the host: give one");
    }
    s.offload_optimizer = true;
    // NB: stage_1_and_2.py sets contiguous_gradients "or self.cpu_offload".
    if (!c.contiguous_gradients && s.strategy == ShardStrategy::kZero2) {
      return Bad(
          "StepConfig.contiguous_gradients=false: DeepSpeed turns contiguous "
          "gradients on with StepConfig.offload optimizer at zero2");
    }
  }
  return Status::Ok();
}

// Returns the step torch runs by default for `c` (StepConfig::optimizer_impl
// "auto"): torch 2.x's optimizers with a foreach step run it on CUDA
// (torch/optim/optimizer.py, _default_to_fused_or_foreach); torch 1.13
// (foreach=None means False), the CPU, bitsandbytes' paged optimizers and
// GaLore's own loop run per parameter. Where torch would run foreach but the
// model does not (sharding, master weights, a state dtype) it is "single" and
// `note` says so.
std::string TorchDefaultImpl(const StepConfig& c,
                             const TrainingOptions& training,
                             bool galore_method, std::string* note) {
  const bool galore = !c.galore.empty() || galore_method;
  if (c.mode != "train" || c.torch_version != "2" || c.device != "cuda" ||
      !HasForeach(training.optimizer) || c.paged || galore) {
    return "single";
  }
  // NB: the note names no option: the CLI and Python name them differently.
  const char* why = training.sharding.strategy != ShardStrategy::kNone
                        ? "sharding"
                    : training.master_weights ? "master weights"
                    : !c.state_dtype.empty()  ? "a state dtype"
                                              : nullptr;
  if (why == nullptr) return "foreach";
  *note = std::string(
              "optimizer step: modelled per parameter; torch 2.x on "
              "CUDA runs ") +
          c.optimizer + "'s foreach step, not modelled with " + why +
          " (its whole-list temporaries are left out)";
  return "single";
}

// The optimizer's implementation and state options, checked as they are set
// (NB: each check sees the options set before it, so the first clash names
// the option that made it); a note for the report goes to `notes`.
Status SetOptimizerExtras(const StepConfig& c, bool galore_method,
                          TrainingOptions& training,
                          std::vector<std::string>* notes) {
  std::string impl = c.optimizer_impl;
  if (impl == "auto") {
    std::string note;
    impl = TorchDefaultImpl(c, training, galore_method, &note);
    if (!note.empty()) notes->push_back(std::move(note));
  } else if (impl != "single" && impl != "foreach" && impl != "fused") {
    return Bad("StepConfig.optimizer_impl '" + impl +
               "': expected auto, single, foreach or fused");
  }
  if (impl == "foreach") {
    if (!HasForeach(training.optimizer)) {
      return Bad("StepConfig.optimizer_impl foreach: " + c.optimizer +
                 " has no torch foreach implementation");
    }
    if (training.sharding.strategy != ShardStrategy::kNone) {
      return Bad(
          "StepConfig.optimizer_impl foreach with StepConfig.shard is not "
          "modelled");
    }
    training.foreach = true;
  }
  if (impl == "fused") {
    if (!HasFused(training.optimizer)) {
      return Bad("StepConfig.optimizer_impl fused: " + c.optimizer +
                 " has no torch fused implementation (adam, adamw, sgd, "
                 "adagrad)");
    }
    training.fused = true;
  }
  if (!c.galore.empty())
    TORCHCOST_RETURN_IF_ERROR(
        SetGalore("StepConfig.galore", c.galore, training));
  if (c.paged) {
    training.paged = true;
    if (Status st = CheckOptimizerSettings(training); !st.ok())
      return Bad("StepConfig.paged: " + st.message());
  }
  if (!c.state_dtype.empty()) {
    Result<DType> d = ParseDType(c.state_dtype);
    if (!d.ok()) return Bad("StepConfig.state_dtype: " + d.status().message());
    training.state_dtype = *d;
    if (Status st = CheckOptimizerSettings(training); !st.ok())
      return Bad("StepConfig.state_dtype: " + st.message());
  }
  return Status::Ok();
}

// The CUDA caching allocator model's options; they need StepConfig.allocator
// cuda.
Status SetAllocator(const StepConfig& c, TrainingOptions& training) {
  if (c.allocator != "" && c.allocator != "none" && c.allocator != "cuda") {
    return Bad("StepConfig.allocator '" + c.allocator +
               "': expected none or cuda");
  }
  const bool on = c.allocator == "cuda";
  if (!on && (c.max_split_size_mb != 0 || c.expandable_segments ||
              c.cuda_context_bytes != -1)) {
    return Bad(
        std::string(c.max_split_size_mb != 0 ? "StepConfig.max_split_size_mb"
                    : c.expandable_segments  ? "StepConfig.expandable_segments"
                                            : "StepConfig.cuda_context_bytes") +
        " sets the CUDA allocator model: it needs StepConfig.allocator cuda");
  }
  if (!on) return Status::Ok();
  // NB: PyTorch's CUDAAllocatorConfig refuses max_split_size_mb <= kLargeBuffer
  // (20 MiB).
  if (c.max_split_size_mb != 0 && c.max_split_size_mb <= 20) {
    return Bad("StepConfig.max_split_size_mb " +
               std::to_string(c.max_split_size_mb) +
               ": must be more than 20 (PyTorch's limit), or 0 for none");
  }
  if (c.max_split_size_mb > (int64_t{1} << 40)) {
    return Bad("StepConfig.max_split_size_mb " +
               std::to_string(c.max_split_size_mb) + ": too large");
  }
  if (c.cuda_context_bytes < -1) {
    return Bad("StepConfig.cuda_context_bytes " +
               std::to_string(c.cuda_context_bytes) +
               ": must be at least 0 (-1: the default)");
  }
  if (training.sharding.strategy != ShardStrategy::kNone) {
    return Bad(
        "StepConfig.allocator cuda with StepConfig.shard is not modelled");
  }
  CudaAllocatorOptions a;
  // MiB to bytes: 1 MiB = 2^20 bytes.
  if (c.max_split_size_mb != 0) a.max_split_size = c.max_split_size_mb << 20;
  a.expandable_segments = c.expandable_segments;
  a.context_bytes = c.cuda_context_bytes == -1 ? DefaultCudaContextBytes()
                                               : c.cuda_context_bytes;
  if (c.cuda_context_bytes == -1) a.context_source = DefaultCudaContextSource();
  training.cuda_allocator = a;
  return Status::Ok();
}

// The options read by name from the graph's modules and parameters: their
// regular expressions, and the values no front end may get wrong.
Status CheckPatternsAndRanges(const StepConfig& c,
                              const AnalysisOptions& options) {
  if (c.device != "cuda" && c.device != "cpu")
    return Bad("StepConfig.device '" + c.device + "': expected cuda or cpu");
  if (c.attention_backend != "auto" && c.attention_backend != "math" &&
      c.attention_backend != "flash" && c.attention_backend != "efficient") {
    return Bad("StepConfig.attention_backend '" + c.attention_backend +
               "': expected auto, math, flash or efficient");
  }
  if (c.torch_version != "1.13" && c.torch_version != "2")
    return Bad("StepConfig.torch_version '" + c.torch_version +
               "': expected 1.13 or 2");
  if (c.accumulate < 1)
    return Bad("StepConfig.accumulate " + std::to_string(c.accumulate) +
               ": must be at least 1");
  for (const std::string& pattern : c.freeze) {
    TORCHCOST_RETURN_IF_ERROR(CheckRegex("StepConfig.freeze", pattern,
                                         "not a valid regular expression"));
  }
  if (c.checkpoint_group < 1) {
    return Bad("StepConfig.checkpoint_group " +
               std::to_string(c.checkpoint_group) + ": must be at least 1");
  }
  if (c.checkpoint == "selective" && c.checkpoint_group != 1) {
    return Bad("StepConfig.checkpoint selective: StepConfig.checkpoint_group " +
               std::to_string(c.checkpoint_group) +
               " does not apply (each attention core is its own segment)");
  }
  if (!c.checkpoint.empty() && c.checkpoint != "blocks" &&
      c.checkpoint != "selective") {
    TORCHCOST_RETURN_IF_ERROR(CheckRegex("StepConfig.checkpoint", c.checkpoint,
                                         "not a valid regular expression"));
  }
  const ShardStrategy s = options.training.sharding.strategy;
  if ((s == ShardStrategy::kZero3 || s == ShardStrategy::kFsdp) &&
      c.fsdp_unit != "blocks") {
    TORCHCOST_RETURN_IF_ERROR(CheckRegex("StepConfig.fsdp_unit", c.fsdp_unit,
                                         "not a regular expression"));
  }
  return Status::Ok();
}

// Returns true if `dim` may be a dim of an input's text: an integer, a symbol
// name, or an expression over them (digits, letters, '_', '+', '-', '*',
// parentheses, spaces).
bool PlausibleDim(const std::string& dim) {
  bool has_alnum = false;
  for (char c : dim) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      has_alnum = true;
    } else if (c != '_' && c != '+' && c != '-' && c != '*' && c != '(' &&
               c != ')' && c != ' ') {
      return false;
    }
  }
  return has_alnum;
}

// Checks every comma-separated dim of an input's text before the full parse,
// so "B,x?,3" gets a message naming the bad dim.
Status CheckShapeText(const std::string& text) {
  const std::string shape = text.substr(0, text.find(':'));
  if (shape.empty())
    return Bad("StepConfig.inputs '" + text + "': empty shape");
  std::stringstream in(shape);
  std::string dim;
  int index = 0;
  while (std::getline(in, dim, ',')) {
    if (!PlausibleDim(dim)) {
      return Bad("StepConfig.inputs '" + text + "': dim " +
                 std::to_string(index) + " '" + dim +
                 "' is not an integer or a symbol name");
    }
    ++index;
  }
  if (shape.back() == ',')
    return Bad("StepConfig.inputs '" + text + "': empty dim at the end");
  return Status::Ok();
}

// Parses one architecture symbol's range, "NAME=LO:HI[:STEP]".
Result<ArchSymbol> ParseArchSymbol(const std::string& text) {
  const std::string where = "StepConfig.arch_symbols '" + text + "'";
  const size_t eq = text.find('=');
  ArchSymbol s;
  s.name = text.substr(0, eq);
  const bool ident =
      !s.name.empty() &&
      (std::isalpha(static_cast<unsigned char>(s.name[0])) ||
       s.name[0] == '_') &&
      std::all_of(s.name.begin(), s.name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
      });
  if (eq == std::string::npos || !ident)
    return Bad(where + ": expected NAME=LO:HI[:STEP] (H=64:8192:64)");
  std::vector<int64_t> parts;
  std::stringstream in(text.substr(eq + 1));
  for (std::string part; std::getline(in, part, ':');) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size())
      return Bad(where + ": '" + part + "' is not an integer");
    parts.push_back(v);
  }
  if (parts.size() < 2 || parts.size() > 3)
    return Bad(where + ": expected NAME=LO:HI[:STEP] (H=64:8192:64)");
  s.lo = parts[0];
  s.hi = parts[1];
  s.step = parts.size() == 3 ? parts[2] : 1;
  if (s.lo < 1 || s.hi < s.lo || s.step < 1)
    return Bad(where + ": needs 1 <= LO <= HI and STEP >= 1");
  // Interpolating a cost of degree d in the symbol takes d + 2 samples (the
  // degree is found by a zero difference); 3 admit a quadratic in it.
  if ((s.hi - s.lo) / s.step < 2)
    return Bad(where + ": the range holds fewer than 3 samples");
  if (s.name == "B" || s.name == "S" || s.name == "T") {
    return Bad(where + ": " + s.name +
               " is an input symbol of the built models (bind it with "
               "StepConfig.bindings)");
  }
  return s;
}

// StepConfig::arch_symbols, and the options a closed form in them cannot take:
// the samples are plain analyses of built models (no graph rewrite, no time).
Status SetArchSymbols(const StepConfig& c, ParsedStep& parsed) {
  for (const std::string& text : c.arch_symbols) {
    Result<ArchSymbol> s = ParseArchSymbol(text);
    if (!s.ok()) return s.status();
    for (const ArchSymbol& seen : parsed.arch_symbols) {
      if (seen.name == s->name)
        return Bad("StepConfig.arch_symbols: '" + s->name + "' is given twice");
    }
    parsed.arch_symbols.push_back(std::move(s).value());
  }
  if (parsed.arch_symbols.empty()) return Status::Ok();
  const std::pair<bool, const char*> clashes[] = {
      {c.mode == "generate", "StepConfig.mode generate"},
      {!c.inputs.empty(), "StepConfig.inputs (the built model declares them)"},
      {!c.method.empty() && c.method != "full", "StepConfig.method"},
      {!c.galore.empty(), "StepConfig.galore"},
      {!c.autocast.empty(), "StepConfig.autocast"},
      {!c.param_dtype.empty(),
       "StepConfig.param_dtype (set the config's dtype)"},
      {!c.gpu.empty(), "StepConfig.gpu"},
      {!c.gpu_file.empty(), "StepConfig.gpu_file"},
      {c.allocator == "cuda", "StepConfig.allocator cuda"},
  };
  for (const auto& [clash, what] : clashes) {
    if (clash) {
      return Bad(
          "StepConfig.arch_symbols (closed forms from plain analyses of the "
          "built model) do not go with " +
          std::string(what));
    }
  }
  return Status::Ok();
}

// ParseOptions once StepConfig::deepspeed is applied.
Result<ParsedStep> ParseApplied(const StepConfig& c) {
  ParsedStep parsed;
  AnalysisOptions& options = parsed.options;
  TrainingOptions& training = options.training;
  if (Result<DType> d = ParseDType(c.input_dtype); !d.ok()) {
    return Bad("StepConfig.input_dtype " + c.input_dtype + ": " +
               d.status().message());
  }
  options.strict = c.strict;
  // NB: "generate" runs its phases as no_grad forwards (AnalyzeGeneration).
  Result<StepMode> mode =
      ParseStepMode(c.mode == "generate" ? "infer" : c.mode);
  if (!mode.ok()) return Bad("StepConfig.mode: " + mode.status().message());
  Result<OptimizerKind> optimizer = ParseOptimizer(c.optimizer);
  if (!optimizer.ok())
    return Bad("StepConfig.optimizer: " + optimizer.status().message());
  training.mode = *mode;
  if (!c.weight_quant.empty()) {
    if (Result<WeightQuant> q = ParseWeightQuant(c.weight_quant); !q.ok()) {
      return Bad("StepConfig.weight_quant: " + q.status().message());
    }
    if (c.mode != "generate") {
      return Bad("StepConfig.weight_quant " + c.weight_quant +
                 " quantizes weights for generation: it needs StepConfig.mode "
                 "generate");
    }
  }
  if (!c.cache_dtype.empty()) {
    static constexpr const char* kCacheDTypes[] = {"fp32", "bf16", "fp16",
                                                   "fp8"};
    if (std::find(std::begin(kCacheDTypes), std::end(kCacheDTypes),
                  c.cache_dtype) == std::end(kCacheDTypes)) {
      return Bad("StepConfig.cache_dtype '" + c.cache_dtype +
                 "': expected fp32, bf16, fp16 or fp8");
    }
    if (c.mode != "generate") {
      return Bad("StepConfig.cache_dtype " + c.cache_dtype +
                 " is the KV cache's dtype: it needs StepConfig.mode generate");
    }
  }
  if (c.budget_bytes < 0) {
    return Bad("StepConfig.budget_bytes " + std::to_string(c.budget_bytes) +
               ": must be positive (0: none)");
  }
  if (!c.budget_symbol.empty()) {
    if (c.budget_bytes == 0) {
      return Bad("StepConfig.budget_symbol " + c.budget_symbol +
                 " is searched against a budget: it needs "
                 "StepConfig.budget_bytes");
    }
    if (c.mode == "generate" && c.budget_symbol != "B" &&
        c.budget_symbol != "S" && c.budget_symbol != "T") {
      return Bad("StepConfig.budget_symbol '" + c.budget_symbol +
                 "': a generation searches B, S or T");
    }
  }
  training.cache_inputs_from = c.cache_inputs_from;
  training.cache_outputs_from = c.cache_outputs_from;
  training.optimizer = *optimizer;
  training.freeze = c.freeze;
  training.inputs_require_grad = c.inputs_require_grad;
  options.device = c.device;
  options.attention_backend = c.attention_backend;
  training.torch_version = c.torch_version;
  training.accumulate = c.accumulate;
  training.set_to_none = c.set_to_none;
  // NB: the method is read before the optimizer's options, whose default
  // step depends on it (GaLore runs its own loop); its GaLore settings are
  // checked after them.
  if (!c.method.empty()) {
    Result<MethodSpec> method = ParseMethodSpec(c.method);
    if (!method.ok())
      return Bad("StepConfig.method: " + method.status().message());
    parsed.method = std::move(method).value();
  }
  const bool galore_method =
      parsed.method && parsed.method->kind == MethodSpec::Kind::kGalore;
  TORCHCOST_RETURN_IF_ERROR(SetSharding(c, training));
  TORCHCOST_RETURN_IF_ERROR(
      SetOptimizerExtras(c, galore_method, training, &parsed.notes));
  training.checkpoint = c.checkpoint;
  training.checkpoint_group = c.checkpoint_group;
  if (!c.param_dtype.empty()) {
    Result<DType> d = ParseDType(c.param_dtype);
    if (!d.ok()) return Bad("StepConfig.param_dtype: " + d.status().message());
    options.param_dtype = *d;
  }
  if (!c.autocast.empty()) {
    Result<DType> d = ParseDType(c.autocast);
    if (!d.ok() || (*d != DType::kFloat16 && *d != DType::kBFloat16)) {
      return Bad("StepConfig.autocast '" + c.autocast +
                 "': expected fp16 or bf16");
    }
    // NB: torch 1.13's CPU autocast runs bfloat16 only.
    if (*d == DType::kFloat16 && c.device == "cpu") {
      return Bad("StepConfig.autocast " + c.autocast +
                 ": CPU autocast (torch 1.13) runs bfloat16 only");
    }
    options.autocast = *d;
    // NB: float16 training pairs autocast with a GradScaler (bfloat16 needs
    // none).
    training.grad_scaler = *d == DType::kFloat16;
  }
  Result<LossSpec> loss = ParseLossSpec(c.loss);
  if (!loss.ok()) return Bad("StepConfig.loss: " + loss.status().message());
  training.loss = *loss;
  TORCHCOST_RETURN_IF_ERROR(SetAllocator(c, training));
  TORCHCOST_RETURN_IF_ERROR(CheckPatternsAndRanges(c, options));
  if (galore_method) {
    TORCHCOST_RETURN_IF_ERROR(
        SetGalore("StepConfig.method " + parsed.method->text,
                  parsed.method->settings, training));
  }
  if (!c.gpu.empty()) {
    Result<GpuSpec> gpu = FindGpu(c.gpu);
    if (!gpu.ok()) return Bad("StepConfig.gpu: " + gpu.status().message());
    if (c.device != "cuda") {
      return Bad(
          "StepConfig.gpu " + c.gpu +
          " models CUDA kernels; it does not go with StepConfig.device " +
          c.device);
    }
    parsed.gpu = std::move(gpu).value();
    options.moved_bytes = true;
  }
  if (!c.gpu_file.empty()) {
    if (!c.gpu.empty()) {
      return Bad("StepConfig.gpu_file " + c.gpu_file +
                 " names its own device; it does not go with StepConfig.gpu");
    }
    Result<CalibratedGpu> file = ReadGpuFile(c.gpu_file);
    if (!file.ok())
      return Bad("StepConfig.gpu_file: " + file.status().message());
    if (file->device != c.device) {
      return Bad("StepConfig.gpu_file " + c.gpu_file + " was measured on " +
                 file->device + "; it does not go with StepConfig.device " +
                 c.device);
    }
    parsed.gpu = std::move(file->gpu);
    options.moved_bytes = true;
    // The file's measured context, unless one is given.
    std::optional<CudaAllocatorOptions>& a = options.training.cuda_allocator;
    if (a && c.cuda_context_bytes == -1 && file->cuda_context_bytes >= 0) {
      a->context_bytes = file->cuda_context_bytes;
      a->context_source = "measured: " + c.gpu_file;
    }
  }
  if (!(c.network_gbs >= 0) || !std::isfinite(c.network_gbs))
    return Bad("StepConfig.network_gbs: must be a bandwidth >= 0 (GB/s)");
  if (c.node_gpus < 1)
    return Bad("StepConfig.node_gpus " + std::to_string(c.node_gpus) +
               ": must be at least 1");
  if (!parsed.gpu) {
    if (c.network_gbs > 0)
      return Bad(
          "StepConfig.network_gbs times the collectives: it needs "
          "StepConfig.gpu or StepConfig.gpu_file");
    if (c.node_gpus != Interconnect().node_gpus)
      return Bad(
          "StepConfig.node_gpus times the collectives: it needs "
          "StepConfig.gpu or StepConfig.gpu_file");
  }
  if (parsed.gpu) {
    // GB/s to bytes per second.
    parsed.gpu->interconnect.network = c.network_gbs * 1e9;
    parsed.gpu->interconnect.node_gpus = c.node_gpus;
  }
  TORCHCOST_RETURN_IF_ERROR(SetArchSymbols(c, parsed));
  return parsed;
}

}  // namespace

Result<ParsedStep> ParseOptions(const StepConfig& config) {
  if (config.deepspeed.empty()) return ParseApplied(config);
  StepConfig applied = config;
  Result<std::vector<std::string>> notes =
      ApplyDeepSpeedConfig(config.deepspeed, &applied);
  if (!notes.ok()) return notes.status();
  Result<ParsedStep> parsed = ParseApplied(applied);
  if (parsed.ok()) {
    // The DeepSpeed file's notes first, then the options'.
    notes->insert(notes->end(), parsed->notes.begin(), parsed->notes.end());
    parsed->notes = std::move(notes).value();
  }
  return parsed;
}

std::optional<TimedOn> TimingOf(const StepConfig& config,
                                const ParsedStep& parsed) {
  if (!parsed.gpu) return std::nullopt;
  // NB: a calibration file's efficiencies are its own: named by the file.
  return TimedOn{*parsed.gpu, config.gpu_file.empty()
                                  ? "roofline on " + parsed.gpu->name
                                  : "calibrated (" + config.gpu_file + ")"};
}

Status ParseInputs(const StepConfig& c, sym::Context& ctx,
                   std::vector<InputSpec>* inputs, sym::Bindings* bindings) {
  Result<DType> dtype = ParseDType(c.input_dtype);
  if (!dtype.ok())
    return Bad("StepConfig.input_dtype " + c.input_dtype + ": " +
               dtype.status().message());
  std::set<std::string> symbols;
  for (const std::string& text : c.inputs) {
    TORCHCOST_RETURN_IF_ERROR(CheckShapeText(text));
    Result<InputSpec> spec = ParseInputSpec(ctx, text, *dtype);
    if (!spec.ok()) {
      // ParseInputSpec's message may already quote the text; say it once.
      const std::string& m = spec.status().message();
      return Bad(m.find(text) != std::string::npos
                     ? "StepConfig.inputs: " + m
                     : "StepConfig.inputs '" + text + "': " + m);
    }
    for (const sym::Expr& d : spec->shape) {
      for (const std::string& s : sym::FreeSymbols(d)) symbols.insert(s);
    }
    inputs->push_back(std::move(spec).value());
  }
  // NB: a symbol's range is set when the inputs create it, narrowed here.
  for (const auto& [name, bound] : c.symbol_bounds) {
    if (ctx.FindSymbol(name))
      TORCHCOST_RETURN_IF_ERROR(ctx.SetRange(name, sym::Interval{1, bound}));
  }
  if (!c.arch_symbols.empty()) return Status::Ok();
  for (const auto& [name, value] : c.bindings) {
    const std::string text =
        "StepConfig.bindings " + name + "=" + std::to_string(value);
    if (!symbols.count(name)) {
      std::string list;
      for (const std::string& s : symbols)
        list += (list.empty() ? "" : ", ") + s;
      return Bad(text + ": unknown symbol '" + name +
                 "'; symbols: " + (list.empty() ? "none" : list));
    }
    const sym::Interval range = ctx.SymbolRange(*ctx.FindSymbol(name));
    if (!range.Contains(value)) {
      auto end = [](int64_t v) {
        return v == sym::kNegInf   ? std::string("-inf")
               : v == sym::kPosInf ? std::string("inf")
                                   : std::to_string(v);
      };
      return Bad(text + ": value out of the range of " + name + ", [" +
                 end(range.lo) + ", " + end(range.hi) + "]");
    }
    (*bindings)[name] = value;
  }
  return Status::Ok();
}

}  // namespace torchcost::step
