// Tests of rules/rnn.yaml: nn.LSTM / GRU / RNN as one aten::lstm / gru /
// rnn_tanh / rnn_relu node. Expected values are derived here from the cell
// equations (PyTorch's CPU kernels, ATen/native/RNN.cpp); MACs are also checked
// against an ATen dispatch count by tests/python/test_corpus.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/op_runner.h"
#include "torchcost/dtype.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;

// The arguments of an RNN call after `input` and `hx`.
std::vector<std::pair<std::string, OpArg>> Flags(
    std::vector<std::string> params, bool bias, int layers, bool bi,
    bool batch_first) {
  return {{"params", OpArg::TensorList(std::move(params))},
          {"has_biases", OpArg::Bool(bias)},
          {"num_layers", OpArg::Int(layers)},
          {"dropout", OpArg::Float(0.0)},
          {"train", OpArg::Bool(true)},
          {"bidirectional", OpArg::Bool(bi)},
          {"batch_first", OpArg::Bool(batch_first)}};
}

TEST(RnnRuleTest, LstmOneLayer) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  auto args = Flags({"64,8", "64,16", "64", "64"}, true, 1, false, false);
  args.insert(args.begin(), {{"input", OpArg::Tensor("5,1,8")},
                             {"hx", OpArg::TensorList({"1,1,16", "1,1,16"})}});
  OpResult res = r.Run("aten::lstm", args);
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  ASSERT_EQ(res.output_shapes.size(), 3u);
  EXPECT_EQ(res.output_shapes[0], "[5, 1, 16]");
  EXPECT_EQ(res.output_shapes[1], "[1, 1, 16]");
  // T*B = 5 pairs, H = 16, 4 gates: 4H*(I + H) = 64*24 MACs each.
  const int64_t macs = 5 * 64 * (8 + 16);
  EXPECT_EQ(res.macs, sym::Expr(macs));
  // 2 per MAC, + both biases (2*4H) and the cell (14H) per pair.
  EXPECT_EQ(res.flops, sym::Expr(2 * macs + 5 * (2 * 64 + 14 * 16)));
  // 3 sigmoids + 2 tanh per pair
  EXPECT_EQ(res.transcendentals, sym::Expr(5 * 5 * 16));
  // Saved: 7H floats per pair (gates 4H, c_{t-1}, tanh(c_t), h_{t-1}) + the
  // input [5, 1, 8].
  EXPECT_EQ(res.saved_bytes, sym::Expr(5 * 7 * 16 * 4 + 5 * 8 * 4));
}

TEST(RnnRuleTest, LstmBidirectionalTwoLayersBatchFirstWithProjection) {
  OpRunner r;
  // proj_size 4: Hout = 4, H = 16; layer 1 reads D*Hout = 8 features.
  auto args = Flags(
      {"64,8", "64,4", "64", "64", "4,16", "64,8", "64,4", "64", "64", "4,16",
       "64,8", "64,4", "64", "64", "4,16", "64,8", "64,4", "64", "64", "4,16"},
      true, 2, true, true);
  args.insert(args.begin(), {{"input", OpArg::Tensor("B,T,8")},
                             {"hx", OpArg::TensorList({"4,B,4", "4,B,16"})}});
  OpResult res = r.Run("aten::lstm", args);
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[B, T, 8]");
  EXPECT_EQ(res.output_shapes[2], "[4, B, 16]");
  sym::Expr N = r.S("B") * r.S("T");
  // Per pair and direction: layer 0 4H*(8 + 4) + projection H*4; layer 1 4H*(8
  // + 4) + H*4.
  EXPECT_EQ(res.macs, N * (2 * (64 * 12 + 64) + 2 * (64 * 12 + 64)));
}

TEST(RnnRuleTest, GruAndRnnUnbatched) {
  OpRunner r;
  auto gru = Flags({"48,8", "48,16", "48", "48"}, true, 1, false, false);
  gru.insert(gru.begin(),
             {{"input", OpArg::Tensor("5,8")}, {"hx", OpArg::Tensor("1,16")}});
  OpResult g = r.Run("aten::gru", gru);
  ASSERT_TRUE(g.errors.empty()) << g.errors[0];
  EXPECT_EQ(g.output_shapes[0], "[5, 16]");
  // 3H*(I + H) per step
  EXPECT_EQ(g.macs, sym::Expr(5 * 48 * (8 + 16)));
  // + biases 2*3H, cell 11H
  EXPECT_EQ(g.flops, sym::Expr(2 * 5 * 48 * 24 + 5 * (2 * 48 + 11 * 16)));
  auto relu = Flags({"16,8", "16,16"}, false, 1, false, false);
  relu.insert(relu.begin(), {{"input", OpArg::Tensor("5,1,8")},
                             {"hx", OpArg::Tensor("1,1,16")}});
  OpResult rr = r.Run("aten::rnn_relu", relu);
  ASSERT_TRUE(rr.errors.empty()) << rr.errors[0];
  // no biases; ih + hh, relu
  EXPECT_EQ(rr.flops, sym::Expr(2 * 5 * 16 * 24 + 5 * 2 * 16));
  EXPECT_EQ(rr.transcendentals, sym::Expr(0));
}

TEST(RnnRuleTest, InterLayerDropoutSavesAMask) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // GRU, 2 layers, dropout 0.3 in training: layer 0's output [5, 1, 16] goes
  // through at::dropout, whose float mask (80 elements) is saved beside what
  // the same GRU saves without dropout; 3 FLOPs per element forward (mask,
  // scale, multiply) and 1 in backward (grad * mask).
  auto flags = [](double p) {
    auto a = Flags({"48,8", "48,16", "48", "48", "48,16", "48,16", "48", "48"},
                   true, 2, false, false);
    a[3].second = OpArg::Float(p);
    a.insert(a.begin(), {{"input", OpArg::Tensor("5,1,8")},
                         {"hx", OpArg::Tensor("2,1,16")}});
    return a;
  };
  OpResult plain = r.Run("aten::gru", flags(0.0));
  OpResult dropped = r.Run("aten::gru", flags(0.3));
  ASSERT_TRUE(plain.errors.empty() && dropped.errors.empty());
  EXPECT_EQ(dropped.saved_bytes - plain.saved_bytes, sym::Expr(80 * 4));
  EXPECT_EQ(dropped.flops - plain.flops, sym::Expr(3 * 80));
  EXPECT_EQ(dropped.bwd_flops - plain.bwd_flops, sym::Expr(80));
  // One layer: no dropout runs, whatever p says.
  auto one = Flags({"48,8", "48,16", "48", "48"}, true, 1, false, false);
  one[3].second = OpArg::Float(0.3);
  one.insert(one.begin(), {{"input", OpArg::Tensor("5,1,8")},
                           {"hx", OpArg::Tensor("1,1,16")}});
  auto one0 = one;
  one0[5].second = OpArg::Float(0.0);
  EXPECT_EQ(r.Run("aten::gru", one).saved_bytes,
            r.Run("aten::gru", one0).saved_bytes);
}

TEST(RnnRuleTest, LstmPackedSequence) {
  OpRunner r;
  // A packed batch of lengths 5 and 2: data [7, 8], batch_sizes [5]; every
  // (step, sequence) pair runs once: 7 * 4H*(I + H) MACs.
  std::vector<std::pair<std::string, OpArg>> args = {
      {"data", OpArg::Tensor("7,8")},
      {"batch_sizes", OpArg::Tensor("5", DType::kInt64)},
      {"hx", OpArg::TensorList({"1,2,16", "1,2,16"})},
      {"params", OpArg::TensorList({"64,8", "64,16", "64", "64"})},
      {"has_biases", OpArg::Bool(true)},
      {"num_layers", OpArg::Int(1)},
      {"dropout", OpArg::Float(0.0)},
      {"train", OpArg::Bool(false)},
      {"bidirectional", OpArg::Bool(false)}};
  OpResult res = r.Run("aten::lstm.data", args);
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[7, 16]");
  EXPECT_EQ(res.macs, sym::Expr(7 * 64 * 24));
}

}  // namespace
}  // namespace torchcost
