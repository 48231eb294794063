// Tests of the parser of TorchScript source (code/__torch__/*.py) as
// torch.jit.save prints traced modules.
#include "import/ts_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace torchcost::import::ts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// As torch 1.13 prints a traced torchvision BasicBlock-like module (two classes
// in one file).
const char kSource[] = R"(class Block(Module):
  __parameters__ = ["weight", ]
  __buffers__ = []
  weight : Tensor
  training : bool
  _is_full_backward_hook : Optional[bool]
  __annotations__["0"] = __torch__.torch.nn.modules.conv.Conv2d
  relu : __torch__.torch.nn.modules.activation.ReLU
  def forward(self: __torch__.m.Block,
    argument_1: Tensor) -> Tuple[Tensor, Tensor]:
    relu = self.relu
    _0 = getattr(self, "0")
    x = (relu).forward((_0).forward(argument_1, ), )
    a, b, = torch.chunk(x, 2, -1)
    _1 = torch.full([2, 3], -inf, dtype=None, device=torch.device("cpu"))
    y = torch.batch_norm(x, None, None, None, None, False, 0.10000000000000001, 1.0000000000000001e-05, True)
    z = torch.gelu(annotate(List[int], []), approximate="tanh")
    return (y, CONSTANTS.c0)
class Other(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def forward(self: __torch__.m.Other,
    x: Tensor) -> Tensor:
    return torch.neg(x)
)";

TEST(TsSourceTest, ParsesClassesAndTheirDeclarations) {
  Result<std::vector<ClassDef>> r = ParseSource(kSource, "__torch__.m");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  const ClassDef& c = (*r)[0];
  EXPECT_EQ(c.name, "__torch__.m.Block");
  EXPECT_EQ(c.base, "Module");
  EXPECT_THAT(c.parameters, ElementsAre("weight"));
  EXPECT_TRUE(c.buffers.empty());
  EXPECT_THAT(
      c.attributes,
      ElementsAre(Pair("weight", "Tensor"), Pair("training", "bool"),
                  Pair("_is_full_backward_hook", "Optional[bool]"),
                  Pair("0", "__torch__.torch.nn.modules.conv.Conv2d"),
                  Pair("relu", "__torch__.torch.nn.modules.activation.ReLU")));
  const Method* f = c.FindMethod("forward");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->params, ElementsAre(Pair("self", "__torch__.m.Block"),
                                     Pair("argument_1", "Tensor")));
  EXPECT_EQ(f->returns, "Tuple[Tensor, Tensor]");
  EXPECT_EQ(f->body.size(), 8u);
  EXPECT_EQ(c.FindMethod("forward1"), nullptr);
  EXPECT_EQ((*r)[1].name, "__torch__.m.Other");
}

TEST(TsSourceTest, ParsesStatementsAndExpressions) {
  Result<std::vector<ClassDef>> r = ParseSource(kSource, "__torch__.m");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<Stmt>& body = (*r)[0].methods[0].body;
  // relu = self.relu
  EXPECT_EQ(body[0].kind, Stmt::Kind::kAssign);
  EXPECT_THAT(body[0].targets, ElementsAre("relu"));
  EXPECT_EQ(body[0].value->Dotted(), "self.relu");
  // _0 = getattr(self, "0")
  const Expr& get = *body[1].value;
  ASSERT_EQ(get.kind, Expr::Kind::kCall);
  EXPECT_EQ(get.base->Dotted(), "getattr");
  ASSERT_EQ(get.items.size(), 2u);
  EXPECT_EQ(get.items[1]->kind, Expr::Kind::kString);
  EXPECT_EQ(get.items[1]->text, "0");
  // x = (relu).forward((_0).forward(argument_1, ), ): a call whose argument is
  // a call.
  const Expr& call = *body[2].value;
  ASSERT_EQ(call.kind, Expr::Kind::kCall);
  EXPECT_EQ(call.base->Dotted(), "relu.forward");
  ASSERT_EQ(call.items.size(), 1u);
  EXPECT_EQ(call.items[0]->base->Dotted(), "_0.forward");
  // a, b, = torch.chunk(x, 2, -1)
  EXPECT_TRUE(body[3].unpack);
  EXPECT_THAT(body[3].targets, ElementsAre("a", "b"));
  EXPECT_EQ(body[3].value->items[2]->i, -1);
  // torch.full([2, 3], -inf, dtype=None, device=torch.device("cpu"))
  const Expr& full = *body[4].value;
  EXPECT_EQ(full.items[0]->kind, Expr::Kind::kList);
  EXPECT_EQ(full.items[1]->kind, Expr::Kind::kFloat);
  EXPECT_TRUE(std::isinf(full.items[1]->f) && full.items[1]->f < 0);
  ASSERT_EQ(full.kwargs.size(), 2u);
  EXPECT_EQ(full.kwargs[0].first, "dtype");
  EXPECT_EQ(full.kwargs[0].second->kind, Expr::Kind::kNone);
  EXPECT_EQ(full.kwargs[1].second->base->Dotted(), "torch.device");
  // Floats as printed with 17 digits.
  const Expr& bn = *body[5].value;
  EXPECT_EQ(bn.items[5]->kind, Expr::Kind::kBool);
  EXPECT_DOUBLE_EQ(bn.items[6]->f, 0.1);
  EXPECT_DOUBLE_EQ(bn.items[7]->f, 1e-5);
  // annotate(List[int], []): a subscript as the type.
  const Expr& ann = *body[6].value->items[0];
  EXPECT_EQ(ann.base->Dotted(), "annotate");
  EXPECT_EQ(ann.items[0]->kind, Expr::Kind::kSubscript);
  EXPECT_EQ(body[6].value->kwargs[0].second->text, "tanh");
  // return (y, CONSTANTS.c0)
  EXPECT_EQ(body[7].kind, Stmt::Kind::kReturn);
  ASSERT_EQ(body[7].value->kind, Expr::Kind::kTuple);
  EXPECT_EQ(body[7].value->items[1]->Dotted(), "CONSTANTS.c0");
}

TEST(TsSourceTest, WhatScriptedModulesUseIsAnError) {
  const std::string head =
      "class A(Module):\n  training : bool\n  def forward(self: A,\n    x: "
      "Tensor) -> Tensor:\n";
  EXPECT_THAT(
      ParseSource(head + "    if self.training:\n      x = x\n    return x\n",
                  "m")
          .status()
          .message(),
      HasSubstr("line 5: unsupported statement 'if'"));
  EXPECT_THAT(ParseSource(head + "    y = x + 1\n    return y\n", "m")
                  .status()
                  .message(),
              HasSubstr("unsupported character '+'"));
  EXPECT_THAT(
      ParseSource(head + "    for i in range(3):\n", "m").status().message(),
      HasSubstr("'for'"));
  EXPECT_THAT(ParseSource("def f(x: Tensor) -> Tensor:\n  return x\n", "m")
                  .status()
                  .message(),
              HasSubstr("unsupported top-level statement 'def'"));
  EXPECT_THAT(
      ParseSource("class A(Module):\n  eps : Final[float] = 1e-05\n", "m")
          .status()
          .message(),
      HasSubstr("unsupported class constant 'eps'"));
  EXPECT_THAT(ParseSource(head + "    return x == x\n", "m").status().message(),
              HasSubstr("'=='"));
}

TEST(TsSourceTest, ParsesOneExpression) {
  Result<ExprPtr> e = ParseExpr("[0, -2, 1.5]");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ((*e)->items.size(), 3u);
  EXPECT_EQ((*e)->items[1]->i, -2);
  EXPECT_EQ((*e)->items[2]->f, 1.5);
  Result<ExprPtr> s = ParseExpr("\"\\\"'\\\\\"");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->text, "\"'\\");
  EXPECT_FALSE(ParseExpr("(1, ").ok());
  // Nesting is bounded: 200 levels parse, 201 do not.
  EXPECT_TRUE(ParseExpr(std::string(199, '[') + std::string(199, ']')).ok());
  EXPECT_THAT(ParseExpr(std::string(201, '[') + std::string(201, ']'))
                  .status()
                  .message(),
              HasSubstr("nested too deeply"));
  EXPECT_THAT(ParseExpr(std::string(300, '-') + "1").status().message(),
              HasSubstr("nested too deeply"));
}

}  // namespace
}  // namespace torchcost::import::ts
