// The vocabulary of the memory events the step's simulation replays: the
// sequences of allocations that the training step's models describe outside
// the graph (GradScaler's tensors, an optimizer update's temporaries) and the
// simulator's own acts on storages (forward outputs, saved tensors, gradients,
// optimizer states, checkpoint recomputation) are written with these kinds.
#ifndef TORCHCOST_SRC_TRAINING_MEMORY_EVENT_H_
#define TORCHCOST_SRC_TRAINING_MEMORY_EVENT_H_

#include <cstdint>

#include "torchcost/training.h"

namespace torchcost::training {

// One memory event of a replayed sequence; tensors are numbered per sequence.
struct Event {
  enum class Kind {
    kAlloc,  // Allocates `tensor`, `bytes` of `category`.
    kFree,   // Frees `tensor`.
    // Binds local name `slot` to `tensor` (-1: a tensor owned elsewhere),
    // freeing what it held.
    kBind,
    kPoint,  // A moment of the timeline: the live bytes are recorded.
  };
  Kind kind = Kind::kPoint;
  int tensor = -1;
  int slot = -1;
  int64_t bytes = 0;
  MemCategory category = MemCategory::kTemp;
};

// Returns an allocation event of `tensor`.
inline Event AllocEvent(int tensor, int64_t bytes,
                        MemCategory category = MemCategory::kTemp) {
  Event e;
  e.kind = Event::Kind::kAlloc;
  e.tensor = tensor;
  e.bytes = bytes;
  e.category = category;
  return e;
}

// Returns the event that frees `tensor`.
inline Event FreeEvent(int tensor) {
  Event e;
  e.kind = Event::Kind::kFree;
  e.tensor = tensor;
  return e;
}

// Returns the event that binds local name `slot` to `tensor`.
inline Event BindEvent(int slot, int tensor) {
  Event e;
  e.kind = Event::Kind::kBind;
  e.slot = slot;
  e.tensor = tensor;
  return e;
}

// Returns a timeline point.
inline Event PointEvent() { return Event(); }

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_TRAINING_MEMORY_EVENT_H_
