// The timeline: live bytes per category, kept up to date as storages are
// allocated and freed, and recorded as points of TrainingReport::timeline.
#ifndef TORCHCOST_SRC_MEMORY_TIMELINE_H_
#define TORCHCOST_SRC_MEMORY_TIMELINE_H_

#include <array>
#include <cstdint>
#include <vector>

#include "memory/storages.h"
#include "memory/sum_cache.h"
#include "torchcost/training.h"

namespace torchcost::memory {

// Live bytes per category and the points recorded from them.
class Timeline {
 public:
  // Starts with nothing live; points are appended to `points`, which is
  // cleared.
  explicit Timeline(TimelinePoints* points);

  // Makes `s` live (nothing if it is already).
  void Alloc(Storage* s);
  // Makes `s` dead (nothing if it is already).
  void Free(Storage* s);
  // Adds `delta` bytes of category `c` that no storage stands for (optimizer
  // states, an update's temporaries). NB: recorded as one allocation per
  // category holding all such bytes, reallocated at each change.
  void Add(MemCategory c, const sym::Expr& delta);
  // Adds a list of tensors of category `c` (a foreach op's outputs, the
  // optimizer's states), recorded as one allocation per piece; returns the
  // handle FreeList takes (a list held to the step's end is never freed).
  int AddList(MemCategory c, const std::vector<int64_t>& pieces);
  // Frees the list AddList(c, pieces) returned `handle` for.
  void FreeList(int handle, MemCategory c, const std::vector<int64_t>& pieces);
  // Records every allocation and free from now on in `events` (the CUDA
  // allocator model replays them).
  void RecordAllocations(std::vector<AllocationEvent>* events) {
    events_ = events;
  }
  // Returns true if allocations are recorded.
  bool recording() const { return events_ != nullptr; }
  // Records the live bytes now, the pending changes added, unless nothing
  // changed since the last point.
  void Point(StepPhase phase, int node);

  // Returns the live bytes per category, the pending changes added.
  const CategoryBytes& live() {
    Flush();
    return live_;
  }
  // Returns their sum.
  const sym::Expr& total() {
    Flush();
    return total_;
  }

 private:
  void Record(int id, bool alloc, const sym::Expr& bytes, MemCategory c);
  // Adds the pending changes to live_ and total_.
  void Flush();

  TimelinePoints* points_;
  CategoryBytes live_;
  sym::Expr total_;
  // NB: an allocation or a free only adds to its category's pending bytes;
  // live_ and total_ take them at the next point (Flush). The events between
  // two points repeat from layer to layer, so their pending sum is a
  // remembered pair, while the live bytes and the total, which activations
  // make new at nearly every point, get one new sum per point rather than one
  // per event (Mixtral-8x7B: 12k points, 26k events).
  CategoryBytes pending_;
  // Bit c: category c has had an event since the last flush.
  uint32_t dirty_ = 0;
  // Something changed since the last point (an event or Add).
  bool changed_ = true;
  std::vector<AllocationEvent>* events_ = nullptr;
  std::array<sym::Expr, kNumMemCategories> lump_;  // Add's bytes per category.
  // The allocation holding them (-1: none).
  std::array<int, kNumMemCategories> lump_id_;
  // Ids of allocations no storage stands for count down.
  int next_id_ = -1;
  // NB: the live bytes after an allocation or a free repeat from layer to
  // layer: each distinct sum is built once.
  SumCache sums_;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_TIMELINE_H_
