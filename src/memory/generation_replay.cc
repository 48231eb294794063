// EvaluateGenerationAllocator: a generation's prefill and each of its decode
// steps replayed through one caching allocator model, the KV cache's blocks
// handed from step to step.
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "memory/caching_allocator.h"
#include "torchcost/generation_allocator.h"

namespace torchcost {
namespace {

// One phase's allocations, each classified once for every step that replays
// it: what its id stands for, and its bytes where they are constant.
class PhaseEvents {
 public:
  enum class Kind {
    kFree,        // Frees `id`.
    kPersistent,  // A parameter or model buffer: held all generation.
    kCacheInput,  // The cache handed in, at `cache_input` among them.
    kAlloc,       // Anything else the step allocates.
  };
  struct Event {
    Kind kind = Kind::kAlloc;
    int id = -1;
    int cache_input = -1;
    const sym::Expr* bytes = nullptr;
    std::optional<int64_t> constant;  // The bytes, if they need no binding.
  };

  explicit PhaseEvents(const TrainingReport& r)
      : cache_outputs_(r.cache_output_storages) {
    std::unordered_map<int, int> cache_in;
    for (size_t i = 0; i < r.cache_input_storages.size(); ++i)
      cache_in[r.cache_input_storages[i]] = static_cast<int>(i);
    const std::unordered_set<int> cache_out(cache_outputs_.begin(),
                                            cache_outputs_.end());
    events_.reserve(r.allocations.size());
    for (const AllocationEvent& e : r.allocations) {
      Event ev;
      ev.id = e.id;
      auto in = cache_in.find(e.id);
      if (!e.alloc) {
        ev.kind = Kind::kFree;
      } else if (in != cache_in.end()) {
        ev.kind = Kind::kCacheInput;
        ev.cache_input = in->second;
      } else if (!cache_out.count(e.id) &&
                 (e.category == MemCategory::kParam ||
                  e.category == MemCategory::kBuffer)) {
        ev.kind = Kind::kPersistent;
      }
      ev.bytes = &e.bytes;
      ev.constant = e.bytes.AsConstant();
      events_.push_back(ev);
    }
  }

  const std::vector<Event>& events() const { return events_; }
  const std::vector<int>& cache_outputs() const { return cache_outputs_; }

 private:
  std::vector<Event> events_;
  std::vector<int> cache_outputs_;
};

// The replay's state across steps.
class Replay {
 public:
  Replay(const CudaAllocatorOptions& options, int64_t memory_limit)
      : allocator_(options) {
    allocator_.set_memory_limit(memory_limit);
    out_.memory_limit = memory_limit;
    out_.context_bytes = options.context_bytes;
  }

  // Replays one step (`step`: 0 the prefill, j decode step j) under
  // `bindings`; the cache inputs are served by the blocks the last step
  // handed out, and the persistent tensors were allocated by the prefill.
  // Returns false on an error or out of memory (set in result()).
  bool Step(const PhaseEvents& phase, int64_t step,
            const sym::Bindings& bindings) {
    using Kind = PhaseEvents::Kind;
    const bool prefill = step == 0;
    live_.clear();
    for (const PhaseEvents::Event& e : phase.events()) {
      if (e.kind == Kind::kFree) {
        auto it = live_.find(e.id);
        if (it == live_.end()) continue;
        allocator_.Free(it->second);
        live_.erase(it);
        continue;
      }
      const bool persistent = e.kind == Kind::kPersistent;
      if (!prefill && persistent) continue;
      if (e.kind == Kind::kCacheInput) {
        if (e.cache_input < static_cast<int>(cache_.size()))
          live_[e.id] = cache_[e.cache_input];
        continue;
      }
      int64_t bytes = 0;
      if (e.constant) {
        bytes = *e.constant;
      } else {
        Result<int64_t> v = sym::Evaluate(*e.bytes, bindings);
        if (!v.ok()) {
          out_.error =
              "the CUDA allocator model over the generation needs B, S and "
              "T bound: " +
              v.status().message();
          return false;
        }
        bytes = *v;
      }
      // NB: PyTorch allocates nothing for an empty tensor.
      if (bytes <= 0) continue;
      const int block = allocator_.Malloc(bytes);
      if (block < 0) {
        out_.out_of_memory_step = step;
        out_.out_of_memory_in_weights = persistent;
        return false;
      }
      if (!persistent) live_[e.id] = block;
      Observe(step);
    }
    // Hand the cache on; free what else the step left (its inputs, logits).
    cache_.clear();
    for (int id : phase.cache_outputs()) {
      auto it = live_.find(id);
      if (it == live_.end()) continue;
      cache_.push_back(it->second);
      live_.erase(it);
    }
    for (const auto& [id, block] : live_) allocator_.Free(block);
    return true;
  }

  const GenerationAllocatorPeak& result() const { return out_; }

  GenerationAllocatorPeak Finish() {
    out_.releases = allocator_.releases();
    out_.device_peak = out_.reserved_peak + out_.context_bytes;
    return out_;
  }

 private:
  void Observe(int64_t step) {
    if (allocator_.allocated() > out_.allocated_peak) {
      out_.allocated_peak = allocator_.allocated();
      out_.allocated_peak_step = step;
    }
    if (allocator_.reserved() > out_.reserved_peak) {
      out_.reserved_peak = allocator_.reserved();
      out_.reserved_peak_step = step;
    }
  }

  memory::CachingAllocator allocator_;
  GenerationAllocatorPeak out_;
  // This step's allocations alive: event id -> block.
  std::unordered_map<int, int> live_;
  // The cache's blocks, in the graph's cache output order.
  std::vector<int> cache_;
};

}  // namespace

GenerationAllocatorPeak EvaluateGenerationAllocator(
    const TrainingReport& prefill, const TrainingReport& decode,
    const sym::Bindings& bindings, int64_t memory_limit) {
  GenerationAllocatorPeak error;
  if (!prefill.cuda_allocator || !decode.cuda_allocator) {
    error.error =
        "the CUDA allocator model was not asked for (StepConfig.allocator "
        "cuda)";
    return error;
  }
  auto t = bindings.find("T");
  if (t == bindings.end()) {
    error.error =
        "the CUDA allocator model over the generation needs T bound (the new "
        "tokens)";
    return error;
  }
  const int64_t events =
      static_cast<int64_t>(decode.allocations.size()) * (t->second - 1);
  if (events > kMaxGenerationReplayEvents) {
    error.error = "not replayed: T - 1 = " + std::to_string(t->second - 1) +
                  " decode steps of " +
                  std::to_string(decode.allocations.size()) +
                  " allocations each are more than the replay's " +
                  std::to_string(kMaxGenerationReplayEvents) + " (about 10 s)";
    return error;
  }
  Replay replay(*prefill.cuda_allocator, memory_limit);
  const PhaseEvents first(prefill), step(decode);
  bool ok = replay.Step(first, 0, bindings);
  sym::Bindings at = bindings;
  // Decode step j = 1..T-1 is the decode phase at T := j + 1.
  for (int64_t j = 1; ok && j < t->second; ++j) {
    at["T"] = j + 1;
    ok = replay.Step(step, j, at);
  }
  if (!replay.result().error.empty()) {
    error.error = replay.result().error;
    return error;
  }
  return replay.Finish();
}

}  // namespace torchcost
