// EvaluateAllocator: the step's recorded allocations
// (TrainingReport::allocations) replayed through the caching allocator model
// under bindings.
#include <string>
#include <unordered_map>

#include "memory/caching_allocator.h"
#include "torchcost/training.h"

namespace torchcost {

AllocatorPeak EvaluateAllocator(const TrainingReport& report,
                                const sym::Bindings& bindings,
                                int64_t memory_limit) {
  AllocatorPeak out;
  if (!report.cuda_allocator) {
    out.error =
        "the CUDA allocator model was not asked for (StepConfig.allocator "
        "cuda)";
    return out;
  }
  memory::CachingAllocator allocator(*report.cuda_allocator);
  allocator.set_memory_limit(memory_limit);
  out.memory_limit = memory_limit;
  // Per live allocation: its block and category.
  std::unordered_map<int, std::pair<int, MemCategory>> live;
  live.reserve(1024);
  std::array<int64_t, kNumMemCategories> now{};
  for (const AllocationEvent& e : report.allocations) {
    if (!e.alloc) {
      auto it = live.find(e.id);
      if (it == live.end()) continue;
      now[static_cast<int>(it->second.second)] -=
          allocator.BlockSize(it->second.first);
      allocator.Free(it->second.first);
      live.erase(it);
      continue;
    }
    int64_t bytes = 0;
    if (std::optional<int64_t> c = e.bytes.AsConstant()) {
      bytes = *c;
    } else {
      Result<int64_t> v = sym::Evaluate(e.bytes, bindings);
      if (!v.ok()) {
        out = AllocatorPeak();
        out.error =
            "the CUDA allocator model needs every size bound (bind every "
            "symbol): " +
            v.status().message();
        return out;
      }
      bytes = *v;
    }
    // NB: PyTorch allocates nothing for an empty tensor.
    if (bytes <= 0) continue;
    const int block = allocator.Malloc(bytes);
    if (block < 0) {
      out.out_of_memory_point = e.point;
      break;
    }
    live[e.id] = {block, e.category};
    const int c = static_cast<int>(e.category);
    now[c] += allocator.BlockSize(block);
    if (now[c] > out.category_max[c]) out.category_max[c] = now[c];
    if (allocator.allocated() > out.allocated_peak) {
      out.allocated_peak = allocator.allocated();
      out.at_peak = now;
      out.point = e.point;
      out.reserved_at_allocated_peak = allocator.reserved();
    }
    if (allocator.reserved() > out.reserved_peak) {
      out.reserved_peak = allocator.reserved();
      out.allocated_at_reserved_peak = allocator.allocated();
    }
  }
  const int points = static_cast<int>(report.timeline.size());
  // The allocation falls before timeline point e.point: that point shows its
  // node.
  if (out.point >= points) out.point = points - 1;
  if (out.out_of_memory_point >= points) out.out_of_memory_point = points - 1;
  out.fragmentation = out.reserved_at_allocated_peak - out.allocated_peak;
  out.context_bytes = report.cuda_allocator->context_bytes;
  out.device_peak = out.reserved_peak + out.context_bytes;
  out.segments = allocator.device_allocs();
  out.releases = allocator.releases();
  return out;
}

}  // namespace torchcost
