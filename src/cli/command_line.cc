#include "cli/command_line.h"

#include <CLI/CLI.hpp>
#include <string>

namespace torchcost::cli {

std::optional<Outcome> ParseCommandLine(int argc, char** argv,
                                        CommandLine& out) {
  CLI::App app{
      "Predicts a PyTorch model's parameters, MACs and FLOPs from its graph, "
      "without running it.",
      "torchcost"};
  app.set_version_flag("--version", "torchcost 0.1.0");
  // `torchcost compare MODEL.pt CONFIG...`: the same options, a row per
  // configuration.
  std::vector<char*> args(argv, argv + argc);
  out.compare = argc >= 2 && std::string(argv[1]) == "compare";
  if (out.compare) {
    args.erase(args.begin() + 1);
    app.name("torchcost compare");
    app.description(
        "Compares training configurations of one model: a row per CONFIG "
        "(full, lora[:r=8,alpha=16,"
        "dropout=0.05,targets=REGEX], dora[:...], qlora[:r=16,...], "
        "galore[:r=128,...]) with trainable "
        "params, memory by category at the peak, peak and FLOPs; with --mode "
        "generate, serving "
        "configurations (full, int8, int4, nf4, "
        "fp8[:cache=fp8|bf16|fp16|fp32]) with the KV cache and "
        "each phase's peak");
    app.add_option("ARGS", out.compare_args,
                   "MODEL.pt (unless --model), then the configurations")
        ->type_name("[MODEL.pt] CONFIG...");
    app.add_option("--budget", out.budget,
                   "Memory budget per device (24GiB, 80GB): marks what fits "
                   "and, with the batch symbol "
                   "unbound, the largest batch that fits")
        ->type_name("SIZE");
    app.add_option(
           "--chart", out.chart_svg,
           "Write a bar chart of the peaks, stacked by category, as SVG")
        ->type_name("FILE.svg");
    app.add_option("--batch-symbol", out.batch_symbol,
                   "The batch symbol searched against --budget (--mode "
                   "generate: B, S or T; with B set, "
                   "the one of S, T left unset)")
        ->capture_default_str()
        ->type_name("SYM");
  } else {
    // NB: the positional is optional so that --model can stand in for it; the
    // driver requires one of the two.
    app.add_option("MODEL", out.model,
                   "TorchScript model file (torch.jit.save) or JSON graph; "
                   "omit with --model")
        ->type_name("MODEL.pt");
    app.add_option("--peft", out.peft,
                   "Fine-tuning method: lora[:r=8,...], dora[:...], "
                   "qlora[:r=16,...], galore[:r=128,...] "
                   "(as torchcost compare's rows)")
        ->type_name("METHOD[:K=V,...]");
  }
  app.add_option(
         "--model", out.builder_model,
         "Build the graph of a family (gpt2, llama, gpt_neox, bert, "
         "t5, vit, resnet), a preset (gpt2, gpt2-medium, "
         "gpt2-large, gpt2-xl, llama-7b-like, llama-13b-like, "
         "vit-b-16, resnet50) or a Hugging Face "
         "config.json (model_type bert, gemma, gemma2, gemma3_text, gpt2, "
         "gpt_neox, granite, "
         "llama, mistral, mixtral, olmo2, phi3, qwen2, "
         "qwen2_moe, qwen3, qwen3_moe, t5) instead of "
         "reading a file; inputs default to symbolic [B, S] tokens or "
         "[B, 3, H, W] images")
      ->type_name("NAME");
  app.add_option("--config", out.builder_config,
                 "Config of --model, overriding the preset: "
                 "layers=32,hidden=4096,heads=32,kv_heads=8,...; "
                 "on a config.json, its own keys (num_hidden_layers=2) and "
                 "dtype, attn, tp, sp; mixture of experts: "
                 "capacity_factor, pad_to_capacity, ep (docs/hf-config.md)")
      ->type_name("KEY=VAL,...");
  // NB: one value per occurrence, so "--input B,3,32,32 model.pt" leaves the
  // model positional.
  app.add_option(
         "--input", out.inputs,
         "Shape of one model input, in order: ints or symbols, optional :dtype "
         "(B,3,224,224 or B,3,224,224:float16). Default: MODEL's .meta.json "
         "sidecar")
      ->type_name("SHAPE")
      ->allow_extra_args(false);
  app.add_option("--dtype", out.dtype, "Default dtype of inputs")
      ->capture_default_str()
      ->type_name("DTYPE");
  app.add_option("--depth", out.depth, "Module tree depth; -1 shows all")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--top", out.top_k, "Module types listed by the top-k lines")
      ->capture_default_str()
      ->type_name("K");
  app.add_option("--top-depth", out.top_depth,
                 "Depth of the top-k lines; -1 = the deepest")
      ->capture_default_str()
      ->type_name("D");
  app.add_flag("--json", out.json,
               "Print the JSON report (docs/json-schema.md)");
  app.add_option("--set", out.sets, "Value of a symbol, e.g. --set B=8")
      ->type_name("SYM=VAL")
      ->allow_extra_args(false);
  app.add_option("--rules", out.rules_dir,
                 "Directory of extra *.yaml rules (override builtins)")
      ->type_name("DIR");
  app.add_flag("--strict", out.strict, "Fail (exit 1) if an op has no rule");
  app.add_option("--mode", out.mode,
                 "Step modelled: train (forward, backward, optimizer), infer "
                 "(forward under no_grad) or "
                 "generate (prefill and decode with a KV cache; --model, "
                 "symbols B, S, T)")
      ->capture_default_str()
      ->type_name("MODE");
  app.add_option("--optimizer", out.optimizer,
                 "sgd, sgd_momentum, sgd_nesterov, adam, adamw, adagrad, "
                 "rmsprop, lion, adafactor, "
                 "adafactor_beta1 or adam8bit")
      ->capture_default_str()
      ->type_name("OPT");
  app.add_option("--freeze", out.freeze,
                 "Regular expression on parameter names; matches need no "
                 "gradient (repeatable)")
      ->type_name("REGEX")
      ->allow_extra_args(false);
  app.add_option("--device", out.device,
                 "Whose kernels to model where CPU and CUDA differ (dropout "
                 "masks, ...): cuda or cpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->type_name("DEVICE");
  app.add_option("--param-dtype", out.param_dtype,
                 "Dtype of floating-point parameters and buffers (as "
                 "model.to(DTYPE)); activations follow. "
                 "Give --dtype for floating inputs too")
      ->type_name("DTYPE");
  app.add_option("--autocast", out.autocast,
                 "Mixed precision: the forward under torch.autocast with this "
                 "dtype, fp32 master weights "
                 "(fp16 adds a GradScaler; CPU runs bf16 only)")
      ->check(CLI::IsMember({"fp16", "bf16"}))
      ->type_name("fp16|bf16");
  app.add_option("--sweep", out.sweeps,
                 "Evaluate one analysis over values of a symbol: S=512:8192:x2 "
                 "(xK multiplies, +K adds) or "
                 "B=1,2,4; repeatable (a grid). Prints a table of FLOPs and "
                 "peak memory (or JSON)")
      ->type_name("SYM=RANGE")
      ->allow_extra_args(false);
  app.add_option("--arch-symbol", out.arch_symbols,
                 "A symbol --config's values may use, with its sample range: "
                 "H=64:8192:64 (LO:HI[:STEP]); "
                 "prints the totals as closed forms in it, B and S (--set "
                 "H=... evaluates them); repeatable")
      ->type_name("SYM=LO:HI[:STEP]")
      ->allow_extra_args(false);
  if (!out.compare) {
    app.add_option("--budget", out.budget,
                   "Device memory per rank (24GiB, 80GB): says whether the "
                   "step (or the whole generation) fits and the largest B "
                   "that does; a sweep marks each point")
        ->type_name("SIZE");
    app.add_option("--batch-symbol", out.budget_symbol,
                   "The symbol whose largest value fitting --budget is "
                   "searched (default B; S: the longest sequence; --mode "
                   "generate: B, S or T)")
        ->type_name("SYM");
  }
  app.add_option("--cache-dtype", out.cache_dtype,
                 "KV cache dtype for --mode generate: fp32, bf16, fp16 or fp8")
      ->type_name("DTYPE");
  app.add_option("--weight-quant", out.weight_quant,
                 "Weight-only quantization for --mode generate: int8 "
                 "(bitsandbytes LLM.int8), int4 (AWQ, group 128), "
                 "nf4 (QLoRA's), fp8 (row-wise scales)")
      ->type_name("FORMAT");
  app.add_option("--torch-version", out.torch_version,
                 "PyTorch whose autograd formulas and optimizer steps are "
                 "modelled where versions differ: 1.13 or 2 (any 2.x)")
      ->capture_default_str()
      ->check(CLI::IsMember({"1.13", "2"}))
      ->type_name("VERSION");
  app.add_option("--attention-backend", out.attention_backend,
                 "Kernel modelled for scaled_dot_product_attention: auto (math "
                 "on CPU, flash on CUDA), "
                 "math, flash or efficient")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "math", "flash", "efficient"}))
      ->type_name("BACKEND");
  app.add_option(
         "--loss", out.loss,
         "The loss backpropagated from the first output: sum (default for "
         "model files), cross_entropy "
         "(int64 class targets; image classifiers' default), mse, lm "
         "(unshifted: BERT's MLM, T5), causal_lm[:shift=labels,upcast=false,"
         "chunks=N] (language models' default), none (the first output is the "
         "loss)")
      ->type_name("LOSS");
  app.add_option("--accumulate", out.accumulate,
                 "Gradient accumulation: micro-batches per optimizer step "
                 "(--input gives one micro-batch)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("N");
  app.add_option("--checkpoint", out.checkpoint,
                 "Activation checkpointing: calls of the modules whose path "
                 "matches REGEX (or the repeated "
                 "blocks: blocks) run under no_grad and are recomputed in "
                 "backward; selective: only the "
                 "attention cores (Q K^T to A V), as Megatron-LM's selective "
                 "recomputation")
      ->type_name("REGEX|blocks|selective");
  app.add_option("--checkpoint-group", out.checkpoint_group,
                 "Consecutive checkpointed module calls per segment "
                 "(recomputed together)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("K");
  app.add_option("--zero-grad", out.zero_grad,
                 "zero_grad(set_to_none=True) frees gradients between steps "
                 "(none); zeros keeps them")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "zeros"}))
      ->type_name("none|zeros");
  app.add_option("--lora", out.lora,
                 "LoRA adapters on the Linear modules whose name matches "
                 "targets, base frozen: "
                 "r=8,alpha=16,dropout=0.05,targets=q_proj|v_proj")
      ->type_name("SPEC");
  app.add_option("--optimizer-impl", out.optimizer_impl,
                 "The optimizer's step: auto (torch's default: foreach for "
                 "torch 2.x on CUDA, else single), single (the per-parameter "
                 "loop), foreach (_multi_tensor_*: whole-list temporaries) or "
                 "fused (fused=True, DeepSpeed's FusedAdam: in place, no "
                 "temporaries)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "single", "foreach", "fused"}))
      ->type_name("IMPL");
  app.add_option(
         "--galore", out.galore,
         "GaLore around AdamW: the Linear weights whose path matches targets "
         "get gradients projected "
         "to rank r for the optimizer: "
         "r=128,gap=200,scale=0.25,targets=attn|mlp,per_layer=false,svd=true")
      ->type_name("SPEC");
  app.add_option("--shard", out.shard,
                 "Data-parallel sharding; memory is then per rank: none, ddp, "
                 "zero1, zero2, zero3 or fsdp")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "ddp", "zero1", "zero2", "zero3", "fsdp"}))
      ->type_name("STRATEGY");
  app.add_option("--world", out.world, "Data-parallel ranks N for --shard")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("N");
  app.add_option("--ddp-bucket", out.ddp_bucket_mib,
                 "DDP's bucket_cap_mb (the first bucket is 1 MiB)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->type_name("MiB");
  app.add_flag("--ddp-bucket-view", out.ddp_bucket_view,
               "DDP with gradient_as_bucket_view=True: .grad views the buckets "
               "(no second copy)");
  app.add_option("--fsdp-unit", out.fsdp_unit,
                 "FSDP wrapping unit: blocks (the repeated block list) or a "
                 "regex on module paths")
      ->capture_default_str()
      ->type_name("REGEX|blocks");
  app.add_option("--fsdp-sharding", out.fsdp_sharding,
                 "FSDP's sharding_strategy: full_shard (reshard after "
                 "forward), shard_grad_op (keep a unit gathered from its "
                 "forward to its backward), hybrid_shard and "
                 "hybrid_shard_zero2 (shard within --shard-group ranks, "
                 "replicate across groups)")
      ->capture_default_str()
      ->type_name("STRATEGY");
  app.add_option("--shard-group", out.shard_group,
                 "FSDP's hybrid strategies: ranks per shard group (a node), "
                 "dividing --world")
      ->type_name("N");
  app.add_flag(
      "--no-prefetch", out.no_prefetch,
      "FSDP: no backward prefetch of the next unit's parameters; ZeRO-3: "
      "no prefetch (as --zero3-prefetch-bucket 0)");
  app.add_option("--deepspeed", out.deepspeed,
                 "A DeepSpeed JSON config (a file, or the JSON text): its ZeRO "
                 "stage, offload, buckets, bf16/fp16 and optimizer apply "
                 "(flags that contradict it are errors)")
      ->type_name("FILE|JSON");
  app.add_option("--reduce-bucket", out.reduce_bucket,
                 "DeepSpeed's reduce_bucket_size for --shard zero1|zero2|zero3 "
                 "(the flat bucket buffer's elements)")
      ->capture_default_str()
      ->type_name("ELEMENTS");
  // DeepSpeed ZeRO-3's fetch schedule (its stage3_* keys), in elements.
  struct Zero3Option {
    const char* flag;
    double* value;
    const char* key_and_meaning;
  };
  for (const Zero3Option& o : {
           Zero3Option{"--zero3-prefetch-bucket", &out.zero3_prefetch_bucket,
                       "stage3_prefetch_bucket_size: parameters gathered "
                       "ahead at each module (0: none)"},
           Zero3Option{"--zero3-max-live", &out.zero3_max_live,
                       "stage3_max_live_parameters: no prefetch beyond this "
                       "many gathered"},
           Zero3Option{"--zero3-max-reuse", &out.zero3_max_reuse,
                       "stage3_max_reuse_distance: parameters used again "
                       "this soon stay gathered"},
           Zero3Option{"--zero3-persistence", &out.zero3_persistence,
                       "stage3_param_persistence_threshold: parameters this "
                       "small are never released"},
       }) {
    app.add_option(
           o.flag, *o.value,
           std::string("DeepSpeed's ") + o.key_and_meaning + " (--shard zero3)")
        ->capture_default_str()
        ->type_name("ELEMENTS");
  }
  app.add_flag("--overlap-comm", out.overlap_comm,
               "DeepSpeed's overlap_comm: two bucket buffers at zero1|zero2");
  app.add_flag("--no-contiguous-gradients", out.no_contiguous_gradients,
               "DeepSpeed's contiguous_gradients=false: no flat bucket and "
               "partition buffers (the ZeRO paper's accounting)");
  app.add_option("--offload", out.offload,
                 "ZeRO-Offload with --shard zero2|zero3: optimizer states, "
                 "float32 masters and the gradient shard on the host, the "
                 "step run there (optimizer); with --shard zero3|fsdp the "
                 "parameter shards too (params: FSDP's CPUOffload); none")
      ->type_name("none|optimizer|params");
  app.add_flag("--master-weights", out.master_weights,
               "float32 master weights and optimizer states for "
               "float16/bfloat16 parameters (mixed-precision "
               "Adam: 12 bytes per parameter of OPT)");
  app.add_flag("--paged", out.paged,
               "bitsandbytes' paged optimizer (adam, adamw: PagedAdam(W), "
               "32-bit fused; adam8bit): states of "
               "tensors >= 1e5 elements on the host (unified memory), reported "
               "apart from the device peak");
  app.add_option("--state-dtype", out.state_dtype,
                 "dtype of the optimizer's states and update temporaries, "
                 "independent of the parameters "
                 "(bf16 weights with --state-dtype fp32: 2 + 2 + 8 bytes per "
                 "parameter with Adam)")
      ->type_name("DTYPE");
  app.add_option("--allocator", out.allocator,
                 "none: peaks of exact tensor bytes; cuda: the step's "
                 "allocations replayed through PyTorch's CUDA "
                 "caching allocator (peak = allocated blocks, plus the "
                 "reserved peak, fragmentation and the CUDA "
                 "context; docs/allocator.md)")
      ->capture_default_str()
      ->type_name("none|cuda");
  app.add_option("--max-split-size-mb", out.max_split_size_mb,
                 "--allocator cuda: PYTORCH_CUDA_ALLOC_CONF max_split_size_mb "
                 "(blocks this large are not split); "
                 "0: none")
      ->type_name("MiB");
  app.add_flag("--expandable-segments", out.expandable_segments,
               "--allocator cuda: PYTORCH_CUDA_ALLOC_CONF "
               "expandable_segments:True (segments grow in 2/20 MiB pages)");
  app.add_option("--cuda-context", out.cuda_context,
                 "--allocator cuda: device memory outside the allocator (CUDA "
                 "context, cuBLAS/cuDNN), added to the "
                 "reserved peak (default 400MiB, an assumption: measure it and "
                 "give it here)")
      ->type_name("SIZE");
  app.add_flag("--inputs-require-grad", out.inputs_require_grad,
               "The model's floating-point inputs require gradients too");
  app.add_option("--gpu", out.gpu,
                 "Predict the step's time on this GPU (A100-40GB-SXM, "
                 "A100-80GB-SXM, H100-SXM, H100-PCIe, H200, L4, "
                 "L40S, RTX-3090, RTX-4090, V100-SXM2, MI250X, MI300X): "
                 "roofline per node, module and operator, "
                 "MFU, tokens or samples per second; every symbol needs --set")
      ->type_name("NAME");
  app.add_option("--gpu-file", out.gpu_file,
                 "Predict the step's time from a calibration file (python3 -m "
                 "torchcost.calibrate --fit): its "
                 "device's peaks and fitted efficiencies per op class "
                 "(docs/calibration.md)")
      ->type_name("FILE.json");
  app.add_option("--network", out.network_gbs,
                 "With --gpu and --shard over more ranks than --node-gpus: the "
                 "network between nodes, per GPU and direction, in GB/s (400 "
                 "Gb/s InfiniBand: 50); the collectives' time then counts it")
      ->type_name("GBPS");
  app.add_option("--node-gpus", out.node_gpus,
                 "GPUs per node, whose collectives run at the GPU's link "
                 "(NVLink, PCIe)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("N");
  app.add_option("--timeline", out.timeline_svg,
                 "Write the memory timeline, stacked by category, as SVG")
      ->type_name("FILE.svg");
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::Success& e) {  // --help or --version.
    app.exit(e);
    return Outcome::Ok();
  } catch (const CLI::ParseError& e) {
    return Outcome::Usage(std::string(e.what()) + " (see torchcost --help)");
  }
  return std::nullopt;
}

}  // namespace torchcost::cli
