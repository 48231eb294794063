// The CUDA caching allocator model over a whole generate() call: the prefill,
// then every decode step at its own cache length, the KV cache's blocks handed
// from each step to the next (docs/generation.md).
#ifndef TORCHCOST_GENERATION_ALLOCATOR_H_
#define TORCHCOST_GENERATION_ALLOCATOR_H_

#include <cstdint>
#include <limits>
#include <string>

#include "torchcost/sym.h"
#include "torchcost/training.h"

namespace torchcost {

// What the caching allocator holds over a whole generation.
struct GenerationAllocatorPeak {
  // The largest total of allocated blocks, and the step it falls in (0: the
  // prefill; j: decode step j, S + j - 1 tokens cached before it).
  int64_t allocated_peak = 0;
  int64_t allocated_peak_step = 0;
  // The largest total of segments, and the step that first reached it.
  int64_t reserved_peak = 0;
  int64_t reserved_peak_step = 0;
  // The memory limit the segments had (the device's memory less the context;
  // max: unlimited), and how often the allocator released its cached segments
  // to stay under it.
  int64_t memory_limit = std::numeric_limits<int64_t>::max();
  int64_t releases = 0;
  // The step whose allocation found no room even after the release (out of
  // memory; the replay stops there); -1 if none.
  int64_t out_of_memory_step = -1;
  // If out of memory: true when the allocation that found no room was a
  // parameter's or a model buffer's (the weights do not fit, before any
  // activation).
  bool out_of_memory_in_weights = false;
  // CudaAllocatorOptions::context_bytes, and reserved_peak plus it.
  int64_t context_bytes = 0;
  int64_t device_peak = 0;
  // Non-empty if the phases were analysed without the allocator model, a
  // size is not bound (B, S and T must be) or overflows (nothing above is
  // set).
  std::string error;
};

// The most decode steps x allocations per step EvaluateGenerationAllocator
// replays (about 10 s on one core); a longer generation is an error.
inline constexpr int64_t kMaxGenerationReplayEvents = 200'000'000;

// Replays `prefill` (a generation's prefill, its training report with its
// allocations) and then `decode` at T = 2, 3, ..., T (decode step j at T = j +
// 1) through one caching allocator limited to `memory_limit` bytes of
// segments. Between steps the cache's output blocks become the next step's
// cache inputs; the step's other inputs and outputs (token ids, logits) are
// freed, the parameters and the model's buffers held throughout.
GenerationAllocatorPeak EvaluateGenerationAllocator(
    const TrainingReport& prefill, const TrainingReport& decode,
    const sym::Bindings& bindings,
    int64_t memory_limit = std::numeric_limits<int64_t>::max());

}  // namespace torchcost

#endif  // TORCHCOST_GENERATION_ALLOCATOR_H_
