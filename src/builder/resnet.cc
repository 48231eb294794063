// The ResNet family: torchvision's ResNet (BasicBlock for depth 18/34,
// Bottleneck v1.5 for 50/101/152) as torch.jit.trace records it on torch 1.13,
// and its variants for search spaces: blocks per stage, the block, and the
// kernel size of each stage's 3x3 convolutions.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

struct ConvBn {
  Ref conv, bn_w, bn_b, mean, var;
};

struct ResBlock {
  std::vector<ConvBn> convs;  // conv1/bn1, conv2/bn2[, conv3/bn3].
  bool has_downsample = false;
  ConvBn downsample;
  int64_t stride = 1;
};

// Blocks per stage (He et al. 2016, Table 1) and whether the block is a
// Bottleneck.
bool StagePlan(int64_t depth, std::array<int64_t, 4>& blocks,
               bool& bottleneck) {
  switch (depth) {
    case 18:
      blocks = {2, 2, 2, 2};
      bottleneck = false;
      return true;
    case 34:
      blocks = {3, 4, 6, 3};
      bottleneck = false;
      return true;
    case 50:
      blocks = {3, 4, 6, 3};
      bottleneck = true;
      return true;
    case 101:
      blocks = {3, 4, 23, 3};
      bottleneck = true;
      return true;
    case 152:
      blocks = {3, 8, 36, 3};
      bottleneck = true;
      return true;
    default:
      return false;
  }
}

// Declares the BatchNorm2d's tables; params go first, buffers are queued.
struct Tables {
  GraphBuilder& b;
  DType dtype;
  // (qualified module path, channels)
  std::vector<std::pair<std::string, int64_t>> bn_buffers;

  Ref Conv(const char* name, int64_t out, int64_t in, int64_t k) {
    ScopeGuard s(b, name, "Conv2d");
    return b.Param(b.Qualify("weight"), {out, in, k, k}, dtype);
  }
  void Bn(const char* name, int64_t c, ConvBn& cb) {
    ScopeGuard s(b, name, "BatchNorm2d");
    cb.bn_w = b.Param(b.Qualify("weight"), {c}, dtype);
    cb.bn_b = b.Param(b.Qualify("bias"), {c}, dtype);
    bn_buffers.emplace_back(b.path(), c);
  }
};

Ref ConvBnForward(GraphBuilder& b, const ConvBn& cb, const char* conv,
                  const char* bn, Ref x, int64_t k, int64_t stride) {
  const int64_t pad = k / 2;
  {
    ScopeGuard s(b, conv, "Conv2d");
    x = b.Convolution(x, cb.conv, Arg::None(), {stride, stride}, {pad, pad},
                      {1, 1}, 1);
  }
  ScopeGuard s(b, bn, "BatchNorm2d");
  return b.BatchNorm(x, cb.bn_w, cb.bn_b, cb.mean, cb.var, 0.1, 1e-5);
}

Ref Relu(GraphBuilder& b, Ref x) {
  ScopeGuard s(b, "relu", "ReLU");
  return b.Relu_(x);
}

// Parses "v1:v2:v3:v4", each an integer in [lo, hi]; false if it is not.
bool ParseStageList(const std::string& text, int64_t lo, int64_t hi,
                    std::array<int64_t, 4>& out) {
  size_t start = 0;
  for (int stage = 0; stage < 4; ++stage) {
    const size_t colon = std::min(text.find(':', start), text.size());
    const std::string item = text.substr(start, colon - start);
    if (item.empty() || item.size() >= 10 ||
        !std::all_of(item.begin(), item.end(), ::isdigit))
      return false;
    out[stage] = std::stoll(item);
    if (out[stage] < lo || out[stage] > hi) return false;
    // Exactly four items.
    if ((colon == text.size()) != (stage == 3)) return false;
    start = colon + 1;
  }
  return true;
}

}  // namespace

Result<BuiltModel> BuildResnet(const ResnetConfig& c) {
  std::array<int64_t, 4> blocks;
  std::array<int64_t, 4> kernels = {3, 3, 3, 3};
  bool bottleneck = false;
  Validator v("resnet");
  v.Require(StagePlan(c.depth, blocks, bottleneck),
            "depth=" + std::to_string(c.depth) +
                " must be one of 18, 34, 50, 101, 152");
  if (!c.blocks.empty()) {
    // blocks=n1:n2:n3:n4 replaces the plan's block counts (torchvision's
    // ResNet(block, layers)).
    v.Require(ParseStageList(c.blocks, 1, kMaxLayers, blocks),
              "blocks=" + c.blocks +
                  " must be four block counts n1:n2:n3:n4, each in [1, " +
                  std::to_string(kMaxLayers) + "]");
  }
  if (!c.block.empty()) {
    v.Require(c.block == "basic" || c.block == "bottleneck",
              "block=" + c.block + " must be basic or bottleneck");
    bottleneck = c.block == "bottleneck";
  }
  if (!c.kernels.empty()) {
    constexpr int64_t kMaxKernel = 31;
    v.Require(ParseStageList(c.kernels, 1, kMaxKernel, kernels) &&
                  std::all_of(kernels.begin(), kernels.end(),
                              [](int64_t k) { return k % 2 == 1; }),
              "kernels=" + c.kernels +
                  " must be four odd kernel sizes k1:k2:k3:k4, each in [1, " +
                  std::to_string(kMaxKernel) + "]");
  }
  v.Positive("classes", c.classes);
  v.Positive("image_size", c.image_size);
  v.Positive("width", c.width);
  v.ComputeDType("dtype", c.dtype);
  if (!v.ok()) return v.status();
  const int64_t expansion = bottleneck ? 4 : 1;
  const char* block_type = bottleneck ? "Bottleneck" : "BasicBlock";

  GraphBuilder b("ResNet", "resnet" + std::to_string(c.depth) + " (builder)");
  Ref x = b.Input("x", {"B", 3, c.image_size, c.image_size}, c.dtype);

  // Declaration pass, in registration order.
  Tables t{b, c.dtype, {}};
  ConvBn stem;
  stem.conv = t.Conv("conv1", c.width, 3, 7);
  t.Bn("bn1", c.width, stem);
  { ScopeGuard s(b, "relu", "ReLU"); }
  { ScopeGuard s(b, "maxpool", "MaxPool2d"); }
  std::vector<std::vector<ResBlock>> stages(4);
  int64_t inplanes = c.width;
  for (int stage = 0; stage < 4; ++stage) {
    ScopeGuard layer(b, "layer" + std::to_string(stage + 1), "Sequential");
    const int64_t planes = c.width << stage;
    for (int64_t i = 0; i < blocks[stage]; ++i) {
      ScopeGuard blk(b, std::to_string(i), block_type);
      ResBlock r;
      r.stride = (stage > 0 && i == 0) ? 2 : 1;
      r.convs.resize(bottleneck ? 3 : 2);
      if (bottleneck) {
        r.convs[0].conv = t.Conv("conv1", planes, inplanes, 1);
        t.Bn("bn1", planes, r.convs[0]);
        r.convs[1].conv = t.Conv("conv2", planes, planes, kernels[stage]);
        t.Bn("bn2", planes, r.convs[1]);
        r.convs[2].conv = t.Conv("conv3", planes * expansion, planes, 1);
        t.Bn("bn3", planes * expansion, r.convs[2]);
        { ScopeGuard s(b, "relu", "ReLU"); }
      } else {
        r.convs[0].conv = t.Conv("conv1", planes, inplanes, kernels[stage]);
        t.Bn("bn1", planes, r.convs[0]);
        { ScopeGuard s(b, "relu", "ReLU"); }
        r.convs[1].conv = t.Conv("conv2", planes, planes, kernels[stage]);
        t.Bn("bn2", planes, r.convs[1]);
      }
      r.has_downsample = r.stride != 1 || inplanes != planes * expansion;
      if (r.has_downsample) {
        ScopeGuard ds(b, "downsample", "Sequential");
        r.downsample.conv = t.Conv("0", planes * expansion, inplanes, 1);
        t.Bn("1", planes * expansion, r.downsample);
      }
      inplanes = planes * expansion;
      stages[stage].push_back(std::move(r));
    }
  }
  { ScopeGuard s(b, "avgpool", "AdaptiveAvgPool2d"); }
  Ref fc_w, fc_b;
  {
    ScopeGuard s(b, "fc", "Linear");
    fc_w = b.Param(b.Qualify("weight"), {c.classes, inplanes}, c.dtype);
    fc_b = b.Param(b.Qualify("bias"), {c.classes}, c.dtype);
  }
  // Buffers: running_mean, running_var, num_batches_tracked per BatchNorm2d.
  std::vector<std::pair<Ref, Ref>> stats;
  for (const auto& [path, ch] : t.bn_buffers) {
    Ref mean = b.Buffer(path + ".running_mean", {ch}, c.dtype);
    Ref var = b.Buffer(path + ".running_var", {ch}, c.dtype);
    b.Buffer(path + ".num_batches_tracked", {}, DType::kInt64);
    stats.emplace_back(mean, var);
  }
  size_t next = 0;
  auto bind = [&](ConvBn& cb) { std::tie(cb.mean, cb.var) = stats[next++]; };
  bind(stem);
  for (auto& stage : stages) {
    for (ResBlock& r : stage) {
      for (ConvBn& cb : r.convs) bind(cb);
      if (r.has_downsample) bind(r.downsample);
    }
  }

  // Forward.
  x = ConvBnForward(b, stem, "conv1", "bn1", x, 7, 2);
  x = Relu(b, x);
  {
    ScopeGuard s(b, "maxpool", "MaxPool2d");
    x = b.MaxPool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  }
  for (int stage = 0; stage < 4; ++stage) {
    ScopeGuard layer(b, "layer" + std::to_string(stage + 1), "Sequential");
    for (size_t i = 0; i < stages[stage].size(); ++i) {
      const ResBlock& r = stages[stage][i];
      ScopeGuard blk(b, std::to_string(i), block_type);
      Ref identity = x, out;
      if (bottleneck) {
        out = Relu(b, ConvBnForward(b, r.convs[0], "conv1", "bn1", x, 1, 1));
        out = Relu(b, ConvBnForward(b, r.convs[1], "conv2", "bn2", out,
                                    kernels[stage], r.stride));
        out = ConvBnForward(b, r.convs[2], "conv3", "bn3", out, 1, 1);
      } else {
        out = Relu(b, ConvBnForward(b, r.convs[0], "conv1", "bn1", x,
                                    kernels[stage], r.stride));
        out = ConvBnForward(b, r.convs[1], "conv2", "bn2", out, kernels[stage],
                            1);
      }
      if (r.has_downsample) {
        ScopeGuard ds(b, "downsample", "Sequential");
        identity = ConvBnForward(b, r.downsample, "0", "1", x, 1, r.stride);
      }
      out = b.Add_(out, identity);  // out += identity
      x = Relu(b, out);
    }
  }
  {
    ScopeGuard s(b, "avgpool", "AdaptiveAvgPool2d");
    x = b.AdaptiveAvgPool2d(x, {1, 1});
  }
  x = b.Flatten(x, 1, -1);
  {
    ScopeGuard s(b, "fc", "Linear");
    x = b.Linear(x, fc_w, fc_b);
  }
  b.Output(x);
  // An image classifier's loss over classes (src/training/loss.cc).
  b.DefaultLoss("cross_entropy");
  return b.Finish();
}

}  // namespace torchcost::builder
