// Tests of LibTorch's passes as the reader without LibTorch does them, on
// programs written by hand.
#include "import/ts_passes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::import::ts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int AddVal(Program& p, Val::Src src, const std::string& type) {
  Val v;
  v.src = src;
  v.type = type;
  p.vals.push_back(v);
  return static_cast<int>(p.vals.size()) - 1;
}

int AddConst(Program& p, ir::Constant c, const std::string& type) {
  const int v = AddVal(p, Val::Src::kConst, type);
  p.vals[v].has_constant = true;
  p.vals[v].constant = c;
  return v;
}

// Adds node `op` on `inputs` with one output of `type`, made in inlined
// `calls`; returns the output.
int AddNode(Program& p, const std::string& op, std::vector<int> inputs,
            const std::string& type, std::vector<int> calls = {},
            const std::string& overload = "") {
  Nd n;
  n.op = op;
  n.overload = overload;
  n.inputs = std::move(inputs);
  n.calls = std::move(calls);
  const int out = AddVal(p, Val::Src::kNode, type);
  p.vals[out].producer = static_cast<int>(p.nodes.size());
  n.outputs = {out};
  p.nodes.push_back(n);
  return out;
}

TEST(TsPassesTest, UsesOfSkipsDeadNodesAndStartsAfter) {
  Program p;
  const int x = AddVal(p, Val::Src::kInput, "Tensor");
  const int a = AddNode(p, "aten::relu", {x}, "Tensor");
  AddNode(p, "aten::add", {x, a}, "Tensor");
  AddNode(p, "aten::mul", {x, x}, "Tensor");
  p.nodes[2].dead = true;
  EXPECT_THAT(UsesOf(p, x), ElementsAre(0, 1));
  EXPECT_THAT(UsesOf(p, x, 0), ElementsAre(1));
  ReplaceUses(&p, a, x);
  EXPECT_THAT(p.nodes[1].inputs, ElementsAre(x, x));
}

TEST(TsPassesTest, PeepholeDropsIntOfNumToTensorInsideOneInlinedMethod) {
  Program p;
  const int n = AddVal(p, Val::Src::kInput, "int");
  const int t = AddNode(p, "prim::NumToTensor", {n}, "Tensor", {0});
  const int i = AddNode(p, "aten::Int", {t}, "int", {0});
  // Forward's own node: not rewritten.
  const int top = AddNode(p, "aten::Int", {t}, "int");
  const int y = AddNode(p, "aten::add", {i, top}, "int", {0}, "int");
  p.output = y;
  ASSERT_TRUE(Peephole(&p).ok());
  EXPECT_TRUE(p.nodes[1].dead);
  EXPECT_FALSE(p.nodes[2].dead);
  EXPECT_THAT(p.nodes[3].inputs, ElementsAre(n, top));

  Program f;
  const int m = AddVal(f, Val::Src::kInput, "float");
  const int ft = AddNode(f, "prim::NumToTensor", {m}, "Tensor", {0});
  AddNode(f, "aten::Float", {ft}, "float", {0});
  EXPECT_THAT(Peephole(&f).message(), HasSubstr("float(NumToTensor(x))"));
}

TEST(TsPassesTest, PeepholeDeclinesScalarIdentities) {
  Program p;
  const int x = AddVal(p, Val::Src::kInput, "int");
  AddNode(p, "aten::mul", {x, AddConst(p, int64_t{1}, "int")}, "int", {0},
          "int");
  const Status s = Peephole(&p);
  EXPECT_EQ(s.code(), Status::Code::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("aten::mul.int by an identity"));
}

TEST(TsPassesTest, FoldConstantsDeclinesImmutableResultsOfConstants) {
  Program p;
  const int two = AddConst(p, int64_t{2}, "int");
  AddNode(p, "aten::zeros", {two}, "Tensor");  // A tensor result is not folded.
  ASSERT_TRUE(FoldConstants(p).ok());
  AddNode(p, "aten::add", {two, two}, "int", {}, "int");
  EXPECT_THAT(FoldConstants(p).message(), HasSubstr("aten::add of constants"));
}

TEST(TsPassesTest, DeadCodeIsMarkedAndUnusedInPlaceOpsDeclined) {
  Program p;
  const int x = AddVal(p, Val::Src::kInput, "Tensor");
  const int buf = AddVal(p, Val::Src::kTensorAttr, "Tensor");
  AddNode(p, "aten::relu", {x}, "Tensor");  // Unused: dead.
  // Writes a module's tensor: kept.
  AddNode(p, "aten::add_", {buf, x}, "Tensor", {}, "Tensor");
  p.output = AddNode(p, "aten::sigmoid", {x}, "Tensor");
  ASSERT_TRUE(EliminateDeadCode(&p).ok());
  EXPECT_TRUE(p.nodes[0].dead);
  EXPECT_FALSE(p.nodes[1].dead);
  EXPECT_FALSE(p.nodes[2].dead);
  AddNode(p, "aten::relu_", {x}, "Tensor");
  EXPECT_THAT(EliminateDeadCode(&p).message(),
              HasSubstr("an unused in-place aten::relu_"));
}

}  // namespace
}  // namespace torchcost::import::ts
