// Backward FLOPs in every rule (issue 3, point 2): an audit of the builtin
// rules, and concrete backward formulas checked through the analysis.
//
// The audit: every variant of every rule must give `flops.bwd.<input>` for each
// of its tensor arguments that can receive a gradient. Zero by design (views,
// copies, casts, piecewise-constant functions) is written as an explicit `0`
// in the rule file, so "zero" and "missing" stay distinguishable. What cannot
// receive a gradient is listed below, each entry with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rules/apply.h"
#include "rules/op_rule.h"
#include "rules/schema.h"
#include "testing/op_runner.h"
#include "torchcost/rules.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;

// Ops whose outputs never require a gradient. A rule is exempt only if every
// op it covers is listed here.
const std::set<std::string>& NonDifferentiableOps() {
  static const std::set<std::string> ops = {
      // Comparisons and logic: bool outputs.
      "aten::eq",
      "aten::ne",
      "aten::lt",
      "aten::le",
      "aten::gt",
      "aten::ge",
      "aten::eq.Scalar",
      "aten::ne.Scalar",
      "aten::lt.Scalar",
      "aten::le.Scalar",
      "aten::gt.Scalar",
      "aten::ge.Scalar",
      "aten::logical_and",
      "aten::logical_or",
      "aten::logical_xor",
      "aten::logical_not",
      "aten::isnan",
      "aten::isinf",
      "aten::isfinite",
      // Index and bool reductions: int64 / bool outputs.
      "aten::argmax",
      "aten::argsort",
      "aten::argmin",
      "aten::all",
      "aten::any",
      // *_like factories read only self's shape and dtype: the result is a
      // new tensor that does not require a gradient.
      "aten::zeros_like",
      "aten::ones_like",
      "aten::empty_like",
      "aten::rand_like",
      "aten::randn_like",
      "aten::full_like",
      // self.new_zeros(size) and friends: self gives the dtype only.
      "aten::new_zeros",
      "aten::new_ones",
      "aten::new_empty",
      "aten::new_full",
      // detach's result does not require a gradient, by definition.
      "aten::detach",
      "aten::detach_",
  };
  return ops;
}

// Tensor arguments that never receive a gradient, whatever the op.
const std::set<std::string>& NonDifferentiableArgNames() {
  static const std::set<std::string> names = {
      // embedding, embedding_bag: int64 lookups (derivatives.yaml:
      // non_differentiable).
      "indices",
      // embedding_bag: int64 bag boundaries (non_differentiable).
      "offsets",
      // masked_fill: a bool mask.
      "mask",
      // where: a bool condition.
      "condition",
      // batch_norm, instance_norm: buffers, updated in place under no_grad;
      // derivatives.yaml gives them no formula.
      "running_mean",
      "running_var",
      // Losses: the labels (no loss is ruled yet; listed for when one is).
      "target",
  };
  return names;
}

// (op, argument) pairs that never receive a gradient: tensors read only for
// their shape or dtype.
const std::set<std::pair<std::string, std::string>>& NonDifferentiableArgs() {
  static const std::set<std::pair<std::string, std::string>> args = {
      // view_as(other) = view(other.sizes()): the shape only.
      {"aten::view_as", "other"},
      // expand_as(other) = expand(other.sizes()): the shape only.
      {"aten::expand_as", "other"},
      // type_as(other) = to(other.dtype()): the dtype only.
      {"aten::type_as", "other"},
      // to.other: other's dtype and device only.
      {"aten::to", "other"},
  };
  return args;
}

bool RuleIsNonDifferentiable(const rules::OpRule& rule) {
  return std::all_of(rule.ops.begin(), rule.ops.end(),
                     [](const std::string& op) {
                       return NonDifferentiableOps().count(op) > 0;
                     });
}

bool ArgIsNonDifferentiable(const rules::OpRule& rule, const std::string& arg) {
  if (NonDifferentiableArgNames().count(arg)) return true;
  return std::any_of(rule.ops.begin(), rule.ops.end(),
                     [&](const std::string& op) {
                       return NonDifferentiableArgs().count({op, arg}) > 0;
                     });
}

// Lists "op(arg) at file:line" for every differentiable tensor argument of a
// variant that has no backward FLOPs.
std::vector<std::string> MissingBackwardFlops(const RuleSet& rs) {
  std::vector<std::string> missing;
  std::set<const rules::OpRule*> seen;
  for (const std::string& name : rs.OpNames()) {
    const rules::OpRule* rule = rs.Find(name);
    if (rule == nullptr || !seen.insert(rule).second) continue;
    if (RuleIsNonDifferentiable(*rule)) continue;
    for (size_t vi = 0; vi < rule->variants.size(); ++vi) {
      const rules::Variant& v = rule->variants[vi];
      for (size_t a = 0; a < rule->schema.args.size(); ++a) {
        const rules::SchemaArg& arg = rule->schema.args[a];
        if (arg.type.base != rules::ArgType::Base::kTensor) continue;
        if (ArgIsNonDifferentiable(*rule, arg.name)) continue;
        if (!v.differentiable_args.empty() &&
            std::find(v.differentiable_args.begin(),
                      v.differentiable_args.end(),
                      static_cast<int>(a)) == v.differentiable_args.end()) {
          continue;  // `differentiable: [...]` leaves it out.
        }
        const bool has = std::any_of(v.flops_bwd.begin(), v.flops_bwd.end(),
                                     [&](const rules::GradCost& g) {
                                       return g.arg == static_cast<int>(a);
                                     });
        if (!has) {
          std::string where = rule->ops[0] + "(" + arg.name + ")";
          if (rule->variants.size() > 1)
            where += " case " + std::to_string(vi + 1);
          missing.push_back(where + " at " + rule->file + ":" +
                            std::to_string(rule->line));
        }
      }
    }
  }
  return missing;
}

TEST(BackwardFlopsTest, EveryDifferentiableInputHasBackwardFlops) {
  Result<RuleSet> rs = RuleSet::Builtin();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  std::vector<std::string> missing = MissingBackwardFlops(*rs);
  std::string list;
  for (const auto& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty())
      << missing.size() << " differentiable inputs without flops.bwd:" << list;
}

// The audit itself: a missing entry is reported, an explicit 0 is not, and
// allow-listed arguments are skipped.
TEST(BackwardFlopsTest, AuditReportsMissingAndAcceptsExplicitZero) {
  RuleSet rs;
  ASSERT_TRUE(rs.AddText(R"(version: 1
rules:
  - op: test::missing
    schema: "missing(Tensor self, Tensor other) -> Tensor"
    outputs:
      out: self
    flops:
      bwd:
        self: numel(self)
  - op: test::zero
    schema: "zero(Tensor self, Tensor mask) -> Tensor"
    outputs:
      out: self
    flops:
      bwd:
        self: 0
  - op: test::cases
    schema: "cases(Tensor self, bool b) -> Tensor"
    outputs:
      out: self
    cases:
      - when: b
        flops:
          bwd:
            self: 0
      - flops:
          fwd: 1
)",
                         "audit.yaml")
                  .ok());
  std::vector<std::string> missing = MissingBackwardFlops(rs);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0], "test::cases(self) case 2 at audit.yaml:17");
  EXPECT_EQ(missing[1], "test::missing(other) at audit.yaml:3");
}

// The allow-lists name only ops that exist, so that a renamed rule cannot
// silently keep an exemption.
TEST(BackwardFlopsTest, AllowListsNameRuledOps) {
  Result<RuleSet> rs = RuleSet::Builtin();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  for (const auto& op : NonDifferentiableOps())
    EXPECT_NE(rs->Find(op), nullptr) << op;
  for (const auto& [op, arg] : NonDifferentiableArgs()) {
    const rules::OpRule* rule = rs->Find(op);
    ASSERT_NE(rule, nullptr) << op;
    EXPECT_GE(rule->schema.FindArg(arg), 0) << op << " has no argument " << arg;
  }
}

// Every backward cost names a tensor argument (a cost on an int argument
// would never be counted).
TEST(BackwardFlopsTest, BackwardCostsNameTensorArguments) {
  Result<RuleSet> rs = RuleSet::Builtin();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  std::set<const rules::OpRule*> seen;
  for (const std::string& name : rs->OpNames()) {
    const rules::OpRule* rule = rs->Find(name);
    if (rule == nullptr || !seen.insert(rule).second) continue;
    for (const rules::Variant& v : rule->variants) {
      for (const auto* costs : {&v.flops_bwd, &v.trans_bwd}) {
        for (const rules::GradCost& g : *costs) {
          ASSERT_GE(g.arg, 0) << rule->ops[0];
          EXPECT_EQ(rule->schema.args[g.arg].type.base,
                    rules::ArgType::Base::kTensor)
              << rule->ops[0] << ": backward cost for "
              << rule->schema.args[g.arg].name;
        }
      }
    }
  }
}

// ---- Concrete backward formulas, through the whole analysis ----

// Expressions compare by their canonical text, so failures print readably.
std::string T(const sym::Expr& e) { return e.ToString(); }

OpRunner GradRunner() {
  OpRunner r;
  r.set_mode(StepMode::kTrain);
  r.set_inputs_require_grad(true);
  return r;
}

// Runs `op` and returns its backward FLOPs, failing the test on errors.
sym::Expr Bwd(OpRunner& r, const std::string& op,
              const std::vector<std::pair<std::string, OpArg>>& args) {
  OpResult res = r.Run(op, args);
  EXPECT_TRUE(res.has_rule) << op;
  EXPECT_TRUE(res.errors.empty())
      << op << ": " << (res.errors.empty() ? "" : res.errors[0]);
  return res.bwd_flops;
}

TEST(BackwardFlopsTest, UnaryPointwise) {
  OpRunner r = GradRunner();
  const auto x = OpArg::Tensor("4,8");  // E = 32
  // exp: grad * result, 1 mul per element.
  EXPECT_EQ(T(Bwd(r, "aten::exp", {{"self", x}})), T(sym::Expr(32)));
  // log: grad / self, 1 div.
  EXPECT_EQ(T(Bwd(r, "aten::log", {{"self", x}})), T(sym::Expr(32)));
  // sqrt: grad / (2 * result): mul, div.
  EXPECT_EQ(T(Bwd(r, "aten::sqrt", {{"self", x}})), T(sym::Expr(2 * 32)));
  // rsqrt: -0.5 * grad * result^3: 2 muls for the cube, 2 muls.
  EXPECT_EQ(T(Bwd(r, "aten::rsqrt", {{"self", x}})), T(sym::Expr(4 * 32)));
  // tanh: grad * (1 - y*y): mul, sub, mul.
  EXPECT_EQ(T(Bwd(r, "aten::tanh", {{"self", x}})), T(sym::Expr(3 * 32)));
  // erf: 2/sqrt(pi) * exp(-x^2) * grad: square, mul, mul (+ 1 exp).
  EXPECT_EQ(T(Bwd(r, "aten::erf", {{"self", x}})), T(sym::Expr(3 * 32)));
  // abs: grad * sign(self): sign, mul.
  EXPECT_EQ(T(Bwd(r, "aten::abs", {{"self", x}})), T(sym::Expr(2 * 32)));
  // neg: -grad, 1 per element; floor: zero gradient, 0 FLOPs.
  EXPECT_EQ(T(Bwd(r, "aten::neg", {{"self", x}})), T(sym::Expr(32)));
  EXPECT_EQ(T(Bwd(r, "aten::floor", {{"self", x}})), T(sym::Expr(0)));
  // pow(x, 0.5): grad * 0.5 * x^(-0.5): 2 muls (+ 1 pow).
  EXPECT_EQ(T(Bwd(r, "aten::pow.Tensor_Scalar",
                  {{"self", x}, {"exponent", OpArg::Float(0.5)}})),
            T(sym::Expr(2 * 32)));
  // pow(x, 1): grad * (1 * x^0), 2 muls (x^0 is a fill); pow(x, 0): zeros.
  EXPECT_EQ(T(Bwd(r, "aten::pow.Tensor_Scalar",
                  {{"self", x}, {"exponent", OpArg::Int(1)}})),
            T(sym::Expr(2 * 32)));
  EXPECT_EQ(T(Bwd(r, "aten::pow.Tensor_Scalar",
                  {{"self", x}, {"exponent", OpArg::Int(0)}})),
            T(sym::Expr(0)));
}

TEST(BackwardFlopsTest, BinaryPointwise) {
  OpRunner r = GradRunner();
  // maximum of [4, 8] and [4, 8] (E = 32), both need gradients: each is
  // where(a == b, grad / 2, grad).masked_fill_(a < b, 0): compare, div, where,
  // compare, masked_fill = 5 per element, so 2 * 5 * 32.
  EXPECT_EQ(
      T(Bwd(r, "aten::maximum",
            {{"self", OpArg::Tensor("4,8")}, {"other", OpArg::Tensor("4,8")}})),
      T(sym::Expr(2 * 5 * 32)));
  // addcdiv: self gets grad (0), tensor1 grad * (value / tensor2) (2),
  // tensor2 -grad * value * tensor1 / tensor2^2 (4): 6 per element.
  EXPECT_EQ(T(Bwd(r, "aten::addcdiv",
                  {{"self", OpArg::Tensor("4,8")},
                   {"tensor1", OpArg::Tensor("4,8")},
                   {"tensor2", OpArg::Tensor("4,8")}})),
            T(sym::Expr(6 * 32)));
  // addcmul: each factor's gradient grad * (other * value): 2 per element each.
  EXPECT_EQ(T(Bwd(r, "aten::addcmul",
                  {{"self", OpArg::Tensor("4,8")},
                   {"tensor1", OpArg::Tensor("4,8")},
                   {"tensor2", OpArg::Tensor("4,8")}})),
            T(sym::Expr(4 * 32)));
  // where: condition (bool) needs no gradient; self and other 1 select each.
  EXPECT_EQ(T(Bwd(r, "aten::where",
                  {{"condition", OpArg::Tensor("4,8", DType::kBool)},
                   {"self", OpArg::Tensor("4,8")},
                   {"other", OpArg::Tensor("4,8")}})),
            T(sym::Expr(2 * 32)));
  // lerp(self, end, w): self grad * (1 - w), end grad * w: 1 + 1 per element.
  EXPECT_EQ(T(Bwd(r, "aten::lerp",
                  {{"self", OpArg::Tensor("4,8")},
                   {"end", OpArg::Tensor("4,8")},
                   {"weight", OpArg::Float(0.25)}})),
            T(sym::Expr(2 * 32)));
}

TEST(BackwardFlopsTest, ClampRoundingAndPowers) {
  OpRunner r = GradRunner();
  const auto x = OpArg::Tensor("4,8");  // E = 32
  // clamp(self, min, max) with tensor bounds, all three needing gradients:
  // self where(min <= x <= max): 2 compares, and, select (4); min where(x < min
  // and min < max) (4); max likewise (4): 12 per element.
  EXPECT_EQ(
      T(Bwd(r, "aten::clamp.Tensor", {{"self", x}, {"min", x}, {"max", x}})),
      T(sym::Expr(12 * 32)));
  // One bound: self compare, select (2); min compare, select (2).
  EXPECT_EQ(T(Bwd(r, "aten::clamp.Tensor",
                  {{"self", x}, {"min", x}, {"max", OpArg::None()}})),
            T(sym::Expr(4 * 32)));
  // Rounding division: piecewise constant, zero gradients; true division:
  // grad / other (1) and -grad * self / other^2 (3).
  EXPECT_EQ(
      T(Bwd(
          r, "aten::div.Tensor_mode",
          {{"self", x}, {"other", x}, {"rounding_mode", OpArg::Str("floor")}})),
      T(sym::Expr(0)));
  EXPECT_EQ(
      T(Bwd(r, "aten::div.Tensor_mode",
            {{"self", x}, {"other", x}, {"rounding_mode", OpArg::None()}})),
      T(sym::Expr(4 * 32)));
  // rsub(self, other, alpha=2) = other - 2*self: self gets -grad * 2 (1),
  // other gets grad (0).
  EXPECT_EQ(T(Bwd(r, "aten::rsub",
                  {{"self", x}, {"other", x}, {"alpha", OpArg::Int(2)}})),
            T(sym::Expr(32)));
  // atan2: recip = 1 / (a*a + b*b) (4), self grad * b * recip (2), other
  // grad * -a * recip (2).
  EXPECT_EQ(T(Bwd(r, "aten::atan2", {{"self", x}, {"other", x}})),
            T(sym::Expr(8 * 32)));
  // pow(self, exponent), both tensors: self grad * e * x^(e - 1) (3), exponent
  // grad * where(x == 0 & e >= 0, 0, result * log(x)) (6).
  EXPECT_EQ(T(Bwd(r, "aten::pow", {{"self", x}, {"exponent", x}})),
            T(sym::Expr(9 * 32)));
  // remainder: self grad (0); other -grad * floor(self / other): div, floor,
  // mul (3).
  EXPECT_EQ(T(Bwd(r, "aten::remainder", {{"self", x}, {"other", x}})),
            T(sym::Expr(3 * 32)));
}

TEST(BackwardFlopsTest, DropoutVariants) {
  OpRunner r = GradRunner();
  // alpha_dropout_ in training: grad * mask * a, 2 per element.
  EXPECT_EQ(T(Bwd(r, "aten::alpha_dropout_",
                  {{"self", OpArg::Tensor("4,8")},
                   {"p", OpArg::Float(0.5)},
                   {"train", OpArg::Bool(true)}})),
            T(sym::Expr(2 * 32)));
  // p = 0: the input itself, no FLOPs.
  EXPECT_EQ(T(Bwd(r, "aten::dropout",
                  {{"input", OpArg::Tensor("4,8")},
                   {"p", OpArg::Float(0.0)},
                   {"train", OpArg::Bool(true)}})),
            T(sym::Expr(0)));
}

TEST(BackwardFlopsTest, ViewsAndCopiesAreFree) {
  OpRunner r = GradRunner();
  EXPECT_EQ(
      T(Bwd(r, "aten::view",
            {{"self", OpArg::Tensor("4,8")}, {"size", OpArg::Ints({32})}})),
      T(sym::Expr(0)));
  EXPECT_EQ(T(Bwd(r, "aten::transpose",
                  {{"self", OpArg::Tensor("4,8")},
                   {"dim0", OpArg::Int(0)},
                   {"dim1", OpArg::Int(1)}})),
            T(sym::Expr(0)));
  EXPECT_EQ(T(Bwd(r, "aten::contiguous", {{"self", OpArg::Tensor("4,8")}})),
            T(sym::Expr(0)));
  // cat: each input's gradient is a slice of grad.
  EXPECT_EQ(T(Bwd(r, "aten::cat",
                  {{"tensors", OpArg::TensorList({"4,8", "4,8"})},
                   {"dim", OpArg::Int(0)}})),
            T(sym::Expr(0)));
  // constant padding: the gradient is a slice of grad; reflection padding adds
  // every output gradient into an input position: numel(out) = 4*(8+2+2).
  EXPECT_EQ(
      T(Bwd(r, "aten::constant_pad_nd",
            {{"self", OpArg::Tensor("4,8")}, {"pad", OpArg::Ints({2, 2})}})),
      T(sym::Expr(0)));
  EXPECT_EQ(T(Bwd(r, "aten::pad",
                  {{"self", OpArg::Tensor("4,8")},
                   {"pad", OpArg::Ints({2, 2})},
                   {"mode", OpArg::Str("reflect")}})),
            T(sym::Expr(4 * 12)));
}

TEST(BackwardFlopsTest, ExpandSumsOverTheExpandedDims) {
  OpRunner r = GradRunner();
  // [1, 8] expanded to [N, 8]: sum_to over the batch dim, N*8 - 8 adds.
  sym::Expr n = r.S("N");
  EXPECT_EQ(
      T(Bwd(r, "aten::expand",
            {{"self", OpArg::Tensor("1,8")}, {"size", OpArg::Ints({-1, 8})}})),
      T(sym::Expr(0)));
  EXPECT_EQ(
      T(Bwd(r, "aten::expand_as",
            {{"self", OpArg::Tensor("1,8")}, {"other", OpArg::Tensor("N,8")}})),
      T(n * 8 - 8));
  // [8] expanded to [3, 5, 8]: 120 - 8 adds.
  EXPECT_EQ(
      T(Bwd(r, "aten::expand",
            {{"self", OpArg::Tensor("8")}, {"size", OpArg::Ints({3, 5, 8})}})),
      T(sym::Expr(120 - 8)));
}

TEST(BackwardFlopsTest, Reductions) {
  OpRunner r = GradRunner();
  // max over all of [4, 8]: evenly_distribute_backward: compare with the max,
  // count the maxima, masked_fill: 3 per input element.
  EXPECT_EQ(T(Bwd(r, "aten::max", {{"self", OpArg::Tensor("4,8")}})),
            T(sym::Expr(3 * 32)));
  // cumsum: grad.flip().cumsum().flip(): 1 add per element.
  EXPECT_EQ(T(Bwd(r, "aten::cumsum",
                  {{"self", OpArg::Tensor("4,8")}, {"dim", OpArg::Int(1)}})),
            T(sym::Expr(32)));
  // prod over all of [4, 8]: test self == 0, grad * (result / self): 3 per
  // element.
  EXPECT_EQ(T(Bwd(r, "aten::prod", {{"self", OpArg::Tensor("4,8")}})),
            T(sym::Expr(3 * 32)));
  // cumprod: test self == 0, reversed cumsum of grad * result, / self: 4 per
  // element.
  EXPECT_EQ(T(Bwd(r, "aten::cumprod",
                  {{"self", OpArg::Tensor("4,8")}, {"dim", OpArg::Int(1)}})),
            T(sym::Expr(4 * 32)));
  // logsumexp over dim 1: grad * exp(self - result): sub, mul per input
  // element (+ 1 exp).
  EXPECT_EQ(T(Bwd(r, "aten::logsumexp",
                  {{"self", OpArg::Tensor("4,8")}, {"dim", OpArg::Ints({1})}})),
            T(sym::Expr(2 * 32)));
}

TEST(BackwardFlopsTest, EmbeddingBagPerSampleWeights) {
  OpRunner r = GradRunner();
  // weight [100, 16], 10 indices in 2 bags, per-sample weights [10]:
  // grad(weight) adds 10 rows of 16 (160); grad(per_sample_weights) is a dot
  // of each bag's grad row with its weight row: 2*16 per index (320).
  OpResult res = r.Run("aten::embedding_bag",
                       {{"weight", OpArg::Tensor("100,16")},
                        {"indices", OpArg::Tensor("10", DType::kInt64)},
                        {"offsets", OpArg::Tensor("2", DType::kInt64)},
                        {"scale_grad_by_freq", OpArg::Bool(false)},
                        {"mode", OpArg::Int(0)},
                        {"sparse", OpArg::Bool(false)},
                        {"per_sample_weights", OpArg::Tensor("10")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(T(res.bwd_flops), T(sym::Expr(160 + 320)));
}

TEST(BackwardFlopsTest, SoftplusAndMish) {
  OpRunner r = GradRunner();
  // softplus: z = exp(beta*x); x*beta > threshold ? grad : grad * z / (z + 1):
  // mul, compare, add, div, mul = 5 per element.
  EXPECT_EQ(T(Bwd(r, "aten::softplus", {{"self", OpArg::Tensor("4,8")}})),
            T(sym::Expr(5 * 32)));
  // mish: sigmoid (add, div), tanh(softplus) squared (mul), 1 - t^2, x*sigmoid,
  // *(1 - t^2), + t, * grad = 8 per element.
  EXPECT_EQ(T(Bwd(r, "aten::mish", {{"self", OpArg::Tensor("4,8")}})),
            T(sym::Expr(8 * 32)));
}

// Only inputs that need a gradient are counted; an integer tensor never does.
TEST(BackwardFlopsTest, IntegerOperandNeedsNoGradient) {
  OpRunner r = GradRunner();
  // div of float [4, 8] by an int64 [4, 8]: only self's grad / other, 32.
  EXPECT_EQ(T(Bwd(r, "aten::div",
                  {{"self", OpArg::Tensor("4,8")},
                   {"other", OpArg::Tensor("4,8", DType::kInt64)}})),
            T(sym::Expr(32)));
}

// ---- Backward transcendentals (not in the report: checked on the rule) ----

// Applies the builtin rule of `op` to single tensor `self` [4, 8] and returns
// its backward transcendentals for `self`.
sym::Expr BwdTranscendentals(
    const std::string& op,
    std::vector<std::pair<std::string, rules::RValue>> extra = {}) {
  static Result<RuleSet> rs = RuleSet::Builtin();
  static sym::Context ctx;
  const rules::OpRule* rule = rs->Find(op);
  EXPECT_NE(rule, nullptr) << op;
  if (rule == nullptr) return sym::Expr(-1);
  std::vector<rules::RValue> values(rule->schema.args.size());
  std::vector<const rules::RValue*> args(rule->schema.args.size(), nullptr);
  rules::TensorType t;
  t.shape = {sym::Expr(4), sym::Expr(8)};
  t.dtype = DType::kFloat32;
  extra.insert(extra.begin(), {"self", rules::RValue::Tensor(t)});
  for (auto& [name, v] : extra) {
    int a = rule->schema.FindArg(name);
    EXPECT_GE(a, 0) << op << " " << name;
    if (a < 0) continue;
    values[a] = v;
    args[a] = &values[a];
  }
  rules::Applied applied;
  Status s = rules::ApplyRule(*rule, args, ctx, &applied);
  EXPECT_TRUE(s.ok()) << s.message();
  sym::Expr total(0);
  for (const auto& [arg, e] : applied.bwd_transcendentals) total = total + e;
  return total;
}

TEST(BackwardFlopsTest, BackwardTranscendentals) {
  // exp, tanh: the backward reads the result, no new function evaluation.
  EXPECT_EQ(T(BwdTranscendentals("aten::exp")), T(sym::Expr(0)));
  EXPECT_EQ(T(BwdTranscendentals("aten::tanh")), T(sym::Expr(0)));
  // sin: grad * cos(self), 1 per element; erf: exp(-x^2), 1; erfinv: erfinv and
  // exp, 2.
  EXPECT_EQ(T(BwdTranscendentals("aten::sin")), T(sym::Expr(32)));
  EXPECT_EQ(T(BwdTranscendentals("aten::erf")), T(sym::Expr(32)));
  EXPECT_EQ(T(BwdTranscendentals("aten::erfinv")), T(sym::Expr(64)));
  // asin: rsqrt(1 - x^2), 1.
  EXPECT_EQ(T(BwdTranscendentals("aten::asin")), T(sym::Expr(32)));
  // pow(x, 2.5): x^1.5, 1; pow(x, 2): x*2, none.
  EXPECT_EQ(T(BwdTranscendentals("aten::pow.Tensor_Scalar",
                                 {{"exponent", rules::RValue::Float(2.5)}})),
            T(sym::Expr(32)));
  EXPECT_EQ(
      T(BwdTranscendentals("aten::pow.Tensor_Scalar",
                           {{"exponent", rules::RValue::Int(sym::Expr(2))}})),
      T(sym::Expr(0)));
  // softplus: exp(beta*x), 1; mish: exp for the sigmoid, exp and log1p for the
  // softplus, tanh: 4.
  EXPECT_EQ(T(BwdTranscendentals("aten::softplus")), T(sym::Expr(32)));
  EXPECT_EQ(T(BwdTranscendentals("aten::mish")), T(sym::Expr(4 * 32)));
  // logsumexp: exp(self - result), 1 per input element.
  EXPECT_EQ(
      T(BwdTranscendentals("aten::logsumexp",
                           {{"dim", rules::RValue::IntList({sym::Expr(1)})}})),
      T(sym::Expr(32)));
}

}  // namespace
}  // namespace torchcost
