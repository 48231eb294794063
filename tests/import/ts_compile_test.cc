// Tests of reading TorchScript without LibTorch, on the fixtures that
// tools/make_fixtures.py traces: the graph's module tree, tables and ops
// derived from the models' definitions, the same graph as LibTorch's reader
// makes, and declines for what it does not read.
#include "import/ts_compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "testing/fixtures.h"
#include "torchcost/import.h"

namespace torchcost::import {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return testing::FixturePath(name);
}

Result<ir::Graph> Compile(const std::string& name) {
  if (!testing::EnsureFixtures(name.substr(0, name.size() - 3)))
    return Status::Internal("tools/make_fixtures.py failed");
  Result<ZipArchive> zip = ZipArchive::OpenFile(Fixture(name));
  if (!zip.ok()) return zip.status();
  return CompileTorchScript(*zip, Fixture(name));
}

std::vector<std::string> Ops(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes) {
    if (n.op != "prim::ListConstruct") ops.push_back(n.op);
  }
  return ops;
}

TEST(TsCompileTest, LeNet5) {
  // tools/make_fixtures.py's LeNet5: feature_extractor = Sequential(conv 1->6
  // k5, tanh, avgpool 2, conv 6->16 k5, tanh, avgpool 2, conv 16->120 k5,
  // tanh); classifier = Sequential(linear 120->84, tanh, linear 84->10).
  Result<ir::Graph> r = Compile("lenet5.pt");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const ir::Graph& g = *r;
  // Parameters: 6*1*25+6 + 16*6*25+16 + 120*16*25+120 + 84*120+84 + 10*84+10 =
  // 61706.
  int64_t params = 0;
  for (const ir::TensorEntry& p : g.params) params += ir::Numel(p.shape);
  EXPECT_EQ(params, 61706);
  EXPECT_EQ(g.params[0].name, "feature_extractor.0.weight");
  EXPECT_THAT(g.params[0].shape, ElementsAre(6, 1, 5, 5));
  EXPECT_EQ(g.params[0].dtype, DType::kFloat32);
  EXPECT_TRUE(g.params[0].requires_grad);
  EXPECT_TRUE(g.buffers.empty());
  EXPECT_EQ(g.scopes[0].type, "LeNet5");
  EXPECT_THAT(
      Ops(g),
      ElementsAre("aten::_convolution", "aten::tanh", "aten::avg_pool2d",
                  "aten::_convolution", "aten::tanh", "aten::avg_pool2d",
                  "aten::_convolution", "aten::tanh", "aten::flatten",
                  "aten::linear", "aten::tanh", "aten::linear", "aten::softmax",
                  // forward returns (logits, probs).
                  "prim::TupleConstruct"));
  for (const ir::Node& n : g.nodes) {
    if (n.op != "aten::_convolution") continue;
    // The first convolution.
    EXPECT_EQ(g.scopes[n.scope].path, "feature_extractor.0");
    EXPECT_EQ(n.overload, "");
    // aten::_convolution's 13 arguments, all given.
    EXPECT_EQ(n.input_names.size(), 13u);
    break;
  }
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].kind, ir::ValueKind::kTensor);
  EXPECT_FALSE(g.outputs.empty());
}

TEST(TsCompileTest, TiedWeightsAreOneTableEntry) {
  // Tied: embed (16x8) and decoder (8->16, no bias) share one weight: one entry
  // with an alias.
  Result<ir::Graph> r = Compile("tied.pt");
  ASSERT_TRUE(r.ok()) << r.status().message();
  // embed.weight (= decoder.weight), proj.weight, proj.bias.
  ASSERT_EQ(r->params.size(), 3u);
  EXPECT_EQ(r->params[0].name, "embed.weight");
  EXPECT_THAT(r->params[0].aliases, ElementsAre("decoder.weight"));
}

TEST(TsCompileTest, DeclinesScriptedControlFlow) {
  Result<ir::Graph> r = Compile("scripted_if.pt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("unsupported statement 'if'"));
}

TEST(TsCompileTest, DeclinesAnArchiveWithoutAStorageItsTensorsNeed) {
  // LibTorch reads every storage and fails on a missing one; this reader does
  // not read them, but declines.
  ASSERT_TRUE(testing::EnsureFixtures("tiny"));
  const std::string cut = ::testing::TempDir() + "/tiny_without_data0.pt";
  const std::string command =
      "/usr/bin/python3 -c \"import sys, zipfile; src = "
      "zipfile.ZipFile(sys.argv[1]); "
      "dst = zipfile.ZipFile(sys.argv[2], 'w'); "
      "[dst.writestr(i, src.read(i)) for i in src.infolist() if not "
      "i.filename.endswith('/data/0')]; "
      "dst.close()\" " +
      Fixture("tiny.pt") + " " + cut;
  ASSERT_EQ(std::system(command.c_str()), 0);
  Result<ZipArchive> zip = ZipArchive::OpenFile(cut);
  ASSERT_TRUE(zip.ok()) << zip.status().message();
  Result<ir::Graph> r = CompileTorchScript(*zip, cut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnimplemented);
  EXPECT_THAT(r.status().message(),
              HasSubstr("storage '0' is not in the archive"));
  std::remove(cut.c_str());
}

// A text of everything the analysis reads from a graph, values named as they
// are used.
std::string Dump(const ir::Graph& g) {
  std::ostringstream o;
  auto value = [&](int i) {
    const ir::Value& v = g.values[i];
    o << v.name << ":" << static_cast<int>(v.kind)
      << static_cast<int>(v.elem_kind) << static_cast<int>(v.role)
      << static_cast<int>(v.dtype) << "/" << v.table_index;
    if (v.has_traced_shape) {
      for (int64_t d : v.traced_shape) o << "," << d;
    }
    if (v.has_constant) {
      o << "=";
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
              o << "None";
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                                 std::is_same_v<T, std::vector<double>> ||
                                 std::is_same_v<T, std::vector<bool>>) {
              for (auto e : x) o << e << ";";
            } else {
              o << x;
            }
          },
          v.constant);
    }
    o << " ";
  };
  for (const ir::Scope& s : g.scopes)
    o << "scope " << s.path << " " << s.name << " " << s.type << " " << s.parent
      << "\n";
  for (const auto* table : {&g.params, &g.buffers}) {
    for (const ir::TensorEntry& t : *table) {
      o << "tensor " << t.name << " " << static_cast<int>(t.dtype)
        << t.requires_grad << " " << ir::Numel(t.shape);
      for (const std::string& a : t.aliases) o << " " << a;
      o << "\n";
    }
  }
  for (int i : g.inputs) value(i);
  o << "\n";
  for (const ir::Node& n : g.nodes) {
    o << n.debug_name << " " << n.op << "." << n.overload << " "
      << g.scopes[n.scope].path << " " << n.origin << " (";
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (k < n.input_names.size()) o << n.input_names[k] << "=";
      value(n.inputs[k]);
    }
    o << ") ";
    for (int out : n.outputs) value(out);
    o << "\n";
  }
  for (int i : g.outputs) value(i);
  for (const std::string& gap : g.train_gaps) o << "\ngap " << gap;
  return o.str();
}

TEST(TsCompileTest, TheSameGraphAsLibTorchsReader) {
  if (!TORCHCOST_WITH_LIBTORCH)
    GTEST_SKIP() << "built without LibTorch (TORCHCOST_WITH_LIBTORCH=OFF)";
  for (const char* name : {"tiny.pt", "lenet5.pt", "tied.pt", "resnet18.pt"}) {
    Result<ir::Graph> fast = Compile(name);
    ASSERT_TRUE(fast.ok()) << name << ": " << fast.status().message();
    setenv("TORCHCOST_TORCHSCRIPT_READER", "libtorch", 1);
    Result<ir::Graph> reference = ImportTorchScript(Fixture(name));
    unsetenv("TORCHCOST_TORCHSCRIPT_READER");
    ASSERT_TRUE(reference.ok()) << name << ": " << reference.status().message();
    EXPECT_EQ(Dump(*fast), Dump(*reference)) << name;
  }
}

}  // namespace
}  // namespace torchcost::import
