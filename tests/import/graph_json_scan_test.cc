// Tests of the fast reader of the "nodes" array of a JSON graph: what it reads
// straight from the text, and what it refuses (the importer then parses the
// element as JSON).
#include "import/graph_json_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::import {
namespace {

using ::testing::ElementsAre;
using Json = nlohmann::ordered_json;

// Parses `text` as one node; true only if the scanner accepts it and nothing
// but white space follows.
bool ScanNode(std::string_view text, SimpleNode* n) {
  SimpleScanner scan(text);
  return scan.ParseNode(n) && scan.AtEnd();
}

// `pattern` with its one "@" replaced by `piece`.
std::string With(std::string_view pattern, std::string_view piece) {
  std::string text(pattern);
  const size_t at = text.find('@');
  EXPECT_NE(at, std::string::npos) << pattern;
  if (at != std::string::npos) text.replace(at, 1, piece);
  return text;
}

// Returns the argument named `name` in `n`, or null.
const SimpleArg* Arg(const SimpleNode& n, std::string_view name) {
  for (const SimpleArg& a : n.args) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

TEST(SimpleScannerTest, ReadsOpOverloadModuleAndArgsOfEveryForm) {
  const std::string op = "aten::masked_fill", overload = "Scalar",
                    module = "encoder.layers.0";
  // One argument of each form the scanner reads, in this order.
  const std::vector<std::pair<std::string, std::string>> args = {
      {"self", R"({"ref": "x"})"},
      {"mask", R"({"buffer": "scale"})"},
      {"weight", R"({"param": "fc.weight"})"},
      {"first", R"({"input": 0})"},
      {"named", R"({"input": "x"})"},
      {"back", R"({"ref": 7})"},
      {"memory_format", "null"},
      {"copy", "true"},
      {"non_blocking", "false"},
      {"dim", "-12"},
      {"mode", R"("mean")"}};
  std::string args_text = "{";
  for (size_t i = 0; i < args.size(); ++i) {
    args_text += (i ? ", \"" : "\"") + args[i].first + "\": " + args[i].second;
  }
  args_text += "}";
  const std::string text = "{\"op\": \"" + op + "\", \"overload\": \"" +
                           overload + "\", \"module\": \"" + module +
                           "\",\n \"args\": " + args_text +
                           ", \"outputs\": [\"y\"]}";

  SimpleNode n;
  ASSERT_TRUE(ScanNode(text, &n)) << text;
  EXPECT_TRUE(n.has_op && n.has_overload && n.has_module && n.has_args &&
              n.has_outputs);
  EXPECT_EQ(n.op, op);
  EXPECT_EQ(n.overload, overload);
  EXPECT_EQ(n.module, module);

  // The arguments in the order written, each as the JSON parser reads it.
  const Json parsed = Json::parse(args_text);
  ASSERT_EQ(n.args.size(), args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    EXPECT_EQ(n.args[i].name, args[i].first);
    EXPECT_EQ(n.args[i].ToJson(), parsed[args[i].first]) << args[i].first;
  }

  // The fields behind ToJson, for one argument of each kind.
  using Kind = SimpleArg::Kind;
  const SimpleArg* self = Arg(n, "self");
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->kind, Kind::kRef);
  EXPECT_FALSE(self->target_is_int);
  EXPECT_EQ(self->text, "x");
  EXPECT_EQ(Arg(n, "mask")->kind, Kind::kBuffer);
  EXPECT_EQ(Arg(n, "mask")->text, "scale");
  EXPECT_EQ(Arg(n, "weight")->kind, Kind::kParam);
  EXPECT_EQ(Arg(n, "weight")->text, "fc.weight");
  const SimpleArg* first = Arg(n, "first");
  EXPECT_EQ(first->kind, Kind::kInput);
  EXPECT_TRUE(first->target_is_int);
  EXPECT_EQ(first->i, 0);
  EXPECT_EQ(Arg(n, "named")->kind, Kind::kInput);
  EXPECT_FALSE(Arg(n, "named")->target_is_int);
  EXPECT_EQ(Arg(n, "named")->text, "x");
  EXPECT_EQ(Arg(n, "back")->kind, Kind::kRef);
  EXPECT_TRUE(Arg(n, "back")->target_is_int);
  EXPECT_EQ(Arg(n, "back")->i, 7);
  EXPECT_EQ(Arg(n, "memory_format")->kind, Kind::kNull);
  EXPECT_EQ(Arg(n, "copy")->kind, Kind::kBool);
  EXPECT_TRUE(Arg(n, "copy")->b);
  EXPECT_EQ(Arg(n, "non_blocking")->kind, Kind::kBool);
  EXPECT_FALSE(Arg(n, "non_blocking")->b);
  EXPECT_EQ(Arg(n, "dim")->kind, Kind::kInt);
  EXPECT_EQ(Arg(n, "dim")->i, -12);
  EXPECT_EQ(Arg(n, "mode")->kind, Kind::kString);
  EXPECT_EQ(Arg(n, "mode")->text, "mean");
}

TEST(SimpleScannerTest, ReadsOutputsAsNamesOrObjects) {
  const std::string text = R"({"op": "aten::f", "args": {}, "outputs": [
      "y",
      {"name": "z", "type": "Tensor", "shape": [2, 0, 3], "dtype": "float16"},
      {"name": "b", "type": "int"},
      {"name": "sizes", "type": "int[]"},
      {"name": "maybe", "type": "Tensor?", "shape": null, "dtype": null},
      {"name": "s", "shape": []}]})";
  SimpleNode n;
  ASSERT_TRUE(ScanNode(text, &n));
  EXPECT_FALSE(n.has_overload);
  EXPECT_FALSE(n.has_module);
  EXPECT_TRUE(n.args.empty());
  ASSERT_EQ(n.outputs.size(), 6u);

  const ir::Value& y = n.outputs[0];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.kind, ir::ValueKind::kTensor);  // A bare name is a tensor.
  EXPECT_FALSE(y.has_traced_shape);

  const ir::Value& z = n.outputs[1];
  EXPECT_EQ(z.name, "z");
  EXPECT_EQ(z.kind, ir::ValueKind::kTensor);
  EXPECT_TRUE(z.has_traced_shape);
  EXPECT_THAT(z.traced_shape, ElementsAre(2, 0, 3));
  EXPECT_EQ(z.dtype, DType::kFloat16);

  EXPECT_EQ(n.outputs[2].name, "b");
  EXPECT_EQ(n.outputs[2].kind, ir::ValueKind::kInt);

  EXPECT_EQ(n.outputs[3].kind, ir::ValueKind::kList);
  EXPECT_EQ(n.outputs[3].elem_kind, ir::ValueKind::kInt);

  // An Optional type reads as its type; null shape and dtype as absent.
  const ir::Value& maybe = n.outputs[4];
  EXPECT_EQ(maybe.kind, ir::ValueKind::kTensor);
  EXPECT_FALSE(maybe.has_traced_shape);
  EXPECT_EQ(maybe.dtype, ir::Value().dtype);

  // An empty shape is a 0-dim tensor's.
  EXPECT_EQ(n.outputs[5].kind, ir::ValueKind::kTensor);
  EXPECT_TRUE(n.outputs[5].has_traced_shape);
  EXPECT_TRUE(n.outputs[5].traced_shape.empty());
}

TEST(SimpleScannerTest, NullOverloadAndModuleAreAbsent) {
  SimpleNode n;
  ASSERT_TRUE(ScanNode(
      R"({"op": "aten::relu", "overload": null, "module": null,
          "args": {"self": {"ref": "x"}}, "outputs": ["y"]})",
      &n));
  EXPECT_TRUE(n.has_op);
  EXPECT_FALSE(n.has_overload);
  EXPECT_FALSE(n.has_module);
  EXPECT_EQ(n.op, "aten::relu");
}

TEST(SimpleScannerTest, ANodeReusedForTheNextIsClearedFirst) {
  SimpleNode n;
  ASSERT_TRUE(ScanNode(R"({"op": "aten::add", "overload": "Tensor",
      "args": {"self": {"ref": "x"}, "other": 1}, "outputs": ["y", "z"]})",
                       &n));
  ASSERT_EQ(n.args.size(), 2u);
  ASSERT_EQ(n.outputs.size(), 2u);
  // The caller checks for the fields a node needs: an empty object has none.
  ASSERT_TRUE(ScanNode("{}", &n));
  EXPECT_FALSE(n.has_op || n.has_overload || n.has_module || n.has_args ||
               n.has_outputs);
  EXPECT_TRUE(n.args.empty());
  EXPECT_TRUE(n.outputs.empty());
}

TEST(SimpleScannerTest, IntegersOfUpTo18DigitsAreRead) {
  const std::string digits18(18, '9');
  for (const std::string& number :
       {digits18, "-" + digits18, std::string("0"), std::string("-7")}) {
    SimpleNode n;
    ASSERT_TRUE(ScanNode(
        With(R"({"op": "f", "args": {"k": @}, "outputs": []})", number), &n))
        << number;
    ASSERT_EQ(n.args.size(), 1u);
    EXPECT_EQ(n.args[0].kind, SimpleArg::Kind::kInt);
    EXPECT_EQ(n.args[0].i, std::stoll(number));
  }
}

// Each refused piece next to one the scanner reads in the same place, so that
// the refusal is the piece's: the pieces are valid JSON, which the JSON
// parser then reads.
struct Refusal {
  const char* what;
  std::string pattern;  // A node with one "@".
  std::string accepted, refused;
};

TEST(SimpleScannerTest, RefusesWhatLeavesTheSubset) {
  const std::string node = R"("op": "f", "args": {}, "outputs": [])";
  const std::vector<Refusal> cases = {
      {"an escape in a string", R"({"op": @, "args": {}, "outputs": []})",
       R"("aten::add")", R"("aten::a\u0064d")"},
      {"an escaped quote", R"({"op": "f", "args": {"s": @}, "outputs": []})",
       R"("ab")", R"("a\"b")"},
      {"an escape in a key", R"({@: "f", "args": {}, "outputs": []})",
       R"("op")", R"("o\u0070")"},
      {"a non-ASCII byte", R"({"op": "f", "args": {}, "outputs": [@]})",
       R"("cafe")", "\"caf\xc3\xa9\""},
      {"a non-ASCII byte in a module",
       R"({"op": "f", "module": @, "args": {}, "outputs": []})", R"("m")",
       "\"m\xce\xbc\""},
      {"a float", R"({"op": "f", "args": {"alpha": @}, "outputs": []})", "1",
       "1.5"},
      {"a float with an exponent",
       R"({"op": "f", "args": {"alpha": @}, "outputs": []})", "1", "1e3"},
      {"a float in a shape",
       R"({"op": "f", "args": {}, "outputs": [{"name": "y", "shape": [@]}]})",
       "2", "2.0"},
      {"an integer of 19 digits",
       R"({"op": "f", "args": {"n": @}, "outputs": []})", std::string(18, '1'),
       std::string(19, '1')},
      // 20 digits would overflow int64 if they were all accumulated.
      {"an integer of 20 digits",
       R"({"op": "f", "args": {"n": @}, "outputs": []})", std::string(18, '9'),
       "11234567890123456789"},
      {"a reference to an integer of 19 digits",
       R"({"op": "f", "args": {"x": {"input": @}}, "outputs": []})",
       std::string(18, '1'), std::string(19, '1')},
      {"a repeated op", "{@, \"args\": {}, \"outputs\": []}", R"("op": "f")",
       R"("op": "f", "op": "f")"},
      {"a repeated args", R"({"op": "f", @, "outputs": []})", R"("args": {})",
       R"("args": {}, "args": {})"},
      {"a repeated outputs", R"({"op": "f", "args": {}, @})",
       R"("outputs": [])", R"("outputs": [], "outputs": [])"},
      {"a repeated module", "{@, " + node + "}", R"("module": "a")",
       R"("module": "a", "module": null)"},
      {"a repeated overload", "{@, " + node + "}", R"("overload": "a")",
       R"("overload": null, "overload": "a")"},
      {"a repeated argument name", R"({"op": "f", "args": {@}, "outputs": []})",
       R"("a": 1, "b": 1)", R"("a": 1, "a": 1)"},
      {"a repeated output field",
       R"({"op": "f", "args": {}, "outputs": [{@}]})", R"("name": "y")",
       R"("name": "y", "name": "y")"},
      {"a key outside the subset", "{@, " + node + "}", R"("module": "m")",
       R"("meta": "m")"},
      {"an output without a name",
       R"({"op": "f", "args": {}, "outputs": [{@}]})", R"("name": "y")",
       R"("type": "Tensor")"},
      {"an unknown output type",
       R"({"op": "f", "args": {}, "outputs": [{"name": "y", "type": @}]})",
       R"("Tensor")", R"("Tensors")"},
      {"an unknown dtype",
       R"({"op": "f", "args": {}, "outputs": [{"name": "y", "dtype": @}]})",
       R"("float32")", R"("float33")"},
      {"a negative dim",
       R"({"op": "f", "args": {}, "outputs": [{"name": "y", "shape": [@]}]})",
       "1", "-1"},
      {"a reference of another kind",
       R"({"op": "f", "args": {"x": {@: "v"}}, "outputs": []})", R"("ref")",
       R"("tensor")"},
      {"a list literal", R"({"op": "f", "args": {"x": @}, "outputs": []})", "3",
       "[3]"},
      {"positional args", R"({"op": "f", "args": @, "outputs": []})", "{}",
       "[]"},
  };
  for (const Refusal& c : cases) {
    const std::string accepted = With(c.pattern, c.accepted);
    const std::string refused = With(c.pattern, c.refused);
    SimpleNode n;
    EXPECT_TRUE(ScanNode(accepted, &n)) << c.what << ": " << accepted;
    EXPECT_FALSE(ScanNode(refused, &n)) << c.what << ": " << refused;
    EXPECT_TRUE(Json::accept(refused)) << c.what << ": " << refused;
  }
}

TEST(SimpleScannerTest, SkipValueMovesPastAValueOfAnyForm) {
  // Each value followed by the text after it; brackets and commas inside
  // strings do not count.
  const std::vector<std::string> values = {
      R"({"a": [1, "x]}", {"b": "\"]"}], "c": 2.5e3})",
      R"(["a,b", [[]], {}])",
      R"("text with \" and ,")",
      "-1.25e-3",
      "null",
  };
  for (const std::string& value : values) {
    const std::string text = "  " + value + " , {\"next\": 1}";
    SimpleScanner scan(text);
    ASSERT_TRUE(scan.SkipValue()) << value;
    EXPECT_EQ(scan.pos(), 2 + value.size()) << value;
    EXPECT_TRUE(scan.Eat(',')) << value;
  }
  SimpleScanner unterminated(R"({"a": [1, 2})");
  EXPECT_FALSE(unterminated.SkipValue());
}

TEST(SimpleScannerTest, ReadsAnArrayOfNodesElementByElement) {
  const std::vector<std::string> nodes = {
      R"({"op": "aten::relu", "args": {"self": {"input": 0}}, "outputs": ["a"]})",
      R"({"op": "aten::mul", "args": {"self": {"ref": "a"}, "other": 0.5},
          "outputs": ["b"]})",
      R"({"op": "aten::neg", "args": {"self": {"ref": "b"}}, "outputs": ["c"]})",
  };
  std::string array = "[";
  for (size_t i = 0; i < nodes.size(); ++i)
    array += (i ? ",\n  " : "\n  ") + nodes[i];
  array += "\n]\n";

  // As the importer reads it: a node the scanner refuses is skipped whole
  // (and would be parsed as JSON).
  SimpleScanner scan(array);
  SimpleNode n;
  std::vector<std::string> read, skipped;
  ASSERT_TRUE(scan.Eat('['));
  do {
    const size_t start = scan.pos();
    if (scan.ParseNode(&n)) {
      read.emplace_back(n.op);
      continue;
    }
    scan.set_pos(start);
    ASSERT_TRUE(scan.SkipValue());
    skipped.push_back(array.substr(start, scan.pos() - start));
  } while (scan.Eat(','));
  EXPECT_TRUE(scan.Eat(']'));
  EXPECT_TRUE(scan.AtEnd());
  // The float makes the middle node leave the subset.
  EXPECT_THAT(read, ElementsAre("aten::relu", "aten::neg"));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(Json::parse(skipped[0]), Json::parse(nodes[1]));
}

// FindNodesArray's answer for `text`, begun as the importer begins it.
struct Found {
  bool ok = false;
  size_t begin = 0, end = 0, count = 0;
};
Found Find(std::string_view text) {
  Found f;
  f.begin = f.end = std::string_view::npos;
  f.count = 1;
  f.ok = FindNodesArray(text, &f.begin, &f.end, &f.count);
  return f;
}

TEST(FindNodesArrayTest, FindsTheArrayAndCountsItsElements) {
  // Commas and brackets inside strings and nested values are not the
  // array's.
  const std::vector<std::string> elements = {
      R"({"op": "aten::add", "args": {"x": [1, 2, 3]}, "outputs": ["a,b"]})",
      R"({"op": "aten::cat", "args": {"t": {"list": [{"ref": "a"}]}},
          "outputs": ["]"]})",
      R"({"op": "aten::mul", "args": {}, "outputs": ["c"], "module": "x,y"})",
      R"({"op": "aten::view", "args": {"size": [2, -1]}, "outputs": []})",
  };
  std::string array = "[";
  for (size_t i = 0; i < elements.size(); ++i)
    array += (i ? ",\n " : "") + elements[i];
  array += "]";
  const std::string before =
      R"({"format": "torchcost.graph", "version": 1,
  "inputs": [{"name": "x", "shape": [2, 3]}], "params": [],
  "modules": [{"path": "nodes", "type": "Nodes"}],
  "nodes": )";
  const std::string after = R"(,
  "outputs": [{"ref": "c"}], "note": "nodes"}
)";
  const std::string text = before + array + after;
  ASSERT_TRUE(Json::accept(text));

  const Found f = Find(text);
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.begin, before.size());
  EXPECT_EQ(f.end, before.size() + array.size());
  EXPECT_EQ(text.substr(f.begin, f.end - f.begin), array);
  EXPECT_EQ(f.count, elements.size());
}

TEST(FindNodesArrayTest, FindsTheArrayFirstOrLast) {
  const std::string array = R"([{"op": "a"}, {"op": "b"}])";
  for (const std::string& text :
       {R"({"nodes": )" + array + R"(, "version": 1})",
        R"({"version": 1, "nodes": )" + array + "}",
        "\n\t{ \"nodes\" :\n" + array + " }"}) {
    const Found f = Find(text);
    ASSERT_TRUE(f.ok) << text;
    EXPECT_EQ(text.substr(f.begin, f.end - f.begin), array) << text;
    EXPECT_EQ(f.count, 2u) << text;
  }
}

TEST(FindNodesArrayTest, RefusesTextWithoutOneNodesArray) {
  // Where "nodes" is present but not an array, or not the top level's key,
  // the importer reads the whole document (and reports what is wrong).
  const std::string array = R"([{"op": "a"}])";
  ASSERT_TRUE(Find(R"({"nodes": )" + array + "}").ok);
  const std::vector<std::string> texts = {
      R"({"version": 1, "outputs": []})",
      R"({"nodes": {"op": "a"}})",
      R"({"nodes": "[]"})",
      R"({"nodes": null})",
      R"({"nodes": 3})",
      R"({"model": {"nodes": )" + array + "}}",
      R"({"modules": [{"nodes": )" + array + "}]}",
      R"({"version": "nodes", "outputs": ["nodes"]})",
      R"({"nodes": )" + array + R"(, "nodes": )" + array + "}",
      R"([{"nodes": )" + array + "}]",
      R"({"no\u0064es": )" + array + "}",
      R"({"a\"b": 1, "nodes": )" + array + "}",
      R"({"nodes": [{"op": "a"})",
      "",
      "   ",
  };
  for (const std::string& text : texts) {
    EXPECT_FALSE(Find(text).ok) << text;
  }
}

}  // namespace
}  // namespace torchcost::import
