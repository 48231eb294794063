// Tests of the JSON graph frontend on small hand-written documents.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "torchcost/graph.h"
#include "torchcost/import.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A linear layer with a tied weight, a symbolic batch, a tensor list and
// constants of every kind.
constexpr char kSmall[] = R"json({
  "format": "torchcost.graph", "version": 1, "model": "Net",
  "inputs": [{"name": "x", "shape": ["B", 4], "dtype": "float32", "traced_shape": [2, 4]}],
  "params": [{"name": "fc.weight", "aliases": ["head.weight"], "shape": [3, 4], "dtype": "float32",
              "requires_grad": true},
             {"name": "fc.bias", "shape": [3]}],
  "buffers": [{"name": "scale", "shape": [], "dtype": "float32"}],
  "modules": [{"path": "", "type": "Net"}, {"path": "fc", "type": "Linear"}],
  "nodes": [
    {"op": "aten.linear.default", "args": {"input": {"input": 0}, "weight": {"param": "head.weight"},
     "bias": {"param": "fc.bias"}}, "outputs": [{"name": "y", "type": "Tensor", "shape": [2, 3],
     "dtype": "float32"}], "module": "fc"},
    {"op": "aten::size", "overload": "int", "args": {"self": {"ref": "y"}, "dim": 0},
     "outputs": [{"name": "b", "type": "int"}]},
    {"op": "aten.cat.default", "args": {"tensors": {"list": [{"ref": "y"}, {"ref": "y"}]}, "dim": -1},
     "outputs": ["z"]},
    {"op": "aten.add.Tensor", "args": {"self": {"ref": "z"}, "other": {"tensor": {"shape": [], "dtype": "float64",
     "value": 0.5}}, "alpha": 1}, "outputs": ["w"]},
    {"op": "aten::masked_fill", "overload": "Scalar", "args": {"self": {"ref": "w"}, "mask": {"buffer": "scale"},
     "value": {"float": "-inf"}}, "outputs": ["m"]},
    {"op": "aten::to", "overload": "dtype", "args": {"self": {"ref": "m"}, "dtype": {"dtype": "float16"},
     "non_blocking": false, "copy": false, "memory_format": null}, "outputs": ["h"]},
    {"op": "aten::view", "args": {"self": {"ref": "h"}, "size": {"list": [{"ref": "b"}, -1]}}, "outputs": ["v"]}
  ],
  "outputs": [{"ref": "v"}]
})json";

class GraphJsonTest : public ::testing::Test {
 protected:
  // Writes `text` to a file of the test's own and returns its path.
  std::string Write(const std::string& text,
                    const std::string& name = "model.json") {
    // NB: one directory per test and process: ctest runs tests in parallel.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ::testing::TempDir() + "/graph_json_test_" + info->name() + "_" +
           std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // Removes the test's directory, if it wrote one.
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  // Imports `text` and returns the error message (empty if it imported).
  std::string ErrorOf(const std::string& text) {
    Result<ir::Graph> g = ImportGraphJson(Write(text));
    return g.ok() ? "" : g.status().message();
  }

  // kSmall with one substring replaced.
  static std::string SmallWith(const std::string& from, const std::string& to) {
    std::string text = kSmall;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  }

 private:
  std::string dir_;  // The test's directory; empty until Write.
};

TEST_F(GraphJsonTest, ImportsTheSmallGraph) {
  Result<ir::Graph> result = ImportGraphJson(Write(kSmall));
  ASSERT_TRUE(result.ok()) << result.status().message();
  const ir::Graph& g = *result;
  ASSERT_EQ(g.params.size(), 2u);
  EXPECT_EQ(g.params[0].name, "fc.weight");
  EXPECT_THAT(g.params[0].aliases, ElementsAre("head.weight"));
  EXPECT_THAT(g.params[0].shape, ElementsAre(3, 4));
  EXPECT_EQ(g.params[1].dtype, DType::kFloat32);
  ASSERT_EQ(g.buffers.size(), 1u);
  EXPECT_FALSE(g.buffers[0].requires_grad);

  ASSERT_EQ(g.inputs.size(), 1u);
  const ir::Value& x = g.values[g.inputs[0]];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.role, ir::ValueRole::kInput);
  EXPECT_TRUE(x.has_traced_shape);  // From traced_shape: "B" is symbolic.
  EXPECT_THAT(x.traced_shape, ElementsAre(2, 4));

  ASSERT_GE(g.scopes.size(), 2u);
  EXPECT_EQ(g.scopes[0].type, "Net");
  EXPECT_EQ(g.scopes[1].path, "fc");
  EXPECT_EQ(g.scopes[1].type, "Linear");

  // linear, size, ListConstruct, cat, add, masked_fill, to, ListConstruct,
  // view.
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes)
    ops.push_back(n.op + (n.overload.empty() ? "" : "." + n.overload));
  EXPECT_THAT(
      ops,
      ElementsAre("aten::linear", "aten::size.int", "prim::ListConstruct",
                  "aten::cat", "aten::add.Tensor", "aten::masked_fill.Scalar",
                  "aten::to.dtype", "prim::ListConstruct", "aten::view"));

  const ir::Node& linear = g.nodes[0];
  EXPECT_EQ(linear.scope, 1);
  EXPECT_THAT(linear.input_names, ElementsAre("input", "weight", "bias"));
  const ir::Value& weight = g.values[linear.inputs[1]];
  EXPECT_EQ(weight.role, ir::ValueRole::kParam);
  EXPECT_EQ(weight.table_index, 0);  // The alias reads the one tied parameter.
  EXPECT_EQ(g.params[0].value, linear.inputs[1]);
  const ir::Value& y = g.values[linear.outputs[0]];
  EXPECT_TRUE(y.has_traced_shape);
  EXPECT_EQ(linear.debug_name, "%y");

  const ir::Node& size = g.nodes[1];
  const ir::Value& dim = g.values[size.inputs[1]];
  EXPECT_TRUE(dim.has_constant);
  EXPECT_EQ(std::get<int64_t>(dim.constant), 0);
  EXPECT_EQ(g.values[size.outputs[0]].kind, ir::ValueKind::kInt);

  const ir::Node& list = g.nodes[2];
  EXPECT_THAT(list.inputs, ElementsAre(linear.outputs[0], linear.outputs[0]));
  EXPECT_EQ(g.values[list.outputs[0]].kind, ir::ValueKind::kList);
  EXPECT_EQ(g.values[list.outputs[0]].elem_kind, ir::ValueKind::kTensor);
  EXPECT_EQ(g.nodes[3].inputs[0], list.outputs[0]);

  const ir::Value& half = g.values[g.nodes[4].inputs[1]];
  EXPECT_EQ(half.kind, ir::ValueKind::kTensor);
  EXPECT_EQ(half.dtype, DType::kFloat64);
  EXPECT_DOUBLE_EQ(std::get<double>(half.constant), 0.5);

  const ir::Value& fill = g.values[g.nodes[5].inputs[2]];
  EXPECT_LT(std::get<double>(fill.constant), -1e308);
  EXPECT_EQ(g.values[g.nodes[5].inputs[1]].role, ir::ValueRole::kBuffer);

  const ir::Value& dtype = g.values[g.nodes[6].inputs[1]];
  EXPECT_EQ(std::get<int64_t>(dtype.constant),
            static_cast<int64_t>(DType::kFloat16));
  EXPECT_EQ(g.values[g.nodes[6].inputs[4]].kind, ir::ValueKind::kNone);

  const ir::Node& sizes = g.nodes[7];
  EXPECT_EQ(sizes.inputs[0], size.outputs[0]);
  EXPECT_EQ(g.values[sizes.outputs[0]].elem_kind, ir::ValueKind::kInt);
  EXPECT_THAT(g.outputs, ElementsAre(g.nodes[8].outputs[0]));
}

TEST_F(GraphJsonTest, NodesOfAnOpWithTheSameArgumentNamesShareOneList) {
  // Three relus and an add: the relus' names are one list, the add's its own;
  // a relu whose argument is named otherwise gets a list of its own.
  const std::string text = R"json({
  "format": "torchcost.graph", "version": 1, "model": "Net",
  "inputs": [{"name": "x", "shape": [2, 4], "dtype": "float32"}],
  "nodes": [
    {"op": "aten::relu", "args": {"self": {"input": 0}}, "outputs": ["a"]},
    {"op": "aten::relu", "args": {"self": {"ref": "a"}}, "outputs": ["b"]},
    {"op": "aten::add", "overload": "Tensor", "args": {"self": {"ref": "a"},
     "other": {"ref": "b"}}, "outputs": ["c"]},
    {"op": "aten::relu", "args": {"self": {"ref": "c"}}, "outputs": ["d"]},
    {"op": "aten::relu", "args": {"input": {"ref": "d"}}, "outputs": ["e"]}
  ],
  "outputs": [{"ref": "e"}]
})json";
  Result<ir::Graph> g = ImportGraphJson(Write(text));
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->nodes.size(), 5u);
  const auto& n = g->nodes;
  EXPECT_THAT(n[0].input_names, ElementsAre("self"));
  EXPECT_EQ(&n[1].input_names[0], &n[0].input_names[0]);  // One list.
  EXPECT_EQ(&n[3].input_names[0], &n[0].input_names[0]);
  EXPECT_THAT(n[2].input_names, ElementsAre("self", "other"));
  EXPECT_THAT(n[4].input_names, ElementsAre("input"));
  EXPECT_NE(&n[4].input_names[0], &n[0].input_names[0]);
}

TEST_F(GraphJsonTest, NormalizesFxOpNames) {
  const std::string text =
      SmallWith(R"("op": "aten.cat.default")",
                R"("op": "aten::cat", "overload": "default")");
  Result<ir::Graph> g = ImportGraphJson(Write(text));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->nodes[3].op, "aten::cat");
  EXPECT_EQ(g->nodes[3].overload, "");
  EXPECT_EQ(g->nodes[4].op, "aten::add");
  EXPECT_EQ(g->nodes[4].overload, "Tensor");
}

TEST_F(GraphJsonTest, ImportGraphFileDispatchesOnTheExtension) {
  Result<ir::Graph> g = ImportGraphFile(Write(kSmall, "net.json"));
  EXPECT_TRUE(g.ok()) << g.status().message();
  Result<ir::Graph> ts = ImportGraphFile(Write(kSmall, "net.pt"));
  ASSERT_FALSE(ts.ok());
  EXPECT_THAT(ts.status().message(), HasSubstr("TorchScript"));
}

// Every error is one line that starts with the file name and names the place.
void ExpectOneLine(const std::string& message, const std::string& needle) {
  EXPECT_THAT(message, StartsWith(::testing::TempDir()));
  EXPECT_THAT(message, HasSubstr("model.json: "));
  EXPECT_THAT(message, HasSubstr(needle));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

// NB: a document whose "nodes" key is written with an escape is read whole;
// any other is read node by node (the nodes never held as one JSON tree).
// Both readings give the same graph.
TEST_F(GraphJsonTest, NodeByNodeAndWholeDocumentReadTheSame) {
  Result<ir::Graph> streamed = ImportGraphJsonText(kSmall, "a.json");
  Result<ir::Graph> whole = ImportGraphJsonText(
      SmallWith("\"nodes\":", "\"node\\u0073\":"), "a.json");
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(streamed->nodes.size(), whole->nodes.size());
  for (size_t i = 0; i < whole->nodes.size(); ++i) {
    const ir::Node &a = streamed->nodes[i], &b = whole->nodes[i];
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.overload, b.overload);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.input_names, b.input_names);
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_EQ(a.scope, b.scope);
    EXPECT_EQ(a.debug_name, b.debug_name);
  }
  ASSERT_EQ(streamed->values.size(), whole->values.size());
  for (size_t i = 0; i < whole->values.size(); ++i) {
    EXPECT_EQ(streamed->values[i].name, whole->values[i].name);
    EXPECT_EQ(streamed->values[i].kind, whole->values[i].kind);
    EXPECT_EQ(streamed->values[i].producer, whole->values[i].producer);
  }
  EXPECT_EQ(streamed->outputs, whole->outputs);
}

// Nodes in the common form (string op, literal or reference args, output
// names) are read straight from the text; the rest as JSON. Every argument
// form of the common one, and near misses that leave it: an escape, a float,
// a 19-digit int, a repeated key (JSON keeps its last value), an unknown key,
// a list of args.
constexpr char kMixed[] = R"json({
  "format": "torchcost.graph", "version": 1, "model": "Net",
  "inputs": [{"name": "x", "shape": [2, 4], "dtype": "float32"}],
  "params": [{"name": "fc.weight", "shape": [3, 4]}],
  "buffers": [{"name": "scale", "shape": [], "dtype": "float32"}],
  "nodes": [
    {"op": "aten.linear.default", "args": {"input": {"input": "x"}, "weight": {"param": "fc.weight"},
     "bias": null}, "outputs": [{"name": "y", "type": "Tensor", "shape": [2, 3], "dtype": "float32"}],
     "module": "fc", "overload": null},
    {"module": null, "outputs": [{"dtype": null, "name": "s", "shape": null}], "args": {"self": {"ref": "y"}, "dim": -1, "keepdim": true,
     "dtype": null}, "op": "aten::sum", "overload": "dim_IntList"},
    {"op": "aten::gelu", "args": {"self": {"ref": "s"}, "approximate": "tanh"}, "outputs": ["g"],
     "module": "act"},
    {"op": "aten::gelu", "args": {"self": {"ref": "g"}, "approximate": "t\u0061nh"}, "outputs": ["g2"]},
    {"op": "aten::mul", "overload": "Scalar", "args": {"self": {"ref": "g2"}, "other": 0.5},
     "outputs": [{"name": "m", "shape": [2, 3], "note": 1}]},
    {"op": "aten::add", "overload": "Scalar", "args": {"self": {"ref": "m"}, "other": 1234567890123456789,
     "alpha": 0}, "outputs": ["a"]},
    {"op": "aten::add", "overload": "Scalar", "args": {"self": {"ref": "a"}, "other": 3, "other": 4,
     "alpha": false}, "outputs": ["a2"]},
    {"op": "aten::mul", "overload": "Tensor", "args": {"self": {"ref": "a2"}, "other": {"buffer": "scale"}},
     "outputs": ["o"], "module": "fc"},
    {"op": "prim::TupleConstruct", "args": [{"ref": "o"}, {"input": 0}], "outputs": ["t"]}
  ],
  "outputs": ["o"]
})json";

// Returns `text` with its "nodes" key escaped: the whole document is then read
// as JSON.
std::string ReadWhole(std::string text) {
  return text.replace(text.find("\"nodes\":"), 8, "\"node\\u0073\":");
}

TEST_F(GraphJsonTest, NodesReadFromTheTextEqualNodesReadAsJson) {
  Result<ir::Graph> fast = ImportGraphJsonText(kMixed, "a.json");
  Result<ir::Graph> whole = ImportGraphJsonText(ReadWhole(kMixed), "a.json");
  ASSERT_TRUE(fast.ok()) << fast.status().message();
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(fast->nodes.size(), 9u);
  ASSERT_EQ(fast->nodes.size(), whole->nodes.size());
  for (size_t i = 0; i < whole->nodes.size(); ++i) {
    const ir::Node &a = fast->nodes[i], &b = whole->nodes[i];
    EXPECT_EQ(a.op, b.op) << i;
    EXPECT_EQ(a.overload, b.overload) << i;
    EXPECT_EQ(a.inputs, b.inputs) << i;
    EXPECT_EQ(a.input_names, b.input_names) << i;
    EXPECT_EQ(a.outputs, b.outputs) << i;
    EXPECT_EQ(a.scope, b.scope) << i;
    EXPECT_EQ(a.debug_name, b.debug_name) << i;
  }
  ASSERT_EQ(fast->values.size(), whole->values.size());
  for (size_t i = 0; i < whole->values.size(); ++i) {
    const ir::Value &a = fast->values[i], &b = whole->values[i];
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.role, b.role) << i;
    EXPECT_EQ(a.has_constant, b.has_constant) << i;
    EXPECT_EQ(a.constant, b.constant) << i;
    EXPECT_EQ(a.producer, b.producer) << i;
    EXPECT_EQ(a.table_index, b.table_index) << i;
    EXPECT_EQ(a.elem_kind, b.elem_kind) << i;
    EXPECT_EQ(a.has_traced_shape, b.has_traced_shape) << i;
    EXPECT_EQ(a.traced_shape, b.traced_shape) << i;
    EXPECT_EQ(a.dtype, b.dtype) << i;
  }
  ASSERT_EQ(fast->scopes.size(), whole->scopes.size());
  for (size_t i = 0; i < whole->scopes.size(); ++i)
    EXPECT_EQ(fast->scopes[i].path, whole->scopes[i].path);
  EXPECT_EQ(fast->outputs, whole->outputs);
  // What the text says, independently of either reading.
  const ir::Graph& g = *fast;
  EXPECT_EQ(g.nodes[0].op, "aten::linear");
  EXPECT_THAT(g.values[g.nodes[0].outputs[0]].traced_shape, ElementsAre(2, 3));
  EXPECT_EQ(g.values[g.nodes[0].outputs[0]].dtype, DType::kFloat32);
  EXPECT_FALSE(g.values[g.nodes[1].outputs[0]].has_traced_shape);
  EXPECT_EQ(g.scopes[g.nodes[0].scope].path, "fc");
  EXPECT_THAT(g.nodes[1].input_names,
              ElementsAre("self", "dim", "keepdim", "dtype"));
  EXPECT_EQ(std::get<int64_t>(g.values[g.nodes[1].inputs[1]].constant), -1);
  EXPECT_EQ(std::get<bool>(g.values[g.nodes[1].inputs[2]].constant), true);
  EXPECT_EQ(g.nodes[1].overload, "dim_IntList");
  EXPECT_EQ(std::get<std::string>(g.values[g.nodes[2].inputs[1]].constant),
            "tanh");
  EXPECT_EQ(std::get<std::string>(g.values[g.nodes[3].inputs[1]].constant),
            "tanh");
  EXPECT_EQ(std::get<double>(g.values[g.nodes[4].inputs[1]].constant), 0.5);
  EXPECT_EQ(std::get<int64_t>(g.values[g.nodes[5].inputs[1]].constant),
            1234567890123456789);
  EXPECT_THAT(g.nodes[6].input_names, ElementsAre("self", "other", "alpha"));
  EXPECT_EQ(std::get<int64_t>(g.values[g.nodes[6].inputs[1]].constant), 4);
  EXPECT_EQ(g.values[g.nodes[7].inputs[1]].role, ir::ValueRole::kBuffer);
  EXPECT_EQ(g.nodes[8].inputs[1], g.inputs[0]);
}

// Errors in nodes of the common form read as those of nodes read as JSON.
TEST_F(GraphJsonTest, ErrorsOfNodesReadFromTheText) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string text = kMixed;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  ExpectOneLine(
      ErrorOf(with(R"({"ref": "g"})", R"({"ref": "nope"})")),
      "nodes[3] (aten::gelu): arg 'self' refers to unknown value 'nope'");
  ExpectOneLine(ErrorOf(with(R"("outputs": ["g"])", R"("outputs": ["y"])")),
                "nodes[2] (aten::gelu): output 'y' is already defined");
  ExpectOneLine(
      ErrorOf(with(R"({"input": "x"})", R"({"input": 7})")),
      "nodes[0] (aten::linear): arg 'input' refers to unknown input 7");
  ExpectOneLine(ErrorOf(with(R"("op": "aten::gelu", )", "")),
                "nodes[2]: missing field 'op'");
  ExpectOneLine(ErrorOf(with(R"("type": "Tensor")", R"("type": "Tensr")")),
                "nodes[0] (aten::linear): output 0: unknown type");
  ExpectOneLine(ErrorOf(with(R"("shape": [2, 3])", R"("shape": [2, -3])")),
                "must list non-negative integers");
  ExpectOneLine(ErrorOf(with(R"("outputs": ["a"]})", R"("outputs": ["a"],})")),
                "not valid JSON");
}

// A syntax error is reported before a bad node, even one read before the error.
TEST_F(GraphJsonTest, SyntaxErrorComesBeforeABadNode) {
  std::string text = SmallWith("\"op\": \"aten::size\"", "\"op\": 7");
  text.insert(text.rfind(']'), ", {");
  const std::string error = ErrorOf(text);
  EXPECT_THAT(error, HasSubstr("not valid JSON"));
  EXPECT_THAT(error, Not(HasSubstr("'op' must be a string")));
}

TEST_F(GraphJsonTest, MalformedJson) {
  ExpectOneLine(ErrorOf("{\"format\": \"torchcost.graph\", "),
                "not valid JSON");
  ExpectOneLine(ErrorOf("[1, 2]"), "the top level must be an object");
}

TEST_F(GraphJsonTest, UnknownReference) {
  const std::string m = ErrorOf(
      SmallWith(R"("self": {"ref": "z"})", R"("self": {"ref": "v99"})"));
  ExpectOneLine(
      m, "nodes[3] (aten::add): arg 'self' refers to unknown value 'v99'");
  ExpectOneLine(
      ErrorOf(SmallWith(R"({"param": "fc.bias"})", R"({"param": "fc.bogus"})")),
      "nodes[0] (aten::linear): arg 'bias' refers to unknown parameter "
      "'fc.bogus'");
  ExpectOneLine(
      ErrorOf(SmallWith(R"({"input": 0})", R"({"input": 3})")),
      "nodes[0] (aten::linear): arg 'input' refers to unknown input 3");
  ExpectOneLine(ErrorOf(SmallWith(R"("outputs": [{"ref": "v"}])",
                                  R"("outputs": [{"ref": "nope"}])")),
                "outputs[0] refers to unknown value 'nope'");
}

TEST_F(GraphJsonTest, MissingFields) {
  ExpectOneLine(ErrorOf(SmallWith(R"("op": "aten.linear.default", )", "")),
                "nodes[0]: missing field 'op'");
  ExpectOneLine(
      ErrorOf(SmallWith(R"("outputs": ["z"])", R"("outputs2": ["z"])")),
      "nodes[2] (aten::cat): missing field 'outputs'");
  ExpectOneLine(ErrorOf(SmallWith(R"("format": "torchcost.graph", )", "")),
                "missing field 'format'");
  ExpectOneLine(ErrorOf(SmallWith(R"({"name": "fc.bias", "shape": [3]})",
                                  R"({"name": "fc.bias"})")),
                "params[1]: missing field 'shape'");
}

TEST_F(GraphJsonTest, BadValues) {
  ExpectOneLine(ErrorOf(SmallWith(R"("version": 1)", R"("version": 2)")),
                "unsupported version 2; this torchcost reads version 1");
  ExpectOneLine(
      ErrorOf(SmallWith(R"("dtype": "float16")", R"("dtype": "float17")")),
      "unknown dtype 'float17'");
  ExpectOneLine(
      ErrorOf(SmallWith(R"("outputs": ["w"])", R"("outputs": ["z"])")),
      "nodes[3] (aten::add): output 'z' is already defined");
  ExpectOneLine(ErrorOf(SmallWith(R"("dim": -1)", R"("dim": [1, "a"])")),
                "a literal list must hold only");
}

TEST_F(GraphJsonTest, LimitsHold) {
  // A module path nested 30,000 levels deep is a one-line error (it crashed
  // with a stack overflow when scopes were created recursively).
  std::string deep = "m";
  for (int i = 0; i < 30000; ++i) deep += ".m";
  ExpectOneLine(
      ErrorOf(SmallWith(R"("module": "fc")", R"("module": ")" + deep + R"(")")),
      "nodes[0] (aten::linear): module path nests deeper than 1000 levels");
}

TEST_F(GraphJsonTest, MissingFile) {
  Result<ir::Graph> g =
      ImportGraphJson(::testing::TempDir() + "/graph_json_test/absent.json");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(),
              HasSubstr("absent.json: cannot read JSON graph: no such file"));
}

}  // namespace
}  // namespace torchcost
