// The training step being modelled (optimizer, frozen parameters, mode) and
// what its analysis finds: backward FLOPs, saved activations, and the memory
// of the step over time, split into categories.
#ifndef TORCHCOST_TRAINING_H_
#define TORCHCOST_TRAINING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "torchcost/cuda_allocator.h"
#include "torchcost/dtype.h"
#include "torchcost/galore.h"
#include "torchcost/sharding.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// Whether a training step or an inference forward is modelled.
enum class StepMode { kTrain, kInfer };

// The optimizer whose step and state are modelled.
// Adafactor and 8-bit Adam have no torch 1.13 implementation: modelled on
// transformers' Adafactor and bitsandbytes' Adam8bit
// (src/training/optimizer_model.cc).
enum class OptimizerKind {
  kSgd,
  kSgdMomentum,
  kAdam,
  kAdamW,
  kAdagrad,
  kRmsprop,
  kLion,
  kAdafactor,
  kAdam8bit,
  kSgdNesterov,
  kAdafactorBeta1  // Adafactor(beta1=...): the first moment kept.
};

// Parses "train" / "infer".
Result<StepMode> ParseStepMode(std::string_view text);
// Parses "sgd", "sgd_momentum", "sgd_nesterov", "adam", "adamw", "adagrad",
// "rmsprop", "lion", "adafactor", "adafactor_beta1", "adam8bit".
Result<OptimizerKind> ParseOptimizer(std::string_view text);
// Returns the name ParseOptimizer reads.
std::string_view OptimizerName(OptimizerKind kind);
// Returns whether torch has a foreach (_multi_tensor_*) step for `kind`.
bool HasForeach(OptimizerKind kind);
// Returns whether torch 2.x has a fused step (fused=True) for `kind`: Adam,
// AdamW, SGD with or without momentum, Adagrad.
bool HasFused(OptimizerKind kind);

// The loss a training step backpropagates (torchcost/loss.h parses it and
// appends its ops to the graph).
struct LossSpec {
  enum class Kind {
    kSum,   // out.sum() on the model's first output (no ops appended).
    kNone,  // The model's first output is the loss (0-dim).
    // F.cross_entropy(out, target): int64 class indices [N, *D].
    kCrossEntropy,
    kMse,  // F.mse_loss(out, target): a float target of out's shape.
    // Hugging Face's causal-LM loss on logits [B, S, V] and labels [B, S].
    kCausalLm,
    // Unshifted token cross-entropy on logits [B, S, V] and labels [B, S]
    // (BERT's MLM, T5).
    kLm,
    // Megatron-core's vocab_parallel_cross_entropy on one tensor-parallel
    // rank's slice of the logits [*B, V / world] and pre-shifted labels
    // [*B], averaged over the tokens.
    kVocabParallel,
  };
  Kind kind = Kind::kSum;
  // kCausalLm: upcast the logits to float32 first (`logits.float()`).
  bool upcast = true;
  // kCausalLm: pad and shift the labels (transformers' ForCausalLMLoss)
  // instead of copying the shifted logits (LlamaForCausalLM before it).
  bool shift_labels = false;
  // kCausalLm: > 1 models torchtune's CEWithChunkedOutputLoss over this many
  // chunks of the sequence (the full float32 logits never exist).
  int chunks = 1;
  // kVocabParallel: the tensor-parallel ranks sharing the vocabulary.
  int world = 1;
  std::string text = "sum";  // As given ("causal_lm:chunks=8").
};

// The step being modelled.
struct TrainingOptions {
  StepMode mode = StepMode::kTrain;
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  // ECMAScript regular expressions; a parameter whose name (or an alias)
  // matches any of them is frozen: it needs no gradient and gets no optimizer
  // state.
  std::vector<std::string> freeze;
  // If true, the model's floating-point inputs require gradients too.
  bool inputs_require_grad = false;
  // zero_grad(set_to_none=...): if false, gradients stay allocated between
  // steps and backward adds into them in place.
  bool set_to_none = true;
  // Micro-batches per optimizer step (gradient accumulation); the inputs'
  // shapes are one micro-batch's.
  int accumulate = 1;
  // torch.cuda.amp.GradScaler, as float16 autocast training uses it: its
  // state (OPT), the scaled loss and the in-place unscale of the gradients.
  bool grad_scaler = false;
  // Activation checkpointing (torch.utils.checkpoint, reentrant): an ECMAScript
  // regular expression on module paths whose calls run under no_grad and are
  // recomputed in backward, or "blocks" for the model's repeated blocks, or
  // "selective" for the attention cores only (Megatron's selective
  // recomputation: Q K^T to A V, src/passes/attention_core.h); empty: none.
  std::string checkpoint;
  // Consecutive matched module calls per checkpoint segment (k layers at a
  // time).
  int checkpoint_group = 1;
  // Mixed-precision optimizer: float32 master weights (4 bytes per element,
  // OPT) for float16/bfloat16 trainable parameters, with states and the
  // update in float32, as apex/DeepSpeed's mixed-precision Adam.
  bool master_weights = false;
  // The dtype of the optimizer's param-sized states and of its update's
  // temporaries, independent of the parameters' (kUnknown: torch's
  // zeros_like(p), the parameter's dtype; with master_weights, float32).
  // E.g. float32 Adam moments for bfloat16 weights without a master copy.
  DType state_dtype = DType::kUnknown;
  // bitsandbytes' paged optimizer (PagedAdam, PagedAdamW: its fused 32-bit
  // step, float32 states; PagedAdam8bit): the states of tensors of at least
  // 1e5 elements live in CUDA unified memory, modelled as resident on the host
  // (the worst case for the device: none of it counts toward the peak).
  bool paged = false;
  // Data-parallel sharding: per-rank memory (include/torchcost/sharding.h).
  ShardingOptions sharding;
  // GaLore around the optimizer (AdamW only: the reference's GaLoreAdamW), if
  // set.
  std::optional<GaloreConfig> galore;
  // The PyTorch whose autograd formulas and optimizer steps are modelled where
  // versions differ (rules test torch_version()): "2" (default: any 2.x,
  // checked on an H200 with 2.11) or "1.13" (Debian 12's, which the oracle
  // tests run). NB: 2.x's mean.dim saves no tensor; its Adam updates exp_avg
  // with one lerp_, and its foreach Adam keeps one list of temporaries, not
  // two.
  std::string torch_version = "2";
  // The optimizer's foreach step (torch's _multi_tensor_*: whole-list
  // temporaries, docs/optimizers.md) instead of the single-tensor loop.
  bool foreach = false;
  // The optimizer's fused step (torch 2.x fused=True: _fused_adamw_ and the
  // like; DeepSpeed's FusedAdam): in-place multi-tensor kernels, no
  // temporaries.
  bool fused = false;
  // The loss. NB: anything but kSum and kNone needs the graph rewritten by
  // ApplyLoss (torchcost/loss.h) first, which appends the loss's ops and its
  // targets as model inputs; the step then backpropagates from the graph's
  // first output (a 0-dim loss) and keeps the second (the model's output).
  LossSpec loss;
  // Generation (StepConfig::cache_inputs_from, cache_outputs_from): the KV
  // cache's inputs, freed after their last use, and outputs; -1: none.
  // NB: the cache's storages count as BUFFER in the simulation (a tensor the
  // caller holds across steps, as a registered buffer is); the generation
  // report separates them from the model's buffers.
  int cache_inputs_from = -1;
  int cache_outputs_from = -1;
  // If set, the step's allocations are recorded and replayed through the CUDA
  // caching allocator model (EvaluateAllocator, docs/allocator.md).
  std::optional<CudaAllocatorOptions> cuda_allocator;
};

// Returns an error if the optimizer settings of `options` do not go together
// (a state dtype for an optimizer whose states have their own format, ...).
Status CheckOptimizerSettings(const TrainingOptions& options);

// Memory categories, as in PyTorch's MemTracker.
enum class MemCategory : int {
  kParam = 0,
  kBuffer,
  kGrad,
  kAct,
  kTemp,
  kOpt,
  kOther
};
inline constexpr int kNumMemCategories = 7;
// Returns "param", "buffer", "grad", "act", "temp", "opt", "oth".
std::string_view MemCategoryName(MemCategory c);

// Bytes per category.
using CategoryBytes = std::array<sym::Expr, kNumMemCategories>;

// The phase of a training step an event belongs to.
enum class StepPhase { kSetup, kForward, kBackward, kOptimizer };
// Returns "setup", "forward", "backward", "optimizer".
std::string_view StepPhaseName(StepPhase p);

// One point of the memory timeline: the live bytes per category after an event.
struct TimelinePoint {
  StepPhase phase = StepPhase::kSetup;
  // The graph node running, or -1 (loss, optimizer, setup).
  int node = -1;
  CategoryBytes live;  // Live bytes per category after the event.
  sym::Expr total;     // Their sum.
};

// The memory timeline: its points in order, stored compactly (a category's
// bytes only where they change).
// NB: a point is rebuilt on access, so operator[], front(), back() and the
// iterators give a TimelinePoint by value, as live() and total() give one
// field. A 1M-node step has about 3M points: about 25 bytes each here (bytes
// that are constants held in 8 bytes, not 16) instead of the 136 of a
// TimelinePoint.
class TimelinePoints {
 public:
  // Iterates over the points, each rebuilt as it is reached.
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = TimelinePoint;
    using difference_type = std::ptrdiff_t;
    using pointer = const TimelinePoint*;
    using reference = TimelinePoint;

    const_iterator() = default;
    // Returns the point at the iterator.
    TimelinePoint operator*() const { return (*points_)[i_]; }
    // Moves to the next point.
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    // Moves to the next point and returns the iterator as it was.
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    // Returns true if both are at the same point of the same timeline.
    bool operator==(const const_iterator& o) const {
      return points_ == o.points_ && i_ == o.i_;
    }
    bool operator!=(const const_iterator& o) const { return !(*this == o); }

   private:
    friend class TimelinePoints;
    const_iterator(const TimelinePoints* points, size_t i)
        : points_(points), i_(i) {}
    const TimelinePoints* points_ = nullptr;
    size_t i_ = 0;
  };

  TimelinePoints() = default;
  // Holds `points` in order.
  TimelinePoints(std::initializer_list<TimelinePoint>
                     points);  // NOLINT: implicit, as a vector's.

  // Returns the number of points.
  size_t size() const { return nodes_.size(); }
  // Returns true if there are no points.
  bool empty() const { return nodes_.empty(); }
  // Returns point `i` (i < size()).
  TimelinePoint operator[](size_t i) const;
  // Returns the first point (not empty()).
  TimelinePoint front() const { return (*this)[0]; }
  // Returns the last point (not empty()).
  TimelinePoint back() const { return (*this)[size() - 1]; }
  // Returns point `i`'s phase.
  StepPhase phase(size_t i) const { return static_cast<StepPhase>(phases_[i]); }
  // Returns point `i`'s node.
  int node(size_t i) const { return nodes_[i]; }
  // Returns point `i`'s live bytes of category `c`.
  sym::Expr live(size_t i, int c) const;
  // Returns point `i`'s total.
  sym::Expr total(size_t i) const { return totals_.at(i); }
  // Returns true if the last point has these live bytes and total (false if
  // empty()).
  bool BackEquals(const CategoryBytes& live, const sym::Expr& total) const;
  // Returns true if every point's total is a constant.
  bool TotalsConstant() const { return totals_.AllConstant(); }
  // Returns the number of runs of category `c`: the stretches of points over
  // which its live bytes stay the same (0 if empty()).
  size_t NumRuns(int c) const { return values_[c].size(); }
  // Returns the live bytes of category `c` over its run `k` (k < NumRuns(c));
  // each run's differs from the run before.
  sym::Expr RunValue(int c, size_t k) const { return values_[c].at(k); }
  // Returns true if category `c`'s live bytes are a constant at every point.
  bool RunsConstant(int c) const { return values_[c].AllConstant(); }

  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

  // Appends `p`.
  void push_back(const TimelinePoint& p);
  // Makes room for `n` points.
  void reserve(size_t n);
  // Removes every point.
  void clear();

  // Returns true if both hold the same points.
  bool operator==(const TimelinePoints& o) const;
  bool operator!=(const TimelinePoints& o) const { return !(*this == o); }

 private:
  // NB: points are grouped in blocks of 32; a category's value at point i is
  // values_[c][base[c] + (changes of c in the block up to i) - 1], the changes
  // being the bits of `changed[c]`.
  static constexpr int kBlock = 32;
  struct Block {
    // values_[c].size() when the block began.
    std::array<uint32_t, kNumMemCategories> base{};
    // Bit j: point j of the block changed category c.
    std::array<uint32_t, kNumMemCategories> changed{};
  };
  // A list of byte counts: a constant in 8 bytes (nearly all are), a
  // symbolic one as an index into a list of its own.
  class Exprs {
   public:
    size_t size() const { return slots_.size(); }
    sym::Expr at(size_t k) const {
      return symbolic_at_[k] ? symbolic_[slots_[k]] : sym::Expr(slots_[k]);
    }
    sym::Expr back() const { return at(size() - 1); }
    bool AllConstant() const { return symbolic_.empty(); }
    void push_back(const sym::Expr& e);
    void reserve(size_t n);
    void clear();
    bool operator==(const Exprs& o) const {
      return slots_ == o.slots_ && symbolic_at_ == o.symbolic_at_ &&
             symbolic_ == o.symbolic_;
    }
    bool operator!=(const Exprs& o) const { return !(*this == o); }

   private:
    // The constant, or the index into symbolic_.
    std::vector<int64_t> slots_;
    std::vector<bool> symbolic_at_;  // True where slots_ holds an index.
    std::vector<sym::Expr> symbolic_;
  };
  std::vector<int> nodes_;
  std::vector<uint8_t> phases_;
  Exprs totals_;
  // Each category's values where they change.
  std::array<Exprs, kNumMemCategories> values_;
  std::vector<Block> blocks_;
  // The last point's live bytes and total (unset while empty()).
  // NB: a copy of what the runs hold, so that push_back and BackEquals compare
  // against it instead of rebuilding each value from its slot.
  CategoryBytes back_live_;
  sym::Expr back_total_;
};

// One allocation or free of the step, in the order the simulation makes them
// (recorded only with TrainingOptions::cuda_allocator).
struct AllocationEvent {
  // The allocation freed or made: a storage (>= 0) or bytes no storage stands
  // for (< 0).
  int id = -1;
  bool alloc = true;  // False: frees `id`.
  sym::Expr bytes;    // Its bytes (an allocation's).
  MemCategory category = MemCategory::kTemp;
  int point = 0;  // Timeline points recorded before it.
};

// One tensor a node keeps for its backward.
struct SavedTensorInfo {
  int node = -1;  // The node that saves it.
  // "self", "out", a temporary's name ("mask"), as the rule names it.
  std::string what;
  sym::Expr bytes;  // Bytes of the storage it lives in.
  // Storage id: tensors sharing one are views of each other.
  int storage = -1;
  // True for the first save of a storage that counts as ACT (not a param or
  // buffer).
  bool counted = false;
};

// One checkpoint segment: consecutive graph nodes whose forward runs under
// no_grad and is recomputed when backward reaches them.
struct CheckpointSegment {
  int first = -1;      // First node (index into Graph::nodes).
  int last = -1;       // Last node, inclusive.
  std::string module;  // Path of the first module call in it.
  int calls = 0;       // Module calls grouped in it.
  // False if no gradient flows through it: nothing saved, nothing recomputed.
  bool recomputed = false;
};

// What the analysis of the step found.
struct TrainingReport {
  StepMode mode = StepMode::kTrain;
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  int accumulate = 1;  // Micro-batches per step.
  bool set_to_none = true;
  // Per micro-batch (forward, backward) and per step (optimizer; step =
  // accumulate * (forward + backward) + optimizer).
  sym::Expr flops_forward, flops_backward, flops_optimizer, flops_step;
  // Bytes autograd saves in the forward (ACT at its end).
  sym::Expr saved_bytes;
  // True if a node's forward or backward cost is unknown (an op without a
  // rule): the FLOPs above are lower bounds.
  bool flops_lower_bound = false;
  // True if a node whose saved tensors are unknown runs backward (an op
  // without a rule): ACT, saved_bytes and the peak are lower bounds.
  bool act_lower_bound = false;
  std::vector<sym::Expr> node_bwd_flops;  // Parallel to Graph::nodes.
  // Bytes each node's backward reads and writes (AnalysisOptions::moved_bytes;
  // else empty): the rule's `bytes.bwd`, or per input gradient the output
  // gradients read and the input gradient written, plus the saved tensors read.
  std::vector<sym::Expr> node_bwd_bytes;
  // Bytes the optimizer step reads and writes (AnalysisOptions::moved_bytes):
  // each trainable parameter read and written, its gradient read, its states
  // read and written.
  sym::Expr optimizer_bytes;
  // Parallel to Graph::scopes (subtree totals).
  std::vector<sym::Expr> module_bwd_flops;
  // Saved bytes attributed to each module's subtree.
  std::vector<sym::Expr> module_act_bytes;
  // Every saved tensor, in forward order.
  std::vector<SavedTensorInfo> saved;
  // Parameters that get a gradient (elements).
  int64_t grad_params = 0;
  // Sharded (ZeRO, FSDP): the elements of each tensor one rank's optimizer
  // step updates (its flat shards), whose share of grad_params the optimizer's
  // FLOPs and bytes above are; empty: the step updates every trainable
  // parameter whole.
  std::vector<int64_t> rank_step_tensors;
  // "fp32", "bf16-mixed", "fp16-mixed" (autocast), "bf16", "fp16".
  std::string precision = "fp32";
  bool grad_scaler = false;  // A GradScaler is modelled.
  // The PyTorch modelled (TrainingOptions::torch_version).
  std::string torch_version = "2";
  // The optimizer's foreach step is modelled.
  bool foreach = false;
  // The optimizer's fused step is modelled.
  bool fused = false;
  // The loss modelled, in words (LossDescription).
  std::string loss = "sum";
  DType state_dtype = DType::kUnknown;  // TrainingOptions::state_dtype.
  bool paged = false;                   // TrainingOptions::paged.
  // Paged optimizer states, on the host (not in the timeline).
  int64_t paged_opt_bytes = 0;
  // Checkpointing: the pattern as given ("" if none), calls per segment, the
  // segments, and the forward FLOPs their recomputation adds to flops_backward.
  std::string checkpoint;
  int checkpoint_group = 1;
  std::vector<CheckpointSegment> checkpoint_segments;
  sym::Expr flops_recompute;
  // The timeline; the peak is evaluated from it under bindings (see
  // EvaluatePeak).
  TimelinePoints timeline;
  // Each category's largest value over the step, as candidates whose max is the
  // answer.
  std::array<std::vector<sym::Expr>, kNumMemCategories> category_max_candidates;
  // Set when sharded: the timeline above is then one rank's.
  ShardingReport sharding;
  // GaLore, if modelled: its settings, which parameters it projects (parallel
  // to Graph::params) and their elements.
  std::optional<GaloreConfig> galore;
  std::vector<bool> galore_targets;
  int64_t galore_params = 0;
  // The CUDA caching allocator model, if asked for, and the allocations it
  // replays.
  std::optional<CudaAllocatorOptions> cuda_allocator;
  std::vector<AllocationEvent> allocations;
  // Generation (TrainingOptions::cache_inputs_from, cache_outputs_from): the
  // storages (AllocationEvent::id) of the KV cache handed in and of the one
  // handed out, in the graph's input and output order.
  std::vector<int> cache_input_storages, cache_output_storages;
};

// The peak of a timeline under given bindings.
struct PeakInfo {
  // False if symbols are unbound and the moment of the peak depends on them.
  bool decided = false;
  // The peak: exact; a max(...) expression if not decided.
  sym::Expr peak;
  // Index into the timeline of the peak moment, if decided.
  int point = -1;
  CategoryBytes at_peak;  // Breakdown at the peak (sums to it), if decided.
  // Each category's own maximum (max(...) if undecided).
  CategoryBytes category_max;
  // The moments that may be the peak for some value of the unbound symbols
  // (their totals, and their indices into the timeline); one if decided.
  std::vector<sym::Expr> candidates;
  std::vector<int> candidate_points;
  // Non-empty if the bytes overflow int64 under the bindings (then nothing
  // above is set).
  std::string error;
};

// Finds the peak of `report`'s timeline, comparing totals under `bindings`
// (symbolically, with proofs, where symbols are unbound).
// NB: with category_max false, PeakInfo::category_max is left unset (a fast
// path for callers that need the peak only, such as `torchcost compare`).
PeakInfo EvaluatePeak(const TrainingReport& report,
                      const sym::Bindings& bindings, bool category_max = true);

// What the CUDA caching allocator model finds over the step: the peaks of
// torch.cuda.max_memory_allocated and max_memory_reserved, as the allocator
// would count them for the step's allocations (docs/allocator.md).
struct AllocatorPeak {
  // The largest total of allocated blocks (rounded, unsplit remainders
  // included).
  int64_t allocated_peak = 0;
  // The largest total of segments (nothing is released within the step).
  int64_t reserved_peak = 0;
  // Allocated when the reserved bytes first reach their peak.
  int64_t allocated_at_reserved_peak = 0;
  // Reserved at the moment of the allocated peak.
  int64_t reserved_at_allocated_peak = 0;
  // reserved_at_allocated_peak - allocated_peak: bytes cached in segments but
  // free when the tensors need the most. NB: not reserved_peak -
  // allocated_at_reserved_peak: a small request that opens a 2 MiB segment
  // after the peak, when the large pool's cached blocks lie free, would count
  // them all.
  int64_t fragmentation = 0;
  // CudaAllocatorOptions::context_bytes.
  int64_t context_bytes = 0;
  // reserved_peak + context_bytes: what the device must hold.
  int64_t device_peak = 0;
  // cudaMalloc calls (expandable: page mappings).
  int64_t segments = 0;
  // The timeline point of the allocated peak (its phase and node).
  int point = -1;
  // Allocated blocks per category at the peak (they sum to it).
  std::array<int64_t, kNumMemCategories> at_peak{};
  // Each category's own maximum of allocated blocks.
  std::array<int64_t, kNumMemCategories> category_max{};
  // The bytes the segments were limited to (max: unlimited), how often the
  // allocator released its cached segments to stay under the limit, and the
  // timeline point of the allocation that found no room even then (-1: none;
  // the replay stops there, out of memory, and the peaks above are those
  // reached before it).
  int64_t memory_limit = std::numeric_limits<int64_t>::max();
  int64_t releases = 0;
  int out_of_memory_point = -1;
  // Non-empty if a size is symbolic or overflows under the bindings (nothing
  // above is set).
  std::string error;
};

// Replays report.allocations through the caching allocator model under
// `bindings`, its segments limited to `memory_limit` bytes (as on a device
// with that much free memory: PyTorch releases its cached segments and
// retries before it raises out of memory); an error unless
// report.cuda_allocator is set and every size is bound.
AllocatorPeak EvaluateAllocator(
    const TrainingReport& report, const sym::Bindings& bindings,
    int64_t memory_limit = std::numeric_limits<int64_t>::max());

}  // namespace torchcost

#endif  // TORCHCOST_TRAINING_H_
