// Tests of the compiled program's conversion to the IR, on programs written by
// hand: inputs, constants pooled per group, table reads, the scope each node
// is given, outputs flattened, and declines.
#include "import/ts_convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace torchcost::import::ts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int AddVal(Program& p, Val v) {
  p.vals.push_back(std::move(v));
  return static_cast<int>(p.vals.size()) - 1;
}

int AddConst(Program& p, int64_t value, int group) {
  Val v;
  v.src = Val::Src::kConst;
  v.type = "int";
  v.has_constant = true;
  v.constant = value;
  v.group = group;
  return AddVal(p, std::move(v));
}

// Adds node `op` on `inputs` (named `names`) with one Tensor output; returns
// the output.
int AddNode(Program& p, const std::string& op, std::vector<int> inputs,
            std::vector<std::string> names, std::vector<int> calls = {}) {
  Nd n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.input_names = std::move(names);
  n.calls = std::move(calls);
  Val out;
  out.type = "Tensor";
  out.producer = static_cast<int>(p.nodes.size());
  n.outputs = {AddVal(p, std::move(out))};
  p.nodes.push_back(std::move(n));
  return p.nodes.back().outputs[0];
}

// Scope 1 for a node made inside an inlined call, else the root.
Result<int> ScopeByCalls(const Nd& n) { return n.calls.empty() ? 0 : 1; }

TEST(TsConvertTest, PoolsConstantsPerGroupAndFlattensTheResultTuple) {
  Program p;
  Val x;
  x.src = Val::Src::kInput;
  x.type = "Tensor";
  x.name = "x";
  const int in = AddVal(p, std::move(x));
  // Two equal constants of forward itself (group -1) and one of call 0.
  const int two = AddConst(p, 2, -1), two_again = AddConst(p, 2, -1),
            two_in_call = AddConst(p, 2, 0);
  const int a =
      AddNode(p, "aten::add", {in, two, two_again}, {"self", "other", "alpha"});
  AddNode(p, "aten::relu", {a}, {"self"});
  p.nodes.back().dead = true;  // Not converted.
  const int b =
      AddNode(p, "aten::mul", {a, two_in_call}, {"self", "other"}, {0});
  p.output = AddNode(p, "prim::TupleConstruct", {a, b}, {});

  ir::Graph g;
  g.GetOrAddScope("", "Net");
  g.GetOrAddScope("blk", "Block");
  std::unordered_map<std::string, TensorSlot> slots;
  Status s = ConvertProgram(p, {in}, ScopeByCalls, &slots, &g);
  ASSERT_TRUE(s.ok()) << s.message();

  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].name, "x");
  EXPECT_EQ(g.values[g.inputs[0]].role, ir::ValueRole::kInput);
  // add, mul, TupleConstruct: the dead relu is left out.
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op, "aten::add");
  // One pooled constant.
  EXPECT_EQ(g.nodes[0].inputs[1], g.nodes[0].inputs[2]);
  // Another group: its own value.
  EXPECT_NE(g.nodes[1].inputs[1], g.nodes[0].inputs[1]);
  EXPECT_EQ(g.values[g.nodes[0].inputs[1]].role, ir::ValueRole::kConstant);
  EXPECT_EQ(g.nodes[0].scope, 0);
  EXPECT_EQ(g.nodes[1].scope, 1);
  EXPECT_EQ(g.nodes[1].origin, 1);
  // x, the two constants and the three nodes' outputs.
  EXPECT_EQ(g.values.size(), 6u);
  // forward returns (a, b): the tuple's items are the outputs.
  EXPECT_THAT(g.outputs,
              ElementsAre(g.nodes[0].outputs[0], g.nodes[1].outputs[0]));
}

TEST(TsConvertTest, TensorAttributesReadTheirTableEntryOrBecomeBuffers) {
  Program p;
  PickleValue w, extra;
  w.kind = extra.kind = PickleValue::Kind::kTensor;
  w.tensor.sizes = {4, 8};
  extra.tensor.sizes = {3};
  extra.tensor.scalar_type = 6;  // float32.
  auto attr = [&](const char* path, const PickleValue& object) {
    Val v;
    v.src = Val::Src::kTensorAttr;
    v.type = "Tensor";
    v.path = path;
    v.object = &object;
    return AddVal(p, std::move(v));
  };
  const int wv = attr("fc.weight", w), ev = attr("fc.extra", extra);
  p.output = AddNode(p, "aten::add", {wv, ev}, {"self", "other"});

  ir::Graph g;
  g.GetOrAddScope("", "Net");
  ir::TensorEntry weight;
  weight.name = "fc.weight";
  weight.shape = {4, 8};
  g.params.push_back(weight);
  std::unordered_map<std::string, TensorSlot> slots{{"fc.weight", {true, 0}}};
  Status s = ConvertProgram(p, {}, ScopeByCalls, &slots, &g);
  ASSERT_TRUE(s.ok()) << s.message();

  ASSERT_EQ(g.nodes.size(), 1u);
  const ir::Value& read_w = g.values[g.nodes[0].inputs[0]];
  EXPECT_EQ(read_w.role, ir::ValueRole::kParam);
  EXPECT_EQ(read_w.table_index, 0);
  // fc.extra is in no table: a buffer of its own, recorded in the slots.
  ASSERT_EQ(g.buffers.size(), 1u);
  EXPECT_EQ(g.buffers[0].name, "fc.extra");
  EXPECT_THAT(g.buffers[0].shape, ElementsAre(3));
  EXPECT_EQ(g.buffers[0].dtype, DType::kFloat32);
  EXPECT_FALSE(g.buffers[0].requires_grad);
  EXPECT_EQ(slots.at("fc.extra"), (TensorSlot{false, 0}));
  EXPECT_EQ(g.values[g.nodes[0].inputs[1]].role, ir::ValueRole::kBuffer);
}

TEST(TsConvertTest, DeclinesAModuleUsedAsAValueAndStopsAtAScopeError) {
  Program p;
  Val m;
  m.src = Val::Src::kModule;
  m.type = "__torch__.Net";
  const int mv = AddVal(p, std::move(m));
  p.output = AddNode(p, "aten::relu", {mv}, {"self"});
  ir::Graph g;
  g.GetOrAddScope("", "Net");
  std::unordered_map<std::string, TensorSlot> slots;
  Status s = ConvertProgram(p, {}, ScopeByCalls, &slots, &g);
  EXPECT_EQ(s.code(), Status::Code::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("a module used as a value"));

  ir::Graph g2;
  g2.GetOrAddScope("", "Net");
  auto outside = [](const Nd&) -> Result<int> {
    return Decline("a call outside the module tree");
  };
  s = ConvertProgram(p, {}, outside, &slots, &g2);
  EXPECT_THAT(s.message(), HasSubstr("outside the module tree"));
  EXPECT_TRUE(g2.nodes.empty());
}

}  // namespace
}  // namespace torchcost::import::ts
