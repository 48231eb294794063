// Tests of the timeline: live bytes per category as storages come and go,
// and points recorded only when something changed.
#include "memory/timeline.h"

#include <gtest/gtest.h>

#include "testing/timeline.h"

namespace torchcost::memory {
namespace {

using testing::At;

Storage Of(int64_t bytes, MemCategory c) {
  Storage s;
  s.bytes = sym::Expr(bytes);
  s.category = c;
  return s;
}

TEST(TimelineTest, AllocAndFreeCountOnceEach) {
  TimelinePoints points;  // Cleared by the timeline.
  points.push_back(TimelinePoint{});
  Timeline t(&points);
  EXPECT_TRUE(points.empty());
  Storage a = Of(100, MemCategory::kAct), g = Of(8, MemCategory::kGrad);
  t.Alloc(&a);
  t.Alloc(&a);  // Already live: nothing.
  t.Alloc(&g);
  EXPECT_TRUE(a.live);
  EXPECT_EQ(At(t.live()[testing::kAct]), 100);
  EXPECT_EQ(At(t.total()), 108);
  t.Free(&a);
  t.Free(&a);  // Already dead: nothing.
  EXPECT_FALSE(a.live);
  EXPECT_EQ(At(t.total()), 8);
  t.Add(MemCategory::kOpt, sym::Expr(16));
  EXPECT_EQ(At(t.live()[testing::kOpt]), 16);
  EXPECT_EQ(At(t.total()), 24);
}

// A foreach op's list: one recorded allocation per non-empty piece, freed
// piece by piece by its handle; two lists at once stay apart.
TEST(TimelineTest, ListsAllocateAndFreeEachPiece) {
  TimelinePoints points;
  Timeline t(&points);
  std::vector<AllocationEvent> events;
  t.RecordAllocations(&events);
  const std::vector<int64_t> list = {64, 0, 16};
  const int first = t.AddList(MemCategory::kTemp, list);
  const int second = t.AddList(MemCategory::kTemp, list);
  EXPECT_EQ(At(t.live()[testing::kTemp]), 2 * 80);
  // 64 and 16 each list: the empty piece allocates nothing.
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].id, first);
  EXPECT_EQ(At(events[0].bytes), 64);
  EXPECT_EQ(events[1].id, first - 2);
  EXPECT_EQ(At(events[1].bytes), 16);
  EXPECT_EQ(events[2].id, second);
  EXPECT_NE(second, first);
  t.FreeList(first, MemCategory::kTemp, list);
  EXPECT_EQ(At(t.live()[testing::kTemp]), 80);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_FALSE(events[4].alloc);
  EXPECT_EQ(events[4].id, first);
  EXPECT_EQ(events[5].id, first - 2);
  t.FreeList(second, MemCategory::kTemp, list);
  EXPECT_EQ(At(t.total()), 0);
}

TEST(TimelineTest, PointsSkipMomentsWithoutChange) {
  TimelinePoints points;
  Timeline t(&points);
  Storage a = Of(4, MemCategory::kTemp), b = Of(4, MemCategory::kAct);
  t.Point(StepPhase::kSetup, -1);
  t.Point(StepPhase::kForward, 0);  // Nothing changed.
  t.Alloc(&a);
  t.Point(StepPhase::kForward, 1);
  // Same total, other category: a change.
  t.Free(&a);
  t.Alloc(&b);
  t.Point(StepPhase::kBackward, 2);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].phase, StepPhase::kSetup);
  EXPECT_EQ(At(points[0].total), 0);
  EXPECT_EQ(points[1].node, 1);
  EXPECT_EQ(At(points[1].live[testing::kTemp]), 4);
  EXPECT_EQ(points[2].phase, StepPhase::kBackward);
  EXPECT_EQ(At(points[2].live[testing::kTemp]), 0);
  EXPECT_EQ(At(points[2].total), 4);
}

TEST(TimelineTest, SymbolicBytesAddUp) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  TimelinePoints points;
  Timeline t(&points);
  Storage a = Of(0, MemCategory::kAct);
  a.bytes = B * 16;
  Storage b = Of(32, MemCategory::kParam);
  t.Alloc(&a);
  t.Alloc(&b);
  EXPECT_EQ(t.total(), B * 16 + 32);
  t.Free(&a);
  EXPECT_EQ(t.total(), sym::Expr(32));
}

TEST(TimelineTest, EventsBetweenPointsAddUpAtThePoint) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  TimelinePoints points;
  Timeline t(&points);
  Storage a = Of(0, MemCategory::kAct), w = Of(0, MemCategory::kTemp),
          g = Of(0, MemCategory::kGrad);
  a.bytes = B * 16;
  w.bytes = B * 16;
  g.bytes = B * 8 + 4;
  t.Point(StepPhase::kSetup, -1);
  // A workspace allocated and freed between two points: no change, no point.
  t.Alloc(&w);
  t.Free(&w);
  t.Point(StepPhase::kForward, 0);
  EXPECT_EQ(points.size(), 1u);
  // Bytes moved from TEMP to ACT: the same total, a point.
  t.Alloc(&w);
  t.Point(StepPhase::kForward, 1);
  t.Free(&w);
  t.Alloc(&a);
  t.Alloc(&g);
  t.Point(StepPhase::kForward, 2);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1].total, B * 16);
  EXPECT_EQ(points[2].live[testing::kTemp], sym::Expr(0));
  EXPECT_EQ(points[2].live[testing::kAct], B * 16);
  EXPECT_EQ(points[2].live[testing::kGrad], B * 8 + 4);
  // 16 B + 8 B + 4.
  EXPECT_EQ(points[2].total, B * 24 + 4);
  // Freed again: back to nothing, and a point with it.
  t.Free(&a);
  t.Free(&g);
  t.Point(StepPhase::kBackward, 2);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[3].total, sym::Expr(0));
}

}  // namespace
}  // namespace torchcost::memory
