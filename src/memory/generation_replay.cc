// EvaluateGenerationAllocator: a generation's prefill and each of its decode
// steps replayed through one caching allocator model, the KV cache's blocks
// handed from step to step.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "memory/caching_allocator.h"
#include "torchcost/generation_allocator.h"

namespace torchcost {
namespace {

// One phase's allocations with what the replay needs to know of their ids.
class PhaseEvents {
 public:
  explicit PhaseEvents(const TrainingReport& r)
      : report_(r),
        cache_out_(r.cache_output_storages.begin(),
                   r.cache_output_storages.end()) {
    for (size_t i = 0; i < r.cache_input_storages.size(); ++i)
      cache_in_[r.cache_input_storages[i]] = static_cast<int>(i);
  }

  const std::vector<AllocationEvent>& events() const {
    return report_.allocations;
  }
  const std::vector<int>& cache_outputs() const {
    return report_.cache_output_storages;
  }
  // Position of `id` among the cache inputs, or -1.
  int CacheInput(int id) const {
    auto it = cache_in_.find(id);
    return it == cache_in_.end() ? -1 : it->second;
  }
  bool IsCacheOutput(int id) const { return cache_out_.count(id) > 0; }
  // Held across the whole generation: a parameter or a model buffer.
  bool Persistent(const AllocationEvent& e) const {
    return (e.category == MemCategory::kParam ||
            e.category == MemCategory::kBuffer) &&
           CacheInput(e.id) < 0 && !IsCacheOutput(e.id);
  }

 private:
  const TrainingReport& report_;
  std::unordered_map<int, int> cache_in_;
  std::unordered_set<int> cache_out_;
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
    const bool prefill = step == 0;
    live_.clear();
    for (const AllocationEvent& e : phase.events()) {
      if (!e.alloc) {
        auto it = live_.find(e.id);
        if (it == live_.end()) continue;
        allocator_.Free(it->second);
        live_.erase(it);
        continue;
      }
      const bool persistent = phase.Persistent(e);
      if (!prefill && persistent) continue;
      if (const int i = phase.CacheInput(e.id); i >= 0) {
        if (i < static_cast<int>(cache_.size())) live_[e.id] = cache_[i];
        continue;
      }
      Result<int64_t> bytes = sym::Evaluate(e.bytes, bindings);
      if (!bytes.ok()) {
        out_.error =
            "the CUDA allocator model over the generation needs B, S and T "
            "bound: " +
            bytes.status().message();
        return false;
      }
      // NB: PyTorch allocates nothing for an empty tensor.
      if (*bytes <= 0) continue;
      const int block = allocator_.Malloc(*bytes);
      if (block < 0) {
        out_.out_of_memory_step = step;
        out_.out_of_memory_in_weights = persistent;
        return false;
      }
      if (!persistent) live_[e.id] = block;
      Observe(step);
    }
    // Hand the cache on; free what else the step left (its inputs, logits).
    std::vector<int> cache;
    for (int id : phase.cache_outputs()) {
      auto it = live_.find(id);
      if (it != live_.end()) cache.push_back(it->second);
    }
    for (const auto& [id, block] : live_) {
      if (!phase.IsCacheOutput(id)) allocator_.Free(block);
    }
    cache_ = std::move(cache);
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
