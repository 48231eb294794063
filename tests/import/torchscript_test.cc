// Tests of the TorchScript frontend on fixtures that tools/make_fixtures.py
// traces (and scripts) with Debian's torch at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "torchcost/graph.h"
#include "torchcost/import.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const char kFixtureDir[] = TORCHCOST_BINARY_DIR "/fixtures";

class TorchScriptImportTest : public ::testing::Test {
 protected:
  // Generates the fixtures once; make_fixtures.py skips files that exist.
  static void SetUpTestSuite() {
    const std::string command =
        std::string("/usr/bin/python3 \"") + TORCHCOST_SOURCE_DIR +
        "/tools/make_fixtures.py\" \"" + kFixtureDir +
        "\" --models lenet5,resnet18,tiny,scripted,scripted_if,tied";
    fixtures_status_ = std::system(command.c_str());
  }

  void SetUp() override {
    if (!TORCHCOST_WITH_LIBTORCH)
      GTEST_SKIP() << "built without LibTorch (TORCHCOST_WITH_LIBTORCH=OFF)";
    ASSERT_EQ(fixtures_status_, 0) << "tools/make_fixtures.py failed";
  }

  static std::string Fixture(const std::string& name) {
    return std::string(kFixtureDir) + "/" + name;
  }

  // Imports a fixture, failing the test on error.
  static ir::Graph Import(const std::string& name) {
    Result<ir::Graph> g = ImportTorchScript(Fixture(name));
    EXPECT_TRUE(g.ok()) << g.status().message();
    return g.ok() ? std::move(g).value() : ir::Graph();
  }

  static int64_t Numel(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  static int64_t ParamCount(const ir::Graph& g) {
    int64_t total = 0;
    for (const ir::TensorEntry& p : g.params) total += Numel(p.shape);
    return total;
  }

  static const ir::TensorEntry* FindParam(const ir::Graph& g,
                                          const std::string& name) {
    for (const ir::TensorEntry& p : g.params) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }

  static int FindScope(const ir::Graph& g, const std::string& path) {
    for (size_t i = 0; i < g.scopes.size(); ++i) {
      if (g.scopes[i].path == path) return static_cast<int>(i);
    }
    return -1;
  }

  static std::vector<const ir::Node*> NodesWithOp(const ir::Graph& g,
                                                  const std::string& op) {
    std::vector<const ir::Node*> found;
    for (const ir::Node& n : g.nodes) {
      if (n.op == op) found.push_back(&n);
    }
    return found;
  }

  // Returns the input of `n` bound to schema argument `name`, or -1.
  static int Arg(const ir::Node& n, const std::string& name) {
    for (size_t i = 0; i < n.input_names.size(); ++i) {
      if (n.input_names[i] == name) return n.inputs[i];
    }
    return -1;
  }

  static int fixtures_status_;
};

int TorchScriptImportTest::fixtures_status_ = -1;

TEST_F(TorchScriptImportTest, ResNet18ParamCount) {
  ir::Graph g = Import("resnet18.pt");
  auto conv = [](int64_t k, int64_t c, int64_t r) {
    return k * c * r * r;
  };                                          // No bias.
  auto bn = [](int64_t c) { return 2 * c; };  // weight + bias.
  // A BasicBlock: two 3x3 convs with their batch norms, plus a 1x1 downsample
  // if cin != cout.
  auto block = [&](int64_t cin, int64_t cout) {
    const int64_t down = cin == cout ? 0 : conv(cout, cin, 1) + bn(cout);
    return conv(cout, cin, 3) + bn(cout) + conv(cout, cout, 3) + bn(cout) +
           down;
  };
  const int64_t expected = conv(64, 3, 7) + bn(64) +            // stem
                           block(64, 64) + block(64, 64) +      // layer1
                           block(64, 128) + block(128, 128) +   // layer2
                           block(128, 256) + block(256, 256) +  // layer3
                           block(256, 512) + block(512, 512) +  // layer4
                           512 * 1000 + 1000;                   // fc
  EXPECT_EQ(expected, 11689512);
  EXPECT_EQ(ParamCount(g), expected);
  // Buffers: running_mean, running_var and num_batches_tracked for each of 20
  // batch norms.
  EXPECT_EQ(g.buffers.size(), 3u * 20);
}

TEST_F(TorchScriptImportTest, ResNet18Scopes) {
  ir::Graph g = Import("resnet18.pt");
  ASSERT_FALSE(g.scopes.empty());
  EXPECT_EQ(g.scopes[0].path, "");
  EXPECT_EQ(g.scopes[0].name, "ResNet");
  EXPECT_EQ(g.scopes[0].type, "ResNet");
  const int conv = FindScope(g, "layer1.0.conv1");
  ASSERT_GE(conv, 0);
  EXPECT_EQ(g.scopes[conv].type, "Conv2d");
  EXPECT_EQ(g.scopes[conv].name, "conv1");
  EXPECT_EQ(g.scopes[conv].depth, 3);
  const int block = g.scopes[conv].parent;
  ASSERT_GE(block, 0);
  EXPECT_EQ(g.scopes[block].path, "layer1.0");
  EXPECT_EQ(g.scopes[block].type, "BasicBlock");
  EXPECT_EQ(g.scopes[g.scopes[block].parent].type, "Sequential");
  // Root, then registration order: conv1, bn1, relu, maxpool, layer1, ...
  std::vector<std::string> root_children;
  for (int c : g.scopes[0].children) root_children.push_back(g.scopes[c].path);
  EXPECT_THAT(root_children,
              ElementsAre("conv1", "bn1", "relu", "maxpool", "layer1", "layer2",
                          "layer3", "layer4", "avgpool", "fc"));
}

TEST_F(TorchScriptImportTest, ResNet18ConvolutionsAreInConv2dScopes) {
  ir::Graph g = Import("resnet18.pt");
  const std::vector<const ir::Node*> convs =
      NodesWithOp(g, "aten::_convolution");
  EXPECT_EQ(convs.size(), 1u + 16 + 3);  // Stem, 8 blocks x 2, 3 downsamples.
  for (const ir::Node* n : convs) {
    EXPECT_EQ(g.scopes[n->scope].type, "Conv2d") << g.scopes[n->scope].path;
    // The weight read by the conv belongs to the conv's own module.
    const int weight = Arg(*n, "weight");
    ASSERT_GE(weight, 0);
    EXPECT_EQ(g.values[weight].name, g.scopes[n->scope].path + ".weight");
  }
}

TEST_F(TorchScriptImportTest, ResNet18ParamsAndBuffers) {
  ir::Graph g = Import("resnet18.pt");
  const ir::TensorEntry* conv1 = FindParam(g, "conv1.weight");
  ASSERT_NE(conv1, nullptr);
  EXPECT_THAT(conv1->shape, ElementsAre(64, 3, 7, 7));
  EXPECT_EQ(conv1->dtype, DType::kFloat32);
  EXPECT_TRUE(conv1->requires_grad);
  const ir::TensorEntry* fc_bias = FindParam(g, "fc.bias");
  ASSERT_NE(fc_bias, nullptr);
  EXPECT_THAT(fc_bias->shape, ElementsAre(1000));
  const ir::TensorEntry* fc_weight = FindParam(g, "fc.weight");
  ASSERT_NE(fc_weight, nullptr);
  EXPECT_THAT(fc_weight->shape, ElementsAre(1000, 512));
  // Every table entry the graph reads has one value pointing back at it.
  for (size_t i = 0; i < g.params.size(); ++i) {
    const ir::TensorEntry& p = g.params[i];
    ASSERT_GE(p.value, 0) << p.name;
    const ir::Value& v = g.values[p.value];
    EXPECT_EQ(v.role, ir::ValueRole::kParam);
    EXPECT_EQ(v.table_index, static_cast<int>(i));
    EXPECT_EQ(v.kind, ir::ValueKind::kTensor);
    EXPECT_TRUE(v.has_traced_shape);
    EXPECT_EQ(v.traced_shape, p.shape);
    EXPECT_EQ(v.name, p.name);
  }
  int buffers_read = 0;
  for (const ir::TensorEntry& b : g.buffers) {
    if (b.value < 0) continue;
    ++buffers_read;
    EXPECT_EQ(g.values[b.value].role, ir::ValueRole::kBuffer);
  }
  EXPECT_EQ(
      buffers_read,
      2 * 20);  // running_mean and running_var; num_batches_tracked is unused.
}

TEST_F(TorchScriptImportTest, ConvolutionArgumentsAreBoundBySchemaName) {
  ir::Graph g = Import("resnet18.pt");
  const std::vector<const ir::Node*> convs =
      NodesWithOp(g, "aten::_convolution");
  ASSERT_FALSE(convs.empty());
  const ir::Node& n = *convs.front();
  EXPECT_THAT(
      n.input_names,
      ElementsAre("input", "weight", "bias", "stride", "padding", "dilation",
                  "transposed", "output_padding", "groups", "benchmark",
                  "deterministic", "cudnn_enabled", "allow_tf32"));
  ASSERT_EQ(n.inputs.size(), n.input_names.size());
  EXPECT_EQ(n.overload, "");
  EXPECT_EQ(n.scope, FindScope(g, "conv1"));
  // The stem conv reads the model input; its groups argument is the constant 1.
  EXPECT_EQ(g.values[Arg(n, "input")].role, ir::ValueRole::kInput);
  const ir::Value& groups = g.values[Arg(n, "groups")];
  EXPECT_EQ(groups.role, ir::ValueRole::kConstant);
  EXPECT_EQ(groups.kind, ir::ValueKind::kInt);
  ASSERT_TRUE(groups.has_constant);
  EXPECT_EQ(std::get<int64_t>(groups.constant), 1);
  const ir::Value& bias = g.values[Arg(n, "bias")];
  EXPECT_EQ(bias.kind, ir::ValueKind::kNone);  // resnet convs have no bias.
  // stride is a prim::ListConstruct of int constants.
  const ir::Value& stride = g.values[Arg(n, "stride")];
  EXPECT_EQ(stride.kind, ir::ValueKind::kList);
  EXPECT_EQ(stride.elem_kind, ir::ValueKind::kInt);
  ASSERT_GE(stride.producer, 0);
  EXPECT_EQ(g.nodes[stride.producer].op, "prim::ListConstruct");
  // aten::add.Tensor of the residual keeps its overload name.
  const std::vector<const ir::Node*> adds = NodesWithOp(g, "aten::add_");
  ASSERT_FALSE(adds.empty());
  EXPECT_EQ(adds.front()->overload, "Tensor");
  EXPECT_THAT(adds.front()->input_names, ElementsAre("self", "other", "alpha"));
  // Graph inputs: `self` is skipped; the image is input 0.
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].table_index, 0);
  EXPECT_EQ(g.values[g.inputs[0]].kind, ir::ValueKind::kTensor);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.nodes[g.values[g.outputs[0]].producer].op, "aten::linear");
  EXPECT_EQ(g.source, Fixture("resnet18.pt"));
}

TEST_F(TorchScriptImportTest, NodesAreInExecutionOrder) {
  ir::Graph g = Import("resnet18.pt");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int in : g.nodes[i].inputs) {
      ASSERT_GE(in, 0);
      ASSERT_LT(in, static_cast<int>(g.values.size()));
      EXPECT_LT(g.values[in].producer, static_cast<int>(i))
          << g.NodeLocation(i);
    }
    for (int out : g.nodes[i].outputs)
      EXPECT_EQ(g.values[out].producer, static_cast<int>(i));
    EXPECT_NE(g.nodes[i].op, "prim::GetAttr");
    EXPECT_NE(g.nodes[i].op, "prim::Constant");
    EXPECT_NE(g.nodes[i].op, "prim::CallMethod");
  }
}

TEST_F(TorchScriptImportTest, LeNet5) {
  ir::Graph g = Import("lenet5.pt");
  const int64_t expected = (1 * 6 * 5 * 5 + 6) +       // feature_extractor.0
                           (6 * 16 * 5 * 5 + 16) +     // feature_extractor.3
                           (16 * 120 * 5 * 5 + 120) +  // feature_extractor.6
                           (120 * 84 + 84) +           // classifier.0
                           (84 * 10 + 10);             // classifier.2
  EXPECT_EQ(ParamCount(g), expected);
  // Root, two Sequentials, eight feature layers, three classifier layers.
  EXPECT_EQ(g.scopes.size(), 1u + 2 + 8 + 3);
  EXPECT_EQ(g.scopes[0].name, "LeNet5");
  const int pool = FindScope(g, "feature_extractor.2");
  ASSERT_GE(pool, 0);
  EXPECT_EQ(g.scopes[pool].type, "AvgPool2d");
  const std::vector<const ir::Node*> pools = NodesWithOp(g, "aten::avg_pool2d");
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0]->scope, pool);
  // forward returns (logits, probs): the tuple is kept, its elements are the
  // outputs.
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.nodes[g.values[g.outputs[0]].producer].op, "aten::linear");
  EXPECT_EQ(g.nodes[g.values[g.outputs[1]].producer].op, "aten::softmax");
  EXPECT_EQ(g.nodes[g.values[g.outputs[1]].producer].scope, 0);
  EXPECT_EQ(NodesWithOp(g, "prim::TupleConstruct").size(), 1u);
}

TEST_F(TorchScriptImportTest, TinyKeepsIntegerOps) {
  ir::Graph g = Import("tiny.pt");
  // x.view(x.size(0), -1) is traced as size -> NumToTensor -> Int ->
  // ListConstruct -> view.
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes) ops.push_back(n.op);
  const std::vector<std::string> tail(ops.end() - 6, ops.end());
  EXPECT_THAT(tail,
              ElementsAre("aten::size", "prim::NumToTensor", "aten::Int",
                          "prim::ListConstruct", "aten::view", "aten::linear"));
  const ir::Node& size = *NodesWithOp(g, "aten::size").front();
  EXPECT_EQ(size.overload, "int");
  EXPECT_THAT(size.input_names, ElementsAre("self", "dim"));
  EXPECT_EQ(g.values[size.outputs[0]].kind, ir::ValueKind::kInt);
  const ir::Node& bn = *NodesWithOp(g, "aten::batch_norm").front();
  EXPECT_EQ(g.scopes[bn.scope].path, "bn");
  EXPECT_EQ(g.values[Arg(bn, "running_mean")].name, "bn.running_mean");
  EXPECT_EQ(g.values[Arg(bn, "running_mean")].role, ir::ValueRole::kBuffer);
  const ir::Value& training = g.values[Arg(bn, "training")];
  ASSERT_TRUE(training.has_constant);
  EXPECT_EQ(std::get<bool>(training.constant), false);
  const ir::Value& eps = g.values[Arg(bn, "eps")];
  ASSERT_TRUE(eps.has_constant);
  EXPECT_DOUBLE_EQ(std::get<double>(eps.constant), 1e-5);
  // NB: a saved trace keeps no input shapes (see torchscript.cc).
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_FALSE(g.values[g.inputs[0]].has_traced_shape);
}

TEST_F(TorchScriptImportTest, ScriptedModuleHasScopesAndNoControlFlow) {
  ir::Graph g = Import("scripted.pt");
  EXPECT_EQ(g.scopes[0].type, "ScriptedNet");
  const int block = FindScope(g, "block");
  ASSERT_GE(block, 0);
  EXPECT_EQ(g.scopes[block].type, "ScriptedBlock");
  const int conv1 = FindScope(g, "block.conv1");
  ASSERT_GE(conv1, 0);
  EXPECT_EQ(g.scopes[conv1].type, "Conv2d");
  EXPECT_EQ(g.scopes[conv1].parent, block);
  // `if self.use_residual`, BatchNorm's `if self.training` and its input-dim
  // check (which raises) are all folded away.
  for (const ir::Node& n : g.nodes) {
    EXPECT_NE(n.op, "prim::If") << g.NodeLocation(&n - g.nodes.data());
    EXPECT_NE(n.op, "prim::RaiseException");
  }
  const std::vector<const ir::Node*> convs = NodesWithOp(g, "aten::conv2d");
  ASSERT_EQ(convs.size(), 3u);
  std::vector<std::string> conv_scopes;
  for (const ir::Node* n : convs)
    conv_scopes.push_back(g.scopes[n->scope].path);
  EXPECT_THAT(conv_scopes, ElementsAre("stem", "block.conv1", "block.conv2"));
  const std::vector<const ir::Node*> bns = NodesWithOp(g, "aten::batch_norm");
  ASSERT_EQ(bns.size(), 2u);
  // `self.training` was read with prim::GetAttr and became the constant False.
  const ir::Value& training = g.values[Arg(*bns[0], "training")];
  ASSERT_TRUE(training.has_constant);
  EXPECT_EQ(std::get<bool>(training.constant), false);
  const std::vector<const ir::Node*> adds = NodesWithOp(g, "aten::add");
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_EQ(adds[0]->scope, block);
  EXPECT_EQ(adds[0]->overload, "Tensor");
  const int64_t expected = (8 * 3 * 3 * 3 + 8) +  // stem
                           2 * (8 * 8 * 3 * 3) +
                           2 * (2 * 8) +  // block: convs, batch norms
                           (8 * 5 + 5);   // head
  EXPECT_EQ(ParamCount(g), expected);
}

TEST_F(TorchScriptImportTest, RuntimeControlFlowStaysAsNodes) {
  ir::Graph g = Import("scripted_if.pt");
  // A condition on tensor data cannot be folded: prim::If and prim::Loop are
  // kept as opaque nodes (their blocks are not converted) with their outputs.
  const std::vector<const ir::Node*> ifs = NodesWithOp(g, "prim::If");
  ASSERT_EQ(ifs.size(), 1u);
  ASSERT_EQ(ifs[0]->outputs.size(), 1u);
  EXPECT_EQ(g.values[ifs[0]->outputs[0]].kind, ir::ValueKind::kTensor);
  const std::vector<const ir::Node*> loops = NodesWithOp(g, "prim::Loop");
  ASSERT_EQ(loops.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].producer, loops[0] - g.nodes.data());
  // fc.weight is read only inside the If's block, so no value reads it.
  ASSERT_EQ(g.params.size(), 2u);
  EXPECT_EQ(g.params[0].value, -1);
}

TEST_F(TorchScriptImportTest, TiedWeightsShareOneEntry) {
  ir::Graph g = Import("tied.pt");
  ASSERT_EQ(g.params.size(),
            3u);  // embed.weight (= decoder.weight), proj.weight, proj.bias.
  const ir::TensorEntry* embed = FindParam(g, "embed.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_THAT(embed->aliases, ElementsAre("decoder.weight"));
  EXPECT_EQ(ParamCount(g), 16 * 8 + (8 * 8 + 8));
  const std::vector<const ir::Node*> linears = NodesWithOp(g, "aten::linear");
  ASSERT_EQ(linears.size(), 2u);
  EXPECT_EQ(Arg(*linears[1], "weight"), embed->value);
  const ir::Node& embedding = *NodesWithOp(g, "aten::embedding").front();
  EXPECT_EQ(Arg(embedding, "weight"), embed->value);
}

TEST_F(TorchScriptImportTest, ErrorsAreOneLineAndNameTheFile) {
  const std::vector<std::string> bad = {
      Fixture("does_not_exist.pt"), Fixture("corrupt.pt"),
      Fixture("not_torchscript.pt"), kFixtureDir};
  for (const std::string& path : bad) {
    Result<ir::Graph> g = ImportTorchScript(path);
    ASSERT_FALSE(g.ok()) << path;
    const std::string& message = g.status().message();
    EXPECT_THAT(message,
                StartsWith(path + ": cannot read TorchScript archive: "));
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_GT(message.size(),
              path.size() +
                  std::string(": cannot read TorchScript archive: ").size());
  }
}

// The shape inference the graph keeps for ops without rules: LibTorch runs the
// node on meta tensors of the examples given. ResNet-18's stem, 7x7 stride 2
// pad 3 conv, 3 -> 64 channels: 224 -> floor((224 + 2*3 - 7) / 2) + 1 = 112.
TEST_F(TorchScriptImportTest, InfersShapesOfSingleNodesOnMetaTensors) {
  ir::Graph g = Import("resnet18.pt");
  ASSERT_TRUE(g.infer_shapes);
  auto example = [&](const std::vector<int64_t>& input_shape) {
    return [&g, input_shape](int v) {
      ir::ExampleValue e;
      if (g.values[v].role == ir::ValueRole::kInput) {
        e.kind = ir::ValueKind::kTensor;
        e.shape = input_shape;
        e.dtype = DType::kFloat32;
      } else if (g.values[v].role == ir::ValueRole::kParam) {
        e.kind = ir::ValueKind::kTensor;
        e.shape = g.params[g.values[v].table_index].shape;
        e.dtype = DType::kFloat32;
      }
      return e;
    };
  };
  const ir::Node* conv = nullptr;
  for (const ir::Node& n : g.nodes) {
    for (int in : n.inputs) {
      if (!conv && g.values[in].role == ir::ValueRole::kInput) conv = &n;
    }
  }
  ASSERT_NE(conv, nullptr);
  ASSERT_GE(conv->origin, 0);
  std::vector<ir::ExampleValue> outs;
  std::string why;
  ASSERT_TRUE(
      g.infer_shapes(conv->origin, example({3, 3, 224, 224}), &outs, &why))
      << why;
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].shape, (std::vector<int64_t>{3, 64, 112, 112}));
  EXPECT_EQ(outs[0].dtype, DType::kFloat32);
  // An input the analysis does not know: explained, not thrown.
  auto unknown = [](int) { return ir::ExampleValue(); };
  EXPECT_FALSE(g.infer_shapes(conv->origin, unknown, &outs, &why));
  EXPECT_THAT(why, ::testing::HasSubstr("is not known"));
  EXPECT_FALSE(g.infer_shapes(-1, unknown, &outs, &why));
}

}  // namespace
}  // namespace torchcost
