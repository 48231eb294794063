// Tests of RepeatsSource: a hinted run of nodes is trusted only while it still
// repeats its source run node for node.
#include "passes/repeat_span.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "testing/graph_builder.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using testing::GraphBuilder;
using ::testing::Pair;

// Two runs of lin(x, w) then relu: the second reads the first's output and its
// own weight, and both read one constant.
// Values: x 0, w0 1, w1 2, c 3; run 0 makes 4, 5; run 1 makes 6, 7.
struct TwoRuns {
  GraphBuilder b;
  int x, w0, w1, c;
  ir::RepeatSpan span{
      /*source_node=*/0,  /*node=*/2,   /*nodes=*/2,
      /*source_value=*/4, /*values=*/2, /*value_shift=*/2};
  TwoRuns() {
    x = b.Input();
    w0 = b.Param("l0.w", {8, 8});
    w1 = b.Param("l1.w", {8, 8});
    c = b.Int(1);
    int y = x;
    for (int w : {w0, w1}) {
      const int h = b.One("t::lin", {y, w, c}, {"self", "weight", "k"});
      y = b.One("t::relu", {h}, {"self"});
    }
  }
  ir::Graph& g() { return b.graph(); }
};

TEST(RepeatSpanTest, ARepeatedRunListsWhatItReadsFromOutside) {
  TwoRuns r;
  std::vector<std::pair<int, int>> outside;
  ASSERT_TRUE(passes::RepeatsSource(r.g(), r.span, &outside));
  // The shared constant is no pair: it is the same value in both runs.
  EXPECT_THAT(outside, ElementsAre(Pair(r.x, 5), Pair(r.w0, r.w1)));
}

TEST(RepeatSpanTest, EqualConstantsAreNoPairAndOtherConstantsAre) {
  GraphBuilder b;
  const int x = b.Input();
  // Constants made before the runs, one pair for each: k equal, j not.
  const int k0 = b.Int(1), j0 = b.Int(2), k1 = b.Int(1), j1 = b.Int(3);
  b.One("t::lin", {x, k0, j0}, {"self", "k", "j"});
  b.One("t::lin", {x, k1, j1}, {"self", "k", "j"});
  std::vector<std::pair<int, int>> outside;
  ASSERT_TRUE(passes::RepeatsSource(b.graph(), {0, 1, 1, 5, 1, 1}, &outside));
  EXPECT_THAT(outside, ElementsAre(Pair(j0, j1)));
}

TEST(RepeatSpanTest, ARunsOwnConstantsMustEqualTheSources) {
  GraphBuilder b;
  const int x = b.Input();
  // Each run makes its constant, then reads it: equal, then not.
  for (int64_t j : {2, 2, 3}) b.One("t::lin", {x, b.Int(j)}, {"self", "j"});
  std::vector<std::pair<int, int>> outside;
  EXPECT_TRUE(passes::RepeatsSource(b.graph(), {0, 1, 1, 1, 2, 2}, &outside));
  EXPECT_FALSE(passes::RepeatsSource(b.graph(), {0, 2, 1, 1, 2, 4}, &outside));
  EXPECT_TRUE(outside.empty());
}

TEST(RepeatSpanTest, ADifferentOpOverloadOrArgumentNameIsNoRepeat) {
  std::vector<std::pair<int, int>> outside;
  TwoRuns op;
  op.g().nodes[3].op = "t::gelu";
  EXPECT_FALSE(passes::RepeatsSource(op.g(), op.span, &outside));
  TwoRuns overload;
  overload.g().nodes[3].overload = "out";
  EXPECT_FALSE(passes::RepeatsSource(overload.g(), overload.span, &outside));
  TwoRuns names;
  names.g().nodes[2].input_names = std::vector<std::string>{"a", "b", "k"};
  EXPECT_FALSE(passes::RepeatsSource(names.g(), names.span, &outside));
}

TEST(RepeatSpanTest, ReadingOtherThanTheImageIsNoRepeat) {
  std::vector<std::pair<int, int>> outside;
  // Run 1's relu reads run 0's lin instead of its own.
  TwoRuns source_value;
  source_value.g().nodes[3].inputs[0] = 4;
  EXPECT_FALSE(
      passes::RepeatsSource(source_value.g(), source_value.span, &outside));
  // Run 1's lin reads, where run 0's read x, a value run 1 makes itself.
  TwoRuns made_inside;
  made_inside.g().nodes[2].inputs[0] = 7;
  EXPECT_FALSE(
      passes::RepeatsSource(made_inside.g(), made_inside.span, &outside));
  // An output of another kind, or with a traced shape the source's lacks.
  TwoRuns kind;
  kind.g().values[7].kind = ir::ValueKind::kInt;
  EXPECT_FALSE(passes::RepeatsSource(kind.g(), kind.span, &outside));
  TwoRuns traced;
  traced.g().values[6].has_traced_shape = true;
  traced.g().values[6].traced_shape = {2, 8};
  EXPECT_FALSE(passes::RepeatsSource(traced.g(), traced.span, &outside));
  // A shift that does not map run 0's values onto run 1's.
  TwoRuns shift;
  shift.span.value_shift = 1;
  EXPECT_FALSE(passes::RepeatsSource(shift.g(), shift.span, &outside));
}

TEST(RepeatSpanTest, SpansOutsideTheGraphOrOverlappingTheirSourceAreNone) {
  TwoRuns r;
  std::vector<std::pair<int, int>> outside;
  for (const ir::RepeatSpan& s : {
           ir::RepeatSpan{0, 2, 3, 4, 2, 2},   // Past the last node.
           ir::RepeatSpan{0, 1, 2, 4, 2, 2},   // Overlapping its source.
           ir::RepeatSpan{-1, 2, 2, 4, 2, 2},  // Before the first node.
           ir::RepeatSpan{0, 2, 0, 4, 2, 2},   // Empty.
           ir::RepeatSpan{0, 2, 2, 4, 3, 2},   // Values past the last.
           ir::RepeatSpan{0, 2, 2, 4, 2, 1},   // Values overlapping.
           ir::RepeatSpan{0, 2, 2, -1, 2, 2},  // Before the first value.
       }) {
    EXPECT_FALSE(passes::RepeatsSource(r.g(), s, &outside))
        << s.source_node << " " << s.node << " " << s.nodes;
  }
  EXPECT_TRUE(outside.empty());
}

}  // namespace
}  // namespace torchcost
