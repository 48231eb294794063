// The rules of the toy ops that analysis tests build graphs from: t::lin, a
// bias-free linear layer, and t::relu, with FLOPs and saved tensors simple
// enough to derive by hand in each test.
#ifndef TORCHCOST_TESTS_TESTING_TOY_RULES_H_
#define TORCHCOST_TESTS_TESTING_TOY_RULES_H_

namespace torchcost::testing {

// t::lin(input [M, IN], weight [OUT, IN]) -> [M, OUT]: 2*M*IN*OUT FLOPs each
// way; saves input (for the weight's gradient) and weight (for the input's).
// t::relu(self) -> self's shape: numel FLOPs each way; saves its output.
inline constexpr const char kToyRules[] = R"yaml(
version: 1
rules:
  - op: t::lin
    schema: "lin(Tensor input, Tensor weight) -> Tensor"
    match:
      input: [M, IN]
      weight: [OUT, IN]
    outputs:
      out: [M, OUT]
    macs: M*IN*OUT
    flops:
      fwd: 2*M*IN*OUT
      bwd:
        input: 2*M*IN*OUT        # grad @ weight
        weight: 2*M*IN*OUT       # grad^T @ input
    saved:
      input: {needed_for: [weight]}
      weight: {needed_for: [input]}
  - op: t::relu
    schema: "relu(Tensor self) -> Tensor"
    outputs:
      out: self
    flops:
      fwd: numel(self)
      bwd:
        self: numel(self)
    saved:
      out: {needed_for: [self]}
)yaml";

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TOY_RULES_H_
