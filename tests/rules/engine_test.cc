// Tests of the rule engine itself (parsing, patterns, expressions, errors),
// on small rules written here rather than the shipped rule files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/op_runner.h"
#include "torchcost/rules.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using testing::OpArg;
using testing::OpRunner;

constexpr const char* kRules = R"yaml(
version: 1
rules:
  - op: test::lin
    schema: "lin(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"
    match:
      input: ["*B", IN]
      weight: [OUT, IN]
      bias: [OUT]
    let:
      M: prod(B)
    outputs:
      out: ["*B", OUT]
    macs: M*IN*OUT                   # one FMA per (row, in, out)
    flops:
      fwd: 2*M*IN*OUT + if(has(bias), M*OUT, 0)
  - op: test::conv
    schema: "conv(Tensor input, Tensor weight, int[] stride=1, int[] padding=0, int groups=1) -> Tensor"
    match:
      input: [N, C, "*SP"]
      weight: [K, Cg, "*KS"]
    require:
      - C == Cg*groups
      - len(SP) == len(KS)
    let:
      OSP: floordiv(SP + 2*padding - KS, stride) + 1
    outputs:
      out: [N, K, "*OSP"]
    macs: N*K*prod(OSP)*Cg*prod(KS)
  - op: test::pick
    schema: "pick(Tensor self, bool flag) -> Tensor"
    cases:
      - when: flag
        outputs:
          out: [1]
      - outputs:
          out: {shape: self, dtype: int64}
  - op: test::bc
    schema: "bc(Tensor self, Tensor other) -> Tensor"
    outputs:
      out: broadcast(self, other)
  - op: test::sized
    schema: "sized(Tensor self, int[2] size) -> Tensor"
    outputs:
      out: ["*size", "self[0]"]
  - op: test::sizes
    schema: "sizes(Tensor self, Tensor sizes) -> Tensor"
    let:
      N: if(is_list(sizes), sum(sizes[0:-1]*min(sizes[0:-1] - sizes[1:], 1)), 0)
    outputs:
      out: [N]
  - op: test::late
    schema: "late(Tensor self, Tensor? other=None) -> Tensor"
    outputs:
      out: self
    flops:
      fwd: numel(self) + itemsize(other)
    macs: if(self[0] > 3, 1, 2)
)yaml";

TEST(EngineTest, LinearConcreteAndBias) {
  OpRunner r(kRules);
  auto res = r.Run("test::lin", {{"input", OpArg::Tensor("2,5,8")},
                                 {"weight", OpArg::Tensor("3,8")},
                                 {"bias", OpArg::Tensor("3")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[2, 5, 3]");
  EXPECT_EQ(res.macs, sym::Expr(2 * 5 /*M*/ * 8 /*IN*/ * 3 /*OUT*/));
  EXPECT_EQ(res.flops,
            sym::Expr(2 * (2 * 5 * 8 * 3) + 2 * 5 * 3 /*bias adds*/));
}

TEST(EngineTest, LinearWithoutOptionalBias) {
  OpRunner r(kRules);
  auto res = r.Run("test::lin", {{"input", OpArg::Tensor("4,8")},
                                 {"weight", OpArg::Tensor("3,8")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.flops, sym::Expr(2 * 4 * 8 * 3));
}

TEST(EngineTest, LinearSymbolic) {
  OpRunner r(kRules);
  auto res = r.Run("test::lin", {{"input", OpArg::Tensor("B,S,8")},
                                 {"weight", OpArg::Tensor("3,8")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[B, S, 3]");
  EXPECT_EQ(res.macs, r.S("B") * r.S("S") * 24);
}

TEST(EngineTest, RepeatedSymbolIsAnEqualityRequirement) {
  OpRunner r(kRules);
  auto res = r.Run("test::lin", {{"input", OpArg::Tensor("4,8")},
                                 {"weight", OpArg::Tensor("3,7")}});
  ASSERT_EQ(res.errors.size(), 1u);
  EXPECT_THAT(res.errors[0],
              HasSubstr("argument 'weight' dim 1 must equal IN; got 7 vs 8"));
  EXPECT_THAT(res.errors[0], HasSubstr("rule 'test::lin' (extra.yaml:4)"));
}

TEST(EngineTest, UnknownEqualityBecomesAnAssumption) {
  OpRunner r(kRules);
  auto res = r.Run("test::lin", {{"input", OpArg::Tensor("4,H")},
                                 {"weight", OpArg::Tensor("3,W")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  ASSERT_EQ(res.assumptions.size(), 1u);
  EXPECT_THAT(res.assumptions[0], HasSubstr("could not prove"));
}

TEST(EngineTest, ConvListArithmeticAndDefaults) {
  OpRunner r(kRules);
  auto res = r.Run("test::conv", {{"input", OpArg::Tensor("2,4,9,7")},
                                  {"weight", OpArg::Tensor("6,2,3,3")},
                                  {"stride", OpArg::Ints({2})},
                                  {"padding", OpArg::Ints({1, 0})},
                                  {"groups", OpArg::Int(2)}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  // OH = floor((9 + 2 - 3) / 2) + 1 = 5; OW = floor((7 + 0 - 3) / 2) + 1 = 3.
  EXPECT_EQ(res.output_shapes[0], "[2, 6, 5, 3]");
  EXPECT_EQ(res.macs, sym::Expr(2 /*N*/ * 6 /*K*/ * 5 * 3 /*OH*OW*/ * 2 /*Cg*/ *
                                3 * 3 /*KS*/));
}

TEST(EngineTest, ConvSymbolicSpatial) {
  OpRunner r(kRules);
  auto res = r.Run("test::conv", {{"input", OpArg::Tensor("N,3,H,H")},
                                  {"weight", OpArg::Tensor("8,3,3,3")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  sym::Expr oh = r.S("H") - 2;  // floor((H - 3) / 1) + 1
  EXPECT_EQ(res.output_shapes[0],
            "[N, 8, " + oh.ToString() + ", " + oh.ToString() + "]");
}

TEST(EngineTest, DisprovedRequirementIsAnError) {
  OpRunner r(kRules);
  auto res = r.Run("test::conv", {{"input", OpArg::Tensor("1,4,9,9")},
                                  {"weight", OpArg::Tensor("8,3,3,3")}});
  ASSERT_EQ(res.errors.size(), 1u);
  EXPECT_THAT(
      res.errors[0],
      HasSubstr("requirement 'C == Cg*groups' does not hold; got 4 vs 3"));
}

TEST(EngineTest, EvaluationErrorsNameTheExpressionAndItsPlace) {
  // test::late (extra.yaml line 52): its flops (line 57, the expression from
  // column 12) read itemsize(None): the error points at the call, 14
  // characters into the expression: column 26.
  OpRunner r(kRules);
  auto res = r.Run("test::late", {{"self", OpArg::Tensor("4")}});
  ASSERT_EQ(res.errors.size(), 1u);
  EXPECT_THAT(res.errors[0],
              HasSubstr("rule 'test::late' (extra.yaml:52): line 57, column "
                        "26, in 'numel(self) + itemsize(other)': itemsize() "
                        "needs a tensor, got None"));
  // A condition on a symbolic dim: if() cannot decide it (line 58, the
  // expression and its if() from column 11).
  auto sym = r.Run("test::late", {{"self", OpArg::Tensor("N")},
                                  {"other", OpArg::Tensor("N")}});
  ASSERT_EQ(sym.errors.size(), 1u);
  EXPECT_THAT(sym.errors[0],
              HasSubstr("line 58, column 11, in 'if(self[0] > 3, 1, 2)': "
                        "if(): the condition cannot be decided"));
}

TEST(EngineTest, RankMismatchNamesArgumentAndPattern) {
  OpRunner r(kRules);
  auto res = r.Run("test::conv", {{"input", OpArg::Tensor("4")},
                                  {"weight", OpArg::Tensor("8,3,3,3")}});
  ASSERT_EQ(res.errors.size(), 1u);
  EXPECT_THAT(res.errors[0],
              HasSubstr("argument 'input' has shape [4] (rank 1) but the "
                        "pattern [N, C, *SP] needs rank >= 2"));
}

TEST(EngineTest, CasesAndDTypes) {
  OpRunner r(kRules);
  auto a = r.Run("test::pick",
                 {{"self", OpArg::Tensor("2,3")}, {"flag", OpArg::Bool(true)}});
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(a.output_shapes[0], "[1]");
  EXPECT_EQ(a.output_dtypes[0], DType::kFloat32);
  auto b = r.Run("test::pick", {{"self", OpArg::Tensor("2,3")},
                                {"flag", OpArg::Bool(false)}});
  EXPECT_EQ(b.output_shapes[0], "[2, 3]");
  EXPECT_EQ(b.output_dtypes[0], DType::kInt64);
}

TEST(EngineTest, BroadcastRecordsUnprovenEqualities) {
  OpRunner r(kRules);
  auto ok = r.Run("test::bc", {{"self", OpArg::Tensor("B,1,4")},
                               {"other", OpArg::Tensor("3,1")}});
  ASSERT_TRUE(ok.errors.empty()) << ok.errors[0];
  EXPECT_EQ(ok.output_shapes[0], "[B, 3, 4]");
  EXPECT_TRUE(ok.assumptions.empty());
  auto unknown = r.Run("test::bc", {{"self", OpArg::Tensor("B,T")},
                                    {"other", OpArg::Tensor("B,S")}});
  ASSERT_TRUE(unknown.errors.empty()) << unknown.errors[0];
  ASSERT_EQ(unknown.assumptions.size(), 1u);
  EXPECT_THAT(unknown.assumptions[0], HasSubstr("broadcast dims T == S"));
  auto bad = r.Run("test::bc", {{"self", OpArg::Tensor("2,4")},
                                {"other", OpArg::Tensor("3,4")}});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_THAT(bad.errors[0],
              HasSubstr("shapes [2, 4] and [3, 4] do not broadcast"));
}

TEST(EngineTest, SizedListExpandsScalar) {
  OpRunner r(kRules);
  auto res = r.Run("test::sized",
                   {{"self", OpArg::Tensor("7,2")}, {"size", OpArg::Int(4)}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[4, 4, 7]");
}

// is_list tells an int list from a tensor; list arithmetic, slices and min are
// elementwise.
TEST(EngineTest, IsListAndElementwiseListArithmetic) {
  OpRunner r(kRules);
  // [4, 3, 1, 1, 1]: the values followed by a smaller one are 4 and 3.
  auto list = r.Run("test::sizes", {{"self", OpArg::Tensor("2")},
                                    {"sizes", OpArg::Ints({4, 3, 1, 1, 1})}});
  ASSERT_TRUE(list.errors.empty()) << list.errors[0];
  EXPECT_EQ(list.output_shapes[0], "[7]");
  auto tensor = r.Run("test::sizes", {{"self", OpArg::Tensor("2")},
                                      {"sizes", OpArg::Tensor("5")}});
  ASSERT_TRUE(tensor.errors.empty()) << tensor.errors[0];
  EXPECT_EQ(tensor.output_shapes[0], "[0]");
}

struct BadRule {
  const char* name;
  const char* yaml;
  const char* expected;  // Substring of the error, including file:line:col.
};

class EngineBadRuleTest : public ::testing::TestWithParam<BadRule> {};

TEST_P(EngineBadRuleTest, ReportsFileLineCol) {
  RuleSet set;
  Status s = set.AddText(GetParam().yaml, "bad.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(GetParam().expected));
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EngineBadRuleTest,
    ::testing::Values(
        BadRule{"UnknownName",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: [KW]\n",
                "bad.yaml:6:13: rule 't::a': unknown name 'KW'"},
        BadRule{"UnknownKey",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    flop: 1\n",
                "bad.yaml:5:5: unknown key 'flop'"},
        BadRule{"WorkspaceBwdAndBwdPhases",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    workspace:\n      bwd: 1\n      bwd_phases: {x: 1}\n",
                "bad.yaml:9:7: 'workspace' takes bwd or bwd_phases, not both"},
        BadRule{"WorkspaceBwdPhasesNotAMap",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    workspace:\n      bwd_phases: 1\n",
                "'bwd_phases' must be a map of input: bytes"},
        BadRule{"CollectivesWithoutGroup",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    collectives:\n      fwd: {all_reduce: numel(x)}\n",
                "bad.yaml:8:7: 'collectives' needs 'group' (the ranks that run "
                "them)"},
        BadRule{"CollectivesUnknownKey",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    collectives:\n      group: 2\n      ranks: 2\n",
                "unknown key 'ranks' in 'collectives' (group, fwd, bwd)"},
        BadRule{"CollectivesUnknownKind",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    collectives:\n      group: 2\n      fwd: {allreduce: 1}\n",
                "bad.yaml:9:13: unknown collective 'allreduce' (all_reduce, "
                "reduce_scatter, all_gather, all_to_all)"},
        BadRule{"CollectiveNotOneKind",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    collectives:\n      group: 2\n      fwd: 8\n",
                "a collective must be one KIND: BYTES"},
        BadRule{"CollectiveListNested",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    collectives:\n      group: 2\n"
                "      fwd: [[{all_reduce: 1}]]\n",
                "bad.yaml:9:13: a collective list cannot nest"},
        BadRule{"GradIntoNotAnArgument",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    grad_into: {x: y}\n",
                "bad.yaml:7:20: 'grad_into' names 'y', which is not an "
                "argument of the schema; arguments: x"},
        BadRule{"GradIntoNotAMap",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    grad_into: x\n",
                "'grad_into' must be a map of input: argument"},
        BadRule{"CollectivesNotAMap",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n"
                "    collectives: 1\n",
                "'collectives' must be a map with group, fwd and bwd"},
        BadRule{"BadSchema",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x -> "
                "Tensor\"\n",
                "bad.yaml:4:13: rule 't::a': schema column"},
        BadRule{"BadYaml", "version: 1\nrules: [\n", "bad.yaml:"},
        BadRule{"MissingVersion", "rules: []\n", "expected 'version: 1'"},
        BadRule{"UnknownFunction",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs:\n      out: x\n    "
                "macs: foo(1)\n",
                "bad.yaml:7:11: rule 't::a': unknown function 'foo'"},
        BadRule{"Duplicate",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    outputs: {out: x}\n"
                "  - op: t::a\n    schema: \"a(Tensor x) -> Tensor\"\n    "
                "outputs: {out: x}\n",
                "duplicate rule for 't::a'"},
        BadRule{"MatchNonArgument",
                "version: 1\nrules:\n  - op: t::a\n    schema: \"a(Tensor x) "
                "-> Tensor\"\n    match:\n      y: [N]\n",
                "bad.yaml:6:7: 'match' names 'y'"}),
    [](const ::testing::TestParamInfo<BadRule>& info) {
      return info.param.name;
    });

TEST(EngineTest, BuiltinRulesLoad) {
  auto rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_GT(rules->size(), 0u);
}

}  // namespace
}  // namespace torchcost

namespace torchcost {
namespace {

TEST(EngineTest, ACaseOverrideLeavesTheTopLevelForLaterCases) {
  // Case 1 overrides macs; case 2 (no when) must still see the top-level macs
  // (a YAML::Node assignment once wrote case 1's value into the shared
  // top-level node).
  testing::OpRunner r(R"(version: 1
rules:
  - op: t::pick
    schema: "pick(Tensor self, int k) -> Tensor"
    match:
      self: [N]
    outputs: {out: self}
    macs: N
    cases:
      - when: k == 1
        macs: 2*N
      - when: true
)");
  EXPECT_EQ(r.Run("t::pick", {{"self", testing::OpArg::Tensor("5")},
                              {"k", testing::OpArg::Int(1)}})
                .macs,
            sym::Expr(10));  // 2*N
  EXPECT_EQ(r.Run("t::pick", {{"self", testing::OpArg::Tensor("5")},
                              {"k", testing::OpArg::Int(0)}})
                .macs,
            sym::Expr(5));  // the top level's N
}

}  // namespace
}  // namespace torchcost
