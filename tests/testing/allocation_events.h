// Allocation events (TrainingReport::allocations) written by hand, for the
// tests of the caching allocator replays.
#ifndef TORCHCOST_TESTS_TESTING_ALLOCATION_EVENTS_H_
#define TORCHCOST_TESTS_TESTING_ALLOCATION_EVENTS_H_

#include <cstdint>
#include <utility>

#include "torchcost/sym.h"
#include "torchcost/training.h"

namespace torchcost::testing {

// 1 MiB, the unit the allocator tests' sizes are written in.
inline constexpr int64_t kMiB = int64_t{1} << 20;

// Returns the allocation of storage `id`, `bytes` of category `c`, before
// timeline point `point`.
inline AllocationEvent Alloc(int id, sym::Expr bytes, MemCategory c,
                             int point = 0) {
  AllocationEvent e;
  e.id = id;
  e.bytes = std::move(bytes);
  e.category = c;
  e.point = point;
  return e;
}

// Returns the release of storage `id`.
inline AllocationEvent Free(int id) {
  AllocationEvent e;
  e.id = id;
  e.alloc = false;
  return e;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_ALLOCATION_EVENTS_H_
