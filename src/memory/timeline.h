// The timeline: live bytes per category, kept up to date as storages are
// allocated and freed, and recorded as points of TrainingReport::timeline.
#ifndef TORCHCOST_SRC_MEMORY_TIMELINE_H_
#define TORCHCOST_SRC_MEMORY_TIMELINE_H_

#include <vector>

#include "memory/storages.h"
#include "torchcost/training.h"

namespace torchcost::memory {

// Live bytes per category and the points recorded from them.
class Timeline {
 public:
  // Starts with nothing live; points are appended to `points`, which is cleared.
  explicit Timeline(std::vector<TimelinePoint>* points);

  // Makes `s` live (nothing if it is already).
  void Alloc(Storage* s);
  // Makes `s` dead (nothing if it is already).
  void Free(Storage* s);
  // Adds `delta` bytes of category `c` that no storage stands for (optimizer states, an update's temporaries).
  void Add(MemCategory c, const sym::Expr& delta);
  // Records the live bytes now, unless nothing changed since the last point.
  // NB: the total is kept up to date by Alloc, Free and Add, so a point costs no symbolic arithmetic.
  void Point(StepPhase phase, int node);

  // Returns the live bytes per category.
  const CategoryBytes& live() const { return live_; }
  // Returns their sum.
  const sym::Expr& total() const { return total_; }

 private:
  std::vector<TimelinePoint>* points_;
  CategoryBytes live_;
  sym::Expr total_;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_TIMELINE_H_
