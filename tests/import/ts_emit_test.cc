// Tests of emitting into a compiled TorchScript program: the overload each
// call resolves to, in torch 1.13's registration order (the schemas quoted are
// torch._C._jit_get_schemas_for_operator's), the defaults, repeated lists and
// conversions inserted, and the calls declined.
#include "import/ts_emit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace torchcost::import::ts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TsEmitTest : public ::testing::Test {
 protected:
  // Appends a value of TorchScript type `type` made by no node.
  int Value(const std::string& type) {
    Val v;
    v.src = Val::Src::kInput;
    v.type = type;
    return emit_.AddVal(std::move(v));
  }
  // Returns the node that made value `v`.
  const Nd& Producer(int v) const {
    return prog_.nodes[prog_.vals[v].producer];
  }

  Program prog_;
  std::vector<int> calls_;
  Emitter emit_{&prog_, &calls_};
};

TEST_F(TsEmitTest, TheFirstOverloadThatTakesTheArgumentsAsTheyAre) {
  // aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  // aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  // ...
  // aten::add.int(int a, int b) -> int
  const int t = Value("Tensor"), u = Value("Tensor"), i = Value("int");
  Result<int> tt = emit_.Builtin("aten::add", {t, u}, {});
  ASSERT_TRUE(tt.ok()) << tt.status().message();
  const Nd& add = Producer(*tt);
  EXPECT_EQ(add.op, "aten::add");
  EXPECT_EQ(add.overload, "Tensor");
  EXPECT_THAT(add.input_names, ElementsAre("self", "other", "alpha"));
  EXPECT_EQ(add.inputs[0], t);
  EXPECT_EQ(add.inputs[1], u);
  // alpha's default 1, a constant.
  const Val& alpha = prog_.vals[add.inputs[2]];
  EXPECT_EQ(alpha.src, Val::Src::kConst);
  EXPECT_EQ(alpha.type, "int");
  EXPECT_EQ(std::get<int64_t>(alpha.constant), 1);
  EXPECT_EQ(prog_.vals[*tt].type, "Tensor");

  Result<int> ti = emit_.Builtin("aten::add", {t, i}, {});
  ASSERT_TRUE(ti.ok()) << ti.status().message();
  EXPECT_EQ(Producer(*ti).overload, "Scalar");

  Result<int> ii = emit_.Builtin("aten::add", {i, i}, {});
  ASSERT_TRUE(ii.ok()) << ii.status().message();
  EXPECT_EQ(Producer(*ii).overload, "int");
  EXPECT_EQ(prog_.vals[*ii].type, "int");
}

TEST_F(TsEmitTest, KeywordArgumentsBindByName) {
  const int t = Value("Tensor"), two = Value("int");
  Result<int> r = emit_.Builtin("aten::add", {t, t}, {{"alpha", two}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Producer(*r).overload, "Tensor");
  EXPECT_EQ(Producer(*r).inputs[2], two);
  // A keyword no overload has.
  Result<int> bad = emit_.Builtin("aten::add", {t, t}, {{"beta", two}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("no overload of aten::add takes (Tensor, Tensor)"));
}

TEST_F(TsEmitTest, ConversionsOnlyWhenNoOverloadTakesTheArgumentsAsTheyAre) {
  // alpha is a Scalar ("number"): a Tensor given for it goes through
  // aten::ScalarImplicit, inserted before the add.
  const int t = Value("Tensor");
  const size_t before = prog_.nodes.size();
  Result<int> r = emit_.Builtin("aten::add", {t, t}, {{"alpha", t}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(prog_.nodes.size(), before + 2);
  EXPECT_EQ(prog_.nodes[before].op, "aten::ScalarImplicit");
  const Nd& add = Producer(*r);
  EXPECT_EQ(add.overload, "Tensor");
  EXPECT_EQ(add.inputs[2], prog_.nodes[before].outputs[0]);
}

TEST_F(TsEmitTest, AScalarGivenForAFixedSizeListIsRepeated) {
  // aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[],
  //                  int[2] padding=0, int[2] dilation=1,
  //                  bool ceil_mode=False) -> Tensor
  const int x = Value("Tensor"), k = Value("int");
  Result<int> r = emit_.Builtin("aten::max_pool2d", {x, k}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Nd& pool = Producer(*r);
  EXPECT_THAT(pool.input_names,
              ElementsAre("self", "kernel_size", "stride", "padding",
                          "dilation", "ceil_mode"));
  const Nd& list = Producer(pool.inputs[1]);
  EXPECT_EQ(list.op, "prim::ListConstruct");
  EXPECT_THAT(list.inputs, ElementsAre(k, k));
  EXPECT_EQ(prog_.vals[pool.inputs[1]].type, "List[int]");
  // stride=[]: an empty int list.
  EXPECT_TRUE(
      std::get<std::vector<int64_t>>(prog_.vals[pool.inputs[2]].constant)
          .empty());
  EXPECT_FALSE(std::get<bool>(prog_.vals[pool.inputs[5]].constant));
}

TEST_F(TsEmitTest, SeveralReturnsArePendingUntilUnpacked) {
  // aten::max.dim(Tensor self, int dim, bool keepdim=False)
  //     -> (Tensor values, Tensor indices)
  const int x = Value("Tensor"), d = Value("int");
  Result<int> r = emit_.Builtin("aten::max", {x, d}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Val& tuple = prog_.vals[*r];
  EXPECT_EQ(tuple.src, Val::Src::kPending);
  EXPECT_EQ(tuple.type, "Tuple[Tensor, Tensor]");
  ASSERT_EQ(tuple.parts.size(), 2u);
  EXPECT_EQ(Producer(tuple.parts[0]).overload, "dim");
  EXPECT_EQ(tuple.parts[1], Producer(tuple.parts[0]).outputs[1]);
}

TEST_F(TsEmitTest, NumToTensorTakesANumber) {
  const int n = Value("int");
  Result<int> r = emit_.Builtin("prim::NumToTensor", {n}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Producer(*r).overload, "Scalar");
  EXPECT_THAT(Producer(*r).input_names, ElementsAre("a"));
  EXPECT_EQ(prog_.vals[*r].type, "Tensor");
  EXPECT_FALSE(emit_.Builtin("prim::NumToTensor", {Value("str")}, {}).ok());
}

TEST_F(TsEmitTest, DeclinesWhatTheCompilerWouldNotReadAsLibTorchDoes) {
  const int t = Value("Tensor"), i = Value("int"), l = Value("List[int]");
  auto declined = [](const Result<int>& r, const std::string& why) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kUnimplemented);
    EXPECT_THAT(r.status().message(), HasSubstr(why));
  };
  declined(emit_.Builtin("aten::no_such_op", {t}, {}),
           "no schema for aten::no_such_op");
  // aten::swapaxes(Tensor(a) self, int axis0, int axis1): TorchScript's
  // NormalizeOps makes it aten::transpose.
  declined(emit_.Builtin("aten::swapaxes", {t, i, i}, {}),
           "aten::swapaxes, which LibTorch renames");
  // aten::add.t(t[] a, t[] b) -> t[]: a type variable's overload.
  declined(emit_.Builtin("aten::add", {l, l}, {}), "generic overload");
  declined(emit_.Builtin("aten::add", {t, Value("str")}, {}),
           "no overload of aten::add takes (Tensor, str)");
}

TEST_F(TsEmitTest, NodesAndConstantsRecordTheCallsBeingCompiled) {
  const int before = emit_.Const(int64_t{1}, "int");
  EXPECT_EQ(prog_.vals[before].group, -1);
  calls_ = {3, 5};
  const int inside = emit_.Const(int64_t{1}, "int");
  EXPECT_EQ(prog_.vals[inside].group, 3);
  Nd n;
  n.op = "aten::relu";
  const int index = emit_.AddNode(std::move(n), {"Tensor", "int"});
  EXPECT_THAT(prog_.nodes[index].calls, ElementsAre(3, 5));
  ASSERT_EQ(prog_.nodes[index].outputs.size(), 2u);
  EXPECT_EQ(prog_.vals[prog_.nodes[index].outputs[1]].type, "int");
  EXPECT_EQ(prog_.vals[prog_.nodes[index].outputs[1]].producer, index);
}

TEST_F(TsEmitTest, LiteralsTakeTheirListTypeFromTheHint) {
  Result<ExprPtr> ints = ParseExpr("[1, 2]");
  ASSERT_TRUE(ints.ok());
  Result<int> a = emit_.Literal(**ints, "Optional[List[int]]");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(prog_.vals[*a].type, "List[int]");
  EXPECT_THAT(std::get<std::vector<int64_t>>(prog_.vals[*a].constant),
              ElementsAre(1, 2));
  Result<int> f = emit_.Literal(**ints, "List[float]");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_THAT(std::get<std::vector<double>>(prog_.vals[*f].constant),
              ElementsAre(1.0, 2.0));
  Result<ExprPtr> none = ParseExpr("None");
  ASSERT_TRUE(none.ok());
  Result<int> n = emit_.Literal(**none, "Optional[Tensor]");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(prog_.vals[*n].type, "NoneType");
  Result<ExprPtr> bools = ParseExpr("[True]");
  ASSERT_TRUE(bools.ok());
  EXPECT_FALSE(emit_.Literal(**bools, "List[int]").ok());
}

}  // namespace
}  // namespace torchcost::import::ts
